//! The NetFPGA side of an accelerator core: [`StreamDriver`] offers input
//! frames beat by beat on `s_axis_*` (with `tuser` = length, one-hot source
//! port and a destination, 0 unless given), takes output beats from `m_axis_*`
//! with a chosen probability of `tready` (random back-pressure), reassembles
//! the output frames and records when every beat moved. It drives any
//! [`Pins`] (a single [`Dut`](crate::dut::Dut) or the differential harness's
//! [`Step`](crate::harness::Step)) through the two streams' [`AxisPins`],
//! resolved at its first step.

use super::golden::InFrame;
use crate::dut::DutError;
use crate::pins::{AxisPins, Pins};
use rand::Rng;
use std::collections::VecDeque;

/// One AXI-Stream beat as words.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Beat {
    data: Vec<u64>,
    keep: Vec<u64>,
    user: Vec<u64>,
    last: bool,
    frame: usize,
}

/// Fills `w` with the little-endian words of `bytes` (zero past them).
fn fill_words(w: &mut [u64], bytes: &[u8]) {
    w.fill(0);
    for (word, chunk) in w.iter_mut().zip(bytes.chunks(8)) {
        let mut le = [0u8; 8];
        le[..chunk.len()].copy_from_slice(chunk);
        *word = u64::from_le_bytes(le);
    }
}

/// How a frame's beats are laid out on the bus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// As a NetFPGA MAC sends it: `tkeep` full on every beat but the last, which
    /// carries `tlast`; a frame without bytes is one beat with an empty `tkeep`.
    Whole,
    /// No `tlast` on the last beat: the frame runs into the next one on the wire.
    Unterminated,
    /// An extra beat with an empty `tkeep` before beat `n` (if the frame has more
    /// than `n` beats). A NetFPGA stream never has one; it carries no byte.
    EmptyBeatBefore(usize),
}

/// A frame given to the driver whose beats are not queued yet.
#[derive(Clone, Debug)]
struct Pending {
    frame: InFrame,
    index: usize,
    shape: Shape,
    beats: usize,
    /// `tuser[31:24]` of its beats.
    dst: u8,
}

/// The beats of `frame` on a bus of `per` bytes laid out as `shape` says, and
/// where its empty beat goes, if any.
fn layout(frame: &InFrame, per: usize, shape: Shape) -> (usize, Option<usize>) {
    let chunks = frame.bytes.len().div_ceil(per).max(1);
    let empty_before = match shape {
        Shape::EmptyBeatBefore(n) if n > 0 && n < chunks => Some(n),
        _ => None,
    };
    (chunks + usize::from(empty_before.is_some()), empty_before)
}

/// Queues the beats of `p`'s frame on a `width`-bit bus, NetFPGA tuser, on
/// `beats`, reusing the buffers of `spare` beats (taken beats come back there, so
/// a long run allocates none per beat).
fn queue_beats((beats, spare): (&mut VecDeque<Beat>, &mut Vec<Beat>), p: &Pending, width: usize) {
    let (frame, shape) = (&p.frame, p.shape);
    let per = width / 8;
    let user =
        u64::from(frame.bytes.len() as u16) | u64::from(frame.src) << 16 | u64::from(p.dst) << 24;
    let (n, empty_before) = layout(frame, per, shape);
    let mut bytes = frame.bytes.chunks(per);
    for k in 0..n {
        let chunk = match empty_before {
            Some(e) if k == e => &[][..],
            _ => bytes.next().unwrap_or(&[]),
        };
        let mut b = spare.pop().unwrap_or_else(|| Beat {
            data: vec![0; width.div_ceil(64)],
            keep: vec![0; per.div_ceil(64)],
            user: vec![0; 2],
            last: false,
            frame: 0,
        });
        fill_words(&mut b.data, chunk);
        for (w, keep) in b.keep.iter_mut().enumerate() {
            *keep = keep_word(chunk.len(), w);
        }
        b.user.copy_from_slice(&[user, 0]);
        b.last = shape != Shape::Unterminated && k + 1 == n;
        b.frame = p.index;
        beats.push_back(b);
    }
}

