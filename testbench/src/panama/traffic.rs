//! Seeded traffic for the accelerator: jobs' gradient tensors chunked into worker
//! packets, background (bypass) frames, random interleavings, and defective frames
//! and streams.
//!
//! Every generator takes the caller's rng (seed it with [`crate::rng::seeded`]) so a
//! failing test can be replayed.

use super::config::GoldenConfig;
use super::frame::{AggPacket, FrameError};
use super::golden::InFrame;
use super::header::{
    elem_bytes, offset, HEADERS_LEN, IPV4_LEN, IPV4_OFFSET, PANAMA_OFFSET, PAYLOAD_GRANULE,
    UDP_OFFSET,
};
use etherparse::{
    ArpEthIpv4Packet, ArpOperation, ArpPacket, EtherType, Ethernet2Header, PacketBuilder,
};
use hdl::blocks::fp::FpFormat;
use rand::Rng;

/// Which values the random elements take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Values {
    /// Small integers in −8..=8: every sum of up to 8 of them is exact in all three
    /// formats, so expected sums can be computed with integer arithmetic.
    SmallIntegers,
    /// Finite values with exponents within ±8 of 1.0 and random fractions: sums round.
    Finite,
    /// Like `Finite`, with about one in 16 elements special: ±0, ±∞, NaNs (quiet and
    /// signalling), subnormals, the largest finite values.
    WithSpecials,
}

/// The value `v` (exactly representable) as bits of `format`.
pub fn from_f32(format: FpFormat, v: f32) -> u64 {
    crate::golden::fp::from_f64(format, f64::from(v))
}

/// One random element of `format`.
pub fn random_element(rng: &mut impl Rng, format: FpFormat, values: Values) -> u64 {
    let (e, m) = (format.exp_bits(), format.frac_bits());
    let bias = (1u64 << (e - 1)) - 1;
    let sign = u64::from(rng.gen::<bool>()) << (e + m);
    let exp_all = (1u64 << e) - 1;
    match values {
        Values::SmallIntegers => from_f32(format, rng.gen_range(-8i32..=8) as f32),
        Values::WithSpecials if rng.gen_ratio(1, 16) => {
            let special = match rng.gen_range(0..7) {
                0 => 0,                                                  // zero
                1 => exp_all << m,                                       // infinity
                2 => (exp_all << m) | (1 << (m - 1)),                    // quiet NaN
                3 => (exp_all << m) | rng.gen_range(1..1u64 << (m - 1)), // signalling NaN
                4 => rng.gen_range(1..1u64 << m),                        // subnormal
                5 => ((exp_all - 1) << m) | ((1 << m) - 1),              // largest finite
                _ => 1,                                                  // smallest subnormal
            };
            sign | special
        }
        _ => {
            let exp = bias - 8 + rng.gen_range(0..=16);
            sign | (exp << m) | rng.gen_range(0..1u64 << m)
        }
    }
}

/// A job as the traffic generator sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSpec {
    /// Job id.
    pub job_id: u16,
    /// Tree id.
    pub tree_id: u8,
    /// Port indices of its workers (one worker per port; worker_id = position here).
    pub ports: Vec<usize>,
    /// Tensor length in elements (per worker).
    pub elements: usize,
    /// Payload bytes per packet: a non-zero multiple of 64.
    pub payload_bytes: usize,
}

/// What one worker sends for a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerStream {
    /// Port index of the worker.
    pub port: usize,
    /// Its tensor (`elements` values).
    pub tensor: Vec<u64>,
    /// Its packets in sending order; seq = chunk number. The last chunk is padded
    /// with +0.0 to a whole packet.
    pub packets: Vec<AggPacket>,
}

/// Every worker's tensor and packets for `job`, in `format`, to `agg_udp_port`.
/// With `random_headers`, each packet's ECN is random and each worker's headers
/// are its own ([`WorkerHeader`]), every second packet's identification making
/// its result's checksum carry twice ([`carrying_identification`]).
pub fn job_streams(
    rng: &mut impl Rng,
    job: &JobSpec,
    format: FpFormat,
    agg_udp_port: u16,
    values: Values,
    random_headers: bool,
) -> Vec<WorkerStream> {
    let per_packet = (job.payload_bytes / elem_bytes(format)).max(1);
    job.ports
        .iter()
        .enumerate()
        .map(|(worker, &port)| {
            let own = random_headers.then(|| WorkerHeader::random(rng));
            let tensor: Vec<u64> = (0..job.elements)
                .map(|_| random_element(rng, format, values))
                .collect();
            let packets = tensor
                .chunks(per_packet)
                .enumerate()
                .map(|(seq, chunk)| {
                    let mut payload = chunk.to_vec();
                    payload.resize(per_packet, 0);
                    let mut p = AggPacket::new(
                        format,
                        job.job_id,
                        job.tree_id,
                        seq as u32,
                        worker as u16,
                        agg_udp_port,
                        payload,
                    );
                    if let Some(own) = &own {
                        own.apply(&mut p);
                        p.ecn = rng.gen_range(0..4);
                        if seq % 2 == 0 {
                            p.identification = carrying_identification(&p);
                        }
                    }
                    p
                })
                .collect();
            WorkerStream {
                port,
                tensor,
                packets,
            }
        })
        .collect()
}

