//! The classifier: combinational logic from the captured header bytes and the frame
//! length to the metadata record. It mirrors `testbench::panama::classify` check for
//! check; every byte it reads is guarded by a length check that proves the frame
//! contains it (the capture registers of bytes past a frame's end are stale).

use super::capture::Capture;
use super::layout as at;
use super::meta::{FrameClass, Reason, CLASS_WIDTH, LEN_WIDTH, REASON_WIDTH};
use crate::dsl::{ModuleBuilder, Signal};
use crate::ir::HdlError;

/// The metadata of the frame whose bytes are in the capture registers. Header
/// fields and ECN are 0 unless the class is aggregation.
pub(super) struct Record {
    pub class: Signal,
    pub reason: Signal,
    pub ecn: Signal,
    pub job_id: Signal,
    pub tree_id: Signal,
    pub format: Signal,
    pub seq: Signal,
    pub worker_id: Signal,
    pub elem_count: Signal,
}

fn ge_len(m: &mut ModuleBuilder, len: Signal, bytes: usize) -> Signal {
    let k = m.lit(bytes as u64, LEN_WIDTH);
    m.ge(len, k)
}

/// True if the frame is IPv4 + UDP to `agg_udp_port` (`is_aggregation`): EtherType
/// 0x0800, version 4, IHL ≥ 5, protocol 17, fragment offset 0, and the UDP
/// destination port behind the IPv4 header (and its options) visible and equal.
fn is_aggregation(
    m: &mut ModuleBuilder,
    cap: &mut Capture,
    agg_udp_port: Signal,
) -> Result<Signal, HdlError> {
    let len = cap.len;
    let long_enough = ge_len(m, len, at::MIN_IPV4);
    let ethertype = cap.be(m, at::ETHERTYPE, 2)?;
    let ipv4 = m.eq_const(ethertype, 0x0800);
    let vihl = cap.byte(m, at::IPV4_VIHL)?;
    let version = m.slice(vihl, 4, 4);
    let version4 = m.eq_const(version, 4);
    let ihl = m.slice(vihl, 0, 4);
    let proto = cap.byte(m, at::IPV4_PROTO)?;
    let udp = m.eq_const(proto, 17);
    let frag = cap.be(m, at::IPV4_FRAG, 2)?;
    let frag_offset = m.slice(frag, 0, 13);
    let first_fragment = m.eq_const(frag_offset, 0);
    let mut port_hits = Vec::new();
    for words in 5..=15usize {
        let this_ihl = m.eq_const(ihl, words as u64);
        let at_port = at::udp_dst_port(words);
        let visible = ge_len(m, len, at_port + 2);
        let port = cap.be(m, at_port, 2)?;
        let same = m.eq(port, agg_udp_port);
        let hit = m.and_all(&[this_ihl, visible, same]);
        port_hits.push(m.named(&format!("agg_port_at_ihl{words}"), hit));
    }
    let port_hit = m.or_all(&port_hits);
    let is_agg = m.and_all(&[long_enough, ipv4, version4, udp, first_fragment, port_hit]);
    Ok(m.named("is_aggregation", is_agg))
}

