//! Resource and timing estimate of the floating-point adder: for every format and
//! pipeline depth, `yosys synth_xilinx -family xcup` LUT / FF / CARRY / DSP counts, the
//! LUT levels of the longest register-to-register path (carry chains and MUXFx count
//! 0) and Yosys' `ltp` cell depth (every cell counts 1).
//!
//! `cargo run --release -p testbench --example fp_resources`

use gen::toolchain;
use hdl::blocks::fp::{add::MAX_STAGES, fp_add, FpAddConfig, FpFormat};

fn main() {
    println!("| format | stages | LUT | FF | CARRY | DSP | LUT levels | cell depth (ltp) |");
    println!("|---|---|---|---|---|---|---|---|");
    for format in FpFormat::ALL {
        for stages in 0..=MAX_STAGES {
            let cfg = FpAddConfig {
                format,
                stages,
                ftz: false,
            };
            let module = fp_add(&cfg).expect("valid parameters");
            let design = gen::emit(&module).expect("emits");
            let dir = std::env::temp_dir().join(format!("wirespeed-fp-{}", cfg.module_name()));
            let manifest = gen::Manifest::new(&module, &design);
            gen::write_design(&dir, &design, &manifest).expect("writes");
            match toolchain::yosys_synth_xilinx(&[&dir], &design.top, "xcup") {
                Ok(r) => println!(
                    "| {format} | {stages} | {} | {} | {} | {} | {} | {} |",
                    r.luts,
                    r.ffs,
                    r.carries,
                    r.dsps,
                    r.lut_levels.map_or("?".to_string(), |d| d.to_string()),
                    r.logic_depth.map_or("?".to_string(), |d| d.to_string())
                ),
                Err(e) => println!("| {format} | {stages} | synthesis failed: {e} |"),
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
