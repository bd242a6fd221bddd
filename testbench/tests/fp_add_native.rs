//! The generated floating-point adder and tree on the native simulator against the
//! golden model: every special-class pair, and per format 500,000 random pairs at
//! each of three pipeline depths (1, 5 — the PANAMA default — and 7) plus 100,000
//! with flush-to-zero, one operation entering per cycle.

use hdl::blocks::fp::{fp_add, fp_add_tree, FpAddConfig, FpFormat, FpTreeConfig};
use rand::Rng;
use sim::Simulator;
use std::collections::VecDeque;
use testbench::golden::fp::{add, lane, pack_tree_operands, tree_lane_sums};
use testbench::golden::fp_cases::{random_pair, special_values};
use testbench::rng::seeded;

const RANDOM_PAIRS: usize = 1_000_000;

/// Streams `pairs` through the adder, one per cycle, checking `out_valid` every
/// cycle and every result against the golden model `stages` cycles later; returns
/// how many results were checked.
fn stream(cfg: &FpAddConfig, pairs: impl Iterator<Item = (u64, u64)>) -> usize {
    let mut sim = Simulator::new(&fp_add(cfg).unwrap()).unwrap();
    let (a, b, v) = (
        sim.port_handle("a").unwrap(),
        sim.port_handle("b").unwrap(),
        sim.port_handle("in_valid").unwrap(),
    );
    let (y, ov) = (
        sim.port_handle("y").unwrap(),
        sim.port_handle("out_valid").unwrap(),
    );
    sim.reset(1);
    let latency = cfg.stages.max(1) as usize;
    let mut in_flight: VecDeque<Option<(u64, u64)>> = VecDeque::new();
    let mut checked = 0;
    let mut pairs = pairs.fuse();
    let mut drain = 0;
    while drain < latency {
        let next = pairs.next();
        drain = if next.is_none() { drain + 1 } else { 0 };
        if let Some((pa, pb)) = next {
            sim.set_handle_u64(a, pa).unwrap();
            sim.set_handle_u64(b, pb).unwrap();
        }
        sim.set_handle_u64(v, next.is_some() as u64).unwrap();
        in_flight.push_back(next);
        if cfg.stages > 0 {
            sim.step();
        }
        if in_flight.len() >= latency {
            let op = in_flight.pop_front().expect("queued");
            assert_eq!(
                sim.get_handle_u64(ov).unwrap() == 1,
                op.is_some(),
                "out_valid"
            );
            if let Some((pa, pb)) = op {
                let got = sim.get_handle_u64(y).unwrap();
                let want = add(cfg.format, cfg.ftz, pa, pb);
                assert_eq!(
                    got,
                    want,
                    "{}: {pa:#x} + {pb:#x} = {got:#x}, golden {want:#x}",
                    cfg.module_name()
                );
                checked += 1;
            }
        }
    }
    checked
}

#[test]
fn adder_matches_golden_on_every_special_pair() {
    for format in FpFormat::ALL {
        let values = special_values(format);
        let pairs: Vec<(u64, u64)> = values
            .iter()
            .flat_map(|&a| values.iter().map(move |&b| (a, b)))
            .collect();
        for stages in [0, 3, 5, 6] {
            for ftz in [false, true] {
                let cfg = FpAddConfig {
                    format,
                    stages,
                    ftz,
                };
                assert_eq!(stream(&cfg, pairs.iter().copied()), pairs.len());
            }
        }
    }
}

#[test]
fn adder_matches_golden_on_random_pairs() {
    for (k, format) in FpFormat::ALL.into_iter().enumerate() {
        for (stages, ftz) in [(1, false), (5, false), (7, false), (4, true)] {
            let n = if ftz {
                RANDOM_PAIRS / 10
            } else {
                RANDOM_PAIRS / 2
            };
            let mut rng = seeded(
                &format!("fp_add {format} p{stages} ftz={ftz}"),
                200 + k as u64,
            );
            let pairs = (0..n).map(move |_| random_pair(format, &mut rng));
            let cfg = FpAddConfig {
                format,
                stages,
                ftz,
            };
            assert_eq!(stream(&cfg, pairs), n);
        }
    }
}

#[test]
fn tree_matches_golden_with_random_present_flags() {
    let cases = [
        (FpFormat::Fp32, 4, 16, 3),
        (FpFormat::Bf16, 8, 32, 2),
        (FpFormat::Fp16, 5, 4, 1),
        (FpFormat::Fp32, 3, 2, 0),
        // PANAMA's default tree on NetFPGA-SUME: 4 ports, 256-bit fp32, 5 stages.
        (FpFormat::Fp32, 4, 8, 5),
    ];
    for (k, (format, inputs, lanes, stages)) in cases.into_iter().enumerate() {
        let cfg = FpTreeConfig {
            inputs,
            lanes,
            adder: FpAddConfig {
                format,
                stages,
                ftz: false,
            },
        };
        let mut rng = seeded(
            &format!("fp_add_tree {format} {inputs}x{lanes} p{stages}"),
            300 + k as u64,
        );
        let mut sim = Simulator::new(&fp_add_tree(&cfg).unwrap()).unwrap();
        let (data, present, valid) = (
            sim.port_handle("in_data").unwrap(),
            sim.port_handle("in_present").unwrap(),
            sim.port_handle("in_valid").unwrap(),
        );
        let (out, out_valid) = (
            sim.port_handle("out_data").unwrap(),
            sim.port_handle("out_valid").unwrap(),
        );
        sim.reset(1);
        let latency = cfg.latency() as usize;
        let mut expected: VecDeque<Option<Vec<u64>>> = VecDeque::new();
        for cycle in 0..3_000 {
            let mut ops: Vec<Vec<u64>> = Vec::new();
            for _ in 0..inputs {
                ops.push(
                    (0..lanes)
                        .map(|_| random_pair(format, &mut rng).0)
                        .collect(),
                );
            }
            let flags: u64 = rng.gen::<u64>() & ((1 << inputs) - 1);
            let is_valid = rng.gen_bool(0.9);
            let bits = pack_tree_operands(format, &ops);
            sim.set_handle(data, &bits).unwrap();
            sim.set_handle_u64(present, flags).unwrap();
            sim.set_handle_u64(valid, is_valid as u64).unwrap();
            let sums = tree_lane_sums(format, false, &ops, flags);
            expected.push_back(is_valid.then_some(sums));
            if stages > 0 {
                sim.step();
            }
            if expected.len() >= latency.max(1) {
                let want = expected.pop_front().expect("queued");
                assert_eq!(
                    sim.get_handle_u64(out_valid).unwrap() == 1,
                    want.is_some(),
                    "valid at {cycle}"
                );
                if let Some(want) = want {
                    let got = sim.get_handle(out).unwrap();
                    for (j, s) in want.iter().enumerate() {
                        assert_eq!(
                            lane(format, &got, j as u32),
                            *s,
                            "{} lane {j} at cycle {cycle}",
                            cfg.adder.module_name()
                        );
                    }
                }
            }
        }
    }
}
