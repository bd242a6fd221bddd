//! The external EDA tools on generated Verilog: Verilator lint (`-Wall`), Icarus
//! Verilog compile and simulation, Verilator-built simulation binaries and Yosys
//! synthesis for Xilinx parts with its report ([`SynthReport`], [`lut_levels`]), and
//! Yosys' equivalence check of two designs ([`yosys_equiv`]).
//! `wirespeed synth` and the tests run them alike; a cancel flag
//! ([`set_cancel_flag`]) stops a running tool.
//!
//! Every tool runs in a fresh temporary directory that is removed afterwards. A tool that
//! is not installed is an error whose message says how to install it; warnings of
//! Verilator and Icarus Verilog are errors carrying the tool's text. Nothing is skipped
//! silently.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub mod lut_levels;

/// The command that installs every tool used here (Debian/Ubuntu).
pub const INSTALL_HINT: &str = "apt-get install -y verilator iverilog yosys";

/// Why a tool run did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The tool could not be started.
    #[error("`{tool}` could not be run ({reason}); install the tools with `{INSTALL_HINT}`")]
    Missing {
        /// Program name.
        tool: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The tool ran and reported warnings (treated as errors).
    #[error("{tool} reported warnings for `{top}`:\n{output}")]
    Warnings {
        /// Program name.
        tool: String,
        /// Top module checked.
        top: String,
        /// The tool's messages.
        output: String,
    },
    /// The tool failed (errors, or a non-zero exit status).
    #[error("{tool} failed for `{top}` ({status}):\n{output}")]
    Failed {
        /// Program name.
        tool: String,
        /// Top module concerned.
        top: String,
        /// Exit status, as text.
        status: String,
        /// The tool's output (stdout and stderr).
        output: String,
    },
    /// The run was cancelled (Ctrl-C) and the tool killed.
    #[error("interrupted; `{0}` was stopped")]
    Interrupted(String),
    /// No Verilog source was given, or a directory held none.
    #[error("no Verilog sources: {0}")]
    NoSources(String),
    /// A file or directory could not be read or created.
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path concerned.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// Yosys could not prove two designs equivalent ([`yosys_equiv`]).
    #[error(
        "yosys could not prove `{top}` equivalent: {unproven} unproven signal bits:\n{output}"
    )]
    NotEquivalent {
        /// Top module compared.
        top: String,
        /// How many `$equiv` cells (matched signal bits) stayed unproven.
        unproven: u64,
        /// Yosys' `Unproven $equiv` lines (the signals that differ or could not be shown
        /// equal).
        output: String,
    },
    /// A tool's report could not be understood.
    #[error("cannot read {tool}'s report for `{top}`: {reason}")]
    Report {
        /// Program name.
        tool: String,
        /// Top module concerned.
        top: String,
        /// What was wrong with it.
        reason: String,
    },
}

/// The Verilog files named by `paths`: a file stands for itself, a directory for the
/// `.v` files directly in it (sorted by name). Paths are made absolute, since the tools
/// run in a temporary directory.
pub fn verilog_sources<P: AsRef<Path>>(paths: &[P]) -> Result<Vec<PathBuf>, ToolError> {
    let mut out = Vec::new();
    for p in paths {
        let p = p.as_ref();
        let abs = std::path::absolute(p).map_err(|source| ToolError::Io {
            action: "resolve",
            path: p.to_path_buf(),
            source,
        })?;
        if abs.is_dir() {
            let entries = std::fs::read_dir(&abs).map_err(|source| ToolError::Io {
                action: "list directory",
                path: abs.clone(),
                source,
            })?;
            let mut files = Vec::new();
            for e in entries {
                let e = e.map_err(|source| ToolError::Io {
                    action: "list directory",
                    path: abs.clone(),
                    source,
                })?;
                let path = e.path();
                if path.extension().is_some_and(|x| x == "v") && path.is_file() {
                    files.push(path);
                }
            }
            if files.is_empty() {
                return Err(ToolError::NoSources(format!(
                    "`{}` has no .v files",
                    abs.display()
                )));
            }
            files.sort();
            out.extend(files);
        } else if abs.is_file() {
            out.push(abs);
        } else {
            return Err(ToolError::Io {
                action: "find",
                path: abs,
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            });
        }
    }
    if out.is_empty() {
        return Err(ToolError::NoSources("no paths given".into()));
    }
    Ok(out)
}

