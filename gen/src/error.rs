//! `GenError`: why a design could not be generated or written.

use std::path::PathBuf;

/// An error of a back end, naming the module, signal or file concerned and the reason.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// A name in the IR cannot be used as a Verilog identifier as it is.
    #[error("module `{module}`: {what} `{name}` cannot be used in Verilog: {reason}")]
    BadName {
        /// Module the name belongs to.
        module: String,
        /// What carries the name (port, module, ...).
        what: &'static str,
        /// The name.
        name: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// The IR breaks one of its own documented invariants (a bug in whatever built it).
    #[error("module `{module}`: malformed IR at `{signal}`: {reason}")]
    Malformed {
        /// Module concerned.
        module: String,
        /// Net, register, memory or instance concerned.
        signal: String,
        /// The invariant that does not hold.
        reason: String,
    },
    /// A manifest does not describe the design it is written with.
    #[error("manifest does not match the design: {0}")]
    ManifestMismatch(String),
    /// A file or directory could not be created, written or renamed.
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        /// What was being done ("create directory", "write", ...).
        action: &'static str,
        /// The path concerned.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The manifest could not be serialized.
    #[error("cannot serialize the manifest for `{path}`: {source}")]
    Json {
        /// The manifest file that was to be written.
        path: PathBuf,
        /// serde_json's reason.
        #[source]
        source: serde_json::Error,
    },
    /// No board has this name.
    #[error("unknown board `{name}` (known boards: {known})")]
    UnknownBoard {
        /// The name asked for.
        name: String,
        /// The known boards, comma-separated.
        known: String,
    },
    /// A design was asked for on a board of a family it does not run on.
    #[error("{design} runs on {family} boards ({boards}); `{board}` is not one")]
    WrongFamily {
        /// The design (`PANAMA`, `Lightning`).
        design: String,
        /// The family it needs, as a word (`NetFPGA`, `RFSoC`).
        family: String,
        /// The known boards of that family, comma-separated.
        boards: String,
        /// The board given.
        board: String,
    },
    /// An embedded board description does not parse or is inconsistent.
    #[error("board description `{board}`: {reason}")]
    BoardFile {
        /// The board concerned.
        board: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A clock was bound to a role the board has no clock for.
    #[error("board `{board}` has no clock role `{role}` (its roles: {known})")]
    UnknownClockRole {
        /// The board.
        board: String,
        /// The role asked for.
        role: String,
        /// The board's roles, comma-separated.
        known: String,
    },
    /// A clock binding cannot be used as it is.
    #[error("clock port `{port}`: {reason}")]
    BadClockBinding {
        /// The clock port of the design.
        port: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// An extra output file has a name that cannot be written beside the design.
    #[error("output file `{name}`: {reason}")]
    BadOutputName {
        /// The file name.
        name: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// Two registers of a map have the same C identifier.
    #[error(
        "register map `{block}`: registers `{first}` and `{second}` both become C name `{c_name}`"
    )]
    RegisterNameClash {
        /// The register file.
        block: String,
        /// The first register.
        first: String,
        /// The second register.
        second: String,
        /// The C identifier both become.
        c_name: String,
    },
    /// Two things of a register map (registers, fields, or one of them and a name the
    /// driver itself uses) become the same name in its Python driver.
    #[error(
        "register map `{block}`: {first} and {second} both become Python name `{python_name}`"
    )]
    PythonNameClash {
        /// The register file.
        block: String,
        /// The first, e.g. "register `a`", "field `status.done`".
        first: String,
        /// The second, e.g. "register `a_`", "the driver's own `read_register`".
        second: String,
        /// The Python identifier both become.
        python_name: String,
    },
    /// The output folder cannot take the design.
    #[error("output folder `{dir}`: {reason}")]
    Folder {
        /// The folder.
        dir: PathBuf,
        /// Why, and what to do.
        reason: String,
    },
    /// The output folder holds another design's generated files.
    #[error(
        "output folder `{dir}` holds another generated design ({design}); generate into another \
         folder, or pass --force to replace exactly the files its manifest.json lists"
    )]
    OtherDesign {
        /// The folder.
        dir: PathBuf,
        /// The other design: top, block, board and differing parameters.
        design: String,
    },
    /// A file that is not the earlier run's has the name of one of the outputs.
    #[error("`{path}` is in the way: {reason}; move it away or generate into another folder")]
    InTheWay {
        /// The file.
        path: PathBuf,
        /// Why it may not be replaced.
        reason: String,
    },
    /// The write was cancelled (e.g. by Ctrl-C) before anything was put in place.
    #[error("interrupted; no output was written")]
    Interrupted,
}