/// The malformation checks of an aggregation frame, each a 1-bit "fails" signal,
/// in [`Reason::CHECKS`] order.
fn checks(
    m: &mut ModuleBuilder,
    cap: &mut Capture,
    max_payload_bytes: u32,
) -> Result<Vec<(Reason, Signal)>, HdlError> {
    let len = cap.len;
    let complete = ge_len(m, len, at::HEADERS);
    let truncated = m.not(complete);
    let vihl = cap.byte(m, at::IPV4_VIHL)?;
    let ihl = m.slice(vihl, 0, 4);
    let ihl5 = m.eq_const(ihl, 5);
    let options = m.not(ihl5);
    let frag = cap.byte(m, at::IPV4_FRAG)?;
    let more_fragments = m.bit(frag, 5);
    let total_len = cap.be(m, at::IPV4_TOTAL_LEN, 2)?;
    let after_eth = m.sub_const_wrap(len, at::IPV4 as u64);
    let ip_len_bad = m.ne(total_len, after_eth);
    let udp_len = cap.be(m, at::UDP_LEN, 2)?;
    let after_ip = m.sub_const_wrap(len, at::UDP as u64);
    let udp_len_bad = m.ne(udp_len, after_ip);
    let version = cap.byte(m, at::VERSION)?;
    let version1 = m.eq_const(version, 1);
    let version_bad = m.not(version1);
    let flags = cap.byte(m, at::FLAGS)?;
    let flags_bad = m.reduce_or(flags);
    let format = cap.byte(m, at::FORMAT)?;
    let last_code = m.lit(2, 8);
    let format_bad = m.gt(format, last_code);
    let payload = m.sub_const_wrap(len, at::HEADERS as u64);
    let empty = m.eq_const(payload, 0);
    let granule = m.slice(payload, 0, 6);
    let ragged = m.reduce_or(granule);
    let payload_bad = m.or(empty, ragged);
    let max = m.lit(u64::from(max_payload_bytes), LEN_WIDTH);
    let too_long = m.gt(payload, max);
    let elem_count = cap.be(m, at::ELEM_COUNT, 2)?;
    let fp32 = m.eq_const(format, 0);
    let z2 = m.zeros(2);
    let z1 = m.zeros(1);
    let times4 = m.concat(&[elem_count, z2]);
    let times2 = m.concat(&[z1, elem_count, z1]);
    let count_bytes = m.mux(fp32, times4, times2);
    let payload18 = m.zext(payload, LEN_WIDTH + 2);
    let count_bad = m.ne(count_bytes, payload18);
    Ok(vec![
        (Reason::Truncated, truncated),
        (Reason::Ipv4Options, options),
        (Reason::Fragmented, more_fragments),
        (Reason::Ipv4Length, ip_len_bad),
        (Reason::UdpLength, udp_len_bad),
        (Reason::Version, version_bad),
        (Reason::Flags, flags_bad),
        (Reason::UnknownFormat, format_bad),
        (Reason::PayloadLength, payload_bad),
        (Reason::PayloadTooLong, too_long),
        (Reason::ElemCount, count_bad),
    ])
}

/// `value` where `keep` is 1, else 0.
fn gate(m: &mut ModuleBuilder, keep: Signal, value: Signal) -> Signal {
    let zero = m.zeros(value.width());
    m.mux(keep, value, zero)
}

/// The record of the frame in the capture registers, for the parser's
/// `agg_udp_port` and `max_payload_bytes`.
pub(super) fn classify(
    m: &mut ModuleBuilder,
    cap: &mut Capture,
    agg_udp_port: Signal,
    max_payload_bytes: u32,
) -> Result<Record, HdlError> {
    let is_agg = is_aggregation(m, cap, agg_udp_port)?;
    let failed = checks(m, cap, max_payload_bytes)?;
    let cases: Vec<(Signal, Signal)> = failed
        .iter()
        .map(|(r, fails)| (*fails, m.lit(r.code(), REASON_WIDTH)))
        .collect();
    let none = m.lit(Reason::None.code(), REASON_WIDTH);
    let first_failure = m.select(&cases, none);
    let malformed_bit = m.ne(first_failure, none);
    let malformed = m.and(is_agg, malformed_bit);
    let well_formed = m.not(malformed_bit);
    let good = m.and(is_agg, well_formed);
    let good = m.named("well_formed_aggregation", good);

    let bypass = m.lit(FrameClass::Bypass.code(), CLASS_WIDTH);
    let agg = m.lit(FrameClass::Aggregation.code(), CLASS_WIDTH);
    let bad = m.lit(FrameClass::Malformed.code(), CLASS_WIDTH);
    let class = m.select(&[(malformed, bad), (good, agg)], bypass);
    let reason = gate(m, is_agg, first_failure);

    let tos = cap.byte(m, at::IPV4_TOS)?;
    let ecn = m.slice(tos, 0, 2);
    let job_id = cap.be(m, at::JOB_ID, 2)?;
    let tree_id = cap.byte(m, at::TREE_ID)?;
    let format = cap.byte(m, at::FORMAT)?;
    let format = m.slice(format, 0, 2);
    let seq = cap.be(m, at::SEQ, 4)?;
    let worker_id = cap.be(m, at::WORKER_ID, 2)?;
    let elem_count = cap.be(m, at::ELEM_COUNT, 2)?;
    Ok(Record {
        class,
        reason,
        ecn: gate(m, good, ecn),
        job_id: gate(m, good, job_id),
        tree_id: gate(m, good, tree_id),
        format: gate(m, good, format),
        seq: gate(m, good, seq),
        worker_id: gate(m, good, worker_id),
        elem_count: gate(m, good, elem_count),
    })
}
