//! The bridge's error type.

use std::path::PathBuf;

/// Everything that can go wrong building, loading or driving a Verilated model.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// The `verilator` program could not be started.
    #[error(
        "cannot run Verilator (`{program}`): {source}; install it with \
         `apt-get update && apt-get install -y verilator`"
    )]
    VerilatorNotFound {
        /// The program that was tried.
        program: PathBuf,
        /// Why it could not be started.
        source: std::io::Error,
    },
    /// Another build tool (`g++`, `make`) could not be started.
    #[error("cannot run `{program}`: {source}; install it with `apt-get install -y {package}`")]
    ToolNotFound {
        /// The program that was tried.
        program: String,
        /// The Debian package that provides it.
        package: &'static str,
        /// Why it could not be started.
        source: std::io::Error,
    },
    /// A build step failed; `output` is the tool's own message (stderr, then stdout).
    #[error("{step} failed ({status}): `{command}`\n{output}")]
    BuildFailed {
        /// Which step: "verilator", "runtime (make)", "shim (make/g++)", ...
        step: String,
        /// The command line that failed.
        command: String,
        /// Exit status as text.
        status: String,
        /// The tool's stderr followed by its stdout.
        output: String,
    },
    /// The design description is unusable (bad file name, port name or width, ...).
    #[error("invalid design: {0}")]
    InvalidDesign(String),
    /// The port list does not match the top module's ports in the Verilog.
    #[error("the port list does not match module `{top}`: {detail}")]
    PortListMismatch {
        /// The top module.
        top: String,
        /// Which port differs and how.
        detail: String,
    },
    /// No port of that name.
    #[error("unknown port `{0}`")]
    UnknownPort(String),
    /// A port index out of range.
    #[error("port index {index} out of range (the design has {count} ports)")]
    PortIndex {
        /// The index given.
        index: usize,
        /// Number of ports.
        count: usize,
    },
    /// `set` or `step_clock` on an output port.
    #[error("port `{0}` is an output; only inputs can be driven")]
    NotAnInput(String),
    /// `step_clock` on a port wider than one bit.
    #[error("port `{port}` is {width} bits wide; a clock must be 1 bit")]
    NotAClock {
        /// The port's name.
        port: String,
        /// Its width.
        width: u32,
    },
    /// A value with more 64-bit words than the port has.
    #[error("value of {given} words for port `{port}` ({width} bits, at most {max} words)")]
    ValueTooLong {
        /// The port's name.
        port: String,
        /// Its width.
        width: u32,
        /// Words given.
        given: usize,
        /// Words the port takes.
        max: usize,
    },
    /// A buffer too short for the port's value.
    #[error("buffer of {given} words for port `{port}` ({width} bits needs {needed} words)")]
    BufferTooShort {
        /// The port's name.
        port: String,
        /// Its width.
        width: u32,
        /// Words given.
        given: usize,
        /// Words needed.
        needed: usize,
    },
    /// Tracing was requested on a model built without [`super::BuildOptions::trace`].
    #[error("this model was built without tracing; set BuildOptions::trace")]
    TracingDisabled,
    /// The VCD file could not be opened.
    #[error("cannot open VCD trace file {0}")]
    TraceOpen(PathBuf),
    /// A file-system operation on the cache or build directory failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The shared library could not be loaded or lacks an entry point.
    #[error("cannot load Verilated model {path}: {source}")]
    Load {
        /// The library.
        path: PathBuf,
        /// The loader's error.
        source: libloading::Error,
    },
    /// The loaded library does not match the design (stale or foreign cache entry).
    #[error("Verilated model {path} does not match the design: {reason}")]
    Mismatch {
        /// The library.
        path: PathBuf,
        /// What differs.
        reason: String,
    },
    /// The C++ side could not create the model (it threw).
    #[error("the Verilated model could not be created")]
    CreateFailed,
}

impl BridgeError {
    /// An [`BridgeError::Io`] with `context` naming the operation and path.
    pub(super) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            context: context.into(),
            source,
        }
    }
}
