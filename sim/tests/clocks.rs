//! Multiple clock domains: periods, phases, edge times, 2:1 counters, atomic
//! coincident edges, domains bound through instances, and the reset helper.

mod common;

use hdl::{Module, ModuleBuilder, ResetPolarity, Signal};
use rand::Rng;
use sim::{Backend, Simulator, TraceSelection};

fn counter(m: &mut ModuleBuilder, d: hdl::Domain, name: &str) -> Signal {
    let c = m.reg(d, name, 16);
    let n = m.add_const_wrap(c, 1);
    m.set_next(c, n);
    c
}

/// Two registers that swap every edge (reset to 1 and 2).
fn swapper(m: &mut ModuleBuilder, d: hdl::Domain, x: &str, y: &str) -> (Signal, Signal) {
    let rx = m.reg_init(d, x, 8, 1);
    let ry = m.reg_init(d, y, 8, 2);
    m.set_next(rx, ry);
    m.set_next(ry, rx);
    (rx, ry)
}

fn child_counter() -> Module {
    let mut m = ModuleBuilder::new("tick");
    let d = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let c = counter(&mut m, d, "n");
    m.output("n_out", c);
    m.finish().unwrap()
}

fn two_domains() -> Module {
    let child = child_counter();
    let mut m = ModuleBuilder::new("mc");
    let fast = m.domain("fast", "clk_f", Some("rst_f"), ResetPolarity::ActiveHigh);
    let slow = m.domain("slow", "clk_s", Some("rst_s_n"), ResetPolarity::ActiveLow);
    let cf = counter(&mut m, fast, "cf");
    let cs = counter(&mut m, slow, "cs");
    let (fx, fy) = swapper(&mut m, fast, "fx", "fy");
    let (sx, sy) = swapper(&mut m, slow, "sx", "sy");
    let u = m.instance("u_tick", &child);
    m.bind_domain(u, "clk", slow);
    let n = m.instance_output(u, "n_out");
    for (name, s) in [
        ("cf_o", cf),
        ("cs_o", cs),
        ("fx_o", fx),
        ("fy_o", fy),
        ("sx_o", sx),
        ("sy_o", sy),
        ("tick_o", n),
    ] {
        m.output(name, s);
    }
    m.finish().unwrap()
}

fn get(s: &mut Simulator, name: &str) -> u64 {
    s.get_u64(name).unwrap()
}

#[test]
fn counters_advance_two_to_one_and_coincident_edges_are_atomic() {
    let mut s = Simulator::new(&two_domains()).unwrap();
    s.set_clock_period("fast", 5000).unwrap();
    s.set_clock_period("slow", 10_000).unwrap();
    s.reset(1);
    // Fast edges at 5000 and 10000, slow at 10000: the reset took both to t = 10000.
    assert_eq!(s.time_ps(), 10_000);
    assert_eq!(s.cycle_count("fast").unwrap(), 2);
    assert_eq!(s.cycle_count("slow").unwrap(), 1);
    for (o, v) in [
        ("cf_o", 0),
        ("cs_o", 0),
        ("fx_o", 1),
        ("fy_o", 2),
        ("sx_o", 1),
        ("sy_o", 2),
    ] {
        assert_eq!(get(&mut s, o), v, "{o} after reset");
    }

    let slow = s.domain_handle("slow").unwrap();
    for k in 1..=10u64 {
        s.step_domain(slow).unwrap();
        assert_eq!(s.time_ps(), 10_000 + k * 10_000);
        assert_eq!(get(&mut s, "cs_o"), k);
        assert_eq!(
            get(&mut s, "tick_o"),
            k,
            "instance bound to the slow domain"
        );
        assert_eq!(
            get(&mut s, "cf_o"),
            2 * k,
            "fast counts twice per slow edge"
        );
        // Swaps stay consistent: every edge is one atomic update of its domain.
        let (sx, sy) = (get(&mut s, "sx_o"), get(&mut s, "sy_o"));
        assert_eq!((sx, sy), if k % 2 == 1 { (2, 1) } else { (1, 2) });
        assert_eq!((get(&mut s, "fx_o"), get(&mut s, "fy_o")), (1, 2));
    }

    // step() follows the primary (first) domain; at a coincident edge both commit.
    s.step();
    assert_eq!(s.time_ps(), 115_000);
    assert_eq!(get(&mut s, "cs_o"), 10);
    s.step();
    assert_eq!(s.time_ps(), 120_000);
    assert_eq!(get(&mut s, "cf_o"), 22);
    assert_eq!(
        get(&mut s, "cs_o"),
        11,
        "slow committed at the same instant"
    );
    assert_eq!(s.cycle_count("slow").unwrap(), 12);
    assert_eq!(s.cycles(), 24);
}

