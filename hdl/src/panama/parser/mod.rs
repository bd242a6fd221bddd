//! The PANAMA header parser and classifier: the accelerator's first stage. It
//! passes every frame through unchanged and, with each frame's last beat, reports
//! what the frame is (bypass, aggregation or malformed) and, for aggregation
//! frames, the PANAMA header fields the later stages need.
//!
//! # Interface
//!
//! One clock domain `clk`: clock `axis_aclk`, reset `axis_resetn` (active low,
//! synchronous), NetFPGA style.
//! - `s_axis_{tdata,tkeep,tuser,tvalid,tready,tlast}`: whole Ethernet frames (no
//!   preamble, no FCS), byte 0 of a frame in `tdata[7:0]` of its first beat;
//!   `tuser` is 128 bits, NetFPGA layout (`[15:0]` length, `[23:16]` source port
//!   one-hot, `[31:24]` destination).
//! - `agg_udp_port[16]`: the UDP destination port of aggregation packets (from a
//!   register); it is read while a frame's last beat sits in the parse stage, so
//!   change it only between frames.
//! - `m_axis_*`: the same beats (`tdata`, `tkeep`, `tuser`, `tlast` bit for bit), in
//!   order, none dropped or added.
//! - `m_meta_valid` and the `m_meta_*` fields of [`meta::FIELDS`].
//!
//! # Timing
//!
//! Two register stages: the parse stage (`a_*`, which also loads the header
//! capture registers) and the output skid buffer ([`crate::blocks::skid::axis_skid`],
//! instance `u_out`). A beat offered and accepted in cycle *c* (the rising edge that
//! ends cycle *c* takes it) is presented on `m_axis_*` in cycle *c* + [`LATENCY`]
//! (= 2): the edge ending *c* loads the parse stage, the next one the skid
//! buffer's output register. With `m_axis_tready` held at 1 the parser accepts
//! one beat every cycle, for any frame lengths and any mix of frames (no bubbles).
//! `s_axis_tready` is `!a_valid || u_out.s_axis_tready`: registers only, no
//! combinational path from `m_axis_tready` or any input. Up to three beats are held
//! (one in the parse stage, two in the skid buffer). All outputs come from registers.
//!
//! # Frame length
//!
//! The length of a frame is the number of bytes it carries: the sum over its beats
//! of the number of 1 bits of `tkeep` (`tuser[15:0]` is passed through but not
//! read), saturating at 65535. Header byte *o* is taken from lane `o mod B` of beat
//! `o div B` (`B` = `data_width / 8`), so, as on every NetFPGA stream, `tkeep` must
//! be all ones on every beat but the last, and a prefix of ones on the last.
//!
//! # Metadata
//!
//! `m_meta_valid` = `m_axis_tvalid && m_axis_tlast`: the record belongs to the frame
//! whose last beat is on `m_axis_*` and is consumed with that beat (it stays put
//! while the beat is stalled). Whenever `m_meta_valid` is 0, all `m_meta_*` fields
//! are 0.
//! Fields:
//!
//! | port | bits | value |
//! |---|---|---|
//! | `m_meta_class` | 2 | [`FrameClass`]: 0 bypass, 1 aggregation, 2 malformed |
//! | `m_meta_reason` | 4 | [`Reason`] code for malformed frames, else 0 |
//! | `m_meta_len` | 16 | frame length in bytes (every class) |
//! | `m_meta_src_port` | 8 | `tuser[23:16]` of the frame's first beat (every class) |
//! | `m_meta_ecn` | 2 | IPv4 ECN (byte 15, bits 1:0) |
//! | `m_meta_job_id` | 16 | PANAMA `job_id` |
//! | `m_meta_tree_id` | 8 | PANAMA `tree_id` |
//! | `m_meta_format` | 2 | PANAMA `format` (0 fp32, 1 bf16, 2 fp16) |
//! | `m_meta_seq` | 32 | PANAMA `seq` |
//! | `m_meta_worker_id` | 16 | PANAMA `worker_id` |
//! | `m_meta_elem_count` | 16 | PANAMA `elem_count` |
//!
//! ECN and the PANAMA fields are decoded from network byte order (the first byte
//! on the wire is the most significant) and are 0 unless the class is aggregation.
//! The little-endian payload is not read.
//!
//! # Classification (as `testbench::panama::classify`)
//!
//! A frame is an **aggregation packet** when it has at least 34 bytes, EtherType
//! 0x0800 at bytes 12–13 (a VLAN-tagged frame is not one), IPv4 version 4 with
//! IHL ≥ 5, protocol 17, fragment offset 0, and a UDP destination port — at byte
//! 16 + 4·IHL, behind any IPv4 options — that the frame is long enough to contain
//! and that equals `agg_udp_port`. Every other frame is **bypass**. An aggregation
//! packet is **malformed** when a check fails; the first failing check, in this
//! order, is the reason:
//!
//! | code | [`Reason`] | check fails when |
//! |---|---|---|
//! | 0 | `None` | (bypass, or well-formed aggregation) |
//! | 1 | `Truncated` | length < 64 |
//! | 2 | `Ipv4Options` | IHL ≠ 5 |
//! | 3 | `Fragmented` | more-fragments flag (byte 20, bit 5) set |
//! | 4 | `Ipv4Length` | IPv4 total length ≠ length − 14 |
//! | 5 | `UdpLength` | UDP length ≠ length − 34 |
//! | 6 | `Version` | PANAMA version ≠ 1 |
//! | 7 | `Flags` | PANAMA flags ≠ 0 |
//! | 8 | `UnknownFormat` | format code > 2 |
//! | 9 | `PayloadLength` | payload = length − 64 is 0 or not a multiple of 64 |
//! | 10 | `PayloadTooLong` | payload > `max_payload_bytes` |
//! | 11 | `ElemCount` | `elem_count` × (4 for fp32, else 2) ≠ payload |
//!
//! Not checked: checksums, addresses, TTL, DSCP, `bitmap`, `reserved`. A frame
//! whose format is not the instance's is well-formed here (later stages drop it).

