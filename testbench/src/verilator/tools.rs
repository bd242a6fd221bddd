//! Running the external tools (verilator, make, g++) and identifying their versions.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};

use super::BridgeError;

/// An external program the bridge runs.
#[derive(Clone, Debug)]
pub(super) enum Tool {
    /// `verilator` (the path from [`super::BuildOptions::verilator`]).
    Verilator(PathBuf),
    /// GNU make (Verilator's `--build` runs it too).
    Make,
    /// The C++ compiler Verilator's makefiles use (`g++`).
    Cxx,
}

impl Tool {
    fn program(&self) -> &Path {
        match self {
            Tool::Verilator(p) => p,
            Tool::Make => Path::new("make"),
            Tool::Cxx => Path::new("g++"),
        }
    }

    /// A command for this tool with make-related variables from the caller removed, so an
    /// outer `make -j` (jobserver) does not change how the build behaves.
    pub(super) fn command(&self) -> Command {
        let mut cmd = Command::new(self.program());
        for var in ["MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"] {
            cmd.env_remove(var);
        }
        cmd
    }

    fn spawn_error(&self, source: std::io::Error) -> BridgeError {
        match self {
            Tool::Verilator(p) => BridgeError::VerilatorNotFound {
                program: p.clone(),
                source,
            },
            Tool::Make => BridgeError::ToolNotFound {
                program: "make".into(),
                package: "make",
                source,
            },
            Tool::Cxx => BridgeError::ToolNotFound {
                program: "g++".into(),
                package: "g++",
                source,
            },
        }
    }
}

/// Renders a command line for messages and the build log (arguments with spaces quoted).
pub(super) fn display(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    for arg in cmd.get_args() {
        let a = arg.to_string_lossy();
        if a.is_empty() || a.contains(char::is_whitespace) {
            parts.push(format!("'{a}'"));
        } else {
            parts.push(a.into_owned());
        }
    }
    parts.join(" ")
}

/// Runs `cmd` (built from `tool`) to completion; a non-zero exit is a
/// [`BridgeError::BuildFailed`] carrying the tool's stderr and stdout. Appends the command
/// line to `log`.
pub(super) fn run(
    tool: &Tool,
    step: &str,
    cmd: &mut Command,
    log: &mut String,
) -> Result<Output, BridgeError> {
    let line = display(cmd);
    log.push_str(&line);
    log.push('\n');
    let out = cmd.output().map_err(|e| tool.spawn_error(e))?;
    if out.status.success() {
        // Make echoes the compiler and linker lines it runs: keep them in the log.
        for l in String::from_utf8_lossy(&out.stdout).lines() {
            log.push_str("  | ");
            log.push_str(l);
            log.push('\n');
        }
        return Ok(out);
    }
    let mut output = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !stdout.trim().is_empty() {
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str(&stdout);
    }
    Err(BridgeError::BuildFailed {
        step: step.to_string(),
        command: line,
        status: out.status.to_string(),
        output,
    })
}

/// Versions of the tools that shape a build (part of every cache key).
#[derive(Debug)]
pub(super) struct ToolVersions {
    /// `verilator --version`.
    pub verilator: String,
    /// First line of `g++ --version`.
    pub cxx: String,
}

/// The tool versions for `verilator`, asked once per process and program path (a cache
/// hit then runs no external program at all after the first build).
pub(super) fn versions(verilator: &Path) -> Result<Arc<ToolVersions>, BridgeError> {
    static MEMO: OnceLock<Mutex<HashMap<PathBuf, Arc<ToolVersions>>>> = OnceLock::new();
    let memo = MEMO.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(v) = memo
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(verilator)
    {
        return Ok(Arc::clone(v));
    }
    let mut log = String::new();
    let tool = Tool::Verilator(verilator.to_path_buf());
    let out = run(
        &tool,
        "verilator --version",
        tool.command().arg("--version"),
        &mut log,
    )?;
    let verilator_version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let out = run(
        &Tool::Cxx,
        "g++ --version",
        Tool::Cxx.command().arg("--version"),
        &mut log,
    )?;
    let cxx = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    let v = Arc::new(ToolVersions {
        verilator: verilator_version,
        cxx,
    });
    memo.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(verilator.to_path_buf(), Arc::clone(&v));
    Ok(v)
}