/// Word `w` of a `tkeep` with the low `bytes` bits set.
fn keep_word(bytes: usize, w: usize) -> u64 {
    let lo = w * 64;
    match bytes.saturating_sub(lo) {
        0 => 0,
        n if n >= 64 => u64::MAX,
        n => (1u64 << n) - 1,
    }
}

/// An output beat as sampled before the edge that takes it (buffers kept for
/// the whole run).
#[derive(Clone, Debug, Default)]
struct Snap {
    data: Vec<u64>,
    keep: Vec<u64>,
    user: Vec<u64>,
    last: bool,
}

/// The accelerator core's two streams.
#[derive(Clone, Copy, Debug)]
struct StreamPins {
    input: AxisPins,
    output: AxisPins,
}

/// A frame that left the accelerator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    /// `tuser[31:24]` of its first beat.
    pub dst: u8,
    /// `tuser[15:0]` of its first beat.
    pub tuser_len: u16,
    /// Its bytes (the `tkeep` bytes of every beat).
    pub bytes: Vec<u8>,
    /// Cycle its first beat was taken.
    pub first_cycle: u64,
    /// Cycle its last beat was taken.
    pub last_cycle: u64,
    /// Its beats with a bit of `tuser[127:32]` set (PANAMA.md makes them 0).
    pub stray_tuser_beats: u32,
}

/// Drives frames in and takes frames out (see the module docs). Frames are
/// given up front ([`StreamDriver::new`]) or fed while it runs
/// ([`StreamDriver::push_frame`]); only beats not yet taken are held.
pub struct StreamDriver {
    width: usize,
    beats: VecDeque<Beat>,
    /// Taken beats, whose buffers the next frames reuse.
    spare: Vec<Beat>,
    /// Frames whose beats are queued when the ones before them are taken.
    pending: VecDeque<Pending>,
    /// Their beats.
    pending_beats: usize,
    pushed_beats: usize,
    frames: usize,
    next_in: usize,
    driving: bool,
    in_ready: bool,
    out_valid: bool,
    out_ready: bool,
    pins: Option<StreamPins>,
    snapshot: Snap,
    snapped: bool,
    partial: Option<Observed>,
    /// Output frames in the order they completed.
    pub outputs: Vec<Observed>,
    /// Cycle each input frame's first beat was accepted.
    pub first_accepted: Vec<Option<u64>>,
    /// Cycle each input frame's last beat was accepted.
    pub last_accepted: Vec<Option<u64>>,
    /// Cycles in which a beat was offered and not taken.
    pub input_stalls: u64,
    /// The longest input stall: the most cycles with `m_axis_tready` high in one
    /// unbroken run of cycles in which a beat was offered and not taken (cycles
    /// the output was back-pressured are the downstream's, not counted).
    pub longest_stall: u64,
    stall_run: u64,
    /// Cycles in which an output beat moved.
    pub output_beats: u64,
    /// Cycles in which an output beat was offered and refused (`m_axis_tready`
    /// low): what the core's `output_held_cycles` counter counts.
    pub output_held: u64,
}

impl StreamDriver {
    /// A driver that will offer `frames` in order on a `width`-bit bus.
    pub fn new(frames: &[InFrame], width: u32) -> Self {
        let mut d = StreamDriver::streaming(width);
        for f in frames {
            d.push_frame(f, Shape::Whole);
        }
        d
    }

    /// A driver with no frames yet, for [`StreamDriver::push_frame`].
    pub fn streaming(width: u32) -> Self {
        StreamDriver {
            width: width as usize,
            beats: VecDeque::new(),
            spare: Vec::new(),
            pending: VecDeque::new(),
            pending_beats: 0,
            pushed_beats: 0,
            frames: 0,
            next_in: 0,
            driving: false,
            in_ready: false,
            out_valid: false,
            out_ready: false,
            pins: None,
            snapshot: Snap::default(),
            snapped: false,
            partial: None,
            outputs: vec![],
            first_accepted: vec![],
            last_accepted: vec![],
            input_stalls: 0,
            longest_stall: 0,
            stall_run: 0,
            output_beats: 0,
            output_held: 0,
        }
    }