/// A worker's own header fields: random MAC and IPv4 addresses (the MACs
/// unicast and locally administered), DSCP, TTL and a non-zero UDP checksum, so
/// that a result header's address swaps, ToS and UDP checksum see bytes that
/// differ from what they replace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkerHeader {
    /// Ethernet destination.
    pub dst_mac: [u8; 6],
    /// Ethernet source.
    pub src_mac: [u8; 6],
    /// IPv4 source.
    pub src_ip: [u8; 4],
    /// IPv4 destination.
    pub dst_ip: [u8; 4],
    /// IPv4 DSCP (0–63).
    pub dscp: u8,
    /// IPv4 time to live (1–255).
    pub ttl: u8,
    /// UDP checksum (1–65535; the accelerator does not check it).
    pub udp_checksum: u16,
}

impl WorkerHeader {
    /// Fields drawn from `rng`.
    pub fn random(rng: &mut impl Rng) -> Self {
        let mut mac = || {
            let mut m: [u8; 6] = rng.gen();
            m[0] = (m[0] & 0xFC) | 0x02;
            m
        };
        let (dst_mac, src_mac) = (mac(), mac());
        WorkerHeader {
            dst_mac,
            src_mac,
            src_ip: rng.gen(),
            dst_ip: rng.gen(),
            dscp: rng.gen_range(0..64),
            ttl: rng.gen_range(1..=255),
            udp_checksum: rng.gen_range(1..=u16::MAX),
        }
    }

    /// Writes these fields into `p`.
    pub fn apply(&self, p: &mut AggPacket) {
        p.dst_mac = self.dst_mac;
        p.src_mac = self.src_mac;
        p.src_ip = self.src_ip;
        p.dst_ip = self.dst_ip;
        p.dscp = self.dscp;
        p.ttl = self.ttl;
        p.udp_checksum = self.udp_checksum;
    }
}

