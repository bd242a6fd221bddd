//! Verilator bridge: run emitted Verilog in Verilator, driven from Rust.
//!
//! The bridge is independent of the HDL: its input is Verilog text, the name of the top
//! module and the top's port list. From these it
//!
//! 1. generates a small C++ shim with `extern "C"` entry points (create/destroy, set/get a
//!    port by index as 32-bit words, eval, step a clock N cycles, VCD trace) — see `shim`,
//! 2. builds shim + Verilated model + Verilator runtime into a shared library with
//!    `verilator --cc --build`, `make` and `g++ -shared` — see `build`,
//! 3. caches that library under `target/verilator-cache/<hash>/` behind a file lock so
//!    parallel tests neither race nor rebuild — see `cache`,
//! 4. loads it with `libloading` (`library`) behind a safe API — [`VerilatorModel`].
//!
//! ```no_run
//! use testbench::verilator::{BuildOptions, PortInfo, VerilatorDesign, VerilatorModel};
//!
//! let design = VerilatorDesign {
//!     sources: vec![("inv.v".into(), "module inv(input [7:0] a, output [7:0] y);\n  assign y = ~a;\nendmodule\n".into())],
//!     top: "inv".into(),
//!     ports: vec![PortInfo::input("a", 8), PortInfo::output("y", 8)],
//! };
//! let mut model = VerilatorModel::build(&design, &BuildOptions::default())?;
//! let (a, y) = (model.port_index("a")?, model.port_index("y")?);
//! model.set(a, &[0x0f])?;
//! model.eval();
//! assert_eq!(model.get(y)?, vec![0xf0]);
//! # Ok::<(), testbench::verilator::BridgeError>(())
//! ```

mod build;
mod cache;
mod error;
mod header;
mod library;
mod model;
mod shim;
mod slot;
mod tools;

use std::path::PathBuf;
use std::time::Duration;

pub use error::BridgeError;
pub use model::VerilatorModel;

/// Direction of a top-level port, seen from the design.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PortDirection {
    /// Driven from Rust (`input` in Verilog).
    In,
    /// Driven by the design (`output` in Verilog).
    Out,
}

/// One port of the top module, as the bridge needs to know it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PortInfo {
    /// The Verilog port name: a simple identifier (`[A-Za-z_][A-Za-z0-9_]*`).
    pub name: String,
    /// Width in bits, at least 1 (any width; > 64 bits uses Verilator's wide words).
    pub width: u32,
    /// Input or output.
    pub direction: PortDirection,
}

impl PortInfo {
    /// An input port `name` of `width` bits.
    pub fn input(name: impl Into<String>, width: u32) -> Self {
        Self {
            name: name.into(),
            width,
            direction: PortDirection::In,
        }
    }

    /// An output port `name` of `width` bits.
    pub fn output(name: impl Into<String>, width: u32) -> Self {
        Self {
            name: name.into(),
            width,
            direction: PortDirection::Out,
        }
    }

    /// Number of 32-bit words a value of this port takes (the C ABI's unit).
    pub fn words32(&self) -> usize {
        self.width.div_ceil(32) as usize
    }

    /// Number of 64-bit words a value of this port takes (the Rust API's unit).
    pub fn words64(&self) -> usize {
        self.width.div_ceil(64) as usize
    }
}

/// A design to build: Verilog sources, the top module's name and its port list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerilatorDesign {
    /// `(file name, Verilog text)` pairs. Files ending in `.vh`, `.svh` or `.h` are only
    /// made available to `` `include ``; every other file is compiled.
    pub sources: Vec<(String, String)>,
    /// Name of the top module.
    pub top: String,
    /// Every port of the top module (the C++ shim addresses them by index in this order).
    pub ports: Vec<PortInfo>,
}

/// How to build a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildOptions {
    /// Compile VCD tracing support in (`--trace`); needed for [`VerilatorModel::trace_open`].
    pub trace: bool,
    /// The `verilator` program to run (default: `verilator`, found on `PATH`).
    pub verilator: PathBuf,
    /// Root of the build cache. `None`: `<target dir>/verilator-cache`, where the target
    /// dir is `$CARGO_TARGET_DIR` if set, else the workspace's `target/`.
    pub cache_dir: Option<PathBuf>,
    /// Bytes of models the cache keeps: after each build the entries used longest ago
    /// are removed until the rest fit (the entry just built always stays). Default
    /// [`DEFAULT_CACHE_BUDGET`].
    pub cache_budget: u64,
    /// Parallel C++ compile jobs for a cold build (default 2; 0 is treated as 1).
    pub jobs: u32,
    /// Extra arguments for `verilator` (part of the cache key).
    pub extra_verilator_args: Vec<String>,
    /// Make variable assignments (`NAME=value`) for every make run of the build: the C++
    /// optimization levels of the model's hot code (`OPT_FAST`), its run-once code
    /// (`OPT_SLOW`) and the Verilator runtime (`OPT_GLOBAL`). Part of the cache key.
    /// Default: [`DEFAULT_MAKE_VARS`].
    pub make_vars: Vec<String>,
}