    /// Queues `frame` (the next frame index), laid out as `shape` says, behind the
    /// frames given so far, with `tuser[31:24]` = 0 as a NetFPGA MAC sends it.
    pub fn push_frame(&mut self, frame: &InFrame, shape: Shape) {
        self.push_frame_to(frame, shape, 0);
    }

    /// Queues `frame` as [`StreamDriver::push_frame`] does, with `tuser[31:24]`
    /// = `dst`: a destination the frame brings along, which only a frame from
    /// a source code that is neither a port nor a host's keeps.
    pub fn push_frame_to(&mut self, frame: &InFrame, shape: Shape, dst: u8) {
        let (beats, _) = layout(frame, self.width / 8, shape);
        self.pushed_beats += beats;
        self.pending_beats += beats;
        self.pending.push_back(Pending {
            frame: frame.clone(),
            index: self.frames,
            shape,
            beats,
            dst,
        });
        self.frames += 1;
        self.first_accepted.push(None);
        self.last_accepted.push(None);
    }

    /// Input beats not yet taken.
    pub fn queued_beats(&self) -> usize {
        self.beats.len() + self.pending_beats
    }

    /// Input beats in all.
    pub fn input_beats(&self) -> usize {
        self.pushed_beats
    }

    /// Input beats accepted so far.
    pub fn accepted_beats(&self) -> usize {
        self.next_in
    }

    /// Cycles of the first and the last accepted input beat (0, 0 before any).
    pub fn input_span(&self) -> (u64, u64) {
        let first = self.first_accepted.iter().flatten().min();
        let last = self.last_accepted.iter().flatten().max();
        (first.copied().unwrap_or(0), last.copied().unwrap_or(0))
    }

    /// Cycles of the first and the last output beat taken (0, 0 before any).
    pub fn output_span(&self) -> (u64, u64) {
        let first = self.outputs.iter().map(|o| o.first_cycle).min();
        let last = self.outputs.iter().map(|o| o.last_cycle).max();
        (first.unwrap_or(0), last.unwrap_or(0))
    }

    /// True once every input beat was accepted.
    pub fn input_done(&self) -> bool {
        self.beats.is_empty() && self.pending.is_empty()
    }

    /// Queues the next pending frame's beats once every queued beat is taken.
    fn refill(&mut self) {
        if !self.beats.is_empty() {
            return;
        }
        if let Some(p) = self.pending.pop_front() {
            self.pending_beats -= p.beats;
            queue_beats((&mut self.beats, &mut self.spare), &p, self.width);
        }
    }

    /// One cycle. `edge` is true if the clock rose since the last call (then the
    /// handshakes sampled in the last call took place, at cycle `cycle - 1`);
    /// `p_valid` is the probability of offering a new beat, `p_ready` of taking an
    /// output beat. A stream port the design lacks is an error at the first call.
    pub fn step(
        &mut self,
        pins: &mut (impl Pins + ?Sized),
        cycle: u64,
        edge: bool,
        rng: &mut impl Rng,
        p_valid: f64,
        p_ready: f64,
    ) -> Result<(), DutError> {
        let p = match self.pins {
            Some(p) => p,
            None => self.resolve(pins)?,
        };
        if edge {
            self.edge(cycle.saturating_sub(1));
        }
        self.refill();
        let (input, output) = (p.input, p.output);
        let offer = !self.beats.is_empty() && (self.driving || rng.gen_bool(p_valid));
        self.driving = offer;
        if let Some(b) = self.beats.front().filter(|_| offer) {
            pins.set(input.tdata, &b.data)?;
            pins.set(input.tkeep, &b.keep)?;
            pins.set(input.tuser, &b.user)?;
            pins.set_u64(input.tlast, u64::from(b.last))?;
        }
        pins.set_u64(input.tvalid, u64::from(offer))?;
        self.out_ready = p_ready >= 1.0 || rng.gen_bool(p_ready);
        pins.set_u64(output.tready, u64::from(self.out_ready))?;
        // Inputs first, then the outputs as the coming edge samples them (a
        // `tready` may follow `tvalid` in the same cycle); the outputs settle once.
        self.out_valid = pins.is_high(output.tvalid)?;
        if self.out_valid {
            let snap = &mut self.snapshot;
            pins.get_into(output.tdata, &mut snap.data)?;
            pins.get_into(output.tkeep, &mut snap.keep)?;
            pins.get_into(output.tuser, &mut snap.user)?;
            snap.last = pins.is_high(output.tlast)?;
            self.snapped = true;
        }
        self.in_ready = pins.is_high(input.tready)?;
        Ok(())
    }