/// The IPv4 identification that makes the sum of `p`'s IPv4 header words (its
/// checksum and ECN taken as 0) end in `0xFFFC`. Its result's checksum sum, with
/// the result's ECN added, then carries out of 16 bits in the first fold and again
/// in the second whenever the sum's high part plus that ECN reach 4: the second
/// fold of RFC 1071 decides the checksum. A packet without a frame (an unknown
/// format) keeps its own identification.
pub fn carrying_identification(p: &AggPacket) -> u16 {
    let mut q = p.clone();
    q.identification = 0;
    q.ecn = 0;
    let sum: u32 = match q.to_frame() {
        Ok(frame) => frame[IPV4_OFFSET..IPV4_OFFSET + IPV4_LEN]
            .chunks(2)
            .enumerate()
            .filter(|&(i, _)| i != 5)
            .map(|(_, w)| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum(),
        Err(_) => return p.identification,
    };
    0xFFFCu16.wrapping_sub(sum as u16)
}

/// A random merge of `streams` that keeps each stream's order.
pub fn interleave<T>(rng: &mut impl Rng, streams: Vec<Vec<T>>) -> Vec<T> {
    let total = streams.iter().map(Vec::len).sum();
    let mut iters: Vec<std::vec::IntoIter<T>> = streams.into_iter().map(Vec::into_iter).collect();
    let mut left: Vec<usize> = iters.iter().map(|i| i.len()).collect();
    let mut out = Vec::with_capacity(total);
    for remaining in (1..=total).rev() {
        // Pick a stream with probability proportional to what it has left.
        let mut k = rng.gen_range(0..remaining);
        let s = left
            .iter()
            .position(|&n| {
                if k < n {
                    true
                } else {
                    k -= n;
                    false
                }
            })
            .unwrap_or(0);
        left[s] -= 1;
        out.extend(iters[s].next());
    }
    out
}

/// The frames of `stream` as inputs from its port (code from `config`; a port index
/// the configuration lacks gives source code 0, which [`super::run`] rejects).
pub fn stream_frames(
    config: &GoldenConfig,
    stream: &WorkerStream,
) -> Result<Vec<InFrame>, FrameError> {
    let src = config.port_codes.get(stream.port).copied().unwrap_or(0);
    stream
        .packets
        .iter()
        .map(|p| {
            Ok(InFrame {
                src,
                bytes: p.to_frame()?,
            })
        })
        .collect()
}

fn random_mac(rng: &mut impl Rng) -> [u8; 6] {
    let mut m: [u8; 6] = rng.gen();
    m[0] = (m[0] & 0xFE) | 0x02; // unicast, locally administered
    m
}

/// The longest background frame [`background_frame`] makes: a full Ethernet frame
/// without its FCS.
pub const MAX_BACKGROUND_FRAME_BYTES: usize = 1514;

/// A random non-aggregation frame of 60–1514 bytes (no FCS): IPv4/UDP to a port
/// other than `agg_udp_port`, IPv4/TCP (any port, even `agg_udp_port`), IPv6/UDP
/// (even to `agg_udp_port`: only IPv4 is PANAMA), or ARP padded to 60 bytes.
pub fn background_frame(rng: &mut impl Rng, agg_udp_port: u16) -> Vec<u8> {
    let (src, dst) = (random_mac(rng), random_mac(rng));
    let kind = rng.gen_range(0..4);
    if kind == 3 {
        let arp = ArpPacket::from(ArpEthIpv4Packet {
            operation: ArpOperation::REQUEST,
            sender_mac: src,
            sender_ipv4: rng.gen(),
            target_mac: [0; 6],
            target_ipv4: rng.gen(),
        });
        let eth = Ethernet2Header {
            source: src,
            destination: [0xFF; 6],
            ether_type: EtherType::ARP,
        };
        let mut f = eth.to_bytes().to_vec();
        f.extend_from_slice(&arp.to_bytes());
        f.resize(60, 0);
        return f;
    }
    let builder = PacketBuilder::ethernet2(src, dst);
    let mut f = Vec::new();
    // Headers: 14 + 20 + 8 = 42 (UDP/IPv4), 54 (TCP/IPv4), 62 (UDP/IPv6).
    let head = [42usize, 54, 62][kind];
    let len = rng.gen_range(60.max(head)..=MAX_BACKGROUND_FRAME_BYTES);
    let payload: Vec<u8> = (0..len - head).map(|_| rng.gen()).collect();
    let written = match kind {
        0 => {
            let mut dport = rng.gen();
            if dport == agg_udp_port {
                dport ^= 1;
            }
            builder
                .ipv4(rng.gen(), rng.gen(), 64)
                .udp(rng.gen(), dport)
                .write(&mut f, &payload)
        }
        1 => builder
            .ipv4(rng.gen(), rng.gen(), 64)
            .tcp(rng.gen(), agg_udp_port, rng.gen(), 1024)
            .write(&mut f, &payload),
        _ => builder
            .ipv6(rng.gen(), rng.gen(), 64)
            .udp(rng.gen(), agg_udp_port)
            .write(&mut f, &payload),
    };
    // Writing into a Vec cannot fail for these sizes; fall back to raw bytes if it did.
    if written.is_err() || f.len() != len {
        f = (0..len).map(|_| rng.gen()).collect();
        f[12..14].copy_from_slice(&[0x88, 0xB5]); // local experimental EtherType
    }
    f
}

/// A defect that makes an aggregation frame malformed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Defect {
    /// Cut inside the headers (40–63 bytes left).
    Truncated,
    /// Payload length not a multiple of 64: cut inside its last granule, or 1–63
    /// bytes given to an empty one (lengths fixed up).
    PayloadNotGranule,
    /// Payload one granule longer than `max_payload_bytes` (lengths fixed up).
    PayloadTooLong,
    /// No payload at all: the headers alone, with lengths and `elem_count` 0 that
    /// agree with it, so only the empty-payload check can refuse it.
    EmptyPayload,
    /// `elem_count` off by one.
    ElemCount,
    /// PANAMA version 2.
    Version,
    /// Result flag set on the way in.
    ResultFlag,
    /// Format code 3.
    UnknownFormat,
    /// IPv4 total length one less than the frame carries.
    Ipv4Length,
    /// UDP length one more than the frame carries.
    UdpLength,
    /// More-fragments flag set.
    Fragmented,
}

impl Defect {
    /// All defects.
    pub const ALL: [Defect; 11] = [
        Defect::Truncated,
        Defect::PayloadNotGranule,
        Defect::PayloadTooLong,
        Defect::EmptyPayload,
        Defect::ElemCount,
        Defect::Version,
        Defect::ResultFlag,
        Defect::UnknownFormat,
        Defect::Ipv4Length,
        Defect::UdpLength,
        Defect::Fragmented,
    ];
}