/// A fresh temporary working directory for one tool run.
fn work_dir(tool: &str) -> Result<tempfile::TempDir, ToolError> {
    tempfile::Builder::new()
        .prefix(&format!("wirespeed-{tool}-"))
        .tempdir()
        .map_err(|source| ToolError::Io {
            action: "create a temporary directory in",
            path: std::env::temp_dir(),
            source,
        })
}

/// The flag that, once raised, makes [`run`] kill the tool it waits for.
static CANCEL: std::sync::OnceLock<&'static AtomicBool> = std::sync::OnceLock::new();

/// Hands the tool runner a cancel flag (e.g. raised by a Ctrl-C handler): a tool
/// running when it is raised is killed and its call returns [`ToolError::Interrupted`],
/// so that the caller's temporary folders are cleaned up. The first call wins.
pub fn set_cancel_flag(flag: &'static AtomicBool) {
    let _ = CANCEL.set(flag);
}

fn cancelled() -> bool {
    CANCEL.get().is_some_and(|f| f.load(Ordering::SeqCst))
}

/// Runs `cmd` in `dir`; a tool that cannot be started is `Missing`. Its stdout and
/// stderr go to files in `dir` (so no pipe can fill up while it is polled); if the
/// cancel flag (see [`set_cancel_flag`]) is raised, the tool is killed.
fn run(tool: &str, cmd: &mut Command, dir: &Path) -> Result<Output, ToolError> {
    if cancelled() {
        return Err(ToolError::Interrupted(tool.to_string()));
    }
    let io = |action: &'static str, path: PathBuf| {
        move |source| ToolError::Io {
            action,
            path,
            source,
        }
    };
    let out_path = dir.join(format!(".{tool}.stdout").replace(' ', "-"));
    let err_path = dir.join(format!(".{tool}.stderr").replace(' ', "-"));
    let stdout = File::create(&out_path).map_err(io("create", out_path.clone()))?;
    let stderr = File::create(&err_path).map_err(io("create", err_path.clone()))?;
    let mut child = cmd
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .map_err(|e| ToolError::Missing {
            tool: tool.to_string(),
            reason: e.to_string(),
        })?;
    let status = loop {
        let exited = child
            .try_wait()
            .map_err(io("wait for", PathBuf::from(tool)))?;
        // Checked after `try_wait`: a tool that a terminal's Ctrl-C ended too (same
        // process group) is reported as interrupted, not as failed.
        if cancelled() {
            if exited.is_none() {
                let _ = child.kill();
                let _ = child.wait();
            }
            return Err(ToolError::Interrupted(tool.to_string()));
        }
        match exited {
            Some(status) => break status,
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    Ok(Output {
        status,
        stdout: std::fs::read(&out_path).map_err(io("read", out_path))?,
        stderr: std::fs::read(&err_path).map_err(io("read", err_path))?,
    })
}

/// stdout and stderr of `out` as one text.
fn text_of(out: &Output) -> String {
    let mut s = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr);
    if !err.is_empty() {
        if !s.is_empty() && !s.ends_with('\n') {
            s.push('\n');
        }
        s.push_str(&err);
    }
    s
}

fn failed(tool: &str, top: &str, out: &Output) -> ToolError {
    ToolError::Failed {
        tool: tool.to_string(),
        top: top.to_string(),
        status: out.status.to_string(),
        output: text_of(out),
    }
}

/// `verilator --lint-only -Wall --top-module top` on the sources; any warning is an error.
pub fn verilator_lint<P: AsRef<Path>>(paths: &[P], top: &str) -> Result<(), ToolError> {
    let files = verilog_sources(paths)?;
    let dir = work_dir("verilator")?;
    let out = run(
        "verilator",
        Command::new("verilator")
            .args(["--lint-only", "-Wall", "--top-module", top])
            .args(&files),
        dir.path(),
    )?;
    let text = text_of(&out);
    if text.contains("%Warning") {
        return Err(ToolError::Warnings {
            tool: "verilator".into(),
            top: top.into(),
            output: text,
        });
    }
    if !out.status.success() || text.contains("%Error") {
        return Err(failed("verilator", top, &out));
    }
    Ok(())
}

