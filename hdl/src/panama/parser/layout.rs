//! Byte offsets, from the start of the frame, of every header field the parser
//! reads (`Ethernet II | IPv4 | UDP | PANAMA`, network byte order).

/// EtherType, 2 bytes (0x0800 for IPv4).
pub const ETHERTYPE: usize = 12;
/// The IPv4 header's first byte: the Ethernet header's length.
pub const IPV4: usize = 14;
/// IPv4 version (high nibble) and IHL (low nibble, in 32-bit words).
pub const IPV4_VIHL: usize = IPV4;
/// IPv4 DSCP (high 6 bits) and ECN (low 2 bits).
pub const IPV4_TOS: usize = 15;
/// IPv4 total length, 2 bytes.
pub const IPV4_TOTAL_LEN: usize = 16;
/// IPv4 flags (bit 5 of this byte = more fragments) and fragment offset, 2 bytes.
pub const IPV4_FRAG: usize = 20;
/// IPv4 protocol (17 = UDP).
pub const IPV4_PROTO: usize = 23;
/// Offset of the UDP header for an IPv4 header without options.
pub const UDP: usize = 34;
/// Offset of the UDP destination port when the IPv4 IHL is `ihl` words.
pub const fn udp_dst_port(ihl: usize) -> usize {
    14 + 4 * ihl + 2
}
/// UDP length, 2 bytes (IHL 5).
pub const UDP_LEN: usize = UDP + 4;
/// Start of the PANAMA header (IHL 5).
pub const PANAMA: usize = UDP + 8;
/// PANAMA version.
pub const VERSION: usize = PANAMA;
/// PANAMA flags.
pub const FLAGS: usize = PANAMA + 1;
/// PANAMA job_id, 2 bytes.
pub const JOB_ID: usize = PANAMA + 2;
/// PANAMA tree_id.
pub const TREE_ID: usize = PANAMA + 4;
/// PANAMA format code.
pub const FORMAT: usize = PANAMA + 5;
/// PANAMA seq, 4 bytes.
pub const SEQ: usize = PANAMA + 6;
/// PANAMA worker_id, 2 bytes.
pub const WORKER_ID: usize = PANAMA + 10;
/// PANAMA elem_count, 2 bytes.
pub const ELEM_COUNT: usize = PANAMA + 12;
/// Length of all headers: the payload starts here.
pub const HEADERS: usize = 64;
/// Shortest frame in which an IPv4 header is visible (Ethernet + 20 bytes).
pub const MIN_IPV4: usize = 34;
/// The parser captures bytes `0 .. CAPTURE_END` at most: the UDP destination port
/// behind the longest IPv4 header (IHL 15) ends at byte 77.
pub const CAPTURE_END: usize = udp_dst_port(15) + 2;