fn set_be16(f: &mut [u8], at: usize, v: u16) {
    f[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// Rewrites the IPv4 and UDP length fields (and the IPv4 checksum) for the frame's
/// actual length.
fn fix_lengths(f: &mut [u8]) {
    let ip_len = (f.len() - IPV4_OFFSET) as u16;
    let udp_len = (f.len() - UDP_OFFSET) as u16;
    set_be16(f, IPV4_OFFSET + 2, ip_len);
    set_be16(f, UDP_OFFSET + 4, udp_len);
    fix_ipv4_checksum(f);
}

fn fix_ipv4_checksum(f: &mut [u8]) {
    set_be16(f, IPV4_OFFSET + 10, 0);
    let c = super::result::ipv4_header_checksum(&f[IPV4_OFFSET..IPV4_OFFSET + 20]);
    set_be16(f, IPV4_OFFSET + 10, c);
}

/// `frame` (an aggregation frame, well-formed or with defects already) with
/// `defect`; IPv4 checksums stay valid. A frame shorter than the 64 bytes of
/// headers is returned unchanged.
pub fn with_defect(
    rng: &mut impl Rng,
    frame: &[u8],
    defect: Defect,
    max_payload_bytes: usize,
) -> Vec<u8> {
    let mut f = frame.to_vec();
    if f.len() < HEADERS_LEN {
        return f;
    }
    let at = |field: usize| PANAMA_OFFSET + field;
    match defect {
        Defect::Truncated => f.truncate(rng.gen_range(40..HEADERS_LEN)),
        Defect::PayloadNotGranule => {
            // The whole granules before the payload's last byte, then 1–63
            // bytes: a well-formed payload is cut inside its last granule, an
            // empty one gets a ragged one.
            let whole = (f.len() - HEADERS_LEN).saturating_sub(1) / PAYLOAD_GRANULE;
            let ragged = rng.gen_range(1..PAYLOAD_GRANULE);
            f.resize(HEADERS_LEN + whole * PAYLOAD_GRANULE + ragged, 0);
            fix_lengths(&mut f);
        }
        Defect::PayloadTooLong => {
            f.resize(HEADERS_LEN + max_payload_bytes + PAYLOAD_GRANULE, 0);
            fix_lengths(&mut f);
        }
        Defect::EmptyPayload => {
            f.truncate(HEADERS_LEN);
            set_be16(&mut f, at(offset::ELEM_COUNT), 0);
            fix_lengths(&mut f);
        }
        Defect::ElemCount => {
            let e = at(offset::ELEM_COUNT);
            let n = u16::from_be_bytes([f[e], f[e + 1]]);
            set_be16(&mut f, e, n.wrapping_add(1));
        }
        Defect::Version => f[at(offset::VERSION)] = 2,
        Defect::ResultFlag => f[at(offset::FLAGS)] |= 1,
        Defect::UnknownFormat => f[at(offset::FORMAT)] = 3,
        Defect::Ipv4Length => {
            let n = u16::from_be_bytes([f[IPV4_OFFSET + 2], f[IPV4_OFFSET + 3]]);
            set_be16(&mut f, IPV4_OFFSET + 2, n.wrapping_sub(1));
            fix_ipv4_checksum(&mut f);
        }
        Defect::UdpLength => {
            let n = u16::from_be_bytes([f[UDP_OFFSET + 4], f[UDP_OFFSET + 5]]);
            set_be16(&mut f, UDP_OFFSET + 4, n.wrapping_add(1));
        }
        Defect::Fragmented => {
            f[IPV4_OFFSET + 6] |= 0x20;
            fix_ipv4_checksum(&mut f);
        }
    }
    f
}

/// `packets` with the one at `index` removed (a sequence gap), if it exists.
pub fn with_gap(mut packets: Vec<AggPacket>, index: usize) -> Vec<AggPacket> {
    if index < packets.len() {
        packets.remove(index);
    }
    packets
}

/// `packets` with the one at `index` sent twice in a row, if it exists.
pub fn with_duplicate(mut packets: Vec<AggPacket>, index: usize) -> Vec<AggPacket> {
    if let Some(p) = packets.get(index).cloned() {
        packets.insert(index, p);
    }
    packets
}

/// `packet` re-encoded in `format` (consistent, same payload bytes length; element
/// values zero): a format mismatch for an instance of another format.
pub fn with_format(packet: &AggPacket, format: FpFormat) -> AggPacket {
    let bytes = packet.payload.len() * packet.format().map_or(4, elem_bytes);
    let n = bytes / elem_bytes(format);
    let mut p = packet.clone();
    p.header.format = format.code();
    p.header.elem_count = u16::try_from(n).unwrap_or(u16::MAX);
    p.payload = vec![0; n];
    p
}
