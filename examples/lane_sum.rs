//! Writing a block end to end: build it with the HDL, simulate it natively against a
//! plain-Rust expectation, and write its Verilog.
//!
//! `cargo run --release --example lane_sum [-- OUT_DIR]`

use wirespeed::gen;
use wirespeed::hdl::{HdlError, Module, ModuleBuilder, ResetPolarity};
use wirespeed::sim::Simulator;

/// Sums `lanes` unsigned lanes of `width` bits and registers the result.
fn lane_sum(lanes: u32, width: u32) -> Result<Module, HdlError> {
    let mut m = ModuleBuilder::new(&format!("lane_sum_{lanes}x{width}"));
    let clk = m.domain(
        "clk",
        "axis_aclk",
        Some("axis_resetn"),
        ResetPolarity::ActiveLow,
    );
    let bus = m.input("bus", lanes * width);
    let out_width = width + 32 - lanes.leading_zeros();
    let mut total = m.zeros(out_width);
    for lane in m.split_lanes(bus, width) {
        let lane = m.zext(lane, out_width);
        total = m.add_wrap(total, lane);
    }
    let q = m.register(clk, "sum_q", total);
    m.output("sum", q);
    m.finish()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (lanes, width) = (16, 8);
    let module = lane_sum(lanes, width)?;

    let mut sim = Simulator::new(&module)?;
    sim.reset(1);
    let values: Vec<u64> = (0..lanes as u64).map(|i| (i * 37 + 11) % 256).collect();
    let bus = values
        .iter()
        .enumerate()
        .fold(0u128, |acc, (i, v)| acc | (*v as u128) << (8 * i));
    sim.set("bus", &wirespeed::hdl::Bits::from_u128(bus, lanes * width)?)?;
    sim.step();
    let got = sim.get_u64("sum")?;
    let want: u64 = values.iter().sum();
    println!("simulated sum = {got}, expected {want}");
    assert_eq!(got, want);

    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "out/lane_sum".into());
    let design = gen::emit(&module)?;
    let manifest = gen::Manifest::new(&module, &design);
    for path in gen::write_design(std::path::Path::new(&out), &design, &manifest)? {
        println!("wrote {}", path.display());
    }
    Ok(())
}
