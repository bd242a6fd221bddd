//! The generated floating-point adder and tree on the native simulator against the
//! golden model (`testbench::fp_adder`): every special-class pair, and per format
//! 500,000 random pairs at each of three pipeline depths (1, 5 — the PANAMA
//! default — and 7) plus 100,000 with flush-to-zero, one operation entering per
//! cycle but for a cycle without `in_valid` after every seventh special pair;
//! `out_valid` is checked in every cycle from reset on.

use hdl::blocks::fp::{fp_add, fp_add_tree, FpAddConfig, FpFormat, FpTreeConfig};
use testbench::fp_adder::{special_pairs, stream, stream_tree, with_gaps};
use testbench::golden::fp_cases::random_pair;
use testbench::rng::seeded;

const RANDOM_PAIRS: usize = 1_000_000;

/// Streams `ops` through the adder of `cfg`; the results it checked.
fn checked(cfg: &FpAddConfig, ops: impl IntoIterator<Item = Option<(u64, u64)>>) -> usize {
    let adder = fp_add(cfg).expect("a valid adder configuration");
    stream(&adder, cfg, ops).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn adder_matches_golden_on_every_special_pair() {
    for format in FpFormat::ALL {
        let pairs = special_pairs(format);
        for stages in [0, 3, 5, 6] {
            for ftz in [false, true] {
                let cfg = FpAddConfig {
                    format,
                    stages,
                    ftz,
                };
                assert_eq!(checked(&cfg, with_gaps(pairs.clone(), 7)), pairs.len());
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
            let pairs = (0..n).map(move |_| Some(random_pair(format, &mut rng)));
            let cfg = FpAddConfig {
                format,
                stages,
                ftz,
            };
            assert_eq!(checked(&cfg, pairs), n);
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
    const CYCLES: usize = 3_000;
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
        let tree = fp_add_tree(&cfg).expect("a valid tree configuration");
        let sums = stream_tree(&tree, &cfg, &mut rng, CYCLES).unwrap_or_else(|e| panic!("{e}"));
        // About 90 % of the cycles carry operands; far fewer means the check
        // looked at too little.
        assert!(
            sums > CYCLES * 8 / 10,
            "{sums} sums checked in {CYCLES} cycles"
        );
    }
}
