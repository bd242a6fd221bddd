//! A generated floating-point adder ([`hdl::blocks::fp::fp_add`]) and adder tree
//! ([`hdl::blocks::fp::fp_add_tree`]) on the native simulator against the golden
//! model ([`crate::golden::fp`]): operands streamed through them, gaps in
//! `in_valid` included, and every cycle's `out_valid` from reset on and every
//! result checked when it leaves. The suite's adder and tree tests and their
//! mutant checks ([`check`] and [`check_tree`], `--design fp-add` and
//! `fp-add-tree` of the `mutants` example) all run them.

use crate::golden::fp::{add, lane, pack_tree_operands, tree_lane_sums};
use crate::golden::fp_cases::{random_pair, special_values};
use crate::rng::derived;
use hdl::blocks::fp::{FpAddConfig, FpFormat, FpTreeConfig};
use hdl::Module;
use rand::Rng;
use sim::Simulator;
use std::collections::VecDeque;

/// Streams `ops` through `adder` (generated for `cfg`, perhaps mutated), one
/// entry a cycle from reset: `Some` pair with `in_valid` set, `None` a cycle
/// without it. Checks `out_valid` in every cycle from reset on (0 until the first
/// operation has gone through the `stages` registers) and every result against
/// the golden model; returns how many results were checked, or the first
/// difference.
pub fn stream(
    adder: &Module,
    cfg: &FpAddConfig,
    ops: impl IntoIterator<Item = Option<(u64, u64)>>,
) -> Result<usize, String> {
    let mut sim = Simulator::new(adder).map_err(text)?;
    let port = |name| sim.port_handle(name).map_err(text);
    let (a, b, v) = (port("a")?, port("b")?, port("in_valid")?);
    let (y, ov) = (port("y")?, port("out_valid")?);
    let set = |sim: &mut Simulator, h, x| sim.set_handle_u64(h, x).map_err(text);
    let get = |sim: &mut Simulator, h| sim.get_handle_u64(h).map_err(text);
    sim.reset(1);
    let latency = cfg.stages as usize;
    // What the output shows in each cycle: the entry of `latency` cycles before,
    // nothing in the cycles after reset.
    let mut in_flight: VecDeque<Option<(u64, u64)>> = std::iter::repeat_n(None, latency).collect();
    let mut checked = 0;
    let drain = std::iter::repeat_n(None, latency);
    for (cycle, op) in ops.into_iter().chain(drain).enumerate() {
        if let Some((pa, pb)) = op {
            set(&mut sim, a, pa)?;
            set(&mut sim, b, pb)?;
        }
        set(&mut sim, v, op.is_some() as u64)?;
        in_flight.push_back(op);
        let shown = in_flight.pop_front().expect("the entry just pushed");
        let valid = get(&mut sim, ov)?;
        if (valid == 1) != shown.is_some() {
            return Err(format!(
                "{}: out_valid {valid} in cycle {cycle} after reset, expected {}",
                cfg.module_name(),
                shown.is_some() as u8
            ));
        }
        if let Some((pa, pb)) = shown {
            let (got, want) = (get(&mut sim, y)?, add(cfg.format, cfg.ftz, pa, pb));
            if got != want {
                return Err(format!(
                    "{}: {pa:#x} + {pb:#x} = {got:#x}, golden {want:#x}",
                    cfg.module_name()
                ));
            }
            checked += 1;
        }
        sim.step();
    }
    Ok(checked)
}

/// Every ordered pair of `format`'s [`special_values`].
pub fn special_pairs(format: FpFormat) -> Vec<(u64, u64)> {
    let values = special_values(format);
    values
        .iter()
        .flat_map(|&a| values.iter().map(move |&b| (a, b)))
        .collect()
}

/// `pairs` as [`stream`]'s entries, with a cycle without `in_valid` after every
/// `gap_after`-th pair.
pub fn with_gaps(
    pairs: impl IntoIterator<Item = (u64, u64)>,
    gap_after: usize,
) -> impl Iterator<Item = Option<(u64, u64)>> {
    pairs.into_iter().enumerate().flat_map(move |(i, pair)| {
        std::iter::once(Some(pair)).chain((i % gap_after == gap_after - 1).then_some(None))
    })
}

/// Random pairs the mutant check streams after the special pairs.
pub const CHECK_RANDOM_PAIRS: usize = 20_000;

