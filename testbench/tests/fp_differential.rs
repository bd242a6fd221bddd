//! The floating-point blocks through Verilator: the emitted Verilog and the native
//! simulator in lockstep (every output compared every cycle), and every result
//! checked against the golden model — 100,000 pairs per format, a 4-input × 16-lane
//! fp32 tree and an 8-input × 32-lane bf16 tree with random present flags;
//! `out_valid` checked in every cycle from reset on.

use hdl::blocks::fp::{fp_add, fp_add_tree, FpAddConfig, FpFormat, FpTreeConfig};
use rand::Rng;
use std::collections::VecDeque;
use testbench::dut::ports_of;
use testbench::golden::fp::{add, lane, pack_tree_operands, tree_lane_sums};
use testbench::golden::fp_cases::random_pair;
use testbench::harness::{DiffConfig, Differential};
use testbench::pins::{Pin, Pins};
use testbench::rng::seeded;

/// The ports called `names` of `m`, resolved once before a run.
fn pins<const N: usize>(m: &hdl::Module, names: [&str; N]) -> [Pin; N] {
    Pin::resolve_all(&ports_of(m), names).unwrap_or_else(|e| panic!("{e}"))
}

const PAIRS: u64 = 100_000;

#[test]
fn adders_agree_with_verilator_and_golden() {
    for (k, format) in FpFormat::ALL.into_iter().enumerate() {
        let cfg = FpAddConfig {
            format,
            stages: 3,
            ftz: false,
        };
        let mut rng = seeded(&format!("fp_add {format} via verilator"), 400 + k as u64);
        // What the output shows in each call: the operation of three calls
        // before, nothing in the first three after reset.
        let mut pending: VecDeque<Option<(u64, u64)>> = VecDeque::from([None; 3]);
        let mut checked = 0u64;
        let m = fp_add(&cfg).unwrap();
        let [a_in, b_in, in_valid, out_valid, y] =
            pins(&m, ["a", "b", "in_valid", "out_valid", "y"]);
        let report = Differential::new(&m)
            .try_run(&DiffConfig::cycles(PAIRS + 3), |s| {
                // An operation set in call j leaves the 3-stage pipeline in call j + 3.
                let op = pending.pop_front().flatten();
                assert_eq!(s.is_high(out_valid)?, op.is_some(), "out_valid");
                if let Some((a, b)) = op {
                    assert_eq!(s.get_u64(y)?, add(format, false, a, b), "{a:#x} + {b:#x}");
                    checked += 1;
                }
                let op = (s.cycles[0] < PAIRS && rng.gen_bool(0.95))
                    .then(|| random_pair(format, &mut rng));
                let (a, b) = op.unwrap_or((0, 0));
                s.set_u64(a_in, a)?;
                s.set_u64(b_in, b)?;
                s.set_u64(in_valid, op.is_some() as u64)?;
                pending.push_back(op);
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            checked > PAIRS * 9 / 10,
            "{format}: only {checked} results checked"
        );
        assert_eq!(report.cycles, vec![PAIRS + 3]);
    }
}

#[test]
fn trees_agree_with_verilator_and_golden() {
    let cases = [
        (FpFormat::Fp32, 4, 16, 3, 10_000),
        (FpFormat::Bf16, 8, 32, 2, 10_000),
    ];
    for (k, (format, inputs, lanes, stages, cycles)) in cases.into_iter().enumerate() {
        let cfg = FpTreeConfig {
            inputs,
            lanes,
            adder: FpAddConfig {
                format,
                stages,
                ftz: false,
            },
        };
        let latency = cfg.latency() as usize;
        let w = format.width();
        let mut rng = seeded(
            &format!("fp_add_tree {format} {inputs}x{lanes} via verilator"),
            500 + k as u64,
        );
        let mut pending: VecDeque<Option<Vec<u64>>> = std::iter::repeat_n(None, latency).collect();
        let mut checked = 0;
        let m = fp_add_tree(&cfg).unwrap();
        let [in_data, in_present, in_valid, out_valid, out_data] = pins(
            &m,
            ["in_data", "in_present", "in_valid", "out_valid", "out_data"],
        );
        let mut out = vec![0u64; (lanes * w).div_ceil(64) as usize];
        Differential::new(&m)
            .try_run(&DiffConfig::cycles(cycles), |s| {
                let want = pending.pop_front().flatten();
                assert_eq!(s.is_high(out_valid)?, want.is_some(), "out_valid");
                if let Some(want) = want {
                    s.get_into(out_data, &mut out)?;
                    let got = hdl::Bits::from_words(&out, lanes * w);
                    for (j, x) in want.iter().enumerate() {
                        assert_eq!(lane(format, &got, j as u32), *x, "lane {j}");
                    }
                    checked += 1;
                }
                let ops: Vec<Vec<u64>> = (0..inputs)
                    .map(|_| {
                        (0..lanes)
                            .map(|_| random_pair(format, &mut rng).0)
                            .collect()
                    })
                    .collect();
                let flags = rng.gen::<u64>() & ((1 << inputs) - 1);
                let valid = rng.gen_bool(0.9);
                let data = pack_tree_operands(format, &ops);
                s.set(in_data, &data.to_words())?;
                s.set_u64(in_present, flags)?;
                s.set_u64(in_valid, valid as u64)?;
                let sums = tree_lane_sums(format, false, &ops, flags);
                pending.push_back(valid.then_some(sums));
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(checked > cycles * 8 / 10, "only {checked} sums checked");
    }
}
