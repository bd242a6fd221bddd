//! Result frames (PANAMA.md, "Results"): a worker's own 64-byte header with
//! Ethernet, IPv4 and UDP source and destination swapped, IPv4 total length kept,
//! IPv4 ECN set, IPv4 header checksum recomputed, UDP checksum 0, PANAMA
//! `flags.result` set and `bitmap` set; then the sum as payload. Every other byte
//! of the header (TTL, identification, DSCP, seq, worker_id, reserved, …) is the
//! worker's, unchanged.
//!
//! Written by hand on purpose, byte by byte: the tests check these frames with
//! `etherparse`, an independent implementation.

use super::frame::FrameError;
use super::header::{
    elem_bytes, offset, FLAG_RESULT, HEADERS_LEN, IPV4_LEN, IPV4_OFFSET, PANAMA_OFFSET, UDP_OFFSET,
};
use super::payload;
use hdl::blocks::fp::FpFormat;

/// The RFC 1071 checksum of an IPv4 header (`header` holds exactly the header; its
/// checksum field, bytes 10–11, is taken as 0).
pub fn ipv4_header_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for (i, pair) in header.chunks(2).enumerate() {
        if i == 5 {
            continue;
        }
        let word = u16::from_be_bytes([pair[0], pair.get(1).copied().unwrap_or(0)]);
        sum += u32::from(word);
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// The result frame for the worker whose packet began with `worker_header`: `ecn`
/// (2 bits) is the OR of the ECN fields of the summed packets, `bitmap` the
/// contributing ports, `sum` the elements in `format`.
pub fn result_frame(
    worker_header: &[u8; HEADERS_LEN],
    ecn: u8,
    bitmap: u32,
    format: FpFormat,
    sum: &[u64],
) -> Result<Vec<u8>, FrameError> {
    let mut frame = Vec::with_capacity(HEADERS_LEN + sum.len() * elem_bytes(format));
    frame.extend_from_slice(&result_headers(worker_header, ecn, bitmap)?);
    payload::encode_into(format, sum, &mut frame)?;
    Ok(frame)
}

/// The headers of [`result_frame`]: the worker's, with the addresses and ports
/// swapped, `ecn`, the result flag and `bitmap` written and the IPv4 checksum
/// computed again (the lengths stay: a result's payload is as long as the
/// worker's).
pub fn result_headers(
    worker_header: &[u8; HEADERS_LEN],
    ecn: u8,
    bitmap: u32,
) -> Result<[u8; HEADERS_LEN], FrameError> {
    if ecn > 3 {
        return Err(FrameError::FieldRange {
            field: "IPv4 ECN",
            value: ecn.into(),
            max: 3,
        });
    }
    let mut h = *worker_header;
    let swap = |h: &mut [u8; HEADERS_LEN], a: usize, b: usize, n: usize| {
        for i in 0..n {
            h.swap(a + i, b + i);
        }
    };
    swap(&mut h, 0, 6, 6); // MAC destination ↔ source
    swap(&mut h, IPV4_OFFSET + 12, IPV4_OFFSET + 16, 4); // IPv4 source ↔ destination
    swap(&mut h, UDP_OFFSET, UDP_OFFSET + 2, 2); // UDP source ↔ destination port
    h[IPV4_OFFSET + 1] = (h[IPV4_OFFSET + 1] & !0x03) | ecn;
    let checksum = ipv4_header_checksum(&h[IPV4_OFFSET..IPV4_OFFSET + IPV4_LEN]);
    h[IPV4_OFFSET + 10..IPV4_OFFSET + 12].copy_from_slice(&checksum.to_be_bytes());
    h[UDP_OFFSET + 6..UDP_OFFSET + 8].copy_from_slice(&[0, 0]);
    h[PANAMA_OFFSET + offset::FLAGS] |= FLAG_RESULT;
    let at = PANAMA_OFFSET + offset::BITMAP;
    h[at..at + 4].copy_from_slice(&bitmap.to_be_bytes());
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_of_the_rfc1071_example_header() {
        // A classic worked example: 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(ipv4_header_checksum(&h), 0xb861);
    }
}
