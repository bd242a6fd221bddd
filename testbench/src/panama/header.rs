//! The 22-byte PANAMA header (PANAMA.md, "Packet format"): fields, byte offsets and
//! their encoding in network byte order.

use hdl::blocks::fp::FpFormat;

/// Length of the Ethernet II header (no VLAN tag).
pub const ETH_LEN: usize = 14;
/// Length of an IPv4 header without options.
pub const IPV4_LEN: usize = 20;
/// Length of the UDP header.
pub const UDP_LEN: usize = 8;
/// Length of the PANAMA header.
pub const PANAMA_HEADER_LEN: usize = 22;
/// Offset of the IPv4 header in the frame.
pub const IPV4_OFFSET: usize = ETH_LEN;
/// Offset of the UDP header in the frame.
pub const UDP_OFFSET: usize = ETH_LEN + IPV4_LEN;
/// Offset of the PANAMA header in the frame.
pub const PANAMA_OFFSET: usize = UDP_OFFSET + UDP_LEN;
/// Length of all headers together: the payload starts at this offset (64).
pub const HEADERS_LEN: usize = PANAMA_OFFSET + PANAMA_HEADER_LEN;
/// The only PANAMA version this model accepts.
pub const VERSION: u8 = 1;
/// `flags` bit 0: set by the accelerator on result packets.
pub const FLAG_RESULT: u8 = 0x01;
/// The payload's granule: its length is a non-zero multiple of this many bytes.
pub const PAYLOAD_GRANULE: usize = 64;

/// Byte offsets of the header's fields, relative to the start of the PANAMA header.
pub mod offset {
    /// `version`, 1 byte.
    pub const VERSION: usize = 0;
    /// `flags`, 1 byte.
    pub const FLAGS: usize = 1;
    /// `job_id`, 2 bytes.
    pub const JOB_ID: usize = 2;
    /// `tree_id`, 1 byte.
    pub const TREE_ID: usize = 4;
    /// `format`, 1 byte.
    pub const FORMAT: usize = 5;
    /// `seq`, 4 bytes.
    pub const SEQ: usize = 6;
    /// `worker_id`, 2 bytes.
    pub const WORKER_ID: usize = 10;
    /// `elem_count`, 2 bytes.
    pub const ELEM_COUNT: usize = 12;
    /// `bitmap`, 4 bytes.
    pub const BITMAP: usize = 14;
    /// `reserved`, 4 bytes.
    pub const RESERVED: usize = 18;
}

/// The format whose PANAMA code is `code` (0 fp32, 1 bf16, 2 fp16), if any.
pub fn format_from_code(code: u8) -> Option<FpFormat> {
    FpFormat::ALL.into_iter().find(|f| f.code() == code)
}

/// Bytes per payload element in `format` (4 for fp32, 2 for bf16 and fp16).
pub fn elem_bytes(format: FpFormat) -> usize {
    format.width() as usize / 8
}

/// The PANAMA header, field by field. `format` is kept as the raw code so that
/// headers with an unknown code can be represented (and built on purpose).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PanamaHeader {
    /// Protocol version; [`VERSION`] (1) is the only valid one.
    pub version: u8,
    /// Flags; bit 0 ([`FLAG_RESULT`]) marks a result, the other bits are 0.
    pub flags: u8,
    /// Training job.
    pub job_id: u16,
    /// Aggregation tree of the job.
    pub tree_id: u8,
    /// Element format code: 0 fp32, 1 bf16, 2 fp16.
    pub format: u8,
    /// Chunk number within the job and tree.
    pub seq: u32,
    /// The sending worker.
    pub worker_id: u16,
    /// Number of payload elements.
    pub elem_count: u16,
    /// Contributing workers on results (bit i = port index i), 0 on the way in.
    pub bitmap: u32,
    /// Reserved, 0 when built by this crate; kept as received.
    pub reserved: u32,
}

