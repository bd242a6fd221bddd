//! The accelerator's packet counters and the identities that tie them together.

use thiserror::Error;

/// The counters at the end of a run (the spec's "cycles stalled on full buffers"
/// depends on timing and is not modelled; `full_drops` and `timeout_drops` are 0
/// wherever the model is exact).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Frames that entered the accelerator.
    pub packets_in: u64,
    /// Frames sent on the bypass path, unknown-job aggregation packets included.
    pub bypassed: u64,
    /// Well-formed aggregation packets written into a slot's FIFO.
    pub accepted: u64,
    /// Result frames sent.
    pub results_out: u64,
    /// Well-formed aggregation packets that matched no slot (also in `bypassed`).
    pub unknown_job: u64,
    /// Malformed aggregation packets dropped at the parser.
    pub malformed: u64,
    /// FIFO heads dropped because a newer `seq` was at another port's head.
    pub seq_mismatch: u64,
    /// FIFO heads dropped because `elem_count` or `format` differed, or the format
    /// was not the instance's.
    pub other_mismatch: u64,
    /// Frames longer than `max_frame_bytes`, dropped as they arrived.
    pub oversize: u64,
    /// Frames without a byte, dropped.
    pub empty_frames: u64,
    /// Aggregation packets dropped on a full FIFO (after `full_wait`).
    pub full_drops: u64,
    /// FIFO heads flushed from a stale slot (after `slot_timeout`).
    pub timeout_drops: u64,
}

/// A counter identity that does not hold (a bug in the model).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("counter identity `{identity}` fails: {lhs} ≠ {rhs} ({counters:?}, {waiting} waiting)")]
pub struct AccountingError {
    /// The identity, as text.
    pub identity: &'static str,
    /// Its left side.
    pub lhs: u64,
    /// Its right side.
    pub rhs: u64,
    /// The counters.
    pub counters: Box<Counters>,
    /// Packets still in the FIFOs.
    pub waiting: u64,
}

impl Counters {
    /// The counters by their register (and core port) names, in register order.
    pub fn named(&self) -> [(&'static str, u64); 12] {
        [
            ("packets_in", self.packets_in),
            ("bypassed", self.bypassed),
            ("accepted", self.accepted),
            ("results_out", self.results_out),
            ("unknown_job", self.unknown_job),
            ("malformed", self.malformed),
            ("seq_mismatch", self.seq_mismatch),
            ("other_mismatch", self.other_mismatch),
            ("oversize", self.oversize),
            ("empty_frames", self.empty_frames),
            ("full_drops", self.full_drops),
            ("timeout_drops", self.timeout_drops),
        ]
    }

    /// The counters from (name, value) pairs such as the hardware's registers;
    /// names not among [`Self::named`]'s are ignored, missing ones are 0.
    pub fn from_named(values: &[(&str, u64)]) -> Self {
        let get = |name: &str| {
            values
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(0, |&(_, v)| v)
        };
        Counters {
            packets_in: get("packets_in"),
            bypassed: get("bypassed"),
            accepted: get("accepted"),
            results_out: get("results_out"),
            unknown_job: get("unknown_job"),
            malformed: get("malformed"),
            seq_mismatch: get("seq_mismatch"),
            other_mismatch: get("other_mismatch"),
            oversize: get("oversize"),
            empty_frames: get("empty_frames"),
            full_drops: get("full_drops"),
            timeout_drops: get("timeout_drops"),
        }
    }

    /// `f` applied counter by counter to `self` and `other`.
    fn zip(&self, other: &Counters, f: impl Fn(u64, u64) -> u64) -> Counters {
        let pairs: Vec<(&str, u64)> = self
            .named()
            .iter()
            .zip(other.named().iter())
            .map(|(&(n, a), &(_, b))| (n, f(a, b)))
            .collect();
        Counters::from_named(&pairs)
    }

    /// The increments since `before`, modulo the hardware counters' 32 bits.
    pub fn since(&self, before: &Counters) -> Counters {
        self.zip(before, |a, b| a.wrapping_sub(b) & 0xFFFF_FFFF)
    }

    /// The sums of `self` and `other`, counter by counter.
    pub fn plus(&self, other: &Counters) -> Counters {
        self.zip(other, |a, b| a + b)
    }

    /// Checks the three identities, with `waiting` packets still in the FIFOs:
    ///
    /// 1. at the input: `packets_in = bypassed + accepted + malformed + oversize +
    ///    empty_frames + full_drops`;
    /// 2. at the FIFOs: `accepted = results_out + seq_mismatch + other_mismatch +
    ///    timeout_drops + waiting` (each aggregation consumes one head per
    ///    participating port and sends one result per participating port);
    /// 3. hence, end to end, the spec's "in = bypassed + accepted + dropped (by
    ///    reason)" with accepted counted as summed;
    ///
    /// and `unknown_job ≤ bypassed`.
    pub fn check(&self, waiting: u64) -> Result<(), AccountingError> {
        let c = *self;
        let fail = |identity, lhs, rhs| AccountingError {
            identity,
            lhs,
            rhs,
            counters: Box::new(c),
            waiting,
        };
        let rhs =
            c.bypassed + c.accepted + c.malformed + c.oversize + c.empty_frames + c.full_drops;
        if c.packets_in != rhs {
            return Err(fail(
                "in = bypassed + accepted + malformed + oversize + empty_frames + full_drops",
                c.packets_in,
                rhs,
            ));
        }
        let rhs = c.results_out + c.seq_mismatch + c.other_mismatch + c.timeout_drops + waiting;
        if c.accepted != rhs {
            return Err(fail(
                "accepted = results_out + seq_mismatch + other_mismatch + timeout_drops + waiting",
                c.accepted,
                rhs,
            ));
        }
        if c.unknown_job > c.bypassed {
            return Err(fail("unknown_job ≤ bypassed", c.unknown_job, c.bypassed));
        }
        Ok(())
    }
}
