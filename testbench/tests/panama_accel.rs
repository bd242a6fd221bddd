//! The PANAMA accelerator core against the golden model, packet for packet.

use hdl::panama::config::PanamaConfig;
use hdl::panama::core::panama_core;
use hdl::std::fp::FpFormat;
use rand::Rng;
use testbench::dut::NativeDut;
use testbench::panama::config::{GoldenConfig, SlotConfig, SUME_PORTS};
use testbench::panama::golden::{run as golden_run, InFrame};
use testbench::panama::system::{check, run, RunEnd, Traffic};
use testbench::panama::traffic::{interleave, job_streams, stream_frames, JobSpec, Values};
use testbench::rng::seeded;

fn one_job(format: FpFormat, width: u32) {
    let mut rng = seeded(&format!("panama one job {width}"), 1);
    let cfg = PanamaConfig {
        format,
        ..PanamaConfig::new(width, &SUME_PORTS)
    };
    let golden_cfg = GoldenConfig::new(format, &SUME_PORTS, vec![SlotConfig::new(7, 1, &[0, 1])]);
    let job = JobSpec {
        job_id: 7,
        tree_id: 1,
        ports: vec![0, 1],
        elements: 600,
        payload_bytes: 512,
    };
    let streams = job_streams(
        &mut rng,
        &job,
        format,
        golden_cfg.agg_udp_port,
        Values::Finite,
        true,
    );
    let per_port: Vec<Vec<InFrame>> = streams
        .iter()
        .map(|s| stream_frames(&golden_cfg, s).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let frames = interleave(&mut rng, per_port);
    let want = golden_run(&golden_cfg, &frames).unwrap_or_else(|e| panic!("{e}"));
    let expected = want.bypass.len()
        + want
            .aggregations
            .iter()
            .map(|a| a.results.len())
            .sum::<usize>();
    let module = panama_core(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let mut dut = NativeDut::new(&module).unwrap_or_else(|e| panic!("{e}"));
    let (d, cycles, end) = run(
        &mut dut,
        &golden_cfg,
        &frames,
        width,
        Traffic::LINE_RATE,
        &mut rng,
        Some(expected),
        2_000,
        200_000,
        |_, _| {},
    );
    assert_eq!(
        end,
        RunEnd::Complete,
        "{} of {expected} frames out after {cycles} cycles",
        d.outputs.len()
    );
    println!("{:?}", testbench::panama::system::read_counters(&mut dut));
    let summary = check(&golden_cfg, &want, &d.outputs).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{summary:?} in {cycles} cycles, {} input stalls",
        d.input_stalls
    );
    let _ = rng.gen::<u8>();
}

#[test]
fn one_job_fp32_256() {
    one_job(FpFormat::Fp32, 256);
}