/// `verilator --cc -Wall --top-module top` on the sources, without compiling the C++:
/// the whole Verilator pipeline, so warnings `--lint-only` cannot see (such as
/// UNOPTFLAT, from scheduling) are found too. Any warning is an error.
pub fn verilator_verilate<P: AsRef<Path>>(paths: &[P], top: &str) -> Result<(), ToolError> {
    let files = verilog_sources(paths)?;
    let dir = work_dir("verilator")?;
    let out = run(
        "verilator",
        Command::new("verilator")
            .args(["--cc", "-Wall", "--top-module", top, "--Mdir"])
            .arg(dir.path().join("obj"))
            .args(&files),
        dir.path(),
    )?;
    let text = text_of(&out);
    if text.contains("%Warning") {
        return Err(ToolError::Warnings {
            tool: "verilator".into(),
            top: top.into(),
            output: text,
        });
    }
    if !out.status.success() || text.contains("%Error") {
        return Err(failed("verilator", top, &out));
    }
    Ok(())
}

/// Compiles with `iverilog -g2005 -Wall -s top` into `dir/sim.vvp`.
fn iverilog_into(files: &[PathBuf], top: &str, dir: &Path) -> Result<PathBuf, ToolError> {
    let vvp = dir.join("sim.vvp");
    let out = run(
        "iverilog",
        Command::new("iverilog")
            .args(["-g2005", "-Wall", "-s", top, "-o"])
            .arg(&vvp)
            .args(files),
        dir,
    )?;
    let text = text_of(&out);
    if !out.status.success() {
        return Err(failed("iverilog", top, &out));
    }
    if text.to_lowercase().contains("warning") {
        return Err(ToolError::Warnings {
            tool: "iverilog".into(),
            top: top.into(),
            output: text,
        });
    }
    Ok(vvp)
}

/// `iverilog -g2005 -Wall -s top` on the sources; any warning is an error.
pub fn iverilog_compile<P: AsRef<Path>>(paths: &[P], top: &str) -> Result<(), ToolError> {
    let files = verilog_sources(paths)?;
    let dir = work_dir("iverilog")?;
    iverilog_into(&files, top, dir.path()).map(|_| ())
}

