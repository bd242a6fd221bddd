//! PANAMA packet tools and golden model (spec: `shared/docs/PANAMA.md`), in plain
//! Rust that knows nothing of the HDL: the reference the generated accelerator is
//! checked against.
//!
//! - [`header`]: the 22-byte PANAMA header and the layout constants;
//! - [`payload`]: little-endian payload elements;
//! - [`frame`]: building frames ([`AggPacket::to_frame`], via `etherparse`) and the
//!   parser's [`classify`] into [`Class::Bypass`], [`Class::Aggregation`] or
//!   [`Class::Malformed`];
//! - [`result`]: result frames and the IPv4 header checksum;
//! - [`config`]: the instance ([`GoldenConfig`], [`SlotConfig`]);
//! - [`golden`]: the model ([`run`] → [`GoldenOutcome`]); [`counters`]: its counters;
//! - [`traffic`]: seeded jobs, background frames, interleavings, defects;
//! - [`pcap`]: pcap / pcapng files;
//! - [`invariants`]: the checks that hold whatever the timing (drops on full
//!   buffers, stale-slot flushes); [`session`]: batches of frames through a running
//!   accelerator, each drained and checked by them; [`chaos`]: the hostile-traffic
//!   run;
//! - [`stream`]: the NetFPGA side of a core ([`stream::StreamDriver`]);
//!   [`system`]: configuring a core, a whole run, and checking its output;
//! - [`measure`]: a measured run on one engine or both (`wirespeed sim panama`):
//!   throughput, latencies, counters, pcap output, and the verdict against the
//!   golden model or the invariants.
//!
//! # The contract
//!
//! **What is deterministic.** Given the configuration and the input frames in
//! arrival order (the order of the single AXI-Stream input, each frame with its
//! one-hot source port), the model fixes:
//! - the bypass frames, bytes unchanged, in arrival order, with their tuser
//!   destination ([`GoldenOutcome::bypass`], [`GoldenOutcome::bypass_to`]);
//! - per slot, the sequence of result frames: aggregation after aggregation, and for
//!   each, one result per participating port in port order
//!   ([`GoldenOutcome::slot_results`], [`GoldenOutcome::results_to`]);
//! - the drops, the packets left in the FIFOs, and the final counters.
//!
//! **What is not.** How bypass frames and result frames interleave at one output
//! port, and how results of different slots interleave, depends on the arbiter's
//! timing; it is not part of the contract. A checker compares each destination's
//! bypass subsequence and each (slot, destination) result subsequence separately.
//! The spec's counter "cycles stalled on full buffers" depends on timing and is not
//! modelled.
//!
//! **Why the rest depends only on the arrival order.** The parser decides each frame
//! on its own bytes and the configuration, so which frames are bypassed, malformed or
//! queued, and in which FIFO, is a function of the arrival sequence; the bypass path
//! is first-in first-out. Each (slot, port) FIFO is lossless as long as no wait on
//! a full FIFO expires (back-pressure, no drop: see "Finite FIFOs and timeouts"
//! below), so it receives exactly the subsequence of that slot's packets from that
//! port, in arrival order. A slot acts only when every participating port
//! has a head, and its action — drop the heads older than the newest `seq`; or drop
//! all heads on an `elem_count`/format mismatch; or sum them — is a function of those
//! heads alone, and removes only heads. So the *n*-th action of a slot sees the heads
//! determined by how many packets the previous actions removed from each FIFO, which
//! by induction is determined by the per-port sequences; arriving later or earlier
//! (timing, back-pressure, service order between slots) can only delay an action,
//! never change it: the per-slot process is a Kahn process over its per-port streams.
//! Slots share nothing but the input's back-pressure and the output arbiter.
//!
//! **Finite FIFOs and timeouts.** A slot FIFO frees a packet once it has been
//! summed or dropped. With [`GoldenConfig::fifo_depth`] set, a packet that arrives
//! at a full FIFO of a slot that is not ready can only wait for input that sits
//! behind it on the same stream: the hardware holds the input `full_wait` cycles
//! and then drops it. The model reports that input index in
//! [`GoldenOutcome::overflow_at`]; from there the outcome depends on timing and
//! runs are checked by invariants ([`invariants`]) instead. (A ready slot is always
//! served, so every other full-FIFO wait is temporary and does not change the
//! outcome as long as it is shorter than `full_wait`.) Likewise the model assumes
//! no slot waits `slot_timeout` cycles for its heads.
//!
//! # Choices the spec leaves open
//!
//! Frames:
//! - Frames are as on the NetFPGA AXI-Stream: no preamble, no FCS.
//! - An **aggregation packet** is: EtherType 0x0800 at bytes 12–13 (no VLAN tag:
//!   tagged frames are bypassed), IPv4 version 4 with IHL ≥ 5, protocol 17, fragment
//!   offset 0, and the UDP header (located after the IPv4 options, if any) with
//!   destination port = `agg_udp_port`. A frame too short to show that port is not
//!   one (bypassed): the accelerator never drops what it cannot identify as its own.
//!   IPv6 is never PANAMA.
//! - **Malformed** aggregation packets are dropped; the first failing check, in this
//!   order, is the reported reason ([`Malformed`]): frame shorter than 64 bytes; IPv4
//!   options (IHL ≠ 5); more-fragments set; IPv4 total length ≠ frame length − 14;
//!   UDP length ≠ frame length − 34; version ≠ 1; flags ≠ 0 (a result or reserved
//!   bit coming in: results are never summed again); unknown format code; payload
//!   length (frame length − 64) zero or not a multiple of 64; payload longer than
//!   `max_payload_bytes`; `elem_count` × element size (of the packet's own format) ≠
//!   payload length.
//! - Not checked (and kept unchanged in results): IPv4 header checksum and UDP
//!   checksum of incoming packets (the MAC has checked the FCS), MAC and IP
//!   addresses, TTL, DSCP, `bitmap` and `reserved` of incoming packets.
//! - A packet whose format differs from the instance's is well-formed at the parser;
//!   as the spec says, it is dropped at the FIFO heads (`other_mismatch`).
//!
//! Slots and ports:
//! - Ports are numbered by index 0..n−1 ([`GoldenConfig::port_codes`] gives each
//!   index's one-hot tuser code, e.g. [`config::SUME_PORTS`]). The adder tree's input
//!   order, the order of result copies, and the bitmaps are by port index.
//! - A packet belongs to the **lowest-numbered enabled slot** with its (`job_id`,
//!   `tree_id`) *in which its source port participates*. A packet with no such slot
//!   (unknown job, or a port not participating) is bypassed like ordinary traffic and
//!   counted in `unknown_job` (and in `bypassed`): it never enters a FIFO that would
//!   never drain.
//! - `seq` comparison is plain unsigned 32-bit (no wrap-around arithmetic).
//! - The **result bitmap** has bit *i* set for port index *i* that contributed; every
//!   participating port contributes to every aggregation, so it equals the slot's
//!   participating-ports register (zero-extended to 32 bits). Worker ids stay in each
//!   result's own header.
//! - The result's **ECN** is the OR of the ECN fields of all heads summed.
//! - A slot's **sum** is the tree sum ([`crate::golden::fp::tree_sum`]) over all
//!   `ports` inputs in port order, non-participating ports as −0.0, in the instance's
//!   format and `ftz`.
//! - Default bypass map: port index 0↔1, 2↔3, …; an odd last port maps to itself.
//!
//! Counters ([`Counters`]): `accepted` counts packets written into a slot FIFO at
//! the parser; `unknown_job` packets are also `bypassed`. The identities that hold at
//! any packet boundary, with `waiting` packets in the FIFOs, are
//! `in = bypassed + accepted + malformed + oversize + empty_frames + full_drops` and
//! `accepted = results_out + seq_mismatch + other_mismatch + timeout_drops +
//! waiting`; [`run`] checks both.
//!
//! Frames the parser never sees whole: a frame longer than
//! `max_frame_bytes` is dropped (`oversize`) and one without a byte is dropped
//! (`empty_frames`); every other short frame is treated like any other. Frames
//! from a host (DMA) source code ([`GoldenConfig::host_routes`]) are bypassed to
//! that code's route (they belong to no slot).

pub mod chaos;
pub mod config;
pub mod counters;
pub mod frame;
pub mod golden;
pub mod header;
pub mod invariants;
pub mod measure;
pub mod mutants;
pub mod payload;
pub mod pcap;
pub mod result;
pub mod scenario;
pub mod session;
pub mod stream;
pub mod system;
pub mod traffic;

pub use config::{GoldenConfig, SlotConfig};
pub use counters::Counters;
pub use frame::{classify, AggPacket, Class, FrameError, Malformed};
pub use golden::{run, GoldenError, GoldenOutcome, InFrame, OutFrame};
pub use header::PanamaHeader;