mod capture;
mod classify;
pub mod layout;
pub mod meta;

pub use meta::{FrameClass, Reason};

use crate::blocks::skid::axis_skid;
use crate::dsl::{AxisBeat, AxisConfig, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};
use capture::{required, Capture};

/// Width of `tuser` (NetFPGA).
pub const USER_WIDTH: u32 = 128;
/// Cycles from the cycle a beat is accepted on `s_axis` to the first cycle it is
/// presented on `m_axis` (two register stages).
pub const LATENCY: u32 = 2;
/// The data widths the parser supports.
pub const DATA_WIDTHS: [u32; 3] = [256, 512, 1024];
/// The spec's default `max_payload_bytes`.
pub const DEFAULT_MAX_PAYLOAD_BYTES: u32 = 1024;
/// Largest `max_payload_bytes`: the payload of the longest frame whose length fits
/// 16 bits, rounded down to a multiple of 64.
pub const MAX_MAX_PAYLOAD_BYTES: u32 = 65_472;

const NAME: &str = "panama_parser";

/// Generator parameters of the parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParserConfig {
    /// `tdata` width in bits: 256, 512 or 1024.
    pub data_width: u32,
    /// Largest accepted payload in bytes: a multiple of 64, 64..=65472.
    pub max_payload_bytes: u32,
}

impl Default for ParserConfig {
    /// 256-bit data (NetFPGA-SUME), [`DEFAULT_MAX_PAYLOAD_BYTES`].
    fn default() -> Self {
        ParserConfig::new(256)
    }
}

impl ParserConfig {
    /// A parser for `data_width`-bit data and the default `max_payload_bytes`.
    pub fn new(data_width: u32) -> Self {
        ParserConfig {
            data_width,
            max_payload_bytes: DEFAULT_MAX_PAYLOAD_BYTES,
        }
    }

    /// Checks the parameters; the error names the bad one and says why.
    pub fn validate(&self) -> Result<(), HdlError> {
        if !DATA_WIDTHS.contains(&self.data_width) {
            return Err(HdlError::parameter(
                NAME,
                "data_width",
                format!(
                    "{} is not one of {DATA_WIDTHS:?} (the NetFPGA datapath widths)",
                    self.data_width
                ),
            ));
        }
        let p = self.max_payload_bytes;
        if p == 0 || !p.is_multiple_of(64) || p > MAX_MAX_PAYLOAD_BYTES {
            return Err(HdlError::parameter(
                NAME,
                "max_payload_bytes",
                format!("{p} is not a multiple of 64 in 64..={MAX_MAX_PAYLOAD_BYTES}"),
            ));
        }
        Ok(())
    }

    /// The generated module's name: `panama_parser_w{data_width}_p{max_payload_bytes}`.
    pub fn module_name(&self) -> String {
        format!("{NAME}_w{}_p{}", self.data_width, self.max_payload_bytes)
    }
}

