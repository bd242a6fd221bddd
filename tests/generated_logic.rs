//! No generated design builds logic a literal, a repeated operand or its
//! operands' ranges decide (`hdl::ir::decided`): no `1'h0 ? a : b`, no
//! `x + 9'h000`, no product by one, no `x < 0`, no `x | x`, no
//! `{1'b0, x[3:0]} + 5'h01 > 5'h10`. The builder folds no constants, so a generator
//! that builds such an operation writes it into the Verilog a reviewer reads; this
//! checks every catalog block at its defaults and the configurations that change
//! what the flagships' generators build (each board, one job slot, one-word buffer
//! cells, one and several Lightning cores, weights from memory and streamed, both arithmetic
//! contracts, the adders' formats, stage counts and flushing).
//!
//! `cargo test --test generated_logic`

use hdl::ir::decided::decided_operations;
use wirespeed::catalog;

/// A block, its `--set` settings and its board.
type Config = (&'static str, &'static [&'static str], Option<&'static str>);

/// The configurations beyond the catalog's defaults.
const CONFIGS: &[Config] = &[
    ("panama", &[], Some("netfpga-plus-au250")),
    ("panama", &[], Some("netfpga-plus-au280")),
    ("panama", &["ports=2"], None),
    ("panama", &["ports=8", "data_width=512"], None),
    (
        "panama",
        &["max_payload_bytes=64"],
        Some("netfpga-plus-au250"),
    ),
    ("panama", &["slots=1"], None),
    ("lightning", &["cores=4"], None),
    ("lightning", &["weight_source=stream"], None),
    ("lightning", &["cores=3", "weight_source=stream"], None),
    ("lightning", &["arith=released-rtl"], None),
    ("lightning", &["acc_width=32"], None),
    ("lightning", &[], Some("rfsoc4x2")),
    ("fp-add", &["stages=0"], None),
    ("fp-add", &["stages=7", "ftz=true"], None),
    ("fp-add", &["format=fp16"], None),
    ("fp-add", &["format=bf16", "ftz=true"], None),
    ("fp-add-tree", &["inputs=1", "lanes=1"], None),
    ("fp-add-tree", &["inputs=3", "stages=0"], None),
    ("axis-skid", &["packets=false", "user_width=0"], None),
    ("axil-regfile", &["separate_clock=false"], None),
    ("count-action", &["events=1", "count_width=1"], None),
    ("fifo", &["depth=2", "width=1"], None),
];

#[test]
fn no_generated_design_holds_a_decided_operation() {
    let defaults = catalog::blocks().iter().map(|b| (b.name, &[][..], None));
    let mut checked = 0;
    let mut found = vec![];
    for (name, sets, board) in defaults.chain(CONFIGS.iter().copied()) {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let (spec, settings) = catalog::find_with_settings(name, &sets, board)
            .unwrap_or_else(|e| panic!("{name} {sets:?}: {e}"));
        let top = spec
            .build(&settings)
            .unwrap_or_else(|e| panic!("{name} {sets:?}: {e}"))
            .module;
        for d in decided_operations(&top) {
            found.push(format!("{name} {sets:?} {board:?}: {}", d.describe()));
        }
        checked += 1;
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    assert_eq!(checked, catalog::blocks().len() + CONFIGS.len());
}
