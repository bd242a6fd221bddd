//! Whole traffic scenarios for the accelerator: several jobs sharing ports, each
//! worker's tensor chunked into packets, optional background (bypass) frames and
//! optional faults (malformed frames, sequence gaps and duplicates, foreign
//! formats, unknown jobs), interleaved at random on the single input stream.

use super::config::{GoldenConfig, SlotConfig};
use super::golden::InFrame;
use super::header::{elem_bytes, HEADERS_LEN, PAYLOAD_GRANULE};
use super::traffic::{
    background_frame, interleave, job_streams, with_defect, with_duplicate, with_format, with_gap,
    Defect, JobSpec, Values, MAX_BACKGROUND_FRAME_BYTES,
};
use hdl::blocks::fp::FpFormat;
use rand::Rng;

/// The most traffic a scenario (or any generated run) may offer, in bytes of
/// frames: [`Scenario::frames`] builds every frame in memory before the run, so a
/// larger run would exhaust the machine's memory instead of stopping with an error.
/// 4 GiB holds, for example, a tensor of 250 million fp32 elements per worker for
/// four workers of one job, in packets of 1,024 bytes.
pub const MAX_TRAFFIC_BYTES: u64 = 4 << 30;

/// The most background frames per aggregation packet a scenario asks for.
pub const MAX_BACKGROUND: f64 = 1000.0;

/// Why a scenario's traffic cannot be generated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    /// The background ratio is not a number in `0..=MAX_BACKGROUND`.
    #[error("{0} background frames per aggregation packet: give a number in 0..={MAX_BACKGROUND}")]
    Background(f64),
    /// The traffic would exceed [`MAX_TRAFFIC_BYTES`].
    #[error(
        "{frames} frames of up to {bytes} bytes in all: the traffic is built in memory \
         before the run, at most {MAX_TRAFFIC_BYTES} bytes (4 GiB)"
    )]
    TooLarge {
        /// Frames the run would offer (at most).
        frames: u64,
        /// Their bytes (at most).
        bytes: u64,
    },
}

/// `Ok` if `frames` frames of `bytes` bytes in all (upper bounds) fit
/// [`MAX_TRAFFIC_BYTES`].
pub fn traffic_fits(frames: u64, bytes: u64) -> Result<(), ScenarioError> {
    if bytes > MAX_TRAFFIC_BYTES {
        return Err(ScenarioError::TooLarge { frames, bytes });
    }
    Ok(())
}

