//! Test strength by mutation (QUALITY.md, "Test strength"): samples mutation
//! sites of a design, applies each alone, runs the design's mutant check on the
//! mutant on the native simulator, and prints every survivor with the generator
//! line it mutates, and the score by kind. A survivor is a one-line generator
//! mistake the check misses, or a mutant equivalent to the design.
//!
//! `cargo run --release -p testbench --example mutants [-- --design D] [--count N] [--seed S]`
//! (defaults `panama`, 100 sites, seed 1), or `… -- --only TEXT` for every site
//! whose description contains TEXT (e.g. `queues.rs:143`); `-- --help` lists the
//! options, and an unknown option or a value that does not parse is an error
//! naming it. Designs:
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

use clap::{Parser, ValueEnum};
use hdl::blocks::fp::{fp_add, fp_add_tree, FpAddConfig, FpFormat, FpTreeConfig};
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

/// The command line.
#[derive(Parser)]
#[command(about = "Mutation sites of a design tried against its check")]
struct Args {
    /// The design to mutate.
    #[arg(long, value_enum, default_value_t = Design::Panama)]
    design: Design,
    /// Sites sampled (without `--only`).
    #[arg(long, default_value_t = 100)]
    count: usize,
    /// The sample's seed (without `--only`).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Every site whose description contains this text (e.g. `queues.rs:143`),
    /// instead of a sample.
    #[arg(long)]
    only: Option<String>,
    /// `fp-add`, `fp-add-tree`: the adder's format.
    #[arg(long, default_value = "fp32")]
    format: FpFormat,
    /// `fp-add`, `fp-add-tree`: the adder's pipeline stages (5 is PANAMA's).
    #[arg(long, default_value_t = 5)]
    stages: u32,
    /// `fp-add`, `fp-add-tree`: subnormal inputs and results flushed to zero.
    #[arg(long)]
    ftz: bool,
    /// `fp-add-tree`: operands a lane (5 carries an odd one past a level).
    #[arg(long, default_value_t = 5)]
    inputs: u32,
    /// `fp-add-tree`: lanes.
    #[arg(long, default_value_t = 4)]
    lanes: u32,
}

/// The designs this example mutates.
#[derive(Clone, Copy, ValueEnum)]
enum Design {
    Panama,
    Lightning,
    LightningStream,
    LightningTop,
    FpAdd,
    FpAddTree,
}

fn main() {
    let args = Args::parse();
    let pick = match &args.only {
        Some(text) => Pick::Matching(text.clone()),
        None => Pick::Sample {
            count: args.count,
            seed: args.seed,
        },
    };
    let (top, check) = match subject(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("--design {}: {e}", args.design.name());
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

impl Design {
    /// The name `--design` takes.
    fn name(self) -> String {
        let value = self.to_possible_value();
        value.expect("no design is skipped").get_name().to_owned()
    }
}

/// The design `args` name and its check.
fn subject(args: &Args) -> Result<(Module, Check), String> {
    let adder = FpAddConfig {
        format: args.format,
        stages: args.stages,
        ftz: args.ftz,
    };
    match args.design {
        Design::Panama => {
            let cfg = PanamaConfig {
                fifo_depth: 4,
                ..PanamaConfig::new(256, &SUME_PORTS)
            };
            let core = panama_core(&cfg).map_err(|e| e.to_string())?;
            Ok((core, Box::new(move |m| panama::check(&cfg, m))))
        }
        Design::Lightning | Design::LightningStream => {
            let weights = match args.design {
                Design::Lightning => WeightSource::Memory,
                _ => WeightSource::Stream,
            };
            let s = Subject::new(weights)?;
            Ok((s.module.clone(), Box::new(move |m| lightning::check(&s, m))))
        }
        Design::LightningTop => {
            let s = TopSubject::new()?;
            Ok((s.module.clone(), Box::new(move |m| check_top(&s, m))))
        }
        Design::FpAdd => {
            let block = fp_add(&adder).map_err(|e| e.to_string())?;
            Ok((block, Box::new(move |m| fp_adder::check(&adder, m))))
        }
        Design::FpAddTree => {
            let cfg = FpTreeConfig {
                inputs: args.inputs,
                lanes: args.lanes,
                adder,
            };
            let tree = fp_add_tree(&cfg).map_err(|e| e.to_string())?;
            Ok((tree, Box::new(move |m| fp_adder::check_tree(&cfg, m))))
        }
    }
}
