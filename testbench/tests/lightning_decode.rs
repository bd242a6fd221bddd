//! Lightning ADC decode and integration: random words (some at a rounding
//! edge), signs, loss factors, targets, shifts and clears, checked cycle by
//! cycle against a model built from the `arith` contract functions, on the
//! native simulator and Verilator in lockstep.

use hdl::lightning::decode::{decode, DecodeConfig};
use rand::Rng;
use std::collections::VecDeque;
use testbench::dut::ports_of;
use testbench::harness::{DiffConfig, Differential};
use testbench::lightning::arith::{
    decode_adc, encode_sample, lane_sum, normalize, pack_bus, relu, AccWidth, OpticalLoss,
};
use testbench::pins::{Pin, Pins};
use testbench::rng::seeded;

/// One accepted word as the accumulate stage sees it.
#[derive(Clone, Copy)]
struct Staged {
    valid: bool,
    sum: i64,
}

/// The decode unit from its module docs, with the arithmetic of `arith`.
struct Model {
    pipe: VecDeque<Staged>,
    acc: i64,
    count: u64,
    width: AccWidth,
    out: Option<(i64, u8)>,
}

impl Model {
    fn new(width: AccWidth) -> Self {
        Model {
            pipe: VecDeque::from(vec![
                Staged {
                    valid: false,
                    sum: 0
                };
                2
            ]),
            acc: 0,
            count: 0,
            width,
            out: None,
        }
    }

    /// One cycle with these inputs; the emitted neuron shows in the next cycle.
    fn step(&mut self, staged: Staged, target: u64, shift: u32, clear: bool) {
        self.pipe.push_back(staged);
        let s = self.pipe.pop_front().unwrap_or(Staged {
            valid: false,
            sum: 0,
        });
        let valid = s.valid && !clear;
        let added = if valid {
            self.width.saturating_add(self.acc, s.sum).0
        } else {
            self.acc
        };
        let sum = self.count + u64::from(valid);
        let fire = !clear && target != 0 && sum >= target;
        self.out = fire.then(|| (added, normalize(relu(added), shift)));
        self.count = if clear {
            0
        } else if fire {
            sum - target
        } else {
            sum
        };
        self.acc = if clear || fire { 0 } else { added };
    }
}