/// Bytes of `n` background frames, at most.
pub fn background_bytes(n: u64) -> u64 {
    n.saturating_mul(MAX_BACKGROUND_FRAME_BYTES as u64)
}

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

    /// An error if [`frames`](Self::frames) cannot make the scenario's traffic under
    /// `config`: a background ratio that is no number in `0..=MAX_BACKGROUND`, or
    /// more than [`MAX_TRAFFIC_BYTES`] of frames (see [`bound`](Self::bound)).
    pub fn check(&self, config: &GoldenConfig) -> Result<(), ScenarioError> {
        if !(0.0..=MAX_BACKGROUND).contains(&self.background) {
            return Err(ScenarioError::Background(self.background));
        }
        let (frames, bytes) = self.bound(config);
        traffic_fits(frames, bytes)
    }

    /// At most how many frames, of how many bytes in all, [`frames`](Self::frames)
    /// makes under `config` (with faults, one duplicate and one frame a defect
    /// lengthened past the payload bound a worker; every background frame as long
    /// as an Ethernet frame may be; saturating, never wrapping).
    pub fn bound(&self, config: &GoldenConfig) -> (u64, u64) {
        let faulted = u64::from(self.faults > 0.0);
        let (mut frames, mut bytes) = (0u64, 0u64);
        for job in &self.jobs {
            let per_packet = (job.payload_bytes / elem_bytes(config.format)).max(1);
            // A worker's fault may duplicate one of its packets...
            let packets = (job.elements.div_ceil(per_packet) as u64 + faulted)
                .saturating_mul(job.ports.len() as u64);
            let frame = (HEADERS_LEN + job.payload_bytes) as u64;
            // ... or lengthen one to past the payload bound.
            let defects = faulted
                * (config.max_payload_bytes + PAYLOAD_GRANULE) as u64
                * job.ports.len() as u64;
            frames = frames.saturating_add(packets);
            bytes = bytes
                .saturating_add(packets.saturating_mul(frame))
                .saturating_add(defects);
        }
        // Exact in f64 up to 2^53 frames; beyond, far past the bound anyway.
        let background = (frames as f64 * self.background).ceil() as u64;
        frames = frames.saturating_add(background);
        bytes = bytes.saturating_add(background_bytes(background));
        (frames, bytes)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::seeded;

    fn config(format: FpFormat) -> GoldenConfig {
        GoldenConfig::new(format, &[0x01, 0x04, 0x10, 0x40], vec![])
    }

    #[test]
    fn the_bound_holds_what_frames_makes() {
        let mut rng = seeded("scenario bound", 3);
        for case in 0..40 {
            let format = [FpFormat::Fp32, FpFormat::Bf16, FpFormat::Fp16][case % 3];
            let cfg = config(format);
            let payload = 64 * rng.gen_range(1..=cfg.max_payload_bytes / 64);
            let mut s = Scenario::uniform(
                rng.gen_range(1..=3),
                rng.gen_range(1..=4),
                rng.gen_range(1..=6),
                payload,
                format,
            );
            s.background = [0.0, 0.5, 1.0, 2.5][case % 4];
            s.faults = [0.0, 1.0][case % 2];
            s.round_robin = case % 5 == 0;
            let (frames, bytes) = s.bound(&cfg);
            let made = s.frames(&mut rng, &cfg);
            let made_bytes: u64 = made.iter().map(|f| f.bytes.len() as u64).sum();
            assert!(
                made.len() as u64 <= frames,
                "case {case}: {} > {frames}",
                made.len()
            );
            assert!(made_bytes <= bytes, "case {case}: {made_bytes} > {bytes}");
            // Loose only by the duplicates, the defects' length and the background
            // frames counted at the longest (twice the average).
            let workers: u64 = s.jobs.iter().map(|j| j.ports.len() as u64).sum();
            let per_worker = (HEADERS_LEN + cfg.max_payload_bytes + PAYLOAD_GRANULE) as u64;
            let made_frames = made.len() as u64;
            assert!(
                frames <= 2 * made_frames + 4 * workers,
                "case {case}: {frames} vs {made_frames}"
            );
            let background = 4 * MAX_BACKGROUND_FRAME_BYTES as u64;
            assert!(
                bytes <= 3 * made_bytes + workers * (per_worker + background),
                "case {case}: {bytes} vs {made_bytes}"
            );
        }
    }

    #[test]
    fn the_bound_holds_a_defect_that_lengthens_the_one_short_frame() {
        // One worker, one packet of the smallest payload, always faulted: about one
        // run in 55 (one of the 11 defects, which are a fifth of the faults) makes
        // its payload longer than the payload bound, far past the duplicate's slack.
        let cfg = config(FpFormat::Fp32);
        let mut rng = seeded("scenario bound, defects", 5);
        let mut s = Scenario::uniform(1, 1, 1, PAYLOAD_GRANULE, FpFormat::Fp32);
        s.faults = 1.0;
        let (_, bytes) = s.bound(&cfg);
        let mut longest = 0;
        for _ in 0..600 {
            let made: u64 = (s.frames(&mut rng, &cfg).iter())
                .map(|f| f.bytes.len() as u64)
                .sum();
            longest = longest.max(made);
        }
        assert!(longest <= bytes, "{longest} > {bytes}");
        assert!(
            longest > 2 * (HEADERS_LEN + PAYLOAD_GRANULE) as u64,
            "no run met the lengthening defect: {longest}"
        );
    }

    #[test]
    fn traffic_past_the_bound_or_a_background_that_is_no_ratio_is_refused() {
        let cfg = config(FpFormat::Fp32);
        let mut s = Scenario::uniform(2, 4, 4, 1024, FpFormat::Fp32);
        assert_eq!(s.check(&cfg), Ok(()));
        for bad in [f64::NAN, f64::INFINITY, -1.0, MAX_BACKGROUND + 0.5] {
            s.background = bad;
            assert!(
                matches!(s.check(&cfg), Err(ScenarioError::Background(_))),
                "{bad}"
            );
        }
        s.background = MAX_BACKGROUND;
        assert_eq!(s.check(&cfg), Ok(()));
        // 2 jobs × 4 workers × 2^19 packets of 64 header and 1,024 payload bytes:
        // 4,563,402,752 bytes, past 4 GiB; 2^18 packets fit.
        let big = Scenario::uniform(2, 4, 1 << 19, 1024, FpFormat::Fp32);
        let err = big.check(&cfg).unwrap_err();
        assert!(
            matches!(err, ScenarioError::TooLarge { frames, bytes }
                if frames == 8 << 19 && bytes == 4_563_402_752),
            "{err}"
        );
        let fits = Scenario::uniform(2, 4, 1 << 18, 1024, FpFormat::Fp32);
        assert_eq!(fits.check(&cfg), Ok(()));
        // The example `MAX_TRAFFIC_BYTES` gives: 250 million fp32 elements, 976,563
        // packets of 1,024 bytes, for each of four workers: 4,250,002,176 bytes.
        let example = Scenario::uniform(1, 4, 976_563, 1024, FpFormat::Fp32);
        assert_eq!(example.check(&cfg), Ok(()));
        // Saturating, not wrapping: a tensor of usize::MAX elements.
        let mut huge = Scenario::uniform(1, 4, 1, 1024, FpFormat::Fp32);
        huge.jobs[0].elements = usize::MAX;
        assert!(matches!(
            huge.check(&cfg),
            Err(ScenarioError::TooLarge { .. })
        ));
    }
}
