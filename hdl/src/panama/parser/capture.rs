//! The parser's capture stage: as beats are accepted, it keeps the header bytes the
//! classifier reads, the frame's byte count (from `tkeep`) and its source port
//! (from the first beat's `tuser`).
//!
//! Byte registers are made on demand: the classifier asks for the offsets it reads
//! ([`Capture::byte`]) and gets a register that loads byte `o % B` of `tdata` when
//! beat `o / B` of a frame is accepted (`B` = bytes per beat). A register keeps its
//! value until the same beat of a later frame, so bytes past a short frame's end
//! are stale: the classifier only reads a byte after checking the frame is long
//! enough to contain it.

use super::layout::CAPTURE_END;
use super::meta::LEN_WIDTH;
use crate::dsl::{bits_for, AxisBeat, Domain, ModuleBuilder, Signal};
use crate::ir::HdlError;
use std::collections::BTreeMap;

/// The capture registers of one parser and what loads them.
pub(super) struct Capture {
    clk: Domain,
    accept: Signal,
    tdata: Signal,
    beat_index: Signal,
    bytes_per_beat: usize,
    loads: BTreeMap<usize, Signal>,
    bytes: BTreeMap<usize, Signal>,
    /// Bytes of the frame so far (popcount of `tkeep` summed over its beats),
    /// saturating at 65535; complete once the last beat has been accepted.
    pub len: Signal,
    /// `tuser[23:16]` of the frame's first beat.
    pub src_port: Signal,
}

/// The beat's field `field`, which every packet stream has.
pub(super) fn required(
    field: Option<Signal>,
    module: &str,
    what: &str,
) -> Result<Signal, HdlError> {
    field.ok_or_else(|| {
        HdlError::parameter(module, what, "the AXI-Stream interface has no such signal")
    })
}

impl Capture {
    /// Builds the beat counter, the length counter and the source-port register;
    /// `accept` is the input handshake (`tvalid && tready`).
    pub fn new(
        m: &mut ModuleBuilder,
        clk: Domain,
        accept: Signal,
        beat: &AxisBeat,
        data_width: u32,
    ) -> Result<Self, HdlError> {
        let module = m.name().to_string();
        let tkeep = required(beat.tkeep, &module, "s_axis_tkeep")?;
        let tuser = required(beat.tuser, &module, "s_axis_tuser")?;
        let tlast = required(beat.tlast, &module, "s_axis_tlast")?;
        let bytes_per_beat = (data_width / 8) as usize;

        // Index of the next beat within the frame, saturating once past the
        // captured header beats (0 = the next beat starts a frame).
        let beats = CAPTURE_END.div_ceil(bytes_per_beat) as u32;
        let idx_width = bits_for(beats);
        let beat_index = m.reg(clk, "beat_index", idx_width);
        let past = m.eq_const(beat_index, u64::from(beats));
        let inc = m.add_const_wrap(beat_index, 1);
        let advanced = m.mux(past, beat_index, inc);
        let zero_idx = m.zeros(idx_width);
        let next_idx = m.mux(tlast, zero_idx, advanced);
        m.set_next(beat_index, next_idx);
        m.set_enable(beat_index, accept);
        let first = m.eq_const(beat_index, 0);
        let first = m.named("first_beat", first);

        // Frame length from tkeep, saturating.
        let len = m.reg(clk, "frame_len", LEN_WIDTH);
        let zero_len = m.zeros(LEN_WIDTH);
        let base = m.mux(first, zero_len, len);
        let count = m.popcount(tkeep);
        let count = m.named("beat_bytes", count);
        let count = m.zext(count, LEN_WIDTH);
        let sum = m.add(base, count);
        let sum = m.named("frame_len_sum", sum);
        let carry = m.msb(sum);
        let low = m.truncate(sum, LEN_WIDTH);
        let full = m.ones(LEN_WIDTH);
        let len_next = m.mux(carry, full, low);
        m.set_next(len, len_next);
        m.set_enable(len, accept);

        let src = m.slice(tuser, 16, 8);
        let load_src = m.and(accept, first);
        let src_port = m.register_en(clk, "src_port", src, load_src);

        Ok(Capture {
            clk,
            accept,
            tdata: beat.tdata,
            beat_index,
            bytes_per_beat,
            loads: BTreeMap::new(),
            bytes: BTreeMap::new(),
            len,
            src_port,
        })
    }

    /// The captured frame byte at `offset` (register `hdr_b{offset}`), made on the
    /// first request. Offsets at or past [`CAPTURE_END`] are not captured.
    pub fn byte(&mut self, m: &mut ModuleBuilder, offset: usize) -> Result<Signal, HdlError> {
        if offset >= CAPTURE_END {
            return Err(HdlError::parameter(
                m.name(),
                "header offset",
                format!("byte {offset} is past the captured header bytes 0..{CAPTURE_END}"),
            ));
        }
        if let Some(b) = self.bytes.get(&offset) {
            return Ok(*b);
        }
        let beat = offset / self.bytes_per_beat;
        let lane = (offset % self.bytes_per_beat) as u32;
        let load = match self.loads.get(&beat) {
            Some(l) => *l,
            None => {
                let here = m.eq_const(self.beat_index, beat as u64);
                let l = m.and(self.accept, here);
                let l = m.named(&format!("load_beat{beat}"), l);
                self.loads.insert(beat, l);
                l
            }
        };
        let value = m.slice(self.tdata, 8 * lane, 8);
        let r = m.reg_no_reset(self.clk, &format!("hdr_b{offset}"), 8);
        m.set_next(r, value);
        m.set_enable(r, load);
        self.bytes.insert(offset, r);
        Ok(r)
    }

    /// `n` captured bytes from `offset` as one big-endian (network order) value.
    pub fn be(
        &mut self,
        m: &mut ModuleBuilder,
        offset: usize,
        n: usize,
    ) -> Result<Signal, HdlError> {
        let parts = (offset..offset + n)
            .map(|o| self.byte(m, o))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(m.concat(&parts))
    }
}
