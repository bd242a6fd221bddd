//! Two engines driven as one `Dut` (in the spirit of Hardcaml's `Cyclesim.combine`):
//! every input, clock and reset goes to both, and every read compares them. A bench
//! written for one engine runs unchanged on a pair; the first read where they
//! disagree is a [`DutError::Diverged`] naming the port, the time and both values.

use super::{CompiledStart, Dut, DutError, DutPort};
use crate::engine::Engine;
use sim::Fired;
use std::path::Path;

/// Engines `A` and `B` in lockstep; `A` answers for the pair (ports, domains, time).
pub struct Lockstep<A: Dut, B: Dut> {
    a: A,
    b: B,
    /// `B`'s value of the port being read.
    scratch: Vec<u64>,
}

impl<A: Dut, B: Dut> Lockstep<A, B> {
    /// `a` and `b` as one; an error if their ports differ.
    pub fn new(a: A, b: B) -> Result<Self, DutError> {
        if a.ports() != b.ports() || a.domains() != b.domains() {
            return Err(DutError::BadValue {
                port: "*".into(),
                reason: format!(
                    "the {} and {} engines' ports or clock domains differ",
                    a.engine(),
                    b.engine()
                ),
            });
        }
        let widest = a.ports().iter().map(|p| p.width.div_ceil(64)).max();
        Ok(Lockstep {
            a,
            b,
            scratch: vec![0; widest.unwrap_or(1) as usize],
        })
    }

    /// The two engines.
    pub fn engines(&mut self) -> (&mut A, &mut B) {
        (&mut self.a, &mut self.b)
    }

    /// An error if the value `a` of `port` (`B`'s is in `scratch`) differs.
    fn check(&self, port: usize, a: &[u64]) -> Result<(), DutError> {
        let b = &self.scratch[..a.len()];
        if a == b {
            return Ok(());
        }
        let p = &self.a.ports()[port];
        let hex = |w: &[u64]| hdl::Bits::from_words(w, p.width).to_hex();
        Err(DutError::Diverged {
            port: p.name.clone(),
            time_ps: self.a.time_ps(),
            engines: (self.a.engine(), self.b.engine()),
            values: (hex(a), hex(b)),
        })
    }
}

impl<A: Dut, B: Dut> Dut for Lockstep<A, B> {
    fn engine(&self) -> Engine {
        self.a.engine()
    }

    fn ports(&self) -> &[DutPort] {
        self.a.ports()
    }

    fn domains(&self) -> &[String] {
        self.a.domains()
    }

    fn set_clock_period(&mut self, domain: &str, period_ps: u64) -> Result<(), DutError> {
        self.a.set_clock_period(domain, period_ps)?;
        self.b.set_clock_period(domain, period_ps)
    }

    fn set(&mut self, port: usize, words: &[u64]) -> Result<(), DutError> {
        self.a.set(port, words)?;
        self.b.set(port, words)
    }

    fn get(&mut self, port: usize) -> Result<Vec<u64>, DutError> {
        let a = self.a.get(port)?;
        self.b.get_into(port, &mut self.scratch)?;
        self.check(port, &a)?;
        Ok(a)
    }

    fn get_into(&mut self, port: usize, out: &mut [u64]) -> Result<(), DutError> {
        self.a.get_into(port, out)?;
        self.b.get_into(port, &mut self.scratch)?;
        let n = self.a.ports()[port].width.div_ceil(64) as usize;
        self.check(port, &out[..n])
    }

    fn step_edge(&mut self) -> Fired {
        let fired = self.a.step_edge();
        let fired_b = self.b.step_edge();
        assert_eq!(fired, fired_b, "both engines run one clock schedule");
        fired
    }

    fn step_cycles(&mut self, n: u64) {
        self.a.step_cycles(n);
        self.b.step_cycles(n);
    }

    fn time_ps(&self) -> u64 {
        self.a.time_ps()
    }

    fn reset(&mut self, cycles: u64) {
        self.a.reset(cycles);
        self.b.reset(cycles);
    }

    /// `A` traces to `path`, `B` beside it to `<stem>.<engine>.vcd`.
    fn trace_open(&mut self, path: &Path) -> Result<(), DutError> {
        self.a.trace_open(path)?;
        let beside = path.with_extension(format!("{}.vcd", self.b.engine()));
        self.b.trace_open(&beside)
    }

    /// Closes both traces, whatever the first's result; the first error.
    fn trace_close(&mut self) -> Result<(), DutError> {
        let a = self.a.trace_close();
        let b = self.b.trace_close();
        a.and(b)
    }

    fn compiled_start(&self) -> Option<CompiledStart> {
        self.a.compiled_start()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dut::NativeDut;
    use hdl::ModuleBuilder;
    use sim::Backend;

    /// `y = a + k`, 8 bits.
    fn adder(k: u64) -> hdl::Module {
        let mut m = ModuleBuilder::new("add");
        let a = m.input("a", 8);
        let y = m.add_const_wrap(a, k);
        m.output("y", y);
        m.finish().expect("a valid module")
    }

    #[test]
    fn agreeing_engines_read_as_one() {
        let m = adder(1);
        let mut pair = Lockstep::new(
            NativeDut::with_backend(&m, Backend::Compiled).expect("builds"),
            NativeDut::with_backend(&m, Backend::Interpreted).expect("builds"),
        )
        .expect("same ports");
        pair.set(0, &[41]).expect("an input");
        assert_eq!(pair.get(1).expect("agree"), [42]);
    }

    #[test]
    fn diverging_engines_are_an_error_naming_the_port() {
        let mut pair = Lockstep::new(
            NativeDut::new(&adder(1)).expect("builds"),
            NativeDut::with_backend(&adder(2), Backend::Interpreted).expect("builds"),
        )
        .expect("same ports");
        pair.set(0, &[1]).expect("an input");
        let mut out = [0u64; 1];
        let err = pair.get_into(1, &mut out).expect_err("they differ");
        assert_eq!(
            err.to_string(),
            "engines diverge on port `y` at 0 ps: native 02 vs interpreted 03"
        );
    }
}