impl PanamaHeader {
    /// A worker's header: version 1, flags 0, bitmap 0, reserved 0.
    pub fn new(
        format: FpFormat,
        job_id: u16,
        tree_id: u8,
        seq: u32,
        worker_id: u16,
        elem_count: u16,
    ) -> Self {
        PanamaHeader {
            version: VERSION,
            flags: 0,
            job_id,
            tree_id,
            format: format.code(),
            seq,
            worker_id,
            elem_count,
            bitmap: 0,
            reserved: 0,
        }
    }

    /// The element format, if `format` is a known code.
    pub fn fp_format(&self) -> Option<FpFormat> {
        format_from_code(self.format)
    }

    /// True if the result flag is set.
    pub fn is_result(&self) -> bool {
        self.flags & FLAG_RESULT != 0
    }

    /// The header's 22 bytes in network byte order.
    pub fn to_bytes(&self) -> [u8; PANAMA_HEADER_LEN] {
        let mut b = [0u8; PANAMA_HEADER_LEN];
        b[offset::VERSION] = self.version;
        b[offset::FLAGS] = self.flags;
        b[offset::JOB_ID..offset::JOB_ID + 2].copy_from_slice(&self.job_id.to_be_bytes());
        b[offset::TREE_ID] = self.tree_id;
        b[offset::FORMAT] = self.format;
        b[offset::SEQ..offset::SEQ + 4].copy_from_slice(&self.seq.to_be_bytes());
        b[offset::WORKER_ID..offset::WORKER_ID + 2].copy_from_slice(&self.worker_id.to_be_bytes());
        b[offset::ELEM_COUNT..offset::ELEM_COUNT + 2]
            .copy_from_slice(&self.elem_count.to_be_bytes());
        b[offset::BITMAP..offset::BITMAP + 4].copy_from_slice(&self.bitmap.to_be_bytes());
        b[offset::RESERVED..offset::RESERVED + 4].copy_from_slice(&self.reserved.to_be_bytes());
        b
    }

    /// Decodes the header from its 22 bytes.
    pub fn from_bytes(b: &[u8; PANAMA_HEADER_LEN]) -> Self {
        let u16_at = |o: usize| u16::from_be_bytes([b[o], b[o + 1]]);
        let u32_at = |o: usize| u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        PanamaHeader {
            version: b[offset::VERSION],
            flags: b[offset::FLAGS],
            job_id: u16_at(offset::JOB_ID),
            tree_id: b[offset::TREE_ID],
            format: b[offset::FORMAT],
            seq: u32_at(offset::SEQ),
            worker_id: u16_at(offset::WORKER_ID),
            elem_count: u16_at(offset::ELEM_COUNT),
            bitmap: u32_at(offset::BITMAP),
            reserved: u32_at(offset::RESERVED),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_total_64_bytes_and_fields_sit_at_the_spec_offsets() {
        assert_eq!(HEADERS_LEN, 64);
        assert_eq!(PANAMA_OFFSET, 42);
        let h = PanamaHeader {
            version: 1,
            flags: 0x01,
            job_id: 0x0203,
            tree_id: 0x04,
            format: 0x02,
            seq: 0x0607_0809,
            worker_id: 0x0A0B,
            elem_count: 0x0C0D,
            bitmap: 0x0E0F_1011,
            reserved: 0x1213_1415,
        };
        let b = h.to_bytes();
        assert_eq!(
            b,
            [
                1, 1, 2, 3, 4, 2, 6, 7, 8, 9, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12,
                0x13, 0x14, 0x15
            ]
        );
        assert_eq!(PanamaHeader::from_bytes(&b), h);
    }

    #[test]
    fn format_codes_and_element_sizes() {
        assert_eq!(format_from_code(0), Some(FpFormat::Fp32));
        assert_eq!(format_from_code(1), Some(FpFormat::Bf16));
        assert_eq!(format_from_code(2), Some(FpFormat::Fp16));
        assert_eq!(format_from_code(3), None);
        assert_eq!(elem_bytes(FpFormat::Fp32), 4);
        assert_eq!(elem_bytes(FpFormat::Bf16), 2);
    }
}
