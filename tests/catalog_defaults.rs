//! The catalog's defaults are the typed configurations' defaults: building a
//! block with no settings gives the design its `Default`/`new` describes, and the
//! defaults `wirespeed list` prints are theirs.
//!
//! `cargo test --test catalog_defaults`

use gen::board::Board;
use hdl::blocks::count_action::CountActionConfig;
use hdl::blocks::fp::{FpAddConfig, FpTreeConfig};
use hdl::lightning::top::TopConfig;
use hdl::panama::config::PanamaConfig;
use wirespeed::catalog::{self, ParamDefault};

/// The default text of `block`'s parameter `param`.
fn default_of(block: &str, param: &str) -> ParamDefault {
    catalog::find(block)
        .expect("a catalog block")
        .params()
        .into_iter()
        .find(|p| p.name == param)
        .unwrap_or_else(|| panic!("{block} has no parameter {param}"))
        .default
}

fn value(v: impl ToString) -> ParamDefault {
    ParamDefault::Value(v.to_string())
}

#[test]
fn panama_defaults_are_panama_config_new() {
    for (board, stages) in [("netfpga-sume", 5), ("netfpga-plus-au250", 7)] {
        let b = Board::named(board).expect("board");
        let (_, settings) =
            catalog::find_with_settings("panama", &[], Some(board)).expect("settings");
        let (cfg, _) = catalog::panama_config(&settings).expect("config");
        let want = PanamaConfig {
            adder_stages: stages,
            ..PanamaConfig::new(b.data_width, &b.ethernet_codes())
        };
        assert_eq!(cfg, want, "{board}");
    }
    let d = PanamaConfig::new(256, &[]);
    for (param, want) in [
        ("slots", d.slots),
        ("fifo_depth", d.fifo_depth),
        ("max_payload_bytes", d.max_payload_bytes),
        ("result_banks", d.result_banks),
        ("max_frame_bytes", d.max_frame_bytes),
        ("full_wait", d.full_wait),
        ("slot_timeout", d.slot_timeout),
    ] {
        assert_eq!(default_of("panama", param), value(want), "{param}");
    }
}

#[test]
fn lightning_defaults_are_top_config_default() {
    let (_, settings) = catalog::find_with_settings("lightning", &[], None).expect("settings");
    let (_, top, _) = catalog::lightning_config(&settings).expect("config");
    let d = TopConfig::default();
    assert_eq!(top.adc_fifo_depth, d.adc_fifo_depth);
    assert_eq!(top.command_fifo_depth, d.command_fifo_depth);
    assert_eq!(
        default_of("lightning", "adc_fifo_depth"),
        value(d.adc_fifo_depth)
    );
}

#[test]
fn block_defaults_are_their_configs_default() {
    let add = FpAddConfig::default();
    for block in ["fp-add", "fp-add-tree"] {
        assert_eq!(default_of(block, "format"), value(add.format.name()));
        assert_eq!(default_of(block, "stages"), value(add.stages));
        assert_eq!(default_of(block, "ftz"), value(add.ftz));
    }
    let tree = FpTreeConfig::default();
    assert_eq!(default_of("fp-add-tree", "inputs"), value(tree.inputs));
    assert_eq!(default_of("fp-add-tree", "lanes"), value(tree.lanes));
    let ca = CountActionConfig::default();
    assert_eq!(default_of("count-action", "events"), value(ca.events));
    assert_eq!(
        default_of("count-action", "count_width"),
        value(ca.count_width)
    );
}
