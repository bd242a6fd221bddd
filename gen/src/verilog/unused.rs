//! Bit-level bookkeeping of which bits of each net the emitted Verilog reads, and the
//! `_unused_ok` line that names every bit nothing reads.
//!
//! Verilator's `-Wall` reports signals (and parts of signals) that are never read
//! (UNUSEDSIGNAL). Its default `--unused-regexp` is `*unused*`: reading a bit inside a
//! wire whose name contains `unused` silences the warning for that bit only. So every
//! bit the module does not read is collected into one
//! `wire _unused_ok = &{1'b0, ..., 1'b0};`, the lowRISC idiom.

use super::expr::select;
use super::names::ModuleNames;
use hdl::ir::{Direction, NetId};
use hdl::Module;

/// Which bits of each net have been referenced.
#[derive(Debug)]
pub(crate) struct Usage {
    /// Per net, one bit per net bit, packed in `u64` words.
    used: Vec<Vec<u64>>,
    widths: Vec<u32>,
    /// Helper signals (not IR nets) that are partly unread, as Verilog expressions.
    extra: Vec<String>,
}

impl Usage {
    /// Nothing read yet; output ports count as read (by whatever instantiates the module).
    pub(crate) fn new(m: &Module) -> Self {
        let widths: Vec<u32> = m.nets.iter().map(|n| n.width).collect();
        let used = widths
            .iter()
            .map(|w| vec![0u64; (*w as usize).div_ceil(64)])
            .collect();
        let mut u = Usage {
            used,
            widths,
            extra: Vec::new(),
        };
        for p in &m.ports {
            if p.direction == Direction::Output {
                u.read_all(p.net);
            }
        }
        u
    }

    /// Marks every bit of `net` as read.
    pub(crate) fn read_all(&mut self, net: NetId) {
        let w = self.widths[net.0 as usize];
        self.read(net, 0, w);
    }

    /// Marks bits `lo .. hi` (exclusive) of `net` as read.
    pub(crate) fn read(&mut self, net: NetId, lo: u32, hi: u32) {
        let words = &mut self.used[net.0 as usize];
        for i in lo..hi {
            words[(i / 64) as usize] |= 1u64 << (i % 64);
        }
    }

    /// Records a helper expression whose bits nothing reads.
    pub(crate) fn unread_helper(&mut self, expr: String) {
        self.extra.push(expr);
    }

    /// Unread bit ranges `(net, hi, lo)` (inclusive, most significant range first per net),
    /// nets in id order.
    fn unread_ranges(&self) -> Vec<(NetId, u32, u32)> {
        let mut out = Vec::new();
        for (i, words) in self.used.iter().enumerate() {
            let w = self.widths[i];
            let is_used = |b: u32| words[(b / 64) as usize] >> (b % 64) & 1 == 1;
            let mut ranges = Vec::new();
            let mut b = 0;
            while b < w {
                if is_used(b) {
                    b += 1;
                    continue;
                }
                let lo = b;
                while b < w && !is_used(b) {
                    b += 1;
                }
                ranges.push((NetId(i as u32), b - 1, lo));
            }
            ranges.reverse();
            out.extend(ranges);
        }
        out
    }

    /// The `_unused_ok` declaration (wrapped lines, indented by four spaces), or `None`
    /// when every bit is read. `name` is the wire's (unique) name.
    pub(crate) fn unused_wire(&self, names: &ModuleNames, name: &str) -> Option<String> {
        let mut parts: Vec<String> = self
            .unread_ranges()
            .into_iter()
            .map(|(net, hi, lo)| select(names.net(net), self.widths[net.0 as usize], hi, lo))
            .collect();
        parts.extend(self.extra.iter().cloned());
        if parts.is_empty() {
            return None;
        }
        let mut text = format!("    wire {name} = &{{1'b0");
        let mut line_len = text.len();
        for p in parts {
            if line_len + p.len() + 2 > 96 {
                text.push_str(",\n       ");
                line_len = 7;
            } else {
                text.push_str(", ");
                line_len += 2;
            }
            line_len += p.len();
            text.push_str(&p);
        }
        text.push_str(", 1'b0};\n");
        Some(text)
    }
}
