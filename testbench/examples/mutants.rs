//! PANAMA's test strength by mutation (QUALITY.md, "Test strength"): samples
//! mutation sites of the SUME core (fp32, 4-packet buffers), applies each alone,
//! and runs [`testbench::panama::mutants::check`] on the mutant, on the native
//! simulator; prints every survivor with the generator line it mutates, and the
//! score by kind. A survivor is a one-line generator mistake the check misses, or
//! a mutant equivalent to the design.
//!
//! `cargo run --release -p testbench --example mutants [-- --count N] [--seed S]`
//! (defaults 100 sites, seed 1), or `… -- --only TEXT` for every site whose
//! description contains TEXT (e.g. `queues.rs:143`).

use hdl::panama::config::PanamaConfig;
use hdl::panama::core::panama_core;
use std::time::Instant;
use testbench::mutation::{campaign, Outcome, Pick};
use testbench::panama::config::SUME_PORTS;
use testbench::panama::mutants::check;

fn main() {
    let pick = match text_arg("--only") {
        Some(text) => Pick::Matching(text),
        None => Pick::Sample {
            count: arg("--count", 100),
            seed: arg("--seed", 1) as u64,
        },
    };
    let cfg = PanamaConfig {
        fifo_depth: 4,
        ..PanamaConfig::new(256, &SUME_PORTS)
    };
    let core = panama_core(&cfg).expect("the SUME core generates");
    if let Err(e) = check(&cfg, &core) {
        eprintln!("the unmutated core fails the check: {e}");
        std::process::exit(1);
    }
    let start = Instant::now();
    let mut done = 0;
    let c = campaign(
        &core,
        &pick,
        |mutant| check(&cfg, mutant),
        |t| {
            done += 1;
            match &t.outcome {
                Outcome::Survived => println!("{done:>4} survived  {}", t.site.describe()),
                Outcome::Killed(why) => {
                    println!("{done:>4} killed    {} ({why})", t.site.describe())
                }
            }
        },
    );
    println!(
        "\n{} of {} sites of `{}` tried ({pick:?}) in {:.1} s",
        c.trials.len(),
        c.sites.values().sum::<usize>(),
        core.name,
        start.elapsed().as_secs_f64()
    );
    println!("| kind | sites | tried | killed |\n|---|---|---|---|");
    for (kind, (killed, tried)) in c.by_kind() {
        println!(
            "| {} | {} | {tried} | {killed} |",
            kind.name(),
            c.sites[&kind]
        );
    }
    println!("mutation score: {:.1} %", 100.0 * c.score());
}

fn arg(name: &str, default: usize) -> usize {
    text_arg(name)
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

fn text_arg(name: &str) -> Option<String> {
    std::env::args().skip_while(|a| a != name).nth(1)
}
