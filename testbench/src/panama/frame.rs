//! Building and classifying PANAMA frames: `Ethernet II | IPv4 (no options) | UDP |
//! PANAMA header | payload`. The Ethernet, IPv4 and UDP layers are written and read
//! with `etherparse`; the PANAMA header by hand ([`super::header`]).
//!
//! Frames are as they travel on the NetFPGA AXI-Stream: from the destination MAC to
//! the last payload byte, without preamble or FCS.

use super::header::{
    elem_bytes, format_from_code, PanamaHeader, ETH_LEN, HEADERS_LEN, IPV4_OFFSET,
    PANAMA_HEADER_LEN, PANAMA_OFFSET, PAYLOAD_GRANULE, UDP_OFFSET, VERSION,
};
use super::payload;
use etherparse::{EtherType, Ethernet2Header, IpDscp, IpEcn, IpNumber, Ipv4Header, UdpHeader};
use hdl::blocks::fp::FpFormat;
use thiserror::Error;

/// Why a PANAMA frame could not be built.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The header's format code names no format, so the payload cannot be encoded.
    #[error("PANAMA format code {code} is not 0 (fp32), 1 (bf16) or 2 (fp16): cannot encode the payload")]
    UnknownFormat {
        /// The code.
        code: u8,
    },
    /// A payload element has bits above the format's width.
    #[error("payload element {index} = {value:#x} does not fit in {format} ({} bits)", format.width())]
    ElementTooWide {
        /// Index of the element.
        index: usize,
        /// Its value.
        value: u64,
        /// The packet's format.
        format: FpFormat,
    },
    /// An addressing field is out of its range.
    #[error("{field} = {value} is out of range (at most {max})")]
    FieldRange {
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
        /// The largest allowed value.
        max: u64,
    },
    /// The frame would not fit an IPv4 packet (total length is 16 bits).
    #[error("a payload of {payload_bytes} bytes makes an IPv4 packet longer than 65535 bytes")]
    TooLong {
        /// Payload bytes.
        payload_bytes: usize,
    },
}

/// An aggregation packet, parsed: the addressing of its Ethernet, IPv4 and UDP
/// headers, its PANAMA header and its payload elements.
///
/// [`AggPacket::to_frame`] writes every field as given, so inconsistent packets (an
/// `elem_count` that disagrees with the payload, a bad version, …) can be built on
/// purpose; [`AggPacket::new`] fills consistent values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AggPacket {
    /// Ethernet destination MAC.
    pub dst_mac: [u8; 6],
    /// Ethernet source MAC.
    pub src_mac: [u8; 6],
    /// IPv4 source address.
    pub src_ip: [u8; 4],
    /// IPv4 destination address.
    pub dst_ip: [u8; 4],
    /// IPv4 DSCP (6 bits).
    pub dscp: u8,
    /// IPv4 ECN (2 bits).
    pub ecn: u8,
    /// IPv4 identification.
    pub identification: u16,
    /// IPv4 don't-fragment flag.
    pub dont_fragment: bool,
    /// IPv4 time to live.
    pub ttl: u8,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port (the accelerator's `agg_udp_port` on the way in).
    pub dst_port: u16,
    /// UDP checksum as received (0 when built by this crate: "no checksum" in IPv4).
    pub udp_checksum: u16,
    /// The PANAMA header.
    pub header: PanamaHeader,
    /// Payload elements as bit patterns of the header's format.
    pub payload: Vec<u64>,
}

