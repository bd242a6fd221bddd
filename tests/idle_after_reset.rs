//! Every block of the catalog, as `wirespeed gen` builds it on its defaults, is
//! quiet after reset while nothing is offered to it: with every input at 0 (no
//! `tvalid`, `in_valid` or AXI-Lite request, no `tready`), no output named
//! `…valid` rises in the 200 cycles after reset. A valid a pipeline's reset
//! leaves set is a beat no one sent, and a check that starts comparing once a
//! pipeline has filled never sees it (the floating-point adder's valid
//! registers reset to 1 passed every adder test that way).
//!
//! `cargo test --test idle_after_reset`

use hdl::ir::Direction;
use sim::Simulator;
use wirespeed::catalog;

/// Cycles watched after reset: longer than any block's pipeline.
const CYCLES: u64 = 200;

#[test]
fn no_valid_rises_after_reset_while_nothing_is_offered() {
    let mut watched = 0;
    for spec in catalog::blocks() {
        let settings = spec.settings(&[]).expect("the defaults are settings");
        let generated = spec
            .build(&settings)
            .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
        let mut sim =
            Simulator::new(&generated.module).unwrap_or_else(|e| panic!("{}: {e}", spec.name));
        let valids: Vec<_> = sim
            .ports()
            .iter()
            .filter(|p| p.direction == Direction::Output && p.name.ends_with("valid"))
            .map(|p| p.name.clone())
            .map(|name| (sim.port_handle(&name).expect("a port of the design"), name))
            .collect();
        watched += valids.len();
        sim.reset(4);
        for cycle in 0..CYCLES {
            for (h, name) in &valids {
                let v = sim.get_handle(*h).expect("an output");
                assert!(
                    v.is_zero(),
                    "{}: `{name}` is {v:?} in cycle {cycle} after reset, with nothing offered",
                    spec.name
                );
            }
            sim.step();
        }
    }
    // The catalog's streaming blocks have valid outputs; none watched would
    // mean the filter found nothing to hold.
    assert!(watched >= 10, "only {watched} valid outputs watched");
}
