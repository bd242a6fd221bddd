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
}
