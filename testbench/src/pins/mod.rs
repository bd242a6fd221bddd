//! One typed face for the ports of a running design.
//!
//! A bench resolves each port it drives or reads once, by name, into a [`Pin`]
//! (the only name lookup, and the only place a missing port is an error naming
//! it); per cycle it then calls [`Pins::set`], [`Pins::get_into`] and the
//! one-word helpers with handles, which look nothing up and allocate nothing.
//! A single engine (`&mut D` for any [`Dut`]) and the lockstep differential
//! harness's [`Step`](crate::harness::Step) both provide [`Pins`], so one driver
//! runs on the native simulator, on Verilator and on both in lockstep.
//!
//! [`Dut`] has by-index methods of the same names, which win on a `&mut D`
//! receiver: drivers take `pins: &mut (impl Pins + ?Sized)`, and a caller
//! holding `dut: &mut dyn Dut` passes `&mut dut`.

mod axis;

pub use axis::{AxisDataPins, AxisPins};

use crate::dut::{Dut, DutError, DutPort};

/// A port of a running design, resolved once by name: its index in the
/// design's port list ([`Pins::ports`], [`Dut::ports`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pin(pub usize);

impl Pin {
    /// The port called `name` among `ports`; an error names a port that is not
    /// there.
    pub fn resolve(ports: &[DutPort], name: &str) -> Result<Pin, DutError> {
        ports
            .iter()
            .position(|p| p.name == name)
            .map(Pin)
            .ok_or_else(|| DutError::UnknownPort(name.to_string()))
    }

    /// The ports called `names` among `ports`, in that order, for a bench
    /// resolving the few ports it uses before its run; an error names the
    /// first port that is not there.
    pub fn resolve_all<const N: usize>(
        ports: &[DutPort],
        names: [&str; N],
    ) -> Result<[Pin; N], DutError> {
        let mut pins = [Pin(0); N];
        for (pin, name) in pins.iter_mut().zip(names) {
            *pin = Pin::resolve(ports, name)?;
        }
        Ok(pins)
    }
}

/// The ports of a running design, driven and read through [`Pin`]s.
pub trait Pins {
    /// The design's ports in declaration order (a [`Pin`] indexes them).
    fn ports(&self) -> &[DutPort];

    /// Drives input `pin` with little-endian 64-bit words from now on.
    fn set(&mut self, pin: Pin, words: &[u64]) -> Result<(), DutError>;

    /// Reads `pin` (settled) into `out[..n]`, `n = ceil(width / 64)`; a shorter
    /// `out` is an error, a longer one keeps its other words.
    fn get_into(&mut self, pin: Pin, out: &mut [u64]) -> Result<(), DutError>;

    /// The port called `name`; an error names a port the design lacks.
    fn pin(&self, name: &str) -> Result<Pin, DutError> {
        Pin::resolve(self.ports(), name)
    }

    /// Words of `pin`'s value (its width rounded up to 64 bits), for the
    /// buffers a bench reads it into.
    fn words(&self, pin: Pin) -> usize {
        self.ports()
            .get(pin.0)
            .map_or(0, |p| p.width.div_ceil(64) as usize)
    }

    /// Drives input `pin` (at most 64 bits wide) with `value`.
    fn set_u64(&mut self, pin: Pin, value: u64) -> Result<(), DutError> {
        self.set(pin, &[value])
    }

    /// Reads `pin` (at most 64 bits wide).
    fn get_u64(&mut self, pin: Pin) -> Result<u64, DutError> {
        let mut word = [0u64; 1];
        self.get_into(pin, &mut word)?;
        Ok(word[0])
    }

    /// True if `pin` (at most 64 bits wide) reads 1.
    fn is_high(&mut self, pin: Pin) -> Result<bool, DutError> {
        Ok(self.get_u64(pin)? == 1)
    }
}

impl<D: Dut + ?Sized> Pins for &mut D {
    fn ports(&self) -> &[DutPort] {
        Dut::ports(&**self)
    }

    fn set(&mut self, pin: Pin, words: &[u64]) -> Result<(), DutError> {
        Dut::set(&mut **self, pin.0, words)
    }

    fn get_into(&mut self, pin: Pin, out: &mut [u64]) -> Result<(), DutError> {
        Dut::get_into(&mut **self, pin.0, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dut::NativeDut;
    use hdl::dsl::ModuleBuilder;

    fn passthrough() -> hdl::Module {
        let mut m = ModuleBuilder::new("pass");
        let a = m.input("a", 70);
        m.output("y", a);
        m.finish().unwrap()
    }

    /// What a driver does: resolve once, then set and read by handle.
    fn round_trip(pins: &mut impl Pins) -> Result<[u64; 3], DutError> {
        let (a, y) = (pins.pin("a")?, pins.pin("y")?);
        pins.set(a, &[0xDEAD_BEEF_0123_4567, 0x2A])?;
        let mut out = [0u64; 3];
        pins.get_into(y, &mut out)?;
        assert_eq!(pins.words(y), 2);
        assert!(
            pins.get_u64(y).is_err(),
            "a 70-bit port does not fit one word"
        );
        Ok(out)
    }

    #[test]
    fn an_unknown_port_is_an_error_naming_it() {
        let mut dut = NativeDut::new(&passthrough()).unwrap();
        let err = Pins::pin(&&mut dut, "no_such_port").unwrap_err();
        assert!(matches!(&err, DutError::UnknownPort(n) if n == "no_such_port"));
        assert!(err.to_string().contains("no_such_port"), "{err}");
    }

    #[test]
    fn a_bundle_missing_a_port_is_an_error_naming_it() {
        let ports = crate::dut::ports_of(&passthrough());
        let named = |r: Result<(), DutError>| match r {
            Err(DutError::UnknownPort(name)) => name,
            other => panic!("{other:?}"),
        };
        let all = Pin::resolve_all(&ports, ["a", "y"]).unwrap();
        let one_by_one = ["a", "y"].map(|n| Pin::resolve(&ports, n).unwrap());
        assert_eq!(all, one_by_one);
        assert_eq!(
            named(Pin::resolve_all(&ports, ["a", "b", "c"]).map(|_| ())),
            "b"
        );
        let axis = AxisPins::resolve(&ports, "s_axis_").map(|_| ());
        assert_eq!(named(axis), "s_axis_tdata");
        let axil = crate::axil::AxiLitePins::resolve(&ports, "S_AXI_").map(|_| ());
        assert_eq!(named(axil), "S_AXI_AWADDR");
    }

    #[test]
    fn set_and_get_round_trip_through_handles_on_the_native_engine() {
        let mut dut = NativeDut::new(&passthrough()).unwrap();
        let out = round_trip(&mut &mut dut).unwrap();
        assert_eq!(out, [0xDEAD_BEEF_0123_4567, 0x2A, 0]);
    }
}
