//! VCD output (through the `vcd` crate): selected nets, hierarchical scopes per
//! instance, timescale 1 ps, clocks as toggling signals.
//!
//! Values are written at each time something changes: at every rising edge (after
//! the registers commit and the logic settles), at every falling clock edge (clocks
//! only), and, for inputs set by the user between two edges, at the time of the last
//! edge (they are applied "just after" it, as a testbench driving inputs after an edge).

use crate::instr::Span;
use crate::wide::last_mask;
use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};
use vcd::{IdCode, SimulationCommand, TimescaleUnit, Value, VarType};

/// Which nets a VCD trace records. Top-level clocks are always recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceSelection {
    /// Every net with a name: ports, registers, named wires, of every instance.
    All,
    /// The nets with these (hierarchical) names.
    Names(Vec<String>),
}

/// A net to record.
pub(crate) struct TraceEntry {
    /// Hierarchical name.
    pub name: String,
    /// Storage.
    pub span: Span,
    /// Width in bits.
    pub width: u32,
    /// True for a top-level clock.
    pub clock: bool,
}

/// One VCD variable code: a distinct storage span (aliases share it).
struct Var {
    id: IdCode,
    span: Span,
    width: u32,
    /// Offset of the last written value in `Tracer::last`.
    last: usize,
}

#[derive(Default)]
struct Scope {
    vars: Vec<(String, IdCode, u32)>,
    subs: BTreeMap<String, Scope>,
}

impl Scope {
    fn write<W: Write>(&self, name: &str, out: &mut vcd::Writer<W>) -> io::Result<()> {
        out.add_module(name)?;
        for (reference, id, width) in &self.vars {
            out.var_def(VarType::Wire, *width, *id, reference, None)?;
        }
        for (sub, scope) in &self.subs {
            scope.write(sub, out)?;
        }
        out.upscope()
    }
}

/// An open VCD trace.
pub(crate) struct Tracer {
    out: vcd::Writer<BufWriter<Box<dyn Write + Send>>>,
    vars: Vec<Var>,
    clocks: Vec<usize>,
    last: Vec<u64>,
    time: u64,
}

impl Tracer {
    /// Writes the header and the initial values (at time `now`) of `entries`.
    pub fn start(
        writer: Box<dyn Write + Send>,
        top: &str,
        entries: &[TraceEntry],
        vals: &[u64],
        now: u64,
    ) -> io::Result<Tracer> {
        let mut out = vcd::Writer::new(BufWriter::new(writer));
        out.version("wirespeed sim")?;
        out.timescale(1, TimescaleUnit::PS)?;
        let mut root = Scope::default();
        let mut by_span: BTreeMap<(u32, u32), usize> = BTreeMap::new();
        let mut vars: Vec<Var> = Vec::new();
        let mut clocks = Vec::new();
        let mut last = Vec::new();
        for e in entries {
            let key = (e.span.off, e.width);
            let index = *by_span.entry(key).or_insert_with(|| {
                let v = Var {
                    id: IdCode::from(vars.len() as u32),
                    span: e.span,
                    width: e.width,
                    last: last.len(),
                };
                last.extend_from_slice(&vals[span_range(e.span)]);
                vars.push(v);
                vars.len() - 1
            });
            if e.clock && !clocks.contains(&index) {
                clocks.push(index);
            }
            let mut path: Vec<&str> = e.name.split('.').collect();
            let leaf = path.pop().unwrap_or_default();
            let mut scope = &mut root;
            for p in path {
                scope = scope.subs.entry(p.to_string()).or_default();
            }
            scope.vars.push((leaf.to_string(), vars[index].id, e.width));
        }
        root.write(top, &mut out)?;
        out.enddefinitions()?;
        out.timestamp(now)?;
        out.begin(SimulationCommand::Dumpvars)?;
        let mut t = Tracer {
            out,
            vars,
            clocks,
            last,
            time: now,
        };
        for i in 0..t.vars.len() {
            t.write_var(i)?;
        }
        t.out.end()?;
        Ok(t)
    }

    fn at(&mut self, t: u64) -> io::Result<()> {
        if t != self.time {
            self.out.timestamp(t)?;
            self.time = t;
        }
        Ok(())
    }

    /// Writes var `i`'s value as last recorded.
    fn write_var(&mut self, i: usize) -> io::Result<()> {
        let v = &self.vars[i];
        let words = &self.last[v.last..v.last + v.span.words as usize];
        let bit = |b: u32| -> Value { ((words[(b / 64) as usize] >> (b % 64)) & 1 == 1).into() };
        if v.width == 1 {
            self.out.change_scalar(v.id, bit(0))
        } else {
            self.out.change_vector(v.id, (0..v.width).rev().map(bit))
        }
    }

    /// Records var `i` if its value changed; returns whether it did.
    fn update(&mut self, i: usize, vals: &[u64], t: u64) -> io::Result<()> {
        let v = &self.vars[i];
        let now = &vals[span_range(v.span)];
        let mask = last_mask(v.width);
        let last = &mut self.last[v.last..v.last + v.span.words as usize];
        if now == last {
            return Ok(());
        }
        last.copy_from_slice(now);
        if let Some(top) = last.last_mut() {
            *top &= mask;
        }
        self.at(t)?;
        self.write_var(i)
    }

    /// Writes every recorded net that changed since it was last written, at time `t`.
    pub fn dump(&mut self, vals: &[u64], t: u64) -> io::Result<()> {
        for i in 0..self.vars.len() {
            self.update(i, vals, t)?;
        }
        Ok(())
    }

    /// Writes the clocks that changed, at time `t` (a falling edge: nothing else moves).
    pub fn dump_clocks(&mut self, vals: &[u64], t: u64) -> io::Result<()> {
        for k in 0..self.clocks.len() {
            self.update(self.clocks[k], vals, t)?;
        }
        Ok(())
    }

    /// Flushes buffered output.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

fn span_range(s: Span) -> std::ops::Range<usize> {
    s.off as usize..(s.off + s.words) as usize
}
