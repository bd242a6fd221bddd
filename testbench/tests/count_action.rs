//! The count-action unit: every policy and edge case against the documented
//! semantics (a reference model written from the doc), on the native simulator and
//! through Verilator in lockstep.

use hdl::blocks::count_action::{count_action, CountActionConfig};
use hdl::{Module, ModuleBuilder, ResetPolarity};
use rand::Rng;
use testbench::dut::{ports_of, Dut, NativeDut};
use testbench::harness::{DiffConfig, Differential};
use testbench::models::count_action::{CountActionInputs, CountActionModel};
use testbench::pins::{Pin, Pins};
use testbench::rng::seeded;

fn unit(events: u32, width: u32) -> Module {
    count_action(&CountActionConfig {
        events,
        count_width: width,
    })
    .unwrap()
}

/// Drives a scripted sequence and returns (action, count, done) per cycle.
fn script(m: &Module, cycles: &[(u64, bool, bool, bool, u64)]) -> Vec<(bool, u64, bool)> {
    let mut d = NativeDut::new(m).unwrap();
    d.reset(1);
    let inputs = Pin::resolve_all(
        d.ports(),
        ["events", "enable", "clear", "one_shot", "target"],
    )
    .unwrap();
    let [action, count, done] = Pin::resolve_all(d.ports(), ["action", "count", "done"]).unwrap();
    // A `&mut &mut NativeDut`, so that `set_u64` and `get_u64` are the `Pins` ones.
    let pins = &mut &mut d;
    cycles
        .iter()
        .map(|&(events, enable, clear, one_shot, target)| {
            let values = [events, enable as u64, clear as u64, one_shot as u64, target];
            for (pin, value) in inputs.into_iter().zip(values) {
                pins.set_u64(pin, value).unwrap();
            }
            let out = (
                pins.is_high(action).unwrap(),
                pins.get_u64(count).unwrap(),
                pins.is_high(done).unwrap(),
            );
            pins.step();
            out
        })
        .collect()
}

#[test]
fn target_one_fires_on_every_event() {
    let m = unit(1, 8);
    let got = script(
        &m,
        &[
            (1, true, false, false, 1),
            (0, true, false, false, 1),
            (1, true, false, false, 1),
        ],
    );
    assert_eq!(
        got,
        vec![(true, 0, false), (false, 0, false), (true, 0, false)]
    );
}

#[test]
fn target_zero_never_fires_but_counts() {
    let m = unit(1, 8);
    let got = script(
        &m,
        &[
            (1, true, false, false, 0),
            (1, true, false, false, 0),
            (0, true, false, false, 0),
        ],
    );
    assert_eq!(
        got,
        vec![(false, 0, false), (false, 1, false), (false, 2, false)]
    );
}

#[test]
fn jumping_past_the_target_carries_the_excess_and_fires_again() {
    // 8 events a cycle, target 3: 8 >= 3 fires, count 5; then 5 >= 3 fires, count 2.
    let m = unit(8, 8);
    let got = script(
        &m,
        &[
            (0xff, true, false, false, 3),
            (0, true, false, false, 3),
            (0, true, false, false, 3),
        ],
    );
    assert_eq!(
        got,
        vec![(true, 0, false), (true, 5, false), (false, 2, false)]
    );
}

#[test]
fn lowering_the_target_mid_count_takes_effect_at_once() {
    let m = unit(1, 8);
    let got = script(
        &m,
        &[
            (1, true, false, false, 10),
            (1, true, false, false, 10),
            (0, true, false, false, 2),
            (0, true, false, false, 2),
        ],
    );
    assert_eq!(
        got,
        vec![
            (false, 0, false),
            (false, 1, false),
            (true, 2, false),
            (false, 0, false)
        ]
    );
}

#[test]
fn one_shot_fires_once_until_cleared_and_stop_holds() {
    let m = unit(1, 8);
    let got = script(
        &m,
        &[
            (1, true, false, true, 2),
            (1, true, false, true, 2),
            (1, true, false, true, 2),
            (1, true, true, true, 2),
            (1, false, false, true, 2),
            (1, true, false, true, 2),
        ],
    );
    assert_eq!(
        got,
        vec![
            (false, 0, false),
            (true, 1, false),
            (false, 0, true),
            (false, 0, true),
            (false, 0, false),
            (false, 0, false)
        ]
    );
}

