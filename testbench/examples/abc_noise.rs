//! How far Yosys' resource counts move when only the text moves: each design's
//! netlist-style Verilog (`EmitOptions { inline: false, locators: false, .. }`, one
//! wire per operation) is synthesized as emitted, after `K` random renamings (the
//! `_nNNN` names of each file permuted among themselves) and after `K` random
//! reorderings (every `wire x = e;` split into `wire x;` in place and `assign x = e;`,
//! and all continuous assignments moved to the end of the module in a random order),
//! pure text changes with identical logic (each reordering proven equivalent with
//! `gen::toolchain::yosys_equiv` first); and the default (inlined, named) Verilog as
//! emitted and after `K` reorderings. All with `yosys synth_xilinx -family xcup
//! -flatten -noiopad`. Prints each run and a table of the LUT / FF / CARRY spread
//! (min, max, mean) of each kind of change, with the default's counts and whether its
//! LUT count falls inside the netlist style's spreads.
//!
//! `scripts/abc-noise [K]` (K = 8 by default; `WIRESPEED_SEED` picks other renamings and
//! reorderings).

use clap::Parser;
use gen::toolchain::{self, SynthReport};
use gen::{emit_with, Design, EmitOptions};
use hdl::blocks::fifo;
use hdl::blocks::fp::{fp_add, FpAddConfig, FpFormat};
use hdl::panama::parser::{parser, ParserConfig};
use hdl::Module;
use rand::seq::SliceRandom;
use rand::Rng;
use std::collections::HashMap;

/// True for a character that may continue a Verilog identifier.
fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// True for an emitter-made wire name: `_n` and digits.
fn is_net_name(word: &str) -> bool {
    word.strip_prefix("_n")
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// `text` split into identifiers and the runs of other characters between them.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_word = false;
    for (i, c) in text.char_indices() {
        let word_char = if in_word {
            ident_char(c)
        } else {
            ident_char(c) && !c.is_ascii_digit()
        };
        if word_char != in_word {
            if i > start {
                out.push(&text[start..i]);
            }
            start = i;
            in_word = word_char;
        }
    }
    out.push(&text[start..]);
    out
}

/// `text` with its `_nNNN` names permuted at random among themselves.
fn renamed(text: &str, rng: &mut impl Rng) -> String {
    let toks = tokens(text);
    let mut names: Vec<&str> = Vec::new();
    for t in &toks {
        if is_net_name(t) && !names.contains(t) {
            names.push(t);
        }
    }
    let mut shuffled = names.clone();
    shuffled.shuffle(rng);
    let map: HashMap<&str, &str> = names.into_iter().zip(shuffled).collect();
    toks.iter().map(|t| *map.get(t).unwrap_or(t)).collect()
}

/// `text` with its continuous assignments in a random order: each single-line
/// `wire [..] x = e;` becomes `wire [..] x;` where it stood (with its source locator,
/// if any) and `assign x = e;`, and every single-line `assign` moves, shuffled, to
/// just before `endmodule`.
fn reordered(text: &str, rng: &mut impl Rng) -> String {
    let mut kept: Vec<String> = Vec::new();
    let mut assigns: Vec<String> = Vec::new();
    for line in text.lines() {
        // A source locator (`; // @[file.rs:line]`) stays with the declaration.
        let (code, comment) = line
            .split_once("; // ")
            .map_or((line, String::new()), |(c, r)| (c, format!(" // {r}")));
        let code = code.strip_suffix(';').unwrap_or(code);
        let statement = line.trim_end().ends_with(';') || !comment.is_empty();
        if line.starts_with("    wire ") && statement {
            if let Some((decl, value)) = code.trim_start().split_once(" = ") {
                let name = decl.split_whitespace().last().unwrap_or_default();
                kept.push(format!("    {decl};{comment}"));
                assigns.push(format!("    assign {name} = {value};"));
                continue;
            }
        }
        if line.starts_with("    assign ") && statement {
            assigns.push(format!("{code};"));
            continue;
        }
        let body = line.trim_start();
        if body == "endmodule" {
            assigns.shuffle(rng);
            kept.append(&mut assigns);
        }
        kept.push(line.to_string());
    }
    kept.join("\n") + "\n"
}

/// Checks with Yosys that the reordered `changed` is still `original`'s logic (its
/// names are the same, so every one of them is compared).
fn prove_same(name: &str, original: &Design, changed: &Design) {
    let (gold, gate) = (write(original), write(changed));
    toolchain::yosys_equiv(&[gold.path()], &[gate.path()], &original.top)
        .unwrap_or_else(|e| panic!("{name}: the reordering changed the logic: {e}"));
}

/// Writes `design`'s files into a fresh temporary directory.
fn write(design: &Design) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("wirespeed-abc-noise-")
        .tempdir()
        .expect("temp dir");
    for (name, text) in &design.files {
        std::fs::write(dir.path().join(name), text).expect("write Verilog");
    }
    dir
}

/// Synthesizes `design`'s files.
fn synth(design: &Design) -> Result<SynthReport, toolchain::ToolError> {
    let dir = write(design);
    toolchain::yosys_synth_xilinx(&[dir.path()], &design.top, "xcup")
}

