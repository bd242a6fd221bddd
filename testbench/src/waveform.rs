//! Text waveforms for snapshot tests: named signals sampled once per cycle of a
//! clock domain, one row per signal (1-bit signals drawn as levels, buses in hex,
//! `.` where a bus keeps its value), or, for long windows, one row per cycle
//! with unchanged stretches folded ([`Waveform::render_table`]). A signal is a
//! port name, optionally with a bit range (`m_axis_tdata[63:0]`). The same
//! renderer serves every engine, so a snapshot taken on one must hold on the
//! other.

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
    /// Records `cycles` cycles of `signals` (port names, each optionally with a
    /// bit range `[hi:lo]`): in each cycle `drive` sets the inputs, the signals are
    /// sampled (settled values in that cycle), then the design steps to the next
    /// rising edge of its first domain.
    pub fn record(
        dut: &mut dyn Dut,
        signals: &[&str],
        cycles: u32,
        mut drive: impl FnMut(u32, &mut dyn Dut) -> Result<(), DutError>,
    ) -> Result<Waveform, DutError> {
        let probes: Vec<Probe> = signals
            .iter()
            .map(|s| Probe::parse(dut, s))
            .collect::<Result<_, _>>()?;
        let widths = probes.iter().map(|p| p.width).collect();
        let mut rows = vec![Vec::new(); probes.len()];
        for c in 0..cycles {
            drive(c, dut)?;
            for (row, p) in rows.iter_mut().zip(&probes) {
                row.push(p.sample(dut)?);
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
        Self::record_on_both_engines(module, signals, cycles, make_drive).map(|w| w.render())
    }

    /// As [`Waveform::on_both_engines`], returning the (identical) recording
    /// rather than its default rendering.
    pub fn record_on_both_engines<D>(
        module: &hdl::Module,
        signals: &[&str],
        cycles: u32,
        make_drive: impl Fn() -> D,
    ) -> Result<Waveform, DutError>
    where
        D: FnMut(u32, &mut dyn Dut) -> Result<(), DutError>,
    {
        let mut native = NativeDut::new(module)?;
        native.reset(2);
        let n = Self::record(&mut native, signals, cycles, make_drive())?;
        let mut verilator = VerilatorDut::new(module, &BuildOptions::default())?;
        verilator.reset(2);
        let v = Self::record(&mut verilator, signals, cycles, make_drive())?;
        if n != v {
            let (n, v) = (n.render_table(), v.render_table());
            return Err(DutError::BadValue {
                port: "*".into(),
                reason: format!("native and Verilator waveforms differ:\n{n}\n{v}"),
            });
        }
        Ok(n)
    }

    /// The text rendering as a table: a column per signal (1-bit signals as 0/1,
    /// buses in hex) and a row per cycle, where a run of cycles identical to the
    /// row above is folded into one `… n cycles unchanged` line. Suits windows too
    /// long, or buses too wide, for [`Waveform::render`].
    pub fn render_table(&self) -> String {
        let cycles = self.rows.first().map_or(0, Vec::len);
        let cell = |s: usize, c: usize| -> String {
            let v = &self.rows[s][c];
            if self.widths[s] == 1 {
                v.first().copied().unwrap_or(0).to_string()
            } else {
                hdl::Bits::from_words(v, self.widths[s]).to_hex()
            }
        };
        let cycle_w = cycles.saturating_sub(1).to_string().len().max(5);
        let col_w: Vec<usize> = self
            .names
            .iter()
            .zip(&self.widths)
            .map(|(n, w)| n.len().max(w.div_ceil(4) as usize))
            .collect();
        let mut out = format!("{:>cycle_w$}", "cycle");
        for (name, w) in self.names.iter().zip(&col_w) {
            let _ = write!(out, "  {name:>w$}");
        }
        out.push('\n');
        let same_as_previous = |c: usize| c > 0 && self.rows.iter().all(|r| r[c] == r[c - 1]);
        let mut c = 0;
        while c < cycles {
            if same_as_previous(c) {
                let run = (c..cycles).take_while(|&k| same_as_previous(k)).count();
                let _ = writeln!(out, "{:>cycle_w$}  … {run} cycles unchanged", "");
                c += run;
                continue;
            }
            let _ = write!(out, "{c:>cycle_w$}");
            for (s, w) in col_w.iter().enumerate() {
                let _ = write!(out, "  {:>w$}", cell(s, c));
            }
            out.push('\n');
            c += 1;
        }
        out
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

/// One recorded signal: a port, or a bit range of it.
struct Probe {
    port: usize,
    lo: u32,
    width: u32,
}

impl Probe {
    /// `name` or `name[hi:lo]`, checked against the design's ports.
    fn parse(dut: &dyn Dut, signal: &str) -> Result<Probe, DutError> {
        let bad = |reason: String| DutError::BadValue {
            port: signal.into(),
            reason,
        };
        let (name, range) = match signal.split_once('[') {
            Some((name, rest)) => {
                let range = rest
                    .strip_suffix(']')
                    .and_then(|r| r.split_once(':'))
                    .and_then(|(hi, lo)| Some((hi.trim().parse().ok()?, lo.trim().parse().ok()?)))
                    .ok_or_else(|| bad("a bit range is written `[hi:lo]`".into()))?;
                (name, Some(range))
            }
            None => (signal, None),
        };
        let port = dut.port(name)?;
        let full = dut.ports()[port].width;
        let (hi, lo): (u32, u32) = range.unwrap_or((full - 1, 0));
        if lo > hi || hi >= full {
            return Err(bad(format!(
                "[{hi}:{lo}] is not a bit range of the {full}-bit port `{name}`"
            )));
        }
        Ok(Probe {
            port,
            lo,
            width: hi - lo + 1,
        })
    }

    /// The probed bits in the current cycle.
    fn sample(&self, dut: &mut dyn Dut) -> Result<Vec<u64>, DutError> {
        let words = dut.get(self.port)?;
        let bit = |i: u32| {
            words
                .get((i / 64) as usize)
                .is_some_and(|w| w >> (i % 64) & 1 == 1)
        };
        let mut out = vec![0u64; self.width.div_ceil(64) as usize];
        for i in 0..self.width {
            if bit(self.lo + i) {
                out[(i / 64) as usize] |= 1 << (i % 64);
            }
        }
        Ok(out)
    }
}