/// Compiles the sources with Icarus Verilog (top `top`, usually a test bench), runs the
/// result with `vvp -n` and returns what it printed on stdout.
pub fn iverilog_run<P: AsRef<Path>>(paths: &[P], top: &str) -> Result<String, ToolError> {
    let files = verilog_sources(paths)?;
    let dir = work_dir("iverilog")?;
    let vvp = iverilog_into(&files, top, dir.path())?;
    let out = run("vvp", Command::new("vvp").arg("-n").arg(&vvp), dir.path())?;
    if !out.status.success() {
        return Err(failed("vvp", top, &out));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Builds the sources into a simulation binary with `verilator --binary` (top `top`,
/// usually a test bench using delays), runs it and returns what it printed on stdout.
/// Verilator's default warnings are errors; `-Wall` is for [`verilator_lint`].
pub fn verilator_run<P: AsRef<Path>>(paths: &[P], top: &str) -> Result<String, ToolError> {
    let files = verilog_sources(paths)?;
    let dir = work_dir("verilator")?;
    let out = run(
        "verilator",
        Command::new("verilator")
            .args(["--binary", "-j", "2", "--top-module", top, "-o", "sim"])
            .arg("--Mdir")
            .arg(dir.path().join("obj"))
            .args(&files),
        dir.path(),
    )?;
    if !out.status.success() {
        return Err(failed("verilator", top, &out));
    }
    if text_of(&out).contains("%Warning") {
        return Err(ToolError::Warnings {
            tool: "verilator".into(),
            top: top.into(),
            output: text_of(&out),
        });
    }
    let bin = dir.path().join("obj").join("sim");
    let out = run("verilated binary", &mut Command::new(&bin), dir.path())?;
    if !out.status.success() {
        return Err(failed("verilated binary", top, &out));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Cell counts of a Yosys synthesis for a Xilinx family.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SynthReport {
    /// Every cell type and its count, as `stat` reports them.
    pub cells: BTreeMap<String, u64>,
    /// LUT1 … LUT6.
    pub luts: u64,
    /// Flip-flops: FDRE, FDSE, FDCE, FDPE.
    pub ffs: u64,
    /// Carry chains: CARRY4, CARRY8.
    pub carries: u64,
    /// DSP slices: DSP48E1, DSP48E2.
    pub dsps: u64,
    /// 18 Kb block RAMs: RAMB18E1, RAMB18E2.
    pub ramb18: u64,
    /// 36 Kb block RAMs: RAMB36E1, RAMB36E2.
    pub ramb36: u64,
    /// Distributed (LUT) RAM and shift-register cells: RAM32M, RAM64M, RAMxxXy, SRL16E, SRLC32E.
    pub lutrams: u64,
    /// Logic depth: cells (LUTs, MUXFx, carry blocks) on the longest combinational path
    /// between ports, flip-flops, shift registers, RAMs and DSPs (`ltp`), if reported.
    pub logic_depth: Option<u64>,
    /// LUT levels: LUTs on the longest combinational path (carry chains and MUXFx count
    /// 0), see [`lut_levels`], if the netlist could be read.
    pub lut_levels: Option<u64>,
    /// Yosys' `Warning:` lines.
    pub warnings: Vec<String>,
}

impl SynthReport {
    /// The count of cell type `name` (0 if absent).
    pub fn count(&self, name: &str) -> u64 {
        self.cells.get(name).copied().unwrap_or(0)
    }

    /// Block RAM in 36 Kb units (a RAMB18 is half).
    pub fn bram36_equivalent(&self) -> f64 {
        self.ramb36 as f64 + self.ramb18 as f64 / 2.0
    }

    /// Builds a report from the `design` section of `stat -json` output.
    pub fn from_stat_json(json: &str) -> Result<Self, String> {
        let v: Value = serde_json::from_str(json).map_err(|e| format!("stat -json: {e}"))?;
        let by_type = v
            .get("design")
            .and_then(|d| d.get("num_cells_by_type"))
            .and_then(Value::as_object)
            .ok_or("stat -json has no design.num_cells_by_type")?;
        let mut r = SynthReport::default();
        for (name, n) in by_type {
            let n = n
                .as_u64()
                .ok_or_else(|| format!("count of {name} is not a number"))?;
            r.cells.insert(name.clone(), n);
        }
        let sum = |pred: &dyn Fn(&str) -> bool| -> u64 {
            r.cells
                .iter()
                .filter(|(k, _)| pred(k))
                .map(|(_, n)| *n)
                .sum()
        };
        r.luts = sum(&|k| matches!(k, "LUT1" | "LUT2" | "LUT3" | "LUT4" | "LUT5" | "LUT6"));
        r.ffs = sum(&|k| matches!(k, "FDRE" | "FDSE" | "FDCE" | "FDPE"));
        r.carries = sum(&|k| matches!(k, "CARRY4" | "CARRY8"));
        r.dsps = sum(&|k| k.starts_with("DSP48"));
        r.ramb18 = sum(&|k| k.starts_with("RAMB18"));
        r.ramb36 = sum(&|k| k.starts_with("RAMB36"));
        r.lutrams =
            sum(&|k| (k.starts_with("RAM") && !k.starts_with("RAMB")) || k.starts_with("SRL"));
        Ok(r)
    }
}

/// Synthesizes the sources with `yosys synth_xilinx -family <family> -top <top> -flatten
/// -noiopad` (out-of-context: no I/O buffers) and reports cell counts and logic depth.
/// `family` is Yosys' name, e.g. `xcup` (UltraScale+), `xcu`, `xc7`.
pub fn yosys_synth_xilinx<P: AsRef<Path>>(
    paths: &[P],
    top: &str,
    family: &str,
) -> Result<SynthReport, ToolError> {
    synth_xilinx(paths, top, family, true)
}

/// As [`yosys_synth_xilinx`] but keeping the hierarchy: every module is
/// synthesized once and the report sums the cells over all instances. Much faster
/// for designs that repeat a large module (an adder tree), with no optimisation
/// across module boundaries and no logic depth in the report.
pub fn yosys_synth_xilinx_hierarchical<P: AsRef<Path>>(
    paths: &[P],
    top: &str,
    family: &str,
) -> Result<SynthReport, ToolError> {
    synth_xilinx(paths, top, family, false)
}

fn synth_xilinx<P: AsRef<Path>>(
    paths: &[P],
    top: &str,
    family: &str,
    flatten: bool,
) -> Result<SynthReport, ToolError> {
    let files = verilog_sources(paths)?;
    let dir = work_dir("yosys")?;
    let mut script = String::new();
    for f in &files {
        let _ = writeln!(script, "read_verilog -defer \"{}\"", f.display());
    }
    let flatten_flag = if flatten { " -flatten" } else { "" };
    let _ = writeln!(
        script,
        "synth_xilinx -family {family} -top {top}{flatten_flag} -noiopad"
    );
    if !flatten {
        // Yosys 0.23 writes invalid JSON for a hierarchical `stat -json`; inlining
        // the mapped modules afterwards changes no cell and gives the totals.
        script.push_str("flatten\n");
    }
    script.push_str("tee -q -o stat.json stat -json\n");
    if flatten {
        // Logic depth: the longest path through combinational cells only (every
        // state element, block RAM, DSP and clock buffer removed from the
        // selection, so paths start and end there or at ports).
        script.push_str("write_json netlist.json\n");
        script.push_str(
            "tee -q -o ltp.txt ltp -noff w:* t:* %u t:FD* %d t:SRL* %d t:RAM* %d t:DSP* %d t:BUFG* %d\n",
        );
    }
    let out = run_yosys_script(dir.path(), "synth.ys", &script)?;
    if !out.status.success() {
        return Err(failed("yosys", top, &out));
    }
    let report_err = |reason: String| ToolError::Report {
        tool: "yosys".into(),
        top: top.into(),
        reason,
    };
    let stat = std::fs::read_to_string(dir.path().join("stat.json"))
        .map_err(|e| report_err(format!("stat.json: {e}")))?;
    let mut report = SynthReport::from_stat_json(&stat).map_err(report_err)?;
    if let Ok(ltp) = std::fs::read_to_string(dir.path().join("ltp.txt")) {
        report.logic_depth = ltp
            .split("length=")
            .nth(1)
            .and_then(|rest| rest.split(')').next().and_then(|n| n.trim().parse().ok()));
    }
    if let Ok(netlist) = std::fs::read_to_string(dir.path().join("netlist.json")) {
        report.lut_levels = lut_levels::lut_levels(&netlist, top).ok();
    }
    if let Ok(log) = std::fs::read_to_string(dir.path().join("yosys.log")) {
        report.warnings = log
            .lines()
            .filter(|l| l.starts_with("Warning:"))
            .map(str::to_string)
            .collect();
    }
    Ok(report)
}

/// Writes `script` to `dir/name` and runs it with Yosys in `dir` (quiet, logging to
/// `yosys.log`); the caller reads the exit status and the files the script wrote.
fn run_yosys_script(dir: &Path, name: &str, script: &str) -> Result<Output, ToolError> {
    let script_path = dir.join(name);
    std::fs::write(&script_path, script).map_err(|source| ToolError::Io {
        action: "write",
        path: script_path.clone(),
        source,
    })?;
    run(
        "yosys",
        Command::new("yosys")
            .arg("-q")
            .arg("-l")
            .arg("yosys.log")
            .arg("-s")
            .arg(&script_path),
        dir,
    )
}

/// What [`yosys_equiv`] proved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EquivReport {
    /// `$equiv` cells proven: signal bits of the same name in both designs (ports,
    /// registers, named wires, memory port signals) shown equal on every cycle.
    pub proven: u64,
}

/// Proves with Yosys that the designs `gold` and `gate` (sources as for
/// [`verilog_sources`], each with top module `top`) are the same logic: every output,
/// register and same-named wire equal on every cycle from the same inputs and state.
///
/// Each design is read on its own, `proc`, `flatten`, `memory -nomap` and `opt_clean`ed
/// and its top renamed `gold` / `gate`; then `equiv_make gold gate equiv` pairs the
/// signals of the same name (a memory of the same shape in both becomes one, its
/// ports' address, data and enable paired), `opt_merge` shares logic built alike from
/// the same inputs, `equiv_simple -seq 5` proves what it can from the fan-in cones
/// and `equiv_induct -seq 5` the rest by temporal induction over the state.
/// `equiv_status -assert` fails with [`ToolError::NotEquivalent`] naming what was not
/// proven.
pub fn yosys_equiv<P: AsRef<Path>, Q: AsRef<Path>>(
    gold: &[P],
    gate: &[Q],
    top: &str,
) -> Result<EquivReport, ToolError> {
    let gold_files = verilog_sources(gold)?;
    let gate_files = verilog_sources(gate)?;
    let dir = work_dir("yosys")?;
    let mut script = String::new();
    for (name, files) in [("gold", &gold_files), ("gate", &gate_files)] {
        for f in files {
            let _ = writeln!(script, "read_verilog -defer \"{}\"", f.display());
        }
        let _ = writeln!(
            script,
            "hierarchy -check -top {top}\nproc\nflatten\nmemory -nomap\nopt_clean\n\
             rename {top} {name}\ndesign -stash {name}"
        );
    }
    script.push_str(
        "design -copy-from gold -as gold gold\n\
         design -copy-from gate -as gate gate\n\
         equiv_make gold gate equiv\n\
         hierarchy -top equiv\n\
         opt_merge\n\
         equiv_simple -seq 5\n\
         equiv_induct -seq 5\n\
         tee -o status.txt equiv_status\n\
         equiv_status -assert\n",
    );
    let out = run_yosys_script(dir.path(), "equiv.ys", &script)?;
    let status = std::fs::read_to_string(dir.path().join("status.txt")).unwrap_or_default();
    let count = |label: &str| -> Option<u64> {
        let at = status.find(label)?;
        status[..at].split_whitespace().last()?.parse().ok()
    };
    let proven = count(" are proven");
    let unproven = count(" are unproven");
    match (out.status.success(), proven, unproven) {
        (true, Some(proven), Some(0)) => Ok(EquivReport { proven }),
        (_, Some(_), Some(unproven)) if unproven > 0 => Err(ToolError::NotEquivalent {
            top: top.into(),
            unproven,
            output: status
                .lines()
                .filter(|l| l.trim_start().starts_with("Unproven"))
                .map(|l| format!("{}\n", l.trim()))
                .collect(),
        }),
        (true, _, _) => Err(ToolError::Report {
            tool: "yosys".into(),
            top: top.into(),
            reason: format!("no equiv_status counts in:\n{status}"),
        }),
        (false, _, _) => Err(failed("yosys", top, &out)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_json() {
        let json = r#"{"design": {"num_cells": 7, "num_cells_by_type":
            {"LUT2": 2, "LUT6": 1, "FDRE": 3, "CARRY8": 1, "RAMB36E2": 2, "RAMB18E2": 1,
             "DSP48E2": 1, "RAM64M": 4, "BUFG": 1}}}"#;
        let r = SynthReport::from_stat_json(json).unwrap();
        assert_eq!((r.luts, r.ffs, r.carries, r.dsps), (3, 3, 1, 1));
        assert_eq!((r.ramb18, r.ramb36, r.lutrams), (1, 2, 4));
        assert_eq!(r.count("BUFG"), 1);
        assert_eq!(r.bram36_equivalent(), 2.5);
        assert!(SynthReport::from_stat_json("{}").is_err());
    }

    #[test]
    fn missing_sources_are_errors_that_name_the_path() {
        let e = verilog_sources(&["/nonexistent/x.v"]).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/x.v"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = verilog_sources(&[dir.path()]).unwrap_err();
        assert!(matches!(e, ToolError::NoSources(_)), "{e}");
    }

    #[test]
    fn a_missing_tool_says_how_to_install_it() {
        let dir = tempfile::tempdir().unwrap();
        let e = run(
            "no-such-tool-wirespeed",
            &mut Command::new("no-such-tool-wirespeed"),
            dir.path(),
        )
        .unwrap_err();
        assert!(e.to_string().contains(INSTALL_HINT), "{e}");
    }
}
