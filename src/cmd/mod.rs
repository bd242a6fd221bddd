//! The subcommands of `wirespeed`, one file each: they parse their options, call
//! the crates (the catalog, `gen`, `testbench`) and print.

pub mod gen;
pub mod list;
pub mod sim_chaos;
pub mod sim_lightning;
pub mod sim_panama;
pub mod synth;

use indicatif::{ProgressBar, ProgressStyle};
use testbench::engine::{Engine, Progress};

/// The `--engine` option of the `sim` commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// wirespeed's own simulator, compiled to native code at load time (its
    /// program and native code kept in `<target dir>/compiled-engine-cache` for
    /// the next run of the same design).
    Native,
    /// Native, waiting for its compiled engines instead of starting on the
    /// interpreter while they are built: the engine before the first cycle, the
    /// one tuned from its profile when the profile is complete. Every run then
    /// runs each cycle on the same engine (for counted profiles; see
    /// `scripts/engine-profile`).
    Compiled,
    /// wirespeed's own simulator on its interpreter (the reference engine).
    Interpreted,
    /// Verilator on the emitted Verilog.
    Verilator,
    /// Native and Verilator, one after the other on the same stimulus: the results
    /// must be identical; reports both speeds and their ratio.
    Both,
    /// Native, interpreted and Verilator on the same stimulus: the results must be
    /// identical; reports every speed against Verilator's.
    All,
}

impl From<EngineArg> for Engine {
    fn from(arg: EngineArg) -> Engine {
        match arg {
            EngineArg::Native => Engine::Native,
            EngineArg::Compiled => Engine::Compiled,
            EngineArg::Interpreted => Engine::Interpreted,
            EngineArg::Verilator => Engine::Verilator,
            EngineArg::Both => Engine::Both,
            EngineArg::All => Engine::All,
        }
    }
}

/// With `--perf-map`: starts the perf map of the compiled engines (see
/// [`sim::enable_perf_map`]) and prints its path; an error if `engine` runs no
/// compiled engine, whose map would stay empty.
pub fn start_perf_map(on: bool, engine: EngineArg) -> anyhow::Result<()> {
    if !on {
        return Ok(());
    }
    let engine = Engine::from(engine);
    let compiles = engine
        .engines()
        .iter()
        .any(|e| matches!(e, Engine::Native | Engine::Compiled));
    if !compiles {
        anyhow::bail!(
            "--perf-map maps the native engine's compiled code; --engine {} runs none",
            engine.name()
        );
    }
    let path = sim::enable_perf_map()?;
    println!("perf map: {}", path.display());
    Ok(())
}

/// With `--vcd PATH`: an error naming the flag unless PATH's folder exists, so that a
/// run is refused before it starts rather than after it has simulated.
pub fn check_trace_path(vcd: Option<&std::path::Path>) -> anyhow::Result<()> {
    let Some(path) = vcd else {
        return Ok(());
    };
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    if !folder.is_dir() {
        anyhow::bail!(
            "--vcd {}: the folder `{}` does not exist",
            path.display(),
            folder.display()
        );
    }
    if path.is_dir() {
        anyhow::bail!("--vcd {}: a folder; give a file name", path.display());
    }
    Ok(())
}

/// Shows a run's progress as a bar on stderr (with several engines taking turns,
/// the first engine's); `unit` names the steps (`input beats`, `frames`).
pub fn show_progress(bar: &mut Option<ProgressBar>, p: Progress, unit: &str) {
    match p {
        Progress::Start { engine, total } => {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template(&format!(
                    "{{bar:40}} {{pos}}/{{len}} {unit}  {{elapsed}}  {{msg}}"
                ))
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.set_message(format!("{engine:?}"));
            *bar = Some(b);
        }
        Progress::At(n) => {
            if let Some(b) = bar {
                b.set_position(n);
            }
        }
        Progress::Done => {
            if let Some(b) = bar.take() {
                b.finish_and_clear();
            }
        }
    }
}
