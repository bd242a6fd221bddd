//! Text waveforms for snapshot tests: named signals sampled once per cycle of a
//! clock domain, one row per signal (1-bit signals drawn as levels, buses in hex,
//! `.` where a bus keeps its value). The same renderer serves every engine, so a
//! snapshot taken on one must hold on the other.

use crate::dut::{Dut, DutError, NativeDut, VerilatorDut};
use crate::verilator::BuildOptions;
use std::fmt::Write;

/// Sampled values: `rows[s][c]` is signal `s` in cycle `c`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waveform {
    names: Vec<String>,
    widths: Vec<u32>,
    rows: Vec<Vec<Vec<u64>>>,
}

impl Waveform {
    /// Records `cycles` cycles of `signals` (port names): in each cycle `drive`
    /// sets the inputs, the signals are sampled (settled values in that cycle), then
    /// the design steps to the next rising edge of its first domain.
    pub fn record(
        dut: &mut dyn Dut,
        signals: &[&str],
        cycles: u32,
        mut drive: impl FnMut(u32, &mut dyn Dut) -> Result<(), DutError>,
    ) -> Result<Waveform, DutError> {
        let ports: Vec<usize> = signals
            .iter()
            .map(|s| dut.port(s))
            .collect::<Result<_, _>>()?;
        let widths = ports.iter().map(|p| dut.ports()[*p].width).collect();
        let mut rows = vec![Vec::new(); ports.len()];
        for c in 0..cycles {
            drive(c, dut)?;
            for (row, p) in rows.iter_mut().zip(&ports) {
                row.push(dut.get(*p)?);
            }
            dut.step();
        }
        Ok(Waveform {
            names: signals.iter().map(|s| s.to_string()).collect(),
            widths,
            rows,
        })
    }

    /// Records the same window on the native simulator and on Verilator (each reset
    /// for 2 cycles and driven by a fresh `make_drive()`) and returns the rendering;
    /// fails if the two engines render differently.
    pub fn on_both_engines<D>(
        module: &hdl::Module,
        signals: &[&str],
        cycles: u32,
        make_drive: impl Fn() -> D,
    ) -> Result<String, DutError>
    where
        D: FnMut(u32, &mut dyn Dut) -> Result<(), DutError>,
    {
        let mut native = NativeDut::new(module)?;
        native.reset(2);
        let n = Self::record(&mut native, signals, cycles, make_drive())?.render();
        let mut verilator = VerilatorDut::new(module, &BuildOptions::default())?;
        verilator.reset(2);
        let v = Self::record(&mut verilator, signals, cycles, make_drive())?.render();
        if n != v {
            return Err(DutError::BadValue {
                port: "*".into(),
                reason: format!("native and Verilator waveforms differ:\n{n}\n{v}"),
            });
        }
        Ok(n)
    }

    /// The text rendering.
    pub fn render(&self) -> String {
        let cycles = self.rows.first().map_or(0, Vec::len);
        let digits = self
            .widths
            .iter()
            .map(|w| w.div_ceil(4) as usize)
            .max()
            .unwrap_or(1)
            .max(cycles.saturating_sub(1).to_string().len());
        let cell = digits + 1;
        let name_w = self.names.iter().map(String::len).max().unwrap_or(0).max(5);
        let mut out = String::new();
        let _ = write!(out, "{:name_w$} ", "cycle");
        for c in 0..cycles {
            let _ = write!(out, "{c:<cell$}");
        }
        out = out.trim_end().to_string();
        out.push('\n');
        for ((name, width), row) in self.names.iter().zip(&self.widths).zip(&self.rows) {
            let mut line = format!("{name:name_w$} ");
            for (c, v) in row.iter().enumerate() {
                if *width == 1 {
                    let ch = if v.first().copied().unwrap_or(0) == 1 {
                        '‾'
                    } else {
                        '_'
                    };
                    line.extend(std::iter::repeat_n(ch, cell));
                } else if c > 0 && row[c - 1] == *v {
                    let _ = write!(line, "{:<cell$}", ".");
                } else {
                    let hex = hdl::Bits::from_words(v, *width).to_hex();
                    let _ = write!(line, "{hex:<cell$}");
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}
