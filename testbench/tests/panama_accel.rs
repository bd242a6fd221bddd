//! The PANAMA accelerator core against the golden model, packet for packet: jobs
//! sharing ports, every format and bus width, bypass traffic, random back-pressure,
//! faults and full buffers, on the native simulator; a representative set in
//! lockstep with Verilator (`panama_differential.rs`).

use hdl::blocks::fp::FpFormat;
use hdl::panama::config::PanamaConfig;
use hdl::panama::core::{panama_core, OUTPUT_HELD_CYCLES};
use testbench::dut::NativeDut;
use testbench::panama::config::SUME_PORTS;
use testbench::panama::counters::Counters;
use testbench::panama::golden::{run as golden_run, GoldenOutcome};
use testbench::panama::scenario::Scenario;
use testbench::panama::system::{
    check, golden_config, read_counters, run, RunEnd, StreamDriver, Traffic,
};
use testbench::rng::seeded;

/// One native run of `scenario` on an instance of `cfg`.
struct Outcome {
    want: GoldenOutcome,
    driver: StreamDriver,
    end: RunEnd,
    counters: Vec<(&'static str, u64)>,
}

fn simulate(name: &str, cfg: &PanamaConfig, scenario: &Scenario, traffic: Traffic) -> Outcome {
    let mut rng = seeded(name, 5);
    let golden_cfg = golden_config(cfg, scenario.slot_configs(cfg.slots as usize));
    let frames = scenario.frames(&mut rng, &golden_cfg);
    let want = golden_run(&golden_cfg, &frames).unwrap_or_else(|e| panic!("{e}"));
    let expected = want.frames_out();
    let module = panama_core(cfg).unwrap_or_else(|e| panic!("{e}"));
    let mut dut = NativeDut::new(&module).unwrap_or_else(|e| panic!("{e}"));
    let beats: u64 = frames
        .iter()
        .map(|f| f.bytes.len().div_ceil(cfg.beat_bytes() as usize) as u64)
        .sum();
    let bound = 20 * beats + 5_000;
    let (driver, cycles, end) = run(
        &mut dut,
        &golden_cfg,
        &frames,
        cfg.data_width,
        traffic,
        &mut rng,
        want.overflow_at.is_none().then_some(expected),
        2_000,
        bound,
        |_, _| {},
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    let counters = read_counters(&mut dut).unwrap_or_else(|e| panic!("{name}: {e}"));
    let summary = check(&golden_cfg, &want, &driver.outputs)
        .unwrap_or_else(|e| panic!("{name}: {e} (after {cycles} cycles, {end:?})"));
    println!(
        "{name}: {} frames in ({beats} beats), {} bypass + {} result frames out and checked, \
         {cycles} cycles ({end:?}), counters {counters:?}",
        frames.len(),
        summary.bypass_frames,
        summary.result_frames
    );
    Outcome {
        want,
        driver,
        end,
        counters,
    }
}

/// The hardware's counters equal the model's (and `output_held_cycles` the
/// bench's count of refused output beats), and every packet is accounted for.
fn assert_counters(o: &Outcome) {
    for (name, value) in o.want.counters.named() {
        let got = o.counters.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        assert_eq!(got, Some(value), "counter {name}");
    }
    let held = o.counters.iter().find(|(n, _)| *n == OUTPUT_HELD_CYCLES);
    assert_eq!(
        held.map(|(_, v)| *v),
        Some(o.driver.output_held),
        "output_held_cycles: the cycles the bench refused an output beat"
    );
    let get = |n: &str| {
        o.counters
            .iter()
            .find(|(k, _)| *k == n)
            .map_or(0, |(_, v)| *v)
    };
    let waiting = o.want.waiting.len() as u64;
    assert_eq!(
        get("packets_in"),
        get("bypassed") + get("malformed") + get("accepted"),
        "in = bypassed + accepted + malformed"
    );
    assert_eq!(
        get("accepted"),
        get("seq_mismatch") + get("other_mismatch") + waiting + get("results_out"),
        "accepted = dropped + waiting + summed (one result per summed packet)"
    );
}

fn sume(format: FpFormat) -> PanamaConfig {
    PanamaConfig {
        format,
        fifo_depth: 4,
        ..PanamaConfig::new(256, &SUME_PORTS)
    }
}

fn config(width: u32, format: FpFormat) -> PanamaConfig {
    let ports: &[u8] = if width == 256 {
        &SUME_PORTS
    } else {
        &[0x01, 0x04, 0x10, 0x40]
    };
    PanamaConfig {
        format,
        fifo_depth: 16,
        ..PanamaConfig::new(width, ports)
    }
}

#[test]
fn one_job_two_workers_fp32() {
    let scenario = Scenario::uniform(1, 2, 5, 512, FpFormat::Fp32);
    let o = simulate(
        "panama one job",
        &sume(FpFormat::Fp32),
        &scenario,
        Traffic::LINE_RATE,
    );
    assert_eq!(o.end, RunEnd::Complete);
    assert_eq!(o.want.aggregations.len(), 5);
    assert_counters(&o);
}

fn three_jobs_four_ports(width: u32, format: FpFormat) {
    let cfg = config(width, format);
    let mut scenario = Scenario::uniform(3, 4, 6, 256, format);
    scenario.jobs[1].ports = vec![1, 2, 3];
    scenario.jobs[2].ports = vec![0, 3];
    scenario.background = 0.5;
    let traffic = Traffic {
        p_valid: 0.9,
        p_ready: 0.6,
    };
    let name = format!("panama 3 jobs x 4 ports {width} {}", format.name());
    let o = simulate(&name, &cfg, &scenario, traffic);
    assert_eq!(o.end, RunEnd::Complete);
    assert_eq!(o.want.aggregations.len(), 18);
    assert!(o.driver.output_held > 0, "the output was back-pressured");
    assert_counters(&o);
}

#[test]
fn three_jobs_interleaved_256_fp32_with_back_pressure() {
    three_jobs_four_ports(256, FpFormat::Fp32);
}

#[test]
fn three_jobs_interleaved_512_bf16_with_back_pressure() {
    three_jobs_four_ports(512, FpFormat::Bf16);
}

#[test]
fn three_jobs_interleaved_1024_fp16_with_back_pressure() {
    three_jobs_four_ports(1024, FpFormat::Fp16);
}

#[test]
fn specials_and_ftz_sum_like_the_golden_model() {
    for (width, format, ftz) in [
        (256, FpFormat::Fp32, true),
        (512, FpFormat::Fp16, false),
        (1024, FpFormat::Bf16, true),
    ] {
        let cfg = PanamaConfig {
            ftz,
            ..config(width, format)
        };
        let mut scenario = Scenario::uniform(2, 4, 4, 128, format);
        scenario.values = testbench::panama::traffic::Values::WithSpecials;
        let name = format!("panama specials {width} {} ftz={ftz}", format.name());
        let o = simulate(&name, &cfg, &scenario, Traffic::LINE_RATE);
        assert_eq!(o.end, RunEnd::Complete);
        assert_counters(&o);
    }
}

#[test]
fn bypass_frames_come_out_bit_exact_under_any_mix() {
    for (width, background) in [(256, 1.0), (512, 3.0), (1024, 0.3)] {
        let cfg = config(width, FpFormat::Fp32);
        let mut scenario = Scenario::uniform(2, 4, 5, 192, FpFormat::Fp32);
        scenario.background = background;
        let traffic = Traffic {
            p_valid: 0.8,
            p_ready: 0.7,
        };
        let o = simulate(
            &format!("panama bypass mix {width}"),
            &cfg,
            &scenario,
            traffic,
        );
        assert_eq!(o.end, RunEnd::Complete);
        assert!(!o.want.bypass.is_empty());
        assert_counters(&o);
    }
}

/// A slot takes a packet only when it is enabled and names the packet's job and
/// tree: two trees of one job aggregate apart (slots 0 and 1), and the workers of
/// a job the host retired (slot 2: disabled, its job, tree and ports left in
/// place) go out as bypass, although slot 3 is enabled for the same job on
/// another tree.
#[test]
fn slots_match_on_enable_job_and_tree() {
    let mut scenario = Scenario::uniform(4, 4, 4, 256, FpFormat::Fp32);
    scenario.jobs[1].job_id = scenario.jobs[0].job_id;
    scenario.jobs[3].job_id = scenario.jobs[2].job_id;
    scenario.retired = vec![2];
    let slots = scenario.slot_configs(4);
    assert_eq!(
        (
            slots[0].job_id,
            slots[0].tree_id,
            slots[1].job_id,
            slots[1].tree_id
        ),
        (100, 0, 100, 1)
    );
    assert!(!slots[2].enable && slots[2].ports == 0b1111 && slots[3].job_id == 102);
    let traffic = Traffic {
        p_valid: 0.9,
        p_ready: 0.7,
    };
    let o = simulate(
        "panama slot match",
        &sume(FpFormat::Fp32),
        &scenario,
        traffic,
    );
    assert_eq!(o.end, RunEnd::Complete);
    assert_eq!(
        o.want.aggregations.len(),
        3 * 4,
        "jobs 0, 1 and 3, four packets each"
    );
    assert_eq!(
        o.want.counters.unknown_job,
        4 * 4,
        "job 2's four workers, four packets each"
    );
    assert_counters(&o);
}

/// Result bank rings of 3, 5 and 7 banks (`result_banks`, 2–8; the default 4 and
/// every other test's ring are a power of two, whose index wraps by itself):
/// three jobs' results under a slow output fill the ring and go round it many
/// times, each equal to the golden model's.
#[test]
fn result_rings_of_any_size_wrap_at_their_last_bank() {
    for banks in [3, 5, 7] {
        let cfg = PanamaConfig {
            result_banks: banks,
            ..config(256, FpFormat::Fp32)
        };
        let mut scenario = Scenario::uniform(3, 4, 6, 256, FpFormat::Fp32);
        scenario.background = 0.3;
        let traffic = Traffic {
            p_valid: 1.0,
            p_ready: 0.3,
        };
        let o = simulate(
            &format!("panama {banks} result banks"),
            &cfg,
            &scenario,
            traffic,
        );
        assert_eq!(o.end, RunEnd::Complete, "{banks} banks");
        assert_eq!(o.want.aggregations.len(), 18, "{banks} banks");
        assert!(
            o.driver.output_held > 0,
            "{banks} banks: the output was held"
        );
        assert_counters(&o);
    }
}

#[test]
fn faults_are_dropped_counted_and_do_not_disturb_other_jobs() {
    for (width, seed_name) in [(256, "a"), (512, "b"), (1024, "c")] {
        let cfg = config(width, FpFormat::Fp32);
        let mut scenario = Scenario::uniform(3, 4, 6, 128, FpFormat::Fp32);
        scenario.faults = 0.7;
        scenario.background = 0.3;
        let traffic = Traffic {
            p_valid: 0.9,
            p_ready: 0.5,
        };
        let o = simulate(
            &format!("panama faults {seed_name}"),
            &cfg,
            &scenario,
            traffic,
        );
        assert!(o.end != RunEnd::Timeout, "no hang");
        assert_counters(&o);
        let c = &o.want.counters;
        println!(
            "  malformed {}, seq_mismatch {}, other_mismatch {}, unknown_job {}, waiting {}",
            c.malformed,
            c.seq_mismatch,
            c.other_mismatch,
            c.unknown_job,
            o.want.waiting.len()
        );
    }
}

#[test]
fn full_buffers_hold_the_input_without_loss() {
    // One packet per buffer and a slow output: results back up into the result
    // banks, the engine cannot start, buffers fill and the input waits (counted in
    // stall_cycles) until the slot is served.
    let cfg = PanamaConfig {
        fifo_depth: 1,
        ..sume(FpFormat::Fp32)
    };
    let mut scenario = Scenario::uniform(2, 4, 8, 512, FpFormat::Fp32);
    scenario.background = 0.2;
    scenario.round_robin = true;
    let slow_output = Traffic {
        p_valid: 1.0,
        p_ready: 0.3,
    };
    let o = simulate("panama full buffers", &cfg, &scenario, slow_output);
    assert_eq!(o.want.overflow_at, None);
    assert_eq!(o.end, RunEnd::Complete);
    assert_counters(&o);
    let stalls = o
        .counters
        .iter()
        .find(|(n, _)| *n == "stall_cycles")
        .map_or(0, |(_, v)| *v);
    assert!(stalls > 0, "the buffers were full at times");
    println!("  stall_cycles {stalls}");
}

#[test]
fn a_worker_too_far_ahead_waits_full_wait_then_is_dropped() {
    // One-packet buffers. Worker 0 sends three packets before worker 1 sends any:
    // its second finds the buffer full while the slot waits for a packet behind
    // it. PANAMA.md: the input is held `full_wait` cycles, then the packet is
    // dropped; the buffer is wedged, so the third is dropped at once. Worker 1's
    // first packet completes seq 0 (and unwedges buffer 0); its second waits in
    // buffer 1, its third waits `full_wait` and is dropped. The packet left
    // waiting is flushed after `slot_timeout`.
    let full_wait = 200;
    let cfg = PanamaConfig {
        fifo_depth: 1,
        full_wait,
        slot_timeout: 1_000,
        ..sume(FpFormat::Fp32)
    };
    let scenario = Scenario::uniform(1, 2, 3, 128, FpFormat::Fp32);
    let mut rng = seeded("panama worker ahead", 3);
    let golden_cfg = golden_config(&cfg, scenario.slot_configs(cfg.slots as usize));
    let mut frames = scenario.frames(&mut rng, &golden_cfg);
    frames.sort_by_key(|f| f.src);
    let want = golden_run(&golden_cfg, &frames).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(want.overflow_at, Some(1));
    // The only aggregation: both workers' first packets.
    let summed = golden_run(&golden_cfg, &[frames[0].clone(), frames[3].clone()])
        .unwrap_or_else(|e| panic!("{e}"));
    let module = panama_core(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let mut dut = NativeDut::new(&module).unwrap_or_else(|e| panic!("{e}"));
    let (d, cycles, end) = run(
        &mut dut,
        &golden_cfg,
        &frames,
        256,
        Traffic::LINE_RATE,
        &mut rng,
        None,
        3_000,
        50_000,
        |_, _| {},
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(end, RunEnd::Quiet, "the input never stops for good");
    assert!(d.input_done(), "every frame was taken");
    check(&golden_cfg, &summed, &d.outputs).unwrap_or_else(|e| panic!("{e}"));
    let c = Counters::from_named(&read_counters(&mut dut).unwrap_or_else(|e| panic!("{e}")));
    println!(
        "{cycles} cycles, longest stall {}, counters {c:?}",
        d.longest_stall
    );
    assert_eq!((c.packets_in, c.accepted, c.full_drops), (6, 3, 3));
    assert_eq!((c.results_out, c.timeout_drops), (2, 1));
    c.check(0).unwrap_or_else(|e| panic!("{e}"));
    let stalls = read_counters(&mut dut)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .find(|(n, _)| *n == "stall_cycles")
        .map(|(_, v)| v);
    // Two waits of exactly full_wait cycles, and worker 1's second packet waits
    // while seq 0 is summed out of its buffer: at most a sum of 6 beats (beats + 3
    // cycles, engine docs) and the cycle its pop lands.
    let waits = 2 * u64::from(full_wait);
    let sum_cycles = (64 + 128) / 32 + 3 + 1;
    let stalls = stalls.unwrap_or(0);
    assert!(
        (waits..=waits + sum_cycles).contains(&stalls),
        "stall_cycles {stalls}: two waits of full_wait cycles and at most one sum"
    );
    assert!(d.longest_stall <= cfg.input_stall_bound(full_wait));
}

/// With no back-pressure, once traffic flows the input takes one beat every cycle
/// from the first beat of the first frame to the last beat of the last.
fn assert_line_rate(o: &Outcome, what: &str) {
    let (first, last) = o.driver.input_span();
    let beats = o.driver.input_beats() as u64;
    println!(
        "{what}: {beats} input beats accepted in cycles {first}..={last} ({} cycles), {} stalls",
        last - first + 1,
        o.driver.input_stalls
    );
    assert_eq!(last - first + 1, beats, "{what}: the input took a bubble");
    assert_eq!(o.driver.input_stalls, 0);
}

#[test]
fn line_rate_input_with_aggregation_only_and_mixed_traffic() {
    for width in [256, 512, 1024] {
        let cfg = config(width, FpFormat::Fp32);
        let scenario = Scenario::uniform(2, 4, 12, 1024, FpFormat::Fp32);
        let o = simulate(
            &format!("panama line rate agg {width}"),
            &cfg,
            &scenario,
            Traffic::LINE_RATE,
        );
        assert_eq!(o.end, RunEnd::Complete);
        assert_line_rate(&o, &format!("{width}-bit aggregation only"));
        let mut mixed = scenario.clone();
        mixed.background = 1.0;
        let o = simulate(
            &format!("panama line rate mixed {width}"),
            &cfg,
            &mixed,
            Traffic::LINE_RATE,
        );
        assert_eq!(o.end, RunEnd::Complete);
        assert_line_rate(&o, &format!("{width}-bit 50/50"));
    }
}