/// The check an adder's mutants face: every pair of the format's special values
/// ([`special_pairs`]), then [`CHECK_RANDOM_PAIRS`] random pairs biased to close
/// and low exponents ([`random_pair`]), with a cycle without `in_valid` after
/// every seventh pair, through `adder` (generated for `cfg`, perhaps mutated);
/// the error is the first difference from the golden model.
pub fn check(cfg: &FpAddConfig, adder: &Module) -> Result<(), String> {
    let mut rng = derived(1, ("fp_adder mutant check", cfg.module_name()));
    let random = (0..CHECK_RANDOM_PAIRS).map(move |_| random_pair(cfg.format, &mut rng));
    let pairs = special_pairs(cfg.format).into_iter().chain(random);
    stream(adder, cfg, with_gaps(pairs, 7)).map(|_| ())
}

/// Streams `cycles` cycles of random operands through `tree` (generated for
/// `cfg`, perhaps mutated): each operand one of the format's [`special_values`]
/// with probability 1/8, else drawn by [`random_pair`], each present
/// with probability 1/2 (an absent one counts as −0), `in_valid` in 90 % of the
/// cycles. Checks `out_valid` in every cycle from reset on and every lane's sum
/// against the golden tree sum when it leaves, [`FpTreeConfig::latency`] cycles
/// later; returns how many sums were checked, or the first difference.
pub fn stream_tree(
    tree: &Module,
    cfg: &FpTreeConfig,
    rng: &mut impl Rng,
    cycles: usize,
) -> Result<usize, String> {
    let format = cfg.adder.format;
    let mut sim = Simulator::new(tree).map_err(text)?;
    let port = |name| sim.port_handle(name).map_err(text);
    let (data, present, valid) = (port("in_data")?, port("in_present")?, port("in_valid")?);
    let (out, out_valid) = (port("out_data")?, port("out_valid")?);
    sim.reset(1);
    let specials = special_values(format);
    let latency = cfg.latency() as usize;
    let mut in_flight: VecDeque<Option<Vec<u64>>> = std::iter::repeat_n(None, latency).collect();
    let mut checked = 0;
    for cycle in 0..cycles + latency {
        let entry = (cycle < cycles && rng.gen_bool(0.9)).then(|| {
            let ops: Vec<Vec<u64>> = (0..cfg.inputs)
                .map(|_| {
                    (0..cfg.lanes)
                        .map(|_| tree_operand(format, &specials, rng))
                        .collect()
                })
                .collect();
            let flags = rng.gen::<u64>() & ((1 << cfg.inputs) - 1);
            sim.set_handle(data, &pack_tree_operands(format, &ops))
                .and_then(|()| sim.set_handle_u64(present, flags))
                .map(|()| tree_lane_sums(format, cfg.adder.ftz, &ops, flags))
        });
        let entry = entry.transpose().map_err(text)?;
        sim.set_handle_u64(valid, entry.is_some() as u64)
            .map_err(text)?;
        in_flight.push_back(entry);
        let shown = in_flight.pop_front().expect("the entry just pushed");
        let got_valid = sim.get_handle_u64(out_valid).map_err(text)?;
        if (got_valid == 1) != shown.is_some() {
            return Err(format!(
                "{}: out_valid {got_valid} in cycle {cycle} after reset, expected {}",
                tree.name,
                shown.is_some() as u8
            ));
        }
        if let Some(want) = shown {
            let got = sim.get_handle(out).map_err(text)?;
            for (j, &sum) in want.iter().enumerate() {
                let lane_sum = lane(format, &got, j as u32);
                if lane_sum != sum {
                    return Err(format!(
                        "{}: lane {j} {lane_sum:#x} in cycle {cycle}, golden {sum:#x}",
                        tree.name
                    ));
                }
            }
            checked += 1;
        }
        sim.step();
    }
    Ok(checked)
}

/// One of `specials` with probability 1/8, else the first of a [`random_pair`].
fn tree_operand(format: FpFormat, specials: &[u64], rng: &mut impl Rng) -> u64 {
    match rng.gen_ratio(1, 8) {
        true => specials[rng.gen_range(0..specials.len())],
        false => random_pair(format, rng).0,
    }
}

/// Cycles of random operands the tree's mutant check streams.
pub const CHECK_TREE_CYCLES: usize = 2_000;

/// The check a tree's mutants face: [`stream_tree`] over [`CHECK_TREE_CYCLES`]
/// cycles through `tree` (generated for `cfg`, perhaps mutated); the error is the
/// first difference from the golden model.
pub fn check_tree(cfg: &FpTreeConfig, tree: &Module) -> Result<(), String> {
    let mut rng = derived(1, ("fp_adder tree mutant check", tree.name.as_str()));
    stream_tree(tree, cfg, &mut rng, CHECK_TREE_CYCLES).map(|_| ())
}

/// A simulator error as the checks' error text.
fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}
