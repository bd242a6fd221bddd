//! Test strength by mutation (QUALITY.md, "Test strength"): samples mutation
//! sites of a design, applies each alone, runs the design's mutant check on the
//! mutant on the native simulator, and prints every survivor with the generator
//! line it mutates, and the score by kind. A survivor is a one-line generator
//! mistake the check misses, or a mutant equivalent to the design.
//!
//! `cargo run --release -p testbench --example mutants [-- --design D] [--count N] [--seed S]`
//! (defaults `panama`, 100 sites, seed 1), or `… -- --only TEXT` for every site
//! whose description contains TEXT (e.g. `queues.rs:143`). Designs:
//! - `panama`: the SUME core (fp32, 4-packet buffers) under
//!   [`testbench::panama::mutants::check`];
//! - `lightning`, `lightning-stream`: the three-core Lightning datapath of
//!   [`testbench::lightning::mutants::Subject`], weights in memory or streamed,
//!   under [`testbench::lightning::mutants::check`];
//! - `lightning-top`: the two-core board top of
//!   [`testbench::lightning::top_mutants::TopSubject`] under
//!   [`testbench::lightning::top_mutants::check_top`] (its datapath's sites
//!   included; `--only lightning/top` or `--only calibrate.rs` picks the top's
//!   own);
//! - `fp-add`: the floating-point adder (`--format fp32|bf16|fp16`, default
//!   fp32; `--stages`, default 5; `--ftz`) under [`testbench::fp_adder::check`];
//! - `fp-add-tree`: the adder tree of `--inputs` (default 5, so that an odd
//!   operand is carried past a level) × `--lanes` (default 4) of that adder under
//!   [`testbench::fp_adder::check_tree`].

use hdl::blocks::fp::{fp_add, fp_add_tree, FpAddConfig, FpTreeConfig};
use hdl::lightning::config::WeightSource;
use hdl::panama::config::PanamaConfig;
use hdl::panama::core::panama_core;
use hdl::Module;
use std::time::Instant;
use testbench::fp_adder;
use testbench::lightning::mutants::{self as lightning, Subject};
use testbench::lightning::top_mutants::{check_top, TopSubject};
use testbench::mutation::{campaign, Outcome, Pick};
use testbench::panama::config::SUME_PORTS;
use testbench::panama::mutants as panama;

/// A design to mutate and its check.
type Check = Box<dyn Fn(&Module) -> Result<(), String>>;

fn main() {
    let pick = match text_arg("--only") {
        Some(text) => Pick::Matching(text),
        None => Pick::Sample {
            count: arg("--count", 100),
            seed: arg("--seed", 1) as u64,
        },
    };
    let design = text_arg("--design").unwrap_or_else(|| "panama".into());
    let (top, check) = match subject(&design) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("--design {design}: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = check(&top) {
        eprintln!("the unmutated design fails the check: {e}");
        std::process::exit(1);
    }
    let start = Instant::now();
    let mut done = 0;
    let c = campaign(&top, &pick, &check, |t| {
        done += 1;
        match &t.outcome {
            Outcome::Survived => println!("{done:>4} survived  {}", t.site.describe()),
            Outcome::Killed(why) => {
                println!("{done:>4} killed    {} ({why})", t.site.describe())
            }
        }
    });
    println!(
        "\n{} of {} sites of `{}` tried ({pick:?}) in {:.1} s",
        c.trials.len(),
        c.sites.values().sum::<usize>(),
        top.name,
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

/// The design named `name` and its check.
fn subject(name: &str) -> Result<(Module, Check), String> {
    match name {
        "panama" => {
            let cfg = PanamaConfig {
                fifo_depth: 4,
                ..PanamaConfig::new(256, &SUME_PORTS)
            };
            let core = panama_core(&cfg).map_err(|e| e.to_string())?;
            Ok((core, Box::new(move |m| panama::check(&cfg, m))))
        }
        "lightning" | "lightning-stream" => {
            let weights = match name {
                "lightning" => WeightSource::Memory,
                _ => WeightSource::Stream,
            };
            let s = Subject::new(weights)?;
            Ok((s.module.clone(), Box::new(move |m| lightning::check(&s, m))))
        }
        "lightning-top" => {
            let s = TopSubject::new()?;
            Ok((s.module.clone(), Box::new(move |m| check_top(&s, m))))
        }
        "fp-add" => {
            let cfg = adder_config()?;
            let adder = fp_add(&cfg).map_err(|e| e.to_string())?;
            Ok((adder, Box::new(move |m| fp_adder::check(&cfg, m))))
        }
        "fp-add-tree" => {
            let cfg = FpTreeConfig {
                inputs: arg("--inputs", 5) as u32,
                lanes: arg("--lanes", 4) as u32,
                adder: adder_config()?,
            };
            let tree = fp_add_tree(&cfg).map_err(|e| e.to_string())?;
            Ok((tree, Box::new(move |m| fp_adder::check_tree(&cfg, m))))
        }
        _ => Err(
            "not a design: panama, lightning, lightning-stream, lightning-top, \
                  fp-add or fp-add-tree"
                .into(),
        ),
    }
}

/// The adder of `fp-add` and `fp-add-tree`: `--format` (default fp32),
/// `--stages` (default 5, PANAMA's) and `--ftz`.
fn adder_config() -> Result<FpAddConfig, String> {
    let format = text_arg("--format").unwrap_or_else(|| "fp32".into());
    Ok(FpAddConfig {
        format: format
            .parse()
            .map_err(|e| format!("--format {format}: {e}"))?,
        stages: arg("--stages", 5) as u32,
        ftz: std::env::args().any(|a| a == "--ftz"),
    })
}

fn arg(name: &str, default: usize) -> usize {
    text_arg(name)
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

fn text_arg(name: &str) -> Option<String> {
    std::env::args().skip_while(|a| a != name).nth(1)
}