/// With one clock and no trace a step takes a shorter path than with a trace open
/// (the clock's fall between two rises is not driven); on both engines, from the
/// first edge on and across period changes (one of which drops a pending fall),
/// the two step alike and as the design's model says.
#[test]
fn one_clock_steps_alike_with_and_without_a_trace() {
    let mut rng = common::rng("one_clock");
    for backend in [Backend::Compiled, Backend::Interpreted] {
        let [mut short, mut traced] =
            [(); 2].map(|_| Simulator::with_backend(&common::enabled_counter(), backend).unwrap());
        traced
            .trace_vcd(std::io::sink(), TraceSelection::All)
            .unwrap();
        let mut count = 0u64;
        for cycle in 0..600u64 {
            if cycle == 0 || cycle == 300 {
                for s in [&mut short, &mut traced] {
                    s.reset(2);
                }
                count = 0;
            }
            // At 200 the period drops below the time to the pending fall.
            let period = match cycle {
                200 => Some(300),
                400 => Some(2 + rng.gen_range(0..5000)),
                _ => None,
            };
            let (en, inc) = (rng.gen_range(0..2u64), rng.gen_range(0..256u64));
            for s in [&mut short, &mut traced] {
                if let Some(p) = period {
                    s.set_clock_period("clk", p).unwrap();
                }
                s.set_u64("en", en).unwrap();
                s.set_u64("inc", inc).unwrap();
                s.step();
            }
            if en == 1 {
                count = (count + inc) & 0xff;
            }
            let model = [count, (count + inc) & 0xff];
            for (o, want) in ["count", "ahead"].into_iter().zip(model) {
                let (a, b) = (get(&mut short, o), get(&mut traced, o));
                assert_eq!((a, b), (want, want), "{o} at cycle {cycle} on {backend:?}");
            }
            assert_eq!(short.time_ps(), traced.time_ps(), "cycle {cycle}");
            assert_eq!(short.cycles(), traced.cycles(), "cycle {cycle}");
        }
    }
}

#[test]
fn edge_times_follow_period_and_phase() {
    let mut rng = common::rng("edge_times");
    for _ in 0..20 {
        let (pf, ps) = (rng.gen_range(2..5000u64), rng.gen_range(2..20_000u64));
        let phase = rng.gen_range(0..10_000u64);
        let mut s = Simulator::new(&two_domains()).unwrap();
        s.set_clock_period("fast", pf).unwrap();
        s.set_clock_period("slow", ps).unwrap();
        s.set_clock_phase("slow", phase).unwrap();
        for k in 1..=50u64 {
            s.step();
            let t = s.time_ps();
            assert_eq!(t, k * pf, "fast edge {k}");
            // Slow rises at phase + j * ps, j >= 1; every edge up to t has been processed.
            let slow_edges = if t >= phase + ps { (t - phase) / ps } else { 0 };
            assert_eq!(
                s.cycle_count("slow").unwrap(),
                slow_edges,
                "pf {pf} ps {ps} φ {phase}"
            );
            assert_eq!(get(&mut s, "cs_o"), slow_edges & 0xffff);
        }
        assert!(
            s.set_clock_phase("fast", 3).is_err(),
            "phase is fixed once running"
        );
    }
}

#[test]
fn reset_waits_for_every_domain() {
    let mut s = Simulator::new(&two_domains()).unwrap();
    s.set_clock_period("fast", 5000).unwrap();
    s.set_clock_period("slow", 10_000).unwrap();
    s.step_n(3);
    assert_eq!(get(&mut s, "cf_o"), 3);
    s.reset(3);
    assert_eq!(
        s.time_ps(),
        40_000,
        "slow needed edges at 20, 30, 40 ns after t = 15 ns"
    );
    assert_eq!(get(&mut s, "cf_o"), 0);
    assert_eq!(get(&mut s, "cs_o"), 0);
    assert_eq!(get(&mut s, "rst_s_n"), 1);
    assert_eq!(get(&mut s, "rst_f"), 0);
    s.step_domain("slow").unwrap();
    assert_eq!(s.time_ps(), 50_000);
    assert_eq!(get(&mut s, "cs_o"), 1);
    assert_eq!(get(&mut s, "cf_o"), 2, "fast edges at 45 and 50 ns");
}

#[test]
fn module_without_domains_just_settles() {
    let mut m = ModuleBuilder::new("comb");
    let a = m.input("a", 8);
    let y = m.not(a);
    m.output("y", y);
    let mut s = Simulator::new(&m.finish().unwrap()).unwrap();
    s.set_u64("a", 0x0f).unwrap();
    s.step();
    s.step_n(2);
    assert_eq!(get(&mut s, "y"), 0xf0);
    assert_eq!(s.cycles(), 3);
    assert_eq!(s.time_ps(), 0);
    s.reset(4);
    assert_eq!(s.cycles(), 3);
}

/// Edges report the domains that rose as a set of at most `MAX_DOMAINS`; a design
/// with more top-level domains is refused with an error naming the count.
#[test]
fn more_domains_than_an_edge_can_report_is_an_error() {
    let design = |count: usize| {
        let mut m = ModuleBuilder::new("many_clocks");
        for i in 0..count {
            let d = m.domain(
                &format!("d{i}"),
                &format!("clk{i}"),
                None,
                ResetPolarity::ActiveHigh,
            );
            let c = counter(&mut m, d, &format!("n{i}"));
            m.output(&format!("n{i}_out"), c);
        }
        m.finish().unwrap()
    };
    let mut sim = Simulator::new(&design(sim::MAX_DOMAINS)).unwrap();
    let fired = sim.step_edge();
    assert_eq!(
        fired.iter().collect::<Vec<_>>(),
        (0..sim::MAX_DOMAINS).collect::<Vec<_>>()
    );
    let err = Simulator::new(&design(sim::MAX_DOMAINS + 1)).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("many_clocks") && text.contains(&format!("{}", sim::MAX_DOMAINS + 1)),
        "{text}"
    );
}
