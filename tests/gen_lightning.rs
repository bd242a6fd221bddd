//! `wirespeed gen lightning`: the catalog block builds the shipped-MLP top for
//! both RFSoC boards with the board's clocks and ADC format, and bad settings are
//! errors naming the parameter.
//!
//! `cargo test --test gen_lightning`

use wirespeed::catalog;

fn build(sets: &[&str]) -> Result<catalog::Generated, catalog::CatalogError> {
    let spec = catalog::find("lightning")?;
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let settings = spec.settings(&sets)?;
    spec.build(&settings)
}

fn port_width(g: &catalog::Generated, name: &str) -> u32 {
    let m = &g.module;
    let p = m
        .ports
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no port {name}"));
    m.net(p.net).width
}

#[test]
fn both_boards_get_their_clocks_and_adc_format() {
    // (board, ADC tdata bits, DAC/ADC/AXI-Lite periods in ns from the board table)
    for (board, adc_bits, periods) in [
        ("zcu111", 256, ["3.946", "3.946", "10.000"]),
        ("rfsoc4x2", 128, ["1.628", "1.808", "10.000"]),
    ] {
        let g = build(&[&format!("board={board}")]).unwrap_or_else(|e| panic!("{board}: {e}"));
        assert_eq!(port_width(&g, "s_axis_adc0_tdata"), adc_bits, "{board}");
        assert_eq!(port_width(&g, "m_axis_dac0_tdata"), 256, "{board}");
        assert_eq!(port_width(&g, "m_axis_dac1_tdata"), 256, "{board}");
        let t = g.board.as_ref().expect("board target");
        let design = gen::emit(&g.module).unwrap();
        let manifest = gen::Manifest::new(&g.module, &design);
        let files =
            gen::board::board_files(&t.board, &manifest, &t.clocks, t.registers.as_ref()).unwrap();
        let xdc = files
            .iter()
            .find(|(n, _)| n.ends_with(".xdc"))
            .map(|(_, text)| text.clone())
            .expect("xdc");
        for (clock, period) in ["dac_aclk", "adc_aclk", "s_axi_aclk"].iter().zip(periods) {
            let line = format!("create_clock -name {clock} -period {period} [get_ports {clock}]");
            assert!(xdc.contains(&line), "{board}: missing `{line}` in\n{xdc}");
        }
        assert!(files.iter().any(|(n, _)| n == "register_map.h"), "{board}");
        assert!(files.iter().any(|(n, _)| n == "build.tcl"), "{board}");
    }
}

#[test]
fn a_parameter_given_twice_is_an_error() {
    for sets in [
        &["acc_width=24", "acc_width=28"][..],
        &["board=zcu111", "board=rfsoc4x2"][..],
    ] {
        let text = match build(sets) {
            Ok(_) => panic!("{sets:?} was accepted"),
            Err(e) => e.to_string(),
        };
        assert!(text.contains("given twice"), "{sets:?}: {text}");
    }
}

#[test]
fn acc_width_beyond_the_top_states_the_top_range() {
    // The datapath takes up to 48 bits, the board top's logit registers 32: both
    // 40 and 49 must be refused with the top's range, not the datapath's.
    for bits in [40, 49] {
        let set = format!("acc_width={bits}");
        let text = match build(&[set.as_str()]) {
            Ok(_) => panic!("`{set}` was accepted"),
            Err(e) => e.to_string(),
        };
        assert!(text.contains("13..=32"), "`{set}`: {text}");
    }
}

#[test]
fn bad_settings_name_the_parameter() {
    for (set, param) in [
        ("board=netfpga-sume", "board"),
        ("board=zcu999", "zcu999"),
        ("weights=/nonexistent/weights.json", "weights"),
        ("acc_width=99", "acc_width"),
        ("acc_width=40", "acc_width"),
        ("acc_width=wide", "acc_width"),
        ("adc_fifo_depth=6", "adc_fifo_depth"),
        ("command_fifo_depth=2048", "command_fifo_depth"),
        ("cores=5", "cores"),
        ("cores=0", "cores"),
        ("board=rfsoc4x2 cores=2", "rfsoc4x2"),
        ("weight_source=dram", "weight_source"),
    ] {
        let sets: Vec<&str> = set.split(' ').collect();
        match build(&sets) {
            Ok(_) => panic!("`{set}` was accepted"),
            Err(e) => {
                let text = e.to_string();
                assert!(
                    text.contains(param),
                    "`{set}`: error does not name {param}: {text}"
                );
            }
        }
    }
}
