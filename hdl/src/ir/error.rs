//! `HdlError`: every mistake a design or a generator parameter can contain,
//! naming the module, the signal and the problem.

use std::fmt;

/// A design error: the module it is in, the signal concerned (if any), where in the
/// generator's source it was made (if known) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HdlError {
    /// Module being built or validated.
    pub module: String,
    /// Signal, port, instance or parameter concerned, if any.
    pub signal: Option<String>,
    /// Source location of the builder call that made the mistake, if known.
    pub location: Option<String>,
    /// What is wrong.
    pub kind: HdlErrorKind,
}

/// The classes of design error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HdlErrorKind {
    /// Operands (or a value and its destination) have widths that the operation forbids.
    #[error("width mismatch in {op}: {detail}")]
    WidthMismatch {
        /// The operation.
        op: String,
        /// Which widths and why they do not fit.
        detail: String,
    },
    /// A width or a count that must be positive, or within a range, is not.
    #[error("invalid width: {0}")]
    InvalidWidth(String),
    /// A wire or output that nothing drives.
    #[error("undriven: {0} is never assigned")]
    Undriven(String),
    /// A net assigned more than once.
    #[error("multiple drivers: already driven by {0}")]
    MultipleDrivers(String),
    /// A combinational cycle; the path lists the nets around it.
    #[error("combinational loop: {}", .0.join(" -> "))]
    CombinationalLoop(Vec<String>),
    /// A value from one clock domain reaches logic of another without a synchronizer.
    #[error("clock-domain crossing without a synchronizer: {0}")]
    CrossDomain(String),
    /// Two ports, nets, instances, memories or domains share a name, or a name is not
    /// a legal identifier.
    #[error("bad name: {0}")]
    BadName(String),
    /// An instance connection names a port or domain the module does not have, leaves
    /// an input unconnected, or connects it twice.
    #[error("instance connection: {0}")]
    Connection(String),
    /// A signal that belongs to another module builder, or a clock used as data.
    #[error("illegal use of signal: {0}")]
    IllegalUse(String),
    /// A memory whose parameters or initial contents are inconsistent.
    #[error("memory: {0}")]
    Memory(String),
    /// A generator parameter that is out of range or inconsistent with another.
    #[error("parameter: {0}")]
    Parameter(String),
}

impl HdlError {
    /// An error in `module`, about `signal`, of class `kind`.
    pub fn new(module: &str, signal: Option<&str>, kind: HdlErrorKind) -> Self {
        HdlError {
            module: module.to_string(),
            signal: signal.map(str::to_string),
            location: None,
            kind,
        }
    }

    /// A bad generator parameter `param` of block `module`, with the reason.
    pub fn parameter(module: &str, param: &str, reason: impl Into<String>) -> Self {
        HdlError::new(module, Some(param), HdlErrorKind::Parameter(reason.into()))
    }

    /// The same error, remembering the builder call's source location.
    pub fn at(mut self, location: &std::panic::Location<'_>) -> Self {
        self.location = Some(format!("{}:{}", location.file(), location.line()));
        self
    }
}

impl fmt::Display for HdlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "module `{}`", self.module)?;
        if let Some(s) = &self.signal {
            write!(f, ", `{s}`")?;
        }
        write!(f, ": {}", self.kind)?;
        if let Some(l) = &self.location {
            write!(f, " (at {l})")?;
        }
        Ok(())
    }
}

impl std::error::Error for HdlError {}