    /// Resolves the two streams' ports and sizes the output beat's buffers.
    fn resolve(&mut self, pins: &(impl Pins + ?Sized)) -> Result<StreamPins, DutError> {
        let p = StreamPins {
            input: AxisPins::resolve(pins.ports(), "s_axis_")?,
            output: AxisPins::resolve(pins.ports(), "m_axis_")?,
        };
        self.snapshot = Snap {
            data: vec![0; pins.words(p.output.tdata)],
            keep: vec![0; pins.words(p.output.tkeep)],
            user: vec![0; pins.words(p.output.tuser)],
            last: false,
        };
        self.pins = Some(p);
        Ok(p)
    }

    /// The handshakes sampled before the edge (at cycle `took`) took place.
    fn edge(&mut self, took: u64) {
        if self.driving && self.in_ready {
            if let Some(b) = self.beats.pop_front() {
                self.first_accepted[b.frame].get_or_insert(took);
                let ends = b.last || self.beats.front().is_none_or(|n| n.frame != b.frame);
                if ends {
                    self.last_accepted[b.frame] = Some(took);
                }
                self.spare.push(b);
            }
            self.next_in += 1;
            self.stall_run = 0;
        } else if self.driving {
            self.input_stalls += 1;
            if self.out_ready {
                self.stall_run += 1;
                self.longest_stall = self.longest_stall.max(self.stall_run);
            }
        }
        if self.out_valid && !self.out_ready {
            self.output_held += 1;
        }
        if self.out_valid && self.out_ready && self.snapped {
            self.snapped = false;
            self.take_output(took);
        }
    }

    /// Adds a taken output beat to the frame being reassembled.
    fn take_output(&mut self, cycle: u64) {
        self.output_beats += 1;
        let snap = &self.snapshot;
        let per = self.width / 8;
        let frame = self.partial.get_or_insert_with(|| {
            let tuser_len = snap.user[0] as u16;
            Observed {
                dst: (snap.user[0] >> 24) as u8,
                tuser_len,
                // Room for the length `tuser` gives, so that the bytes are not
                // copied again as the frame grows (a longer frame still grows).
                bytes: Vec::with_capacity(usize::from(tuser_len)),
                first_cycle: cycle,
                last_cycle: cycle,
                stray_tuser_beats: 0,
            }
        });
        let high_user = snap.user[0] >> 32 != 0 || snap.user[1..].iter().any(|&w| w != 0);
        frame.stray_tuser_beats += u32::from(high_user);
        for (k, word) in snap.data.iter().enumerate().take(per.div_ceil(8)) {
            let keep = (snap.keep[k / 8] >> (8 * (k % 8))) as u8;
            let bytes = word.to_le_bytes();
            let valid = (per - 8 * k).min(8);
            if keep == u8::MAX && valid == 8 {
                frame.bytes.extend_from_slice(&bytes);
            } else {
                let kept = (0..valid).filter(|i| keep >> i & 1 == 1);
                frame.bytes.extend(kept.map(|i| bytes[i]));
            }
        }
        frame.last_cycle = cycle;
        if snap.last {
            if let Some(done) = self.partial.take() {
                self.outputs.push(done);
            }
        }
    }
}