/// The C++ optimization levels models are built with by default, chosen by measurement
/// (README, "Performance"): Verilator's own default is `-Os` for `OPT_FAST` and
/// `OPT_GLOBAL`; `-O2` runs the models faster.
pub const DEFAULT_MAKE_VARS: &[&str] = &["OPT_FAST=-O2", "OPT_GLOBAL=-O2"];

/// The bytes of built models the cache keeps by default: 512 MiB, a few hundred models
/// of PANAMA's size (about 1.2 MB each) and many times what the test suite builds.
pub const DEFAULT_CACHE_BUDGET: u64 = 512 << 20;

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            trace: false,
            verilator: PathBuf::from("verilator"),
            cache_dir: None,
            cache_budget: DEFAULT_CACHE_BUDGET,
            jobs: 2,
            extra_verilator_args: Vec::new(),
            make_vars: DEFAULT_MAKE_VARS.iter().map(|s| s.to_string()).collect(),
        }
    }
}

impl BuildOptions {
    /// The flags a model is built with, for printing beside every engine comparison:
    /// Verilator's speed-relevant options, `--trace` if set, the extra arguments and the
    /// C++ optimization levels, e.g.
    /// `verilator -O3 --x-assign 0 --x-initial 0 --noassert; make OPT_FAST=-O2 OPT_GLOBAL=-O2`.
    pub fn describe(&self) -> String {
        let mut verilator: Vec<&str> = build::SPEED_FLAGS.to_vec();
        if self.trace {
            verilator.push("--trace");
        }
        verilator.extend(self.extra_verilator_args.iter().map(String::as_str));
        let make = if self.make_vars.is_empty() {
            "Verilator's default OPT_FAST/OPT_GLOBAL (-Os)".to_string()
        } else {
            format!("make {}", self.make_vars.join(" "))
        };
        format!("verilator {}; {make}", verilator.join(" "))
    }

    /// The versions of the tools a model is built with, for printing beside its
    /// flags: the first line of `verilator --version` and of `g++ --version`, e.g.
    /// `Verilator 5.006 2023-01-22 rev (Debian 5.006-3); g++ (Debian 12.2.0-14) 12.2.0`.
    /// Asked once per process; an error names the tool that did not run.
    pub fn toolchain(&self) -> Result<String, BridgeError> {
        let v = tools::versions(&self.verilator)?;
        let verilator = v.verilator.lines().next().unwrap_or_default();
        Ok(format!("{verilator}; {}", v.cxx))
    }

    /// Default options with VCD tracing compiled in.
    pub fn with_trace() -> Self {
        Self {
            trace: true,
            ..Self::default()
        }
    }
}

/// What building and loading a model cost: the "time to first cycle" of the Verilator engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildReport {
    /// The shared library came from the cache: neither Verilator nor the C++ compiler ran.
    pub cache_hit: bool,
    /// On a miss: whether the design-independent Verilator runtime archive was cached.
    pub runtime_cache_hit: Option<bool>,
    /// Wall time to obtain the shared library (hash + cache lookup, or the full build).
    pub build_time: Duration,
    /// Wall time to `dlopen` the library and create the model instance.
    pub load_time: Duration,
    /// The shared library that was loaded.
    pub library: PathBuf,
}

impl BuildReport {
    /// Build plus load: the time from "here is the Verilog" to "ready to run a cycle".
    pub fn time_to_first_cycle(&self) -> Duration {
        self.build_time + self.load_time
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`: the names the bridge accepts for modules and ports.
fn is_simple_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl VerilatorDesign {
    /// Checks what the bridge relies on: at least one source; plain, unique file names;
    /// simple identifiers for the top and the ports; unique port names; widths ≥ 1.
    pub fn validate(&self) -> Result<(), BridgeError> {
        let bad = |msg: String| Err(BridgeError::InvalidDesign(msg));
        if self.sources.is_empty() {
            return bad("no Verilog sources".into());
        }
        let mut files = std::collections::HashSet::new();
        for (name, _) in &self.sources {
            let plain = !name.is_empty()
                && name != "."
                && name != ".."
                && !name.contains(['/', '\\', '\0'])
                && !name.starts_with('-');
            if !plain {
                return bad(format!(
                    "source file name `{name}` must be a plain file name"
                ));
            }
            if !files.insert(name.as_str()) {
                return bad(format!("source file `{name}` given twice"));
            }
        }
        if !is_simple_identifier(&self.top) {
            return bad(format!(
                "top module name `{}` is not a simple identifier",
                self.top
            ));
        }
        let mut names = std::collections::HashSet::new();
        for p in &self.ports {
            if !is_simple_identifier(&p.name) {
                return bad(format!("port name `{}` is not a simple identifier", p.name));
            }
            if p.width == 0 {
                return bad(format!("port `{}` has width 0", p.name));
            }
            if !names.insert(p.name.as_str()) {
                return bad(format!("port `{}` listed twice", p.name));
            }
        }
        Ok(())
    }
}