impl AggPacket {
    /// A consistent worker packet: `elem_count` = `payload.len()` (saturated at
    /// 65535), addressing derived from `worker_id` (MAC `02:00:00:00:w:w`, IP
    /// `10.0.w.w` → `10.255.0.1`, UDP source port 40000 + w mod 20000), ECN 0,
    /// TTL 64, don't-fragment set, IPv4 identification `(seq + 257·w) · 40503`
    /// mod 2^16 (a different value for each packet of a worker, spread over all
    /// 16 bits, so that the results' header checksums see every field and carry).
    pub fn new(
        format: FpFormat,
        job_id: u16,
        tree_id: u8,
        seq: u32,
        worker_id: u16,
        agg_udp_port: u16,
        payload: Vec<u64>,
    ) -> Self {
        let [hi, lo] = worker_id.to_be_bytes();
        let elem_count = u16::try_from(payload.len()).unwrap_or(u16::MAX);
        AggPacket {
            dst_mac: [0x02, 0, 0, 0, 0xFF, 0xFE],
            src_mac: [0x02, 0, 0, 0, hi, lo],
            src_ip: [10, 0, hi, lo],
            dst_ip: [10, 255, 0, 1],
            dscp: 0,
            ecn: 0,
            identification: (seq as u16)
                .wrapping_add(worker_id.wrapping_mul(257))
                .wrapping_mul(40_503),
            dont_fragment: true,
            ttl: 64,
            src_port: 40_000 + worker_id % 20_000,
            dst_port: agg_udp_port,
            udp_checksum: 0,
            header: PanamaHeader::new(format, job_id, tree_id, seq, worker_id, elem_count),
            payload,
        }
    }

    /// The element format, if the header's code is known.
    pub fn format(&self) -> Option<FpFormat> {
        self.header.fp_format()
    }

    /// The frame's bytes: IPv4 header checksum computed, lengths from the payload,
    /// UDP checksum as in `udp_checksum`, header fields exactly as given.
    pub fn to_frame(&self) -> Result<Vec<u8>, FrameError> {
        let format = self.format().ok_or(FrameError::UnknownFormat {
            code: self.header.format,
        })?;
        let body = payload::encode(format, &self.payload)?;
        let udp_len =
            u16::try_from(body.len() + PANAMA_HEADER_LEN + 8).map_err(|_| FrameError::TooLong {
                payload_bytes: body.len(),
            })?;
        let ecn = IpEcn::try_new(self.ecn).map_err(|_| FrameError::FieldRange {
            field: "IPv4 ECN",
            value: self.ecn.into(),
            max: 3,
        })?;
        let dscp = IpDscp::try_new(self.dscp).map_err(|_| FrameError::FieldRange {
            field: "IPv4 DSCP",
            value: self.dscp.into(),
            max: 63,
        })?;
        let mut ip = Ipv4Header::new(udp_len, self.ttl, IpNumber::UDP, self.src_ip, self.dst_ip)
            .map_err(|_| FrameError::TooLong {
                payload_bytes: body.len(),
            })?;
        ip.ecn = ecn;
        ip.dscp = dscp;
        ip.identification = self.identification;
        ip.dont_fragment = self.dont_fragment;
        ip.header_checksum = ip.calc_header_checksum();
        let eth = Ethernet2Header {
            source: self.src_mac,
            destination: self.dst_mac,
            ether_type: EtherType::IPV4,
        };
        let udp = UdpHeader {
            source_port: self.src_port,
            destination_port: self.dst_port,
            length: udp_len,
            checksum: self.udp_checksum,
        };
        let mut frame = Vec::with_capacity(HEADERS_LEN + body.len());
        frame.extend_from_slice(&eth.to_bytes());
        frame.extend_from_slice(&ip.to_bytes());
        frame.extend_from_slice(&udp.to_bytes());
        frame.extend_from_slice(&self.header.to_bytes());
        frame.extend_from_slice(&body);
        Ok(frame)
    }
}

