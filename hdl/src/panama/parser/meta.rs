//! The parser's per-frame metadata record: class codes, malformed-reason codes and
//! the `m_meta_*` fields with their widths.

/// What the parser decided about a frame (`m_meta_class`, 2 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameClass {
    /// 0: not an aggregation packet; forwarded unchanged by the accelerator.
    Bypass = 0,
    /// 1: a well-formed aggregation packet.
    Aggregation = 1,
    /// 2: an aggregation packet that fails a check (see [`Reason`]); to be dropped.
    Malformed = 2,
}

impl FrameClass {
    /// The code on `m_meta_class`.
    pub fn code(self) -> u64 {
        self as u64
    }
}

/// Why an aggregation packet is malformed (`m_meta_reason`, 4 bits). When several
/// checks fail, the reason is the first in this order, which is the order of
/// `testbench::panama::Malformed` and of its `classify`. `None` (0) is reported for
/// bypass and well-formed aggregation frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// 0: not malformed.
    None = 0,
    /// 1: the frame is shorter than the 64 bytes of headers.
    Truncated = 1,
    /// 2: IPv4 IHL ≠ 5 (options present).
    Ipv4Options = 2,
    /// 3: IPv4 more-fragments flag set.
    Fragmented = 3,
    /// 4: IPv4 total length ≠ frame length − 14.
    Ipv4Length = 4,
    /// 5: UDP length ≠ frame length − 34.
    UdpLength = 5,
    /// 6: PANAMA version ≠ 1.
    Version = 6,
    /// 7: PANAMA flags ≠ 0 (a result, or reserved bits, coming in).
    Flags = 7,
    /// 8: format code not 0 (fp32), 1 (bf16) or 2 (fp16).
    UnknownFormat = 8,
    /// 9: payload (frame length − 64) zero or not a multiple of 64 bytes.
    PayloadLength = 9,
    /// 10: payload longer than `max_payload_bytes`.
    PayloadTooLong = 10,
    /// 11: `elem_count` × element size (4 for fp32, 2 for bf16/fp16) ≠ payload.
    ElemCount = 11,
}

impl Reason {
    /// Every check in priority order (the first failing one is reported).
    pub const CHECKS: [Reason; 11] = [
        Reason::Truncated,
        Reason::Ipv4Options,
        Reason::Fragmented,
        Reason::Ipv4Length,
        Reason::UdpLength,
        Reason::Version,
        Reason::Flags,
        Reason::UnknownFormat,
        Reason::PayloadLength,
        Reason::PayloadTooLong,
        Reason::ElemCount,
    ];

    /// The code on `m_meta_reason`.
    pub fn code(self) -> u64 {
        self as u64
    }
}

/// Width of `m_meta_class`.
pub const CLASS_WIDTH: u32 = 2;
/// Width of `m_meta_reason`.
pub const REASON_WIDTH: u32 = 4;
/// Width of `m_meta_len` (frame length in bytes, saturating).
pub const LEN_WIDTH: u32 = 16;

/// The data fields of the record, in the order they are packed (first = least
/// significant) alongside the beat through the output buffer: port name and width.
/// `m_meta_valid` is not among them: it is derived from the output beat.
pub const FIELDS: [(&str, u32); 11] = [
    ("m_meta_class", CLASS_WIDTH),
    ("m_meta_reason", REASON_WIDTH),
    ("m_meta_len", LEN_WIDTH),
    ("m_meta_src_port", 8),
    ("m_meta_ecn", 2),
    ("m_meta_job_id", 16),
    ("m_meta_tree_id", 8),
    ("m_meta_format", 2),
    ("m_meta_seq", 32),
    ("m_meta_worker_id", 16),
    ("m_meta_elem_count", 16),
];

/// Total width of the packed record (the sum of [`FIELDS`]' widths).
pub fn record_width() -> u32 {
    FIELDS.iter().map(|(_, w)| w).sum()
}
