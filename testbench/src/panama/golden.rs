//! The golden model of one accelerator instance: from the frames in arrival order
//! (each with its one-hot source port) and the configuration, what leaves it —
//! bypass frames, result frames per slot — and its counters.
//!
//! See the module docs of [`super`] for the contract: which orders are
//! deterministic, why the outcome depends only on the arrival order, and every
//! choice the spec leaves open.

use super::config::{ConfigError, GoldenConfig};
use super::counters::{AccountingError, Counters};
use super::frame::{classify, AggPacket, Class, FrameError, Malformed};
use super::header::HEADERS_LEN;
use super::payload;
use super::result::result_headers;
use crate::golden::fp::tree_sum;
use std::collections::VecDeque;
use thiserror::Error;

/// A frame entering the accelerator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InFrame {
    /// One-hot tuser source port code (`tuser[23:16]`).
    pub src: u8,
    /// The frame's bytes.
    pub bytes: Vec<u8>,
}

/// A frame leaving the accelerator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutFrame {
    /// tuser destination mask (`tuser[31:24]`); several bits = copies.
    pub dst: u8,
    /// Index of the input frame it comes from (for a result: that worker's packet).
    pub input: usize,
    /// The frame's bytes.
    pub bytes: Vec<u8>,
}

/// Why a run of the model failed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum GoldenError {
    /// The configuration is invalid.
    #[error("invalid PANAMA configuration: {0}")]
    Config(#[from] ConfigError),
    /// A frame came from a port code the instance does not have.
    #[error("input frame {index}: source port code {src:#04x} is not one of the instance's ports {ports:02x?}")]
    UnknownSourcePort {
        /// Index of the frame in the input.
        index: usize,
        /// Its source code.
        src: u8,
        /// The instance's port codes.
        ports: Vec<u8>,
    },
    /// A result frame could not be built (never expected: sums fit their format).
    #[error("result frame of slot {slot}: {source}")]
    Result {
        /// The slot.
        slot: usize,
        /// The reason.
        source: FrameError,
    },
    /// The counters do not add up (a bug in the model).
    #[error(transparent)]
    Accounting(#[from] AccountingError),
}

/// One aggregation: the heads of every participating port of a slot, summed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aggregation {
    /// The slot.
    pub slot: usize,
    /// The heads' common `seq`.
    pub seq: u32,
    /// Input indices of the summed packets, in port order.
    pub inputs: Vec<usize>,
    /// OR of the summed packets' ECN fields.
    pub ecn: u8,
    /// Contributing ports (bit i = port index i).
    pub bitmap: u32,
    /// The element-wise sum.
    pub sum: Vec<u64>,
    /// The result frames, one per participating port in port order; `dst` is that
    /// port's one-hot code.
    pub results: Vec<OutFrame>,
}

/// Why a FIFO head was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// Its `seq` was older than another participating port's head.
    SeqMismatch {
        /// The newest `seq` among the heads.
        newest: u32,
    },
    /// The heads' `elem_count` or `format` differed, or a format was not the
    /// instance's.
    OtherMismatch,
}

/// A FIFO head that was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadDrop {
    /// Input index of the dropped packet.
    pub input: usize,
    /// Its slot.
    pub slot: usize,
    /// Its port index.
    pub port: usize,
    /// Its `seq`.
    pub seq: u32,
    /// Why.
    pub reason: DropReason,
}

/// A packet still in a FIFO when the input ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// Input index.
    pub input: usize,
    /// Slot.
    pub slot: usize,
    /// Port index.
    pub port: usize,
    /// The parsed packet.
    pub packet: AggPacket,
}

/// Everything the model predicts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GoldenOutcome {
    /// Bypassed frames (unknown jobs included), bytes unchanged, in arrival order.
    pub bypass: Vec<OutFrame>,
    /// Aggregations in the order the model performed them: deterministic within a
    /// slot; across slots it is one valid order, not the contract.
    pub aggregations: Vec<Aggregation>,
    /// Malformed frames: input index and reason.
    pub malformed: Vec<(usize, Malformed)>,
    /// Dropped FIFO heads, in order.
    pub drops: Vec<HeadDrop>,
    /// Packets left in the FIFOs, by slot, port and arrival.
    pub waiting: Vec<Waiting>,
    /// With a finite `fifo_depth`: the input index of the first frame that found its
    /// FIFO full while its slot could not become ready without more input. The
    /// hardware holds the input for `full_wait` cycles and then drops it
    /// (`full_drops`), so from this frame on which aggregation packets are summed
    /// depends on timing. The model then stops modelling the FIFOs: later
    /// aggregation packets of a slot are only counted in
    /// [`GoldenOutcome::undetermined`]; bypass frames, parser drops and their
    /// counters stay exact; `aggregations`, `drops` and the FIFO counters cover
    /// the frames before it.
    pub overflow_at: Option<usize>,
    /// Aggregation packets of a slot from `overflow_at` on: accepted or dropped on
    /// a full FIFO, depending on timing (counted in `packets_in`, in neither
    /// `accepted` nor `full_drops`).
    pub undetermined: u64,
    /// Frames longer than `max_frame_bytes` (input indices).
    pub oversize: Vec<usize>,
    /// Frames without a byte (input indices).
    pub empty: Vec<usize>,
    /// The final counters.
    pub counters: Counters,
}

