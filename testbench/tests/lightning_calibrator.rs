//! `lightning_calibrator` against an adversarial ADC: whatever the link does (no
//! light, light at the last moment of the search, an ADC that stops while the
//! level is measured), a run ends within `calibrate::max_run_cycles(timeout)`,
//! and the waits it bounds are really waited out; a DAC without `tvalid`
//! drives zero samples; light of exactly `THRESHOLD` is found and one below is
//! not; the gain is round(256 · `FULL_SCALE` / level) at the divider's hard
//! levels.
//!
//! `cargo test -p testbench --test lightning_calibrator`

use hdl::lightning::calibrate::{
    calibrator, max_run_cycles, CAL_FAIL_NO_LIGHT, FULL_SCALE, MEASURE_WORDS, REFERENCE_CYCLES,
    SETTLE_WORDS, THRESHOLD,
};
use sim::Simulator;

/// The `timeout` register in these runs: short, so a sweep is quick.
const TIMEOUT: u32 = 100;

/// A 256-bit ADC word of sixteen samples of `sample`.
const fn lit_word(sample: u64) -> [u64; 4] {
    [sample * 0x0001_0001_0001_0001; 4]
}
const DARK: [u64; 4] = [0; 4];

/// What the adversary does once both DACs shine (the search has begun): nothing
/// for `first_light` cycles, one lit word, nothing for `stall` cycles, then lit
/// words for as long as the DACs shine. `None`: the link stays dark.
#[derive(Clone, Copy, Debug)]
struct Adversary {
    light: Option<(u64, u64)>,
}

/// One calibration run against `adversary`: `(cycles output, failed, reason)`.
/// Panics if the run is still busy after twice its documented bound.
fn run(adversary: Adversary) -> (u64, bool, u64) {
    let (cycles, failed, reason, _) = run_lit(adversary, FULL_SCALE);
    (cycles, failed, reason)
}

/// [`run`] with lit ADC samples of `sample`; also returns the `gain` output.
fn run_lit(adversary: Adversary, sample: u64) -> (u64, bool, u64, u64) {
    let lit_data = lit_word(sample);
    let mut sim = Simulator::new(&calibrator().expect("calibrator")).expect("simulator");
    sim.reset(2);
    let h = |sim: &Simulator, name: &str| sim.port_handle(name).expect(name);
    let (start, timeout) = (h(&sim, "start"), h(&sim, "timeout"));
    let (adc_valid, adc_data) = (h(&sim, "adc_tvalid"), h(&sim, "adc_tdata"));
    let (act, weight) = (h(&sim, "act_tvalid"), h(&sim, "weight_tvalid"));
    let (act_data, weight_data) = (h(&sim, "act_tdata"), h(&sim, "weight_tdata"));
    let (busy, done) = (h(&sim, "busy"), h(&sim, "done"));
    sim.set_handle_u64(timeout, u64::from(TIMEOUT)).unwrap();
    sim.set_handle_u64(start, 1).unwrap();
    sim.step();
    sim.set_handle_u64(start, 0).unwrap();
    let mut probing = 0u64;
    let limit = 2 * max_run_cycles(TIMEOUT);
    for _ in 0..limit {
        if sim.get_handle_u64(busy).unwrap() == 0 {
            break;
        }
        // The RF-DAC plays `tdata` whatever `tvalid` says (PG269): a DAC
        // without `tvalid` must drive zero samples.
        for (valid, data) in [(act, act_data), (weight, weight_data)] {
            if sim.get_handle_u64(valid).unwrap() == 0 {
                let words = sim.get_words(data).unwrap();
                assert!(
                    words.iter().all(|&w| w == 0),
                    "{adversary:?}: dark DAC words {words:x?}"
                );
            }
        }
        let both =
            sim.get_handle_u64(act).unwrap() == 1 && sim.get_handle_u64(weight).unwrap() == 1;
        probing = if both { probing + 1 } else { 0 };
        let lit = match adversary.light {
            Some((first, stall)) if both => {
                let t = probing - 1;
                t == first || t > first + stall
            }
            _ => false,
        };
        sim.set_handle_u64(adc_valid, u64::from(lit)).unwrap();
        sim.set_words(adc_data, if lit { &lit_data } else { &DARK })
            .unwrap();
        sim.step();
    }
    assert_eq!(
        sim.get_handle_u64(busy).unwrap(),
        0,
        "{adversary:?}: still busy"
    );
    assert_eq!(
        sim.get_handle_u64(done).unwrap(),
        1,
        "{adversary:?}: not done"
    );
    (
        sim.get_u64("cycles").unwrap(),
        sim.get_u64("failed").unwrap() == 1,
        sim.get_u64("fail_reason").unwrap(),
        sim.get_u64("gain").unwrap(),
    )
}

