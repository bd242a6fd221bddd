//! Every `hdl::blocks` block through the differential harness: the native simulator
//! and Verilator (running the emitted Verilog) in lockstep over ≥ 10,000 random
//! cycles, every output compared after every input change and every edge; wide
//! (≥ 512-bit) data, back-pressure, and two unrelated clocks where a block has two.

use hdl::blocks::axil_regfile::{axil_regfile, Access, RegFileSpec, RegisterSpec};
use hdl::blocks::{cdc, counter, fifo, skid};
use hdl::dsl::AxisConfig;
use rand::Rng;
use testbench::axil::AxiLitePins;
use testbench::dut::{ports_of, DutError};
use testbench::harness::{DiffConfig, Differential, Step};
use testbench::pins::{Pin, Pins};
use testbench::rng::{random_words, seeded};

/// The ports called `names` of `m`, resolved once before a run.
fn pins<const N: usize>(m: &hdl::Module, names: [&str; N]) -> [Pin; N] {
    Pin::resolve_all(&ports_of(m), names).unwrap_or_else(|e| panic!("{e}"))
}

const CYCLES: u64 = 10_000;

#[test]
fn counter_agrees() {
    let mut rng = seeded("diff counter", 1);
    let m = counter::up_counter(32).unwrap();
    let [en, load, load_value] = pins(&m, ["en", "load", "load_value"]);
    let report = Differential::new(&m)
        .try_run(&DiffConfig::cycles(CYCLES), |s| {
            s.set_u64(en, rng.gen_bool(0.7) as u64)?;
            s.set_u64(load, rng.gen_bool(0.05) as u64)?;
            s.set_u64(load_value, rng.gen::<u32>() as u64)
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.cycles, vec![CYCLES]);
}

#[test]
fn sync_fifo_agrees_at_512_bits() {
    let mut rng = seeded("diff fifo", 2);
    let m = fifo::sync_fifo(512, 64).unwrap();
    let [wr_en, wr_data, rd_en] = pins(&m, ["wr_en", "wr_data", "rd_en"]);
    Differential::new(&m)
        .try_run(&DiffConfig::cycles(CYCLES), |s| {
            let phase = s.cycles[0] / 400 % 3;
            let (pw, pr) = [(0.9, 0.3), (0.3, 0.9), (0.6, 0.6)][phase as usize];
            s.set_u64(wr_en, rng.gen_bool(pw) as u64)?;
            s.set(wr_data, &random_words(&mut rng, 512))?;
            s.set_u64(rd_en, rng.gen_bool(pr) as u64)
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn skid_buffer_agrees_at_1024_bits_with_back_pressure() {
    let mut rng = seeded("diff skid", 3);
    let m = skid::axis_skid(&AxisConfig::packets(1024, 128)).unwrap();
    let [tdata, tkeep, tuser, tlast, tvalid, tready] = pins(
        &m,
        [
            "s_axis_tdata",
            "s_axis_tkeep",
            "s_axis_tuser",
            "s_axis_tlast",
            "s_axis_tvalid",
            "m_axis_tready",
        ],
    );
    Differential::new(&m)
        .try_run(&DiffConfig::cycles(CYCLES), |s| {
            s.set(tdata, &random_words(&mut rng, 1024))?;
            s.set(tkeep, &random_words(&mut rng, 128))?;
            s.set(tuser, &random_words(&mut rng, 128))?;
            s.set_u64(tlast, rng.gen_bool(0.1) as u64)?;
            s.set_u64(tvalid, rng.gen_bool(0.8) as u64)?;
            s.set_u64(tready, rng.gen_bool(0.6) as u64)
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn sync_bits_agrees_at_512_bits() {
    let mut rng = seeded("diff sync_bits", 4);
    let m = cdc::sync_bits(512, 3).unwrap();
    let [d] = pins(&m, ["d"]);
    Differential::new(&m)
        .try_run(&DiffConfig::cycles(CYCLES), |s| {
            s.set(d, &random_words(&mut rng, 512))
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

/// The two unrelated clock pairs every two-domain block runs with: 200/100 MHz and
/// 340/250 MHz (periods in ps).
const CLOCK_PAIRS: [(u64, u64); 2] = [(5_000, 10_000), (2_941, 4_000)];

#[test]
fn pulse_sync_agrees_across_two_clocks() {
    for (k, (a, b)) in CLOCK_PAIRS.into_iter().enumerate() {
        let mut rng = seeded(&format!("diff pulse_sync {a}/{b}"), 5 + k as u64);
        let m = cdc::pulse_sync().unwrap();
        let [src_pulse] = pins(&m, ["src_pulse"]);
        let cfg = DiffConfig::cycles(CYCLES).period("src", a).period("dst", b);
        Differential::new(&m)
            .try_run(&cfg, |s| {
                if s.fired(0) {
                    s.set_u64(src_pulse, rng.gen_bool(0.2) as u64)?;
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn handshake_sync_agrees_across_two_clocks_at_512_bits() {
    for (k, (a, b)) in CLOCK_PAIRS.into_iter().enumerate() {
        let mut rng = seeded(&format!("diff handshake_sync {a}/{b}"), 7 + k as u64);
        let m = cdc::handshake_sync(512).unwrap();
        let [src_valid, src_data] = pins(&m, ["src_valid", "src_data"]);
        let cfg = DiffConfig::cycles(CYCLES).period("src", a).period("dst", b);
        Differential::new(&m)
            .try_run(&cfg, |s| {
                if s.fired(0) {
                    s.set_u64(src_valid, rng.gen_bool(0.7) as u64)?;
                    s.set(src_data, &random_words(&mut rng, 512))?;
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn async_fifo_agrees_across_two_clocks_at_512_bits() {
    for (k, (a, b)) in CLOCK_PAIRS.into_iter().enumerate() {
        let mut rng = seeded(&format!("diff async_fifo {a}/{b}"), 9 + k as u64);
        let m = fifo::async_fifo(512, 16).unwrap();
        let [wr_en, wr_data, rd_en] = pins(&m, ["wr_en", "wr_data", "rd_en"]);
        let cfg = DiffConfig::cycles(CYCLES).period("wr", a).period("rd", b);
        Differential::new(&m)
            .try_run(&cfg, |s| {
                let phase = s.cycles[0] / 500 % 2;
                if s.fired(0) {
                    s.set_u64(wr_en, rng.gen_bool(0.8) as u64)?;
                    s.set(wr_data, &random_words(&mut rng, 512))?;
                }
                if s.fired(1) {
                    s.set_u64(
                        rd_en,
                        rng.gen_bool(if phase == 0 { 0.3 } else { 0.95 }) as u64,
                    )?;
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

fn regfile(separate_clock: bool) -> hdl::Module {
    let spec = RegFileSpec {
        name: "regs".into(),
        registers: vec![
            RegisterSpec::new("ctrl", Access::ReadWrite, 32).with_reset(0x1234_5678),
            RegisterSpec::new("mode", Access::ReadWrite, 3),
            RegisterSpec::new("status", Access::ReadOnly, 32),
            RegisterSpec::new("drops", Access::ClearOnWrite, 16),
        ],
        addr_width: 12,
        separate_clock,
    };
    axil_regfile(&spec).unwrap().0
}

/// The register file's ports the traffic drives, resolved once per run.
struct RegfilePins {
    bus: AxiLitePins,
    status: Pin,
    drops: Pin,
}

impl RegfilePins {
    fn of(m: &hdl::Module) -> Self {
        let bus = AxiLitePins::resolve(&ports_of(m), "S_AXI_").unwrap_or_else(|e| panic!("{e}"));
        let [status, drops] = pins(m, ["status", "drops"]);
        RegfilePins { bus, status, drops }
    }
}

/// Random AXI-Lite traffic on the register file's bus (axil domain = index 0) and
/// random datapath values (core domain = index 1 when separate).
fn regfile_traffic(
    rng: &mut impl Rng,
    s: &mut Step,
    p: &RegfilePins,
    core: usize,
) -> Result<(), DutError> {
    let AxiLitePins { aw, w, b, ar, r } = p.bus;
    if s.fired(0) || s.fired.is_empty() {
        let addr = rng.gen_range(0..6u64) * 4;
        s.set_u64(aw[0], addr)?; // AWADDR
        s.set_u64(ar[0], addr)?; // ARADDR
        s.set_u64(aw[1], rng.gen_bool(0.3) as u64)?; // AWVALID
        s.set_u64(w[2], rng.gen_bool(0.3) as u64)?; // WVALID
        s.set_u64(w[0], rng.gen::<u32>() as u64)?; // WDATA
        s.set_u64(w[1], rng.gen_range(0..16))?; // WSTRB
        s.set_u64(b[2], rng.gen_bool(0.5) as u64)?; // BREADY
        s.set_u64(ar[1], rng.gen_bool(0.3) as u64)?; // ARVALID
        s.set_u64(r[3], rng.gen_bool(0.5) as u64)?; // RREADY
    }
    if s.fired(core) && rng.gen_bool(0.05) {
        s.set_u64(p.status, rng.gen::<u32>() as u64)?;
        s.set_u64(p.drops, rng.gen::<u16>() as u64)?;
    }
    Ok(())
}

#[test]
fn regfile_in_its_own_domain_agrees_across_two_clocks() {
    for (k, (a, b)) in CLOCK_PAIRS.into_iter().enumerate() {
        let mut rng = seeded(&format!("diff regfile {a}/{b}"), 11 + k as u64);
        let cfg = DiffConfig::cycles(CYCLES)
            .period("axil", b)
            .period("core", a);
        let m = regfile(true);
        let p = RegfilePins::of(&m);
        Differential::new(&m)
            .try_run(&cfg, |s| regfile_traffic(&mut rng, s, &p, 1))
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn regfile_in_one_domain_agrees() {
    let mut rng = seeded("diff regfile single", 13);
    let m = regfile(false);
    let p = RegfilePins::of(&m);
    Differential::new(&m)
        .try_run(&DiffConfig::cycles(CYCLES), |s| {
            regfile_traffic(&mut rng, s, &p, 0)
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

/// A test-only copy of `up_counter` whose register resets to 1 instead of 0.
fn counter_with_wrong_reset() -> hdl::Module {
    use hdl::{ModuleBuilder, ResetPolarity};
    let mut m = ModuleBuilder::new("up_counter_w32");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let en = m.input("en", 1);
    let load = m.input("load", 1);
    let load_value = m.input("load_value", 32);
    let count = m.reg_init(clk, "count_q", 32, 1);
    let inc = m.add_const_wrap(count, 1);
    let next = m.mux(load, load_value, inc);
    let update = m.or(load, en);
    m.set_next(count, next);
    m.set_enable(count, update);
    m.output("count", count);
    m.finish().unwrap()
}

#[test]
fn harness_catches_a_wrong_reset_value_and_says_where() {
    let good = counter::up_counter(32).unwrap();
    let bad = counter_with_wrong_reset();
    let inputs = pins(&good, ["en", "load", "load_value"]);
    let err = Differential::pair(&good, &bad)
        .try_run(&DiffConfig::cycles(100), |s| {
            for pin in inputs {
                s.set_u64(pin, 0)?;
            }
            Ok(())
        })
        .expect_err("a wrong reset value must be caught");
    let text = err.to_string();
    assert!(text.contains("port `count`"), "{text}");
    assert!(
        text.contains("native 00000000 vs verilator 00000001"),
        "{text}"
    );
    assert!(text.contains("clk cycle 0"), "{text}");
    let testbench::harness::DiffError::Mismatch(m) = err else {
        panic!("not a mismatch: {text}")
    };
    let (native_vcd, verilator_vcd) = m.vcds.expect("replay VCDs written");
    for path in [native_vcd, verilator_vcd] {
        let vcd = std::fs::read_to_string(&path).unwrap();
        assert!(vcd.contains("count"), "{} has the signals", path.display());
    }
}

/// Verilator's n-cycle stepping in C++ (`Dut::step_cycles`) lands on the same state and
/// time as n single steps on Verilator and on the native simulator, including after
/// inputs change just before the run.
#[test]
fn verilator_multi_cycle_steps_match_single_steps() {
    use testbench::dut::{Dut, NativeDut, VerilatorDut};
    use testbench::verilator::BuildOptions;
    let mut rng = seeded("diff step_cycles", 9);
    let m = counter::up_counter(32).unwrap();
    let [en, load, load_value] = pins(&m, ["en", "load", "load_value"]);
    let options = BuildOptions::default();
    let mut many = VerilatorDut::new(&m, &options).unwrap_or_else(|e| panic!("{e}"));
    let mut one = VerilatorDut::new(&m, &options).unwrap_or_else(|e| panic!("{e}"));
    let mut native = NativeDut::new(&m).unwrap();
    let outputs: Vec<usize> = native
        .ports()
        .iter()
        .enumerate()
        .filter(|(_, p)| p.direction == hdl::ir::Direction::Output)
        .map(|(i, _)| i)
        .collect();
    let mut duts: [&mut dyn Dut; 3] = [&mut many, &mut one, &mut native];
    for d in duts.iter_mut() {
        d.reset(3);
    }
    for round in 0..60 {
        let n = rng.gen_range(0..40u64);
        let (e, l, value) = (rng.gen_bool(0.8), rng.gen_bool(0.2), rng.gen::<u32>());
        // `d` is a `&mut &mut dyn Dut`: these are the `Pins` methods, by handle.
        for d in duts.iter_mut() {
            d.set_u64(en, e as u64).unwrap();
            d.set_u64(load, l as u64).unwrap();
            d.set_u64(load_value, value as u64).unwrap();
        }
        duts[0].step_cycles(n);
        for d in duts[1..].iter_mut() {
            for _ in 0..n {
                d.step();
            }
        }
        let time = duts[2].time_ps();
        for d in duts.iter_mut() {
            assert_eq!(d.time_ps(), time, "round {round}: time on {}", d.engine());
        }
        for &o in &outputs {
            let want = duts[2].get(o).unwrap();
            for d in duts[..2].iter_mut() {
                assert_eq!(
                    d.get(o).unwrap(),
                    want,
                    "round {round} (+{n} cycles): port {o}"
                );
            }
        }
    }
}