impl GoldenOutcome {
    /// Frames that leave the accelerator: bypassed frames and result frames.
    pub fn frames_out(&self) -> usize {
        self.bypass.len()
            + self
                .aggregations
                .iter()
                .map(|a| a.results.len())
                .sum::<usize>()
    }

    /// Bypassed frames whose tuser destination includes port code `dst`, in order.
    pub fn bypass_to(&self, dst: u8) -> Vec<&[u8]> {
        self.bypass
            .iter()
            .filter(|f| f.dst & dst != 0)
            .map(|f| f.bytes.as_slice())
            .collect()
    }

    /// Result frames of `slot`, in their deterministic order (aggregation by
    /// aggregation, participating ports in port order).
    pub fn slot_results(&self, slot: usize) -> Vec<&OutFrame> {
        self.aggregations
            .iter()
            .filter(|a| a.slot == slot)
            .flat_map(|a| a.results.iter())
            .collect()
    }

    /// Result frames of `slot` sent to port code `dst`, in order.
    pub fn results_to(&self, slot: usize, dst: u8) -> Vec<&[u8]> {
        self.slot_results(slot)
            .into_iter()
            .filter(|f| f.dst & dst != 0)
            .map(|f| f.bytes.as_slice())
            .collect()
    }
}

/// A packet in a FIFO.
struct Queued {
    input: usize,
    header: [u8; HEADERS_LEN],
    packet: AggPacket,
}

/// Runs the model on `inputs` in arrival order.
pub fn run(config: &GoldenConfig, inputs: &[InFrame]) -> Result<GoldenOutcome, GoldenError> {
    config.validate()?;
    let ports = config.port_codes.len();
    let mut fifos: Vec<Vec<VecDeque<Queued>>> = (0..config.slots.len())
        .map(|_| (0..ports).map(|_| VecDeque::new()).collect())
        .collect();
    let mut out = GoldenOutcome::default();
    for (index, input) in inputs.iter().enumerate() {
        let port = config.port_index(input.src);
        let route = match port {
            Some(p) => config.bypass_dst[p],
            None => config
                .host_route(input.src)
                .ok_or_else(|| GoldenError::UnknownSourcePort {
                    index,
                    src: input.src,
                    ports: config.port_codes.clone(),
                })?,
        };
        let c = &mut out.counters;
        c.packets_in += 1;
        if input.bytes.len() > config.max_frame_bytes {
            c.oversize += 1;
            out.oversize.push(index);
            continue;
        }
        if input.bytes.is_empty() {
            c.empty_frames += 1;
            out.empty.push(index);
            continue;
        }
        let bypass = OutFrame {
            dst: route,
            input: index,
            bytes: input.bytes.clone(),
        };
        match classify(&input.bytes, config.agg_udp_port, config.max_payload_bytes) {
            Class::Bypass => {
                c.bypassed += 1;
                out.bypass.push(bypass);
            }
            Class::Malformed(reason) => {
                c.malformed += 1;
                out.malformed.push((index, reason));
            }
            Class::Aggregation(packet) => {
                let h = &packet.header;
                let slot =
                    port.and_then(|p| config.slot_for(h.job_id, h.tree_id, p).map(|s| (s, p)));
                let Some((slot, port)) = slot else {
                    c.bypassed += 1;
                    c.unknown_job += 1;
                    out.bypass.push(bypass);
                    continue;
                };
                let fifo = &mut fifos[slot][port];
                let full = config.fifo_depth.is_some_and(|d| fifo.len() >= d);
                if full && out.overflow_at.is_none() {
                    out.overflow_at = Some(index);
                }
                if out.overflow_at.is_some() {
                    out.undetermined += 1;
                    continue;
                }
                c.accepted += 1;
                let mut header = [0u8; HEADERS_LEN];
                header.copy_from_slice(&input.bytes[..HEADERS_LEN]);
                fifo.push_back(Queued {
                    input: index,
                    header,
                    packet,
                });
                serve(config, slot, &mut fifos[slot], &mut out)?;
            }
        }
    }
    for (slot, per_port) in fifos.into_iter().enumerate() {
        for (port, fifo) in per_port.into_iter().enumerate() {
            out.waiting.extend(fifo.into_iter().map(|q| Waiting {
                input: q.input,
                slot,
                port,
                packet: q.packet,
            }));
        }
    }
    if out.overflow_at.is_none() {
        out.counters.check(out.waiting.len() as u64)?;
    }
    Ok(out)
}

