//! Whole traffic scenarios for the accelerator: several jobs sharing ports, each
//! worker's tensor chunked into packets, optional background (bypass) frames and
//! optional faults (malformed frames, sequence gaps and duplicates, foreign
//! formats, unknown jobs), interleaved at random on the single input stream.

use super::config::{GoldenConfig, SlotConfig};
use super::golden::InFrame;
use super::traffic::{
    background_frame, interleave, job_streams, with_defect, with_duplicate, with_format, with_gap,
    Defect, JobSpec, Values,
};
use hdl::blocks::fp::FpFormat;
use rand::Rng;

/// A scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The jobs; job *j* gets slot *j* (its ports participating; enabled unless
    /// the job is in `retired`).
    pub jobs: Vec<JobSpec>,
    /// Element values.
    pub values: Values,
    /// Background frames per aggregation packet (0 = none; 1 = as many).
    pub background: f64,
    /// Probability that a worker stream gets one fault.
    pub faults: f64,
    /// Workers take turns packet by packet (job by job) instead of a random merge.
    pub round_robin: bool,
    /// Jobs the host has retired: their slots keep job, tree and ports but are
    /// disabled, so their workers' packets match no slot and go out as bypass
    /// (counted `unknown_job`).
    pub retired: Vec<usize>,
}

impl Scenario {
    /// `jobs` jobs over every port index in `0..ports`, `packets` packets of
    /// `payload_bytes` per worker, job ids 100, 101, …, no background, no faults.
    pub fn uniform(
        jobs: usize,
        ports: usize,
        packets: usize,
        payload_bytes: usize,
        format: FpFormat,
    ) -> Self {
        let per_packet = payload_bytes / super::header::elem_bytes(format);
        Scenario {
            jobs: (0..jobs)
                .map(|j| JobSpec {
                    job_id: 100 + j as u16,
                    tree_id: j as u8,
                    ports: (0..ports).collect(),
                    elements: packets * per_packet,
                    payload_bytes,
                })
                .collect(),
            values: Values::Finite,
            background: 0.0,
            faults: 0.0,
            round_robin: false,
            retired: Vec::new(),
        }
    }

    /// The slots the scenario's jobs need (job *j* in slot *j*, disabled if
    /// retired), padded with disabled slots to `slots`.
    pub fn slot_configs(&self, slots: usize) -> Vec<SlotConfig> {
        let mut v: Vec<SlotConfig> = self
            .jobs
            .iter()
            .enumerate()
            .map(|(k, j)| SlotConfig {
                enable: !self.retired.contains(&k),
                ..SlotConfig::new(j.job_id, j.tree_id, &j.ports)
            })
            .collect();
        v.resize(slots.max(v.len()), SlotConfig::DISABLED);
        v
    }

    /// The input frames, interleaved at random (each worker's order kept).
    pub fn frames(&self, rng: &mut impl Rng, config: &GoldenConfig) -> Vec<InFrame> {
        let mut streams: Vec<Vec<InFrame>> = vec![];
        let mut agg_frames = 0usize;
        for job in &self.jobs {
            for w in job_streams(
                rng,
                job,
                config.format,
                config.agg_udp_port,
                self.values,
                true,
            ) {
                let src = config.port_codes[w.port];
                let mut packets = w.packets;
                let mut defect = None;
                if rng.gen_bool(self.faults) {
                    let at = rng.gen_range(0..packets.len());
                    match rng.gen_range(0..5) {
                        0 => packets = with_gap(packets, at),
                        1 => packets = with_duplicate(packets, at),
                        2 => {
                            let other = [FpFormat::Fp32, FpFormat::Bf16, FpFormat::Fp16]
                                [rng.gen_range(0..3)];
                            packets[at] = with_format(&packets[at], other);
                        }
                        3 => packets[at].header.job_id ^= 0x4000,
                        _ => defect = Some((at, Defect::ALL[rng.gen_range(0..Defect::ALL.len())])),
                    }
                }
                let frames: Vec<InFrame> = packets
                    .iter()
                    .enumerate()
                    .filter_map(|(i, p)| {
                        let bytes = p.to_frame().ok()?;
                        let bytes = match defect {
                            Some((at, d)) if at == i => {
                                with_defect(rng, &bytes, d, config.max_payload_bytes)
                            }
                            _ => bytes,
                        };
                        Some(InFrame { src, bytes })
                    })
                    .collect();
                agg_frames += frames.len();
                streams.push(frames);
            }
        }
        let background = (agg_frames as f64 * self.background).round() as usize;
        let ports = config.port_codes.clone();
        let bg: Vec<InFrame> = (0..background)
            .map(|_| InFrame {
                src: ports[rng.gen_range(0..ports.len())],
                bytes: background_frame(rng, config.agg_udp_port),
            })
            .collect();
        if self.round_robin {
            let mut out = vec![];
            let mut iters: Vec<_> = streams.into_iter().map(Vec::into_iter).collect();
            let mut bg = bg.into_iter();
            loop {
                let before = out.len();
                for it in &mut iters {
                    out.extend(it.next());
                }
                out.extend(bg.next());
                if out.len() == before {
                    return out;
                }
            }
        }
        streams.push(bg);
        interleave(rng, streams)
    }
}
