//! Resource estimate of the Lightning top with the shipped digits MLP, per RFSoC
//! board: `yosys synth_xilinx -family xcup` LUT / FF / CARRY / block RAM / LUT RAM /
//! DSP counts and the wall time of the synthesis.
//!
//! `cargo run --release -p testbench --example lightning_top_resources [board ...]`

use gen::board::{Board, ConverterKind};
use hdl::lightning::top::{lightning_top, TopConfig};
use std::time::Instant;
use testbench::lightning::closed_loop::hardware_config;
use testbench::lightning::model_files::{data_dir, load_model};
use testbench::tools;

fn main() {
    let mut boards: Vec<String> = std::env::args().skip(1).collect();
    if boards.is_empty() {
        boards = vec!["zcu111".into(), "rfsoc4x2".into()];
    }
    let model = load_model(&data_dir().join("weights.json")).expect("shipped model loads");
    let cfg = hardware_config(&model.network, model.acc_width, 1);
    println!("| board | LUT | FF | CARRY | RAMB36 | RAMB18 | LUT RAM | DSP | yosys time |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for name in boards {
        let board = Board::named(&name).expect("known board");
        let adc = board
            .converters
            .iter()
            .find(|c| c.kind == ConverterKind::Adc)
            .expect("RFSoC board with an ADC stream");
        let top = TopConfig {
            adc_samples_per_clock: adc.samples_per_clock,
            ..TopConfig::default()
        };
        let (module, _) = lightning_top(&cfg, &top).expect("valid top");
        let design = gen::emit(&module).expect("emits");
        let dir = std::env::temp_dir().join(format!("wirespeed-lightning-top-{name}"));
        let manifest = gen::Manifest::new(&module, &design);
        gen::write_design(&dir, &design, &manifest).expect("writes");
        let t0 = Instant::now();
        match tools::yosys_synth_xilinx(&[&dir], &design.top, "xcup") {
            Ok(r) => println!(
                "| {name} | {} | {} | {} | {} | {} | {} | {} | {:.0} s |",
                r.luts,
                r.ffs,
                r.carries,
                r.ramb36,
                r.ramb18,
                r.lutrams,
                r.dsps,
                t0.elapsed().as_secs_f64()
            ),
            Err(e) => println!("| {name} | yosys failed: {e} |"),
        }
    }
}