/// Serves `slot` until it is not ready: drops stale or mismatched heads, sums
/// matching ones.
fn serve(
    config: &GoldenConfig,
    slot: usize,
    fifos: &mut [VecDeque<Queued>],
    out: &mut GoldenOutcome,
) -> Result<(), GoldenError> {
    let part: Vec<usize> = (0..fifos.len())
        .filter(|&p| config.slots[slot].has_port(p))
        .collect();
    loop {
        let heads: Option<Vec<&Queued>> = part.iter().map(|&p| fifos[p].front()).collect();
        let Some(heads) = heads else {
            return Ok(()); // not ready
        };
        let newest = heads.iter().map(|q| q.packet.header.seq).max().unwrap_or(0);
        if heads.iter().any(|q| q.packet.header.seq < newest) {
            for &p in &part {
                if fifos[p]
                    .front()
                    .is_some_and(|q| q.packet.header.seq < newest)
                {
                    if let Some(q) = fifos[p].pop_front() {
                        out.counters.seq_mismatch += 1;
                        out.drops.push(HeadDrop {
                            input: q.input,
                            slot,
                            port: p,
                            seq: q.packet.header.seq,
                            reason: DropReason::SeqMismatch { newest },
                        });
                    }
                }
            }
            continue;
        }
        let first = &heads[0].packet.header;
        let consistent = heads.iter().all(|q| {
            let h = &q.packet.header;
            h.elem_count == first.elem_count
                && h.format == first.format
                && h.fp_format() == Some(config.format)
        });
        let popped: Vec<Queued> = part.iter().filter_map(|&p| fifos[p].pop_front()).collect();
        if !consistent {
            for (q, &p) in popped.iter().zip(&part) {
                out.counters.other_mismatch += 1;
                out.drops.push(HeadDrop {
                    input: q.input,
                    slot,
                    port: p,
                    seq: q.packet.header.seq,
                    reason: DropReason::OtherMismatch,
                });
            }
            continue;
        }
        out.aggregations
            .push(aggregate(config, slot, &part, &popped)?);
        out.counters.results_out += part.len() as u64;
    }
}

/// Sums the heads `popped` (one per participating port in `part`, in port order)
/// and builds the result frames.
fn aggregate(
    config: &GoldenConfig,
    slot: usize,
    part: &[usize],
    popped: &[Queued],
) -> Result<Aggregation, GoldenError> {
    let ports = config.port_codes.len();
    let elems = popped.first().map_or(0, |q| q.packet.payload.len());
    let mut operands = vec![None; ports];
    let sum: Vec<u64> = (0..elems)
        .map(|e| {
            for (q, &p) in popped.iter().zip(part) {
                operands[p] = Some(q.packet.payload[e]);
            }
            tree_sum(config.format, config.ftz, &operands)
        })
        .collect();
    let ecn = popped.iter().fold(0, |acc, q| acc | q.packet.ecn);
    let bitmap = u32::from(config.slots[slot].ports);
    let result_error = |source| GoldenError::Result { slot, source };
    let payload = payload::encode(config.format, &sum).map_err(result_error)?;
    let results = popped
        .iter()
        .zip(part)
        .map(|(q, &p)| {
            let headers = result_headers(&q.header, ecn, bitmap).map_err(result_error)?;
            Ok(OutFrame {
                dst: config.port_codes[p],
                input: q.input,
                bytes: [headers.as_slice(), &payload].concat(),
            })
        })
        .collect::<Result<Vec<_>, GoldenError>>()?;
    Ok(Aggregation {
        slot,
        seq: popped.first().map_or(0, |q| q.packet.header.seq),
        inputs: popped.iter().map(|q| q.input).collect(),
        ecn,
        bitmap,
        sum,
        results,
    })
}