/// min / max / mean of `v`, as a table cell.
fn spread(v: &[u64]) -> String {
    let (min, max) = (v.iter().min().unwrap_or(&0), v.iter().max().unwrap_or(&0));
    let mean = v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
    let pct = if mean > 0.0 {
        100.0 * (*max - *min) as f64 / mean
    } else {
        0.0
    };
    format!("{min}–{max} (mean {mean:.1}, {pct:.1} %)")
}

/// One design's runs, printed as they finish; returns its summary rows (one per kind
/// of change).
fn measure(name: &str, m: &Module, k: usize, rng: &mut impl Rng) -> String {
    let netlist = emit_with(
        m,
        &EmitOptions {
            inline: false,
            locators: false,
            top_note: None,
        },
    )
    .expect("emits");
    let default = gen::emit(m).expect("emits");
    let mut runs: Vec<(&str, SynthReport)> = Vec::new();
    let mut run = |kind: &'static str, label: String, d: &Design| {
        let r = synth(d).unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!(
            "{name:<18} {label:<20} LUT {:>6} FF {:>6} CARRY {:>4}",
            r.luts, r.ffs, r.carries
        );
        runs.push((kind, r));
    };
    run("as emitted", "netlist as emitted".into(), &netlist);
    for i in 1..=k {
        let mut d = netlist.clone();
        for (_, text) in &mut d.files {
            *text = renamed(text, rng);
        }
        run("renamed", format!("renaming {i}"), &d);
    }
    for i in 1..=k {
        let mut d = netlist.clone();
        for (_, text) in &mut d.files {
            *text = reordered(text, rng);
        }
        prove_same(name, &netlist, &d);
        run("reordered", format!("reordering {i}"), &d);
    }
    run("default", "default".into(), &default);
    for i in 1..=k {
        let mut d = default.clone();
        for (_, text) in &mut d.files {
            *text = reordered(text, rng);
        }
        prove_same(name, &default, &d);
        run("default reordered", format!("default reordering {i}"), &d);
    }
    let col = |kinds: &[&str], f: fn(&SynthReport) -> u64| -> Vec<u64> {
        runs.iter()
            .filter(|(kind, _)| kinds.contains(kind))
            .map(|(_, r)| f(r))
            .collect()
    };
    let d = &runs
        .iter()
        .find(|(kind, _)| *kind == "default")
        .expect("the default ran")
        .1;
    let mut rows = Vec::new();
    for (label, kinds) in [
        ("as emitted + renamed", &["as emitted", "renamed"][..]),
        ("as emitted + reordered", &["as emitted", "reordered"][..]),
        ("default + reordered", &["default", "default reordered"][..]),
    ] {
        let (luts, ffs, carries) = (
            col(kinds, |r| r.luts),
            col(kinds, |r| r.ffs),
            col(kinds, |r| r.carries),
        );
        rows.push(format!(
            "| {name} | {label} | {} | {} | {} | {} / {} / {} | {} |",
            spread(&luts),
            spread(&ffs),
            spread(&carries),
            d.luts,
            d.ffs,
            d.carries,
            if kinds.contains(&"default") {
                "—".to_string()
            } else {
                inside(&luts, d.luts)
            }
        ));
    }
    rows.join("\n")
}

/// "yes" if `x` lies within `v`'s range, else how far it is from `v`'s mean.
fn inside(v: &[u64], x: u64) -> String {
    let (lo, hi) = (*v.iter().min().unwrap_or(&0), *v.iter().max().unwrap_or(&0));
    if (lo..=hi).contains(&x) {
        "yes".to_string()
    } else {
        let mean = v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
        format!(
            "no ({:+.1} % from the mean)",
            100.0 * (x as f64 - mean) / mean
        )
    }
}

/// The command line.
#[derive(Parser)]
#[command(about = "How far Yosys' resource counts move when only the text moves")]
struct Args {
    /// Random renamings and reorderings of each kind, per design.
    #[arg(default_value_t = 8)]
    k: usize,
}

fn main() {
    let k = Args::parse().k;
    let mut rng = testbench::rng::seeded("abc_noise", 1);
    let bf16 = fp_add(&FpAddConfig {
        format: FpFormat::Bf16,
        stages: 2,
        ftz: false,
    })
    .expect("valid parameters");
    let designs: [(&str, Module); 3] = [
        ("fp-add bf16 p2", bf16),
        (
            "fifo 32x512",
            fifo::sync_fifo(32, 512).expect("valid parameters"),
        ),
        (
            "panama parser w256",
            parser(&ParserConfig::default()).expect("valid parameters"),
        ),
    ];
    let rows: Vec<String> = designs
        .iter()
        .map(|(name, m)| measure(name, m, k, &mut rng))
        .collect();
    println!(
        "\nYosys synth_xilinx -family xcup, min–max (mean, spread in % of the mean): the \
         netlist style as emitted and {k} renamings, as emitted and {k} reorderings; the \
         default output as emitted and {k} reorderings:\n"
    );
    println!(
        "| design | Verilog | LUT | FF | CARRY | default LUT / FF / CARRY | default LUT inside |"
    );
    println!("|---|---|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
}