/// Generates the parser (see the module docs for ports, timing and metadata).
pub fn parser(cfg: &ParserConfig) -> Result<Module, HdlError> {
    cfg.validate()?;
    let name = cfg.module_name();
    let axis = AxisConfig::packets(cfg.data_width, USER_WIDTH);
    let record_width = meta::record_width();
    let out_buffer = axis_skid(&AxisConfig::packets(
        cfg.data_width,
        USER_WIDTH + record_width,
    ))?;

    let mut m = ModuleBuilder::new(&name);
    let clk = m.domain(
        "clk",
        "axis_aclk",
        Some("axis_resetn"),
        ResetPolarity::ActiveLow,
    );
    let s = m.axis_in("s_axis", &axis);
    let agg_udp_port = m.input("agg_udp_port", 16);
    let o = m.axis_out("m_axis", &axis);
    let meta_valid = m.output_wire("m_meta_valid", 1);
    let meta_ports: Vec<Signal> = meta::FIELDS
        .iter()
        .map(|(port, width)| m.output_wire(port, *width))
        .collect();

    let u = m.instance("u_out", &out_buffer);
    m.bind_domain(u, "clk", clk);
    let out_ready = m.instance_output(u, "s_axis_tready");

    // Parse stage: one beat, loaded on the input handshake.
    let a_valid = m.reg(clk, "a_valid", 1);
    let a_empty = m.not(a_valid);
    let s_ready = m.or(a_empty, out_ready);
    let s_ready = m.named("s_ready", s_ready);
    let accept = m.and(s.tvalid, s_ready);
    let accept = m.named("accept", accept);
    let out_stalled = m.not(out_ready);
    let a_stays = m.and(a_valid, out_stalled);
    let a_next = m.or(accept, a_stays);
    m.set_next(a_valid, a_next);
    let in_beat = s.beat.pack(&mut m);
    let a_beat_q = m.reg_no_reset(clk, "a_beat", in_beat.width());
    m.set_next(a_beat_q, in_beat);
    m.set_enable(a_beat_q, accept);
    let a_beat = AxisBeat::unpack(&mut m, &axis, a_beat_q);
    let a_last = required(a_beat.tlast, &name, "tlast")?;
    let a_user = required(a_beat.tuser, &name, "tuser")?;
    let a_keep = required(a_beat.tkeep, &name, "tkeep")?;

    // Header capture and classification of the frame whose last beat is in `a`.
    let mut cap = Capture::new(&mut m, clk, accept, &s.beat, cfg.data_width)?;
    let rec = classify::classify(&mut m, &mut cap, agg_udp_port, cfg.max_payload_bytes)?;
    let fields = [
        rec.class,
        rec.reason,
        cap.len,
        cap.src_port,
        rec.ecn,
        rec.job_id,
        rec.tree_id,
        rec.format,
        rec.seq,
        rec.worker_id,
        rec.elem_count,
    ];
    let record = m.join_lanes(&fields);
    let record = m.named("a_record", record);

    // Output skid buffer: the record travels in tuser's upper bits.
    let user_and_record = m.concat(&[record, a_user]);
    m.connect(u, "s_axis_tdata", a_beat.tdata);
    m.connect(u, "s_axis_tkeep", a_keep);
    m.connect(u, "s_axis_tuser", user_and_record);
    m.connect(u, "s_axis_tlast", a_last);
    m.connect(u, "s_axis_tvalid", a_valid);
    m.connect(u, "m_axis_tready", o.tready);
    m.assign(s.tready, s_ready);

    let out_valid = m.instance_output(u, "m_axis_tvalid");
    let out_data = m.instance_output(u, "m_axis_tdata");
    let out_keep = m.instance_output(u, "m_axis_tkeep");
    let out_user = m.instance_output(u, "m_axis_tuser");
    let out_last = m.instance_output(u, "m_axis_tlast");
    let user = m.slice(out_user, 0, USER_WIDTH);
    let out_beat = AxisBeat {
        tdata: out_data,
        tkeep: Some(out_keep),
        tuser: Some(user),
        tlast: Some(out_last),
    };
    m.assign(o.tvalid, out_valid);
    m.drive_beat(&o.beat, &out_beat);
    let valid_last = m.and(out_valid, out_last);
    let valid_last = m.named("out_frame_end", valid_last);
    m.assign(meta_valid, valid_last);
    let stored = m.slice(out_user, USER_WIDTH, record_width);
    let no_record = m.zeros(record_width);
    let shown = m.mux(valid_last, stored, no_record);
    let mut lo = 0;
    for (port, (_, width)) in meta_ports.iter().zip(meta::FIELDS) {
        let field = m.slice(shown, lo, width);
        m.assign(*port, field);
        lo += width;
    }
    m.finish()
}
