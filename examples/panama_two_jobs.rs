//! Two jobs, four workers each, through the PANAMA accelerator on the native
//! simulator: prints the first elements of every aggregated chunk next to the
//! golden model's sum. `cargo run --release --example panama_two_jobs`

use hdl::blocks::fp::FpFormat;
use hdl::panama::config::PanamaConfig;
use hdl::panama::core::panama_core;
use testbench::dut::NativeDut;
use testbench::panama::config::SUME_PORTS;
use testbench::panama::golden::run as golden_run;
use testbench::panama::header::HEADERS_LEN;
use testbench::panama::payload::decode;
use testbench::panama::scenario::Scenario;
use testbench::panama::system::{check, golden_config, is_result, run, Traffic};
use testbench::rng::seeded;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cfg = PanamaConfig::new(256, &SUME_PORTS);
    let mut scenario = Scenario::uniform(2, 4, 3, 256, FpFormat::Fp32);
    scenario.round_robin = true;
    let golden_cfg = golden_config(&cfg, scenario.slot_configs(4));
    let mut rng = seeded("panama two jobs example", 2);
    let frames = scenario.frames(&mut rng, &golden_cfg);
    let golden = golden_run(&golden_cfg, &frames)?;
    let mut dut = NativeDut::new(&panama_core(&cfg)?)?;
    let expected = golden.frames_out();
    let (driver, cycles, _) = run(
        &mut dut,
        &golden_cfg,
        &frames,
        cfg.data_width,
        Traffic::LINE_RATE,
        &mut rng,
        Some(expected),
        2_000,
        100_000,
        |_, _| {},
    )?;
    println!(
        "{} frames in, {} out, {cycles} cycles",
        frames.len(),
        driver.outputs.len()
    );
    let f32s = |v: &[u64]| {
        v.iter()
            .take(4)
            .map(|&x| f32::from_bits(x as u32))
            .collect::<Vec<_>>()
    };
    for a in &golden.aggregations {
        let job = golden_cfg.slots[a.slot].job_id;
        let hw = driver
            .outputs
            .iter()
            .filter(|o| is_result(&o.bytes, golden_cfg.agg_udp_port))
            .find(|o| {
                let b = &o.bytes;
                let at = testbench::panama::header::PANAMA_OFFSET;
                u16::from_be_bytes([b[at + 2], b[at + 3]]) == job
                    && u32::from_be_bytes([b[at + 6], b[at + 7], b[at + 8], b[at + 9]]) == a.seq
            })
            .ok_or("a result frame is missing")?;
        let sum = decode(cfg.format, &hw.bytes[HEADERS_LEN..]);
        println!(
            "job {job} chunk {}: accelerator {:?}  golden {:?}",
            a.seq,
            f32s(&sum),
            f32s(&a.sum)
        );
    }
    let summary = check(&golden_cfg, &golden, &driver.outputs)?;
    println!(
        "all {} result frames identical to the golden model",
        summary.result_frames
    );
    Ok(())
}
