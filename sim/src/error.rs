//! `SimError`: everything a user of the simulator can get wrong, or that can go
//! wrong while building or tracing a simulation. Never a panic.

/// An error of the simulator API, naming the port, net, domain or memory concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// No top-level port has this name.
    #[error("no port named `{0}`")]
    UnknownPort(String),
    /// No net has this (hierarchical) name.
    #[error("no net named `{0}`")]
    UnknownNet(String),
    /// No top-level clock domain has this name.
    #[error("no clock domain named `{0}`")]
    UnknownDomain(String),
    /// No memory has this (hierarchical) name.
    #[error("no memory named `{0}`")]
    UnknownMemory(String),
    /// A value has a 1 bit above the width of the port (or net, or memory word).
    #[error("value does not fit `{name}`, which is {width} bits wide")]
    ValueTooWide {
        /// The port, net or memory written.
        name: String,
        /// Its width in bits.
        width: u32,
    },
    /// A value read as `u64` has a 1 bit above bit 63.
    #[error("`{name}` ({width} bits) holds a value that does not fit in a u64; read it as Bits")]
    NotU64 {
        /// The port or net read.
        name: String,
        /// Its width in bits.
        width: u32,
    },
    /// Only input ports can be set.
    #[error("`{0}` is an output port; only inputs can be set")]
    NotAnInput(String),
    /// Clock ports are driven by the simulator's clock generators.
    #[error("`{0}` is a clock; clocks are driven by the simulator (see set_clock_period)")]
    SetClock(String),
    /// The flattened design has a combinational cycle (the nets around it, in data-flow order).
    #[error("combinational loop: {}", .0.join(" -> "))]
    CombLoop(Vec<String>),
    /// The module cannot be flattened (an unconnected instance input, an undriven net,
    /// a clock that does not come from a top-level clock domain).
    #[error("cannot flatten `{module}`: {reason}")]
    Flatten {
        /// Module (or instance path) concerned.
        module: String,
        /// What is wrong.
        reason: String,
    },
    /// The design needs more storage than the simulator addresses (2^32 words).
    #[error("the design needs {0} storage words; at most 2^32 are supported")]
    TooLarge(usize),
    /// A clock period shorter than 2 ps (a clock needs a high and a low half).
    #[error("clock period of domain `{domain}` must be at least 2 ps, got {period} ps")]
    BadClockPeriod {
        /// The domain.
        domain: String,
        /// The period asked for, in picoseconds.
        period: u64,
    },
    /// More top-level clock domains than the simulator tells apart at an edge.
    #[error(
        "`{module}` has {count} top-level clock domains; at most {} are supported",
        crate::clock::MAX_DOMAINS
    )]
    TooManyDomains {
        /// The top module.
        module: String,
        /// Its number of top-level domains.
        count: usize,
    },
    /// A clock's phase can only be set before its first rising edge.
    #[error("phase of clock domain `{0}` cannot change after its first rising edge")]
    ClockRunning(String),
    /// A memory address at or past the memory's depth.
    #[error("address {addr} is outside memory `{mem}` of depth {depth}")]
    AddressOutOfRange {
        /// The memory.
        mem: String,
        /// The address used.
        addr: u64,
        /// The memory's depth in words.
        depth: u32,
    },
    /// A port or domain handle made by another simulator.
    #[error("a handle made by another simulator was used")]
    ForeignHandle,
    /// The compiled engine could not be built.
    #[error(transparent)]
    Jit(#[from] crate::jit::JitError),
    /// Writing the VCD trace failed.
    #[error("VCD trace: {0}")]
    Io(#[from] std::io::Error),
}