fn run(acc_width: u32, cycles: u64, seed: u64) {
    let mut rng = seeded(&format!("lightning decode a{acc_width}"), seed);
    let mut edge_rng = seeded(&format!("lightning decode edges a{acc_width}"), seed);
    let width = AccWidth::new(acc_width).unwrap();
    let m = decode(&DecodeConfig {
        acc_width,
        target_width: 8,
        ..DecodeConfig::default()
    })
    .unwrap();
    let mut model = Model::new(width);
    let mut loss = OpticalLoss::UNITY;
    let mut target = 3u64;
    let mut shift = 4u32;
    let mut heavy = false;
    let (mut emitted, mut saturated, mut edges) = (0u64, 0u64, 0u64);
    let ports = ports_of(&m);
    let [in_valid, in_data, signs_in, optical_loss, cycles_per_output, shift_in, clear_in] =
        Pin::resolve_all(
            &ports,
            [
                "in_valid",
                "in_data",
                "signs",
                "optical_loss",
                "cycles_per_output",
                "shift",
                "clear",
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let [out_valid, out_acc, out_act] =
        Pin::resolve_all(&ports, ["out_valid", "out_acc", "out_act"])
            .unwrap_or_else(|e| panic!("{e}"));
    Differential::new(&m)
        .try_run(&DiffConfig::cycles(cycles), |s| {
            let t = s.cycles[0];
            match model.out {
                Some((acc, act)) => {
                    assert_eq!(s.get_u64(out_valid)?, 1, "out_valid at cycle {t}");
                    let mask = (1u64 << acc_width) - 1;
                    assert_eq!(s.get_u64(out_acc)?, acc as u64 & mask, "acc at cycle {t}");
                    assert_eq!(s.get_u64(out_act)?, u64::from(act), "act at cycle {t}");
                    emitted += 1;
                    saturated += u64::from(acc == width.max_value() || acc == width.min_value());
                }
                None => assert_eq!(s.get_u64(out_valid)?, 0, "out_valid at cycle {t}"),
            }
            if t % 300 == 0 {
                loss = match rng.gen_range(0..3) {
                    0 => OpticalLoss::UNITY,
                    1 => OpticalLoss(rng.gen_range(0x0100..0x0200)),
                    _ => OpticalLoss(rng.gen()),
                };
                heavy = rng.gen_bool(0.5);
                target = if heavy {
                    rng.gen_range(20..=60)
                } else {
                    rng.gen_range(0..=12)
                };
                shift = rng.gen_range(0..=31);
            }
            let valid = rng.gen_bool(0.8);
            let samples: [u16; 16] = std::array::from_fn(|_| {
                let sample = if rng.gen_bool(0.1) {
                    rng.gen()
                } else {
                    encode_sample(rng.gen())
                };
                if !edge_rng.gen_bool(0.1) {
                    return sample;
                }
                match rounding_edge(loss, &mut edge_rng) {
                    Some(edge) => {
                        edges += u64::from(valid);
                        edge
                    }
                    None => sample,
                }
            });
            // A "heavy" phase makes the lane sums mostly one sign, to saturate.
            let signs: [bool; 16] = std::array::from_fn(|_| {
                if heavy {
                    rng.gen_bool(0.05)
                } else {
                    rng.gen_bool(0.5)
                }
            });
            let clear = rng.gen_bool(0.01);
            let products: [u8; 16] = std::array::from_fn(|i| decode_adc(samples[i], loss));
            s.set_u64(in_valid, u64::from(valid))?;
            s.set(in_data, &pack_bus(&samples))?;
            let sign_bits = (0..16).filter(|&i| signs[i]).fold(0u64, |b, i| b | 1 << i);
            s.set_u64(signs_in, sign_bits)?;
            s.set_u64(optical_loss, u64::from(loss.0))?;
            s.set_u64(cycles_per_output, target)?;
            s.set_u64(shift_in, u64::from(shift))?;
            s.set_u64(clear_in, u64::from(clear))?;
            let staged = Staged {
                valid,
                sum: lane_sum(&products, &signs),
            };
            model.step(staged, target, shift, clear);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(emitted > cycles / 20, "too few neurons: {emitted}");
    assert!(saturated > 0, "no saturated neuron");
    assert!(
        edges > cycles / 5,
        "too few valid samples at a rounding edge: {edges}"
    );
}

/// A sample at one of the decoder's rounding edges under an odd `loss`: the
/// golden model rounds twice, `((s · L + 128) >> 8 + 64) >> 7`, which moves up
/// exactly when `(s · L + 128 + 64 · 256) mod 2¹⁵` wraps to 0; the sample puts
/// that residue at 2¹⁵ − 1 (just below) or at 0 (on the edge), with either top
/// bit. An odd `L` is invertible modulo 2¹⁵, so some `s` reaches each residue;
/// for an even one there is none (`None`).
fn rounding_edge(loss: OpticalLoss, rng: &mut impl Rng) -> Option<u16> {
    let l = u32::from(loss.0);
    if l % 2 == 0 {
        return None;
    }
    // Newton's iteration for l⁻¹ modulo 2³²: l is its own inverse modulo 8,
    // and each step doubles the bits that are right.
    let mut inverse = l;
    for _ in 0..4 {
        inverse = inverse.wrapping_mul(2u32.wrapping_sub(l.wrapping_mul(inverse)));
    }
    let residue: u32 = if rng.gen() { 0x7FFF } else { 0 };
    let product = (residue + 0x8000 - (128 + (64 << 8))) & 0x7FFF;
    let low = product.wrapping_mul(inverse) & 0x7FFF;
    let top = if rng.gen() { 0x8000 } else { 0 };
    Some((low | top) as u16)
}

#[test]
fn decode_16_bit_accumulator_matches_arith_on_both_engines() {
    run(16, 4000, 8101);
}

#[test]
fn decode_13_bit_accumulator_saturates_exactly_on_both_engines() {
    run(13, 2000, 8102);
}

#[test]
fn decode_bad_parameters_are_errors() {
    for acc_width in [12, 49] {
        let e = decode(&DecodeConfig {
            acc_width,
            target_width: 8,
            ..DecodeConfig::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("acc_width"), "{e}");
    }
    for target_width in [0, 33] {
        let e = decode(&DecodeConfig {
            acc_width: 16,
            target_width,
            ..DecodeConfig::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("target_width"), "{e}");
    }
}