/// Why an aggregation frame (IPv4 + UDP to `agg_udp_port`) is malformed. The
/// classifier reports the first failing check in the order of the variants.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Malformed {
    /// Shorter than the 64 bytes of headers.
    #[error("frame of {len} bytes is shorter than the 64 bytes of headers")]
    Truncated {
        /// Frame length.
        len: usize,
    },
    /// The IPv4 header has options (PANAMA packets have none).
    #[error("IPv4 header length {ihl} words: PANAMA packets have no IPv4 options (5 words)")]
    Ipv4Options {
        /// IHL field.
        ihl: u8,
    },
    /// The first fragment of a fragmented datagram (more-fragments set).
    #[error("IPv4 more-fragments flag set: PANAMA packets are never fragmented")]
    Fragmented,
    /// IPv4 total length disagrees with the frame's length.
    #[error("IPv4 total length {total_len} but the frame carries {actual} bytes after Ethernet")]
    Ipv4Length {
        /// IPv4 total length field.
        total_len: u16,
        /// Frame length − 14.
        actual: usize,
    },
    /// UDP length disagrees with the frame's length.
    #[error("UDP length {udp_len} but the frame carries {actual} bytes after IPv4")]
    UdpLength {
        /// UDP length field.
        udp_len: u16,
        /// Frame length − 34.
        actual: usize,
    },
    /// PANAMA version other than 1.
    #[error("PANAMA version {version}, expected 1")]
    Version {
        /// The version field.
        version: u8,
    },
    /// Flags other than 0 on the way in (a result, or reserved flag bits).
    #[error("PANAMA flags {flags:#04x} on an incoming packet (must be 0; bit 0 marks a result)")]
    Flags {
        /// The flags field.
        flags: u8,
    },
    /// Unknown format code.
    #[error("PANAMA format code {code} is not 0 (fp32), 1 (bf16) or 2 (fp16)")]
    UnknownFormat {
        /// The code.
        code: u8,
    },
    /// Payload length 0 or not a multiple of 64 bytes.
    #[error("payload of {bytes} bytes is not a non-zero multiple of 64")]
    PayloadLength {
        /// Payload bytes.
        bytes: usize,
    },
    /// Payload longer than `max_payload_bytes`.
    #[error("payload of {bytes} bytes exceeds max_payload_bytes = {max}")]
    PayloadTooLong {
        /// Payload bytes.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// `elem_count` × element size differs from the payload length.
    #[error("elem_count {elem_count} × {elem_bytes} bytes ({format}) ≠ payload of {payload_bytes} bytes")]
    ElemCount {
        /// The elem_count field.
        elem_count: u16,
        /// Bytes per element of the packet's format.
        elem_bytes: usize,
        /// The packet's format.
        format: FpFormat,
        /// Payload bytes.
        payload_bytes: usize,
    },
    /// etherparse rejected a header the checks above accepted (never expected).
    #[error("header rejected by etherparse: {0}")]
    Layer(String),
}

/// What the accelerator's parser does with a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// Not an aggregation packet: forwarded unchanged.
    Bypass,
    /// A well-formed aggregation packet.
    Aggregation(AggPacket),
    /// An aggregation packet that is dropped and counted at the parser.
    Malformed(Malformed),
}

fn be16(frame: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([frame[at], frame[at + 1]])
}

/// True if `frame` is an aggregation packet: Ethernet II with EtherType 0x0800, an
/// IPv4 header (version 4, IHL ≥ 5) of protocol 17 (UDP) with fragment offset 0, and
/// a UDP header (after the IPv4 header and its options) whose destination port is
/// `agg_udp_port`. A frame too short to show the UDP destination port is not one.
pub fn is_aggregation(frame: &[u8], agg_udp_port: u16) -> bool {
    if frame.len() < ETH_LEN + 20 || be16(frame, 12) != 0x0800 {
        return false;
    }
    let vihl = frame[IPV4_OFFSET];
    let ihl = usize::from(vihl & 0x0F);
    let frag_offset = be16(frame, IPV4_OFFSET + 6) & 0x1FFF;
    if vihl >> 4 != 4 || ihl < 5 || frame[IPV4_OFFSET + 9] != 17 || frag_offset != 0 {
        return false;
    }
    let udp = IPV4_OFFSET + 4 * ihl;
    frame.len() >= udp + 4 && be16(frame, udp + 2) == agg_udp_port
}