#[test]
fn count_saturates_instead_of_wrapping() {
    let m = unit(4, 3);
    let steps: Vec<_> = (0..4).map(|_| (0xf, true, false, false, 0)).collect();
    let got = script(&m, &steps);
    assert_eq!(
        got.iter().map(|g| g.1).collect::<Vec<_>>(),
        vec![0, 4, 7, 7]
    );
}

/// Two chained units: the first counts cycles (target = cycles per output), the
/// second counts the first's actions (target = outputs per layer).
fn chain() -> Module {
    let inner = unit(1, 16);
    let mut m = ModuleBuilder::new("chain");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let tick = m.input("tick", 1);
    let per_output = m.input("per_output", 16);
    let per_layer = m.input("per_layer", 16);
    let one = m.lit(1, 1);
    let zero = m.lit(0, 1);
    let a = m.instance("u_cycles", &inner);
    let b = m.instance("u_outputs", &inner);
    for (u, target) in [(a, per_output), (b, per_layer)] {
        m.bind_domain(u, "clk", clk);
        m.connect(u, "enable", one);
        m.connect(u, "clear", zero);
        m.connect(u, "one_shot", zero);
        m.connect(u, "target", target);
    }
    m.connect(a, "events", tick);
    let neuron = m.instance_output(a, "action");
    m.connect(b, "events", neuron);
    let layer = m.instance_output(b, "action");
    m.output("neuron", neuron);
    m.output("layer", layer);
    m.finish().unwrap()
}

#[test]
fn chained_units_count_actions() {
    let mut d = NativeDut::new(&chain()).unwrap();
    d.reset(1);
    let [per_output, per_layer, tick, neuron, layer] = Pin::resolve_all(
        d.ports(),
        ["per_output", "per_layer", "tick", "neuron", "layer"],
    )
    .unwrap();
    let pins = &mut &mut d;
    pins.set_u64(per_output, 3).unwrap();
    pins.set_u64(per_layer, 4).unwrap();
    pins.set_u64(tick, 1).unwrap();
    let (mut neurons, mut layers) = (Vec::new(), Vec::new());
    for c in 0..30 {
        if pins.is_high(neuron).unwrap() {
            neurons.push(c);
        }
        if pins.is_high(layer).unwrap() {
            layers.push(c);
        }
        pins.step();
    }
    assert_eq!(neurons, vec![2, 5, 8, 11, 14, 17, 20, 23, 26, 29]);
    assert_eq!(layers, vec![11, 23]);
}

#[test]
fn random_cycles_match_the_model_on_both_engines() {
    for (k, (events, width)) in [(1u32, 8u32), (16, 12), (4, 3)].into_iter().enumerate() {
        let mut rng = seeded(&format!("count_action e{events} w{width}"), 600 + k as u64);
        let mut model = CountActionModel::new(width);
        let mut fired = 0;
        let m = unit(events, width);
        let [events_in, enable, clear, one_shot, target, count, done] = Pin::resolve_all(
            &ports_of(&m),
            [
                "events", "enable", "clear", "one_shot", "target", "count", "done",
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        Differential::new(&m)
            .try_run(&DiffConfig::cycles(10_000), |s| {
                let ev: u64 = rng.gen::<u64>() & ((1u64 << events) - 1);
                let i = CountActionInputs {
                    events: ev.count_ones() as u64,
                    enable: rng.gen_bool(0.9),
                    clear: rng.gen_bool(0.01),
                    one_shot: s.cycles[0] / 2000 % 2 == 1,
                    target: if rng.gen_bool(0.02) {
                        0
                    } else {
                        rng.gen_range(0..(1u64 << width).min(40))
                    },
                };
                s.set_u64(events_in, ev)?;
                s.set_u64(enable, i.enable as u64)?;
                s.set_u64(clear, i.clear as u64)?;
                s.set_u64(one_shot, i.one_shot as u64)?;
                s.set_u64(target, i.target)?;
                // Registered outputs reflect the model before this cycle's edge.
                assert_eq!(s.get_u64(count)?, model.count(), "count");
                assert_eq!(s.is_high(done)?, model.done(), "done");
                fired += model.step(&i) as u32;
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(fired > 100, "too few actions: {fired}");
    }
}