#[test]
fn every_run_ends_within_the_documented_bound_whatever_the_adc_does() {
    let t = u64::from(TIMEOUT);
    let bound = max_run_cycles(TIMEOUT);
    let mut longest = 0;
    let mut cases = vec![Adversary { light: None }];
    for first in [0, t / 2, t - 3, t - 2, t - 1, t, t + 1] {
        for stall in [0, t / 2, t - 20, t - 19, t - 18, t - 17, t - 1, t, t + 1] {
            cases.push(Adversary {
                light: Some((first, stall)),
            });
        }
    }
    for adversary in cases {
        let (cycles, _, _) = run(adversary);
        assert!(
            cycles <= bound,
            "{adversary:?}: {cycles} cycles > max_run_cycles({TIMEOUT}) = {bound}"
        );
        longest = longest.max(cycles);
    }
    // The search's and the measurement's waits both count: the longest run is
    // beyond what two waits of `timeout` per phase would allow…
    let two_waits = 2 * (2 * (t + 1) + u64::from(REFERENCE_CYCLES));
    assert!(longest > two_waits, "longest {longest} ≤ {two_waits}");
    // …and the adversary reaches the bound exactly.
    assert_eq!(longest, bound, "the longest run against the bound");
}

#[test]
fn a_dark_link_and_a_stopped_adc_fail_as_no_light_a_healthy_one_succeeds() {
    let t = u64::from(TIMEOUT);
    let (_, failed, reason) = run(Adversary { light: None });
    assert!(failed);
    assert_eq!(reason, CAL_FAIL_NO_LIGHT, "no light at all");
    let (_, failed, reason) = run(Adversary {
        light: Some((3, t + 1)),
    });
    assert!(failed);
    assert_eq!(
        reason, CAL_FAIL_NO_LIGHT,
        "ADC stopped after the first lit word"
    );
    let (cycles, failed, _) = run(Adversary {
        light: Some((3, 0)),
    });
    assert!(!failed, "light after 3 cycles and a steady ADC");
    // Dark and reference per phase, a short search, the level's words, the divider.
    let words = u64::from(SETTLE_WORDS + MEASURE_WORDS);
    assert!(
        cycles <= 2 * (t + 1 + u64::from(REFERENCE_CYCLES) + 8 + words) + 24 + 1,
        "{cycles}"
    );
}

#[test]
fn light_at_the_threshold_is_found_and_one_below_is_not() {
    let healthy = Adversary {
        light: Some((3, 0)),
    };
    let (_, failed, _, gain) = run_lit(healthy, THRESHOLD);
    assert!(!failed, "samples of exactly THRESHOLD");
    // The level is THRESHOLD, so gain = round(256 · FULL_SCALE / THRESHOLD).
    let want = (256 * FULL_SCALE + THRESHOLD / 2) / THRESHOLD;
    assert_eq!(gain, want, "gain at the threshold");
    let (_, failed, reason, _) = run_lit(healthy, THRESHOLD - 1);
    assert!(failed, "samples one below THRESHOLD");
    assert_eq!(reason, CAL_FAIL_NO_LIGHT);
}

#[test]
fn the_gain_is_the_rounded_quotient_at_the_dividers_hard_levels() {
    let healthy = Adversary {
        light: Some((3, 0)),
    };
    // Besides the ends of the range, levels at which one of the restoring
    // division's partial remainders equals the divisor exactly (where `>=`
    // and `>` in its compare part ways; found with a model of the divider).
    for level in [THRESHOLD, 3293, 4064, 6962, 8131, 16271, 18599, FULL_SCALE] {
        let (_, failed, _, gain) = run_lit(healthy, level);
        assert!(!failed, "level {level}");
        let want = (256 * FULL_SCALE + level / 2) / level;
        assert_eq!(
            gain, want,
            "level {level}: round(256 · {FULL_SCALE} / level)"
        );
    }
}