/// Classifies `frame` as the parser must (see the module docs of [`super`] for the
/// order of the checks and the choices behind them).
pub fn classify(frame: &[u8], agg_udp_port: u16, max_payload_bytes: usize) -> Class {
    if !is_aggregation(frame, agg_udp_port) {
        return Class::Bypass;
    }
    match check(frame, max_payload_bytes) {
        Ok(format) => match parse_layers(frame, format) {
            Ok(p) => Class::Aggregation(p),
            Err(m) => Class::Malformed(m),
        },
        Err(m) => Class::Malformed(m),
    }
}

/// The malformation checks, in order, on a frame `is_aggregation` accepted.
fn check(frame: &[u8], max_payload_bytes: usize) -> Result<FpFormat, Malformed> {
    let len = frame.len();
    if len < HEADERS_LEN {
        return Err(Malformed::Truncated { len });
    }
    let ihl = frame[IPV4_OFFSET] & 0x0F;
    if ihl != 5 {
        return Err(Malformed::Ipv4Options { ihl });
    }
    if frame[IPV4_OFFSET + 6] & 0x20 != 0 {
        return Err(Malformed::Fragmented);
    }
    let total_len = be16(frame, IPV4_OFFSET + 2);
    if usize::from(total_len) != len - ETH_LEN {
        return Err(Malformed::Ipv4Length {
            total_len,
            actual: len - ETH_LEN,
        });
    }
    let udp_len = be16(frame, UDP_OFFSET + 4);
    if usize::from(udp_len) != len - UDP_OFFSET {
        return Err(Malformed::UdpLength {
            udp_len,
            actual: len - UDP_OFFSET,
        });
    }
    let header = panama_header(frame);
    if header.version != VERSION {
        return Err(Malformed::Version {
            version: header.version,
        });
    }
    if header.flags != 0 {
        return Err(Malformed::Flags {
            flags: header.flags,
        });
    }
    let format = format_from_code(header.format).ok_or(Malformed::UnknownFormat {
        code: header.format,
    })?;
    let bytes = len - HEADERS_LEN;
    if bytes == 0 || !bytes.is_multiple_of(PAYLOAD_GRANULE) {
        return Err(Malformed::PayloadLength { bytes });
    }
    if bytes > max_payload_bytes {
        return Err(Malformed::PayloadTooLong {
            bytes,
            max: max_payload_bytes,
        });
    }
    if usize::from(header.elem_count) * elem_bytes(format) != bytes {
        return Err(Malformed::ElemCount {
            elem_count: header.elem_count,
            elem_bytes: elem_bytes(format),
            format,
            payload_bytes: bytes,
        });
    }
    Ok(format)
}

/// The PANAMA header of a frame of at least 64 bytes.
fn panama_header(frame: &[u8]) -> PanamaHeader {
    let mut b = [0u8; PANAMA_HEADER_LEN];
    b.copy_from_slice(&frame[PANAMA_OFFSET..HEADERS_LEN]);
    PanamaHeader::from_bytes(&b)
}

/// Decodes a frame that passed [`check`] into an [`AggPacket`] with etherparse.
fn parse_layers(frame: &[u8], format: FpFormat) -> Result<AggPacket, Malformed> {
    let layer = |e: &dyn std::fmt::Display| Malformed::Layer(e.to_string());
    let (eth, rest) = Ethernet2Header::from_slice(frame).map_err(|e| layer(&e))?;
    let (ip, rest) = Ipv4Header::from_slice(rest).map_err(|e| layer(&e))?;
    let (udp, _) = UdpHeader::from_slice(rest).map_err(|e| layer(&e))?;
    Ok(AggPacket {
        dst_mac: eth.destination,
        src_mac: eth.source,
        src_ip: ip.source,
        dst_ip: ip.destination,
        dscp: ip.dscp.value(),
        ecn: ip.ecn.value(),
        identification: ip.identification,
        dont_fragment: ip.dont_fragment,
        ttl: ip.time_to_live,
        src_port: udp.source_port,
        dst_port: udp.destination_port,
        udp_checksum: udp.checksum,
        header: panama_header(frame),
        payload: payload::decode(format, &frame[HEADERS_LEN..]),
    })
}
