//! The golden model's configuration: what the generator parameters and the AXI-Lite
//! registers of one accelerator instance say.

use hdl::blocks::fp::FpFormat;
use hdl::panama::config::{
    netfpga_host_routes, DEFAULT_FULL_WAIT, DEFAULT_MAX_FRAME_BYTES, DEFAULT_SLOT_TIMEOUT,
};
use std::sync::LazyLock;
use thiserror::Error;

/// The Ethernet port codes of the embedded board `name` (`gen::board`).
fn ethernet_codes(name: &str) -> Vec<u8> {
    // The descriptions are compiled in and checked by gen's tests: only a bug in
    // them fails here.
    gen::board::Board::named(name)
        .map(|b| b.ethernet_codes())
        .unwrap_or_else(|e| panic!("embedded board description: {e}"))
}

/// One-hot tuser codes of NetFPGA-SUME's four 10G ports, in port-index order
/// (0x01, 0x04, 0x10, 0x40: `constraints/boards/netfpga-sume.json`).
pub static SUME_PORTS: LazyLock<Vec<u8>> = LazyLock::new(|| ethernet_codes("netfpga-sume"));
/// One-hot tuser codes of NetFPGA-PLUS's two CMAC ports, in port-index order
/// (0x01, 0x04: `constraints/boards/netfpga-plus-au250.json`).
pub static PLUS_PORTS: LazyLock<Vec<u8>> = LazyLock::new(|| ethernet_codes("netfpga-plus-au250"));
/// This model's default `agg_udp_port` (0x5041, "PA"); a proposal for the register's
/// reset value, which the spec leaves open.
pub const DEFAULT_AGG_UDP_PORT: u16 = 0x5041;
/// The spec's default `max_payload_bytes`.
pub const DEFAULT_MAX_PAYLOAD_BYTES: usize = 1024;

/// A job slot's registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotConfig {
    /// The slot matches packets only when enabled.
    pub enable: bool,
    /// Job to match.
    pub job_id: u16,
    /// Tree to match.
    pub tree_id: u8,
    /// Participating ports: bit i = port index i (not the one-hot tuser code).
    pub ports: u8,
}

impl SlotConfig {
    /// A disabled slot: matches nothing (the register reset values).
    pub const DISABLED: SlotConfig = SlotConfig {
        enable: false,
        job_id: 0,
        tree_id: 0,
        ports: 0,
    };

    /// An enabled slot for (`job_id`, `tree_id`) over the port indices in `ports`
    /// (indices ≥ 8 are ignored; [`GoldenConfig::validate`] checks the range).
    pub fn new(job_id: u16, tree_id: u8, ports: &[usize]) -> Self {
        let ports = ports
            .iter()
            .filter(|&&p| p < 8)
            .fold(0u8, |acc, &p| acc | (1 << p));
        SlotConfig {
            enable: true,
            job_id,
            tree_id,
            ports,
        }
    }

    /// True if port index `port` participates.
    pub fn has_port(&self, port: usize) -> bool {
        port < 8 && self.ports >> port & 1 == 1
    }
}

/// A configuration the model refuses, naming the field and the reason.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// `port_codes` has a bad length.
    #[error("port_codes: {count} ports, the accelerator has 2 to 8")]
    PortCount {
        /// Number of ports given.
        count: usize,
    },
    /// A port code is not one-hot.
    #[error("port_codes[{index}] = {code:#04x} is not a one-hot tuser port code")]
    PortCode {
        /// Port index.
        index: usize,
        /// The code.
        code: u8,
    },
    /// Two ports share a code.
    #[error("port_codes: {code:#04x} appears twice")]
    DuplicatePortCode {
        /// The code.
        code: u8,
    },
    /// `bypass_dst` does not have one entry per port.
    #[error("bypass_dst has {got} entries but there are {ports} ports")]
    BypassMapLength {
        /// Entries given.
        got: usize,
        /// Number of ports.
        ports: usize,
    },
    /// A slot names a port index the instance does not have.
    #[error("slot {slot}: participating ports {ports:#010b} name a port ≥ {port_count}")]
    SlotPorts {
        /// Slot index.
        slot: usize,
        /// Its bitmap.
        ports: u8,
        /// Number of ports.
        port_count: usize,
    },
    /// An enabled slot has no participating port (it would be ready forever).
    #[error("slot {slot} is enabled with no participating port")]
    EmptySlot {
        /// Slot index.
        slot: usize,
    },
    /// `slots` count outside 1–16.
    #[error("{count} slots: the accelerator has 1 to 16")]
    SlotCount {
        /// Number of slots.
        count: usize,
    },
    /// `max_payload_bytes` is not a non-zero multiple of 64.
    #[error("max_payload_bytes = {bytes} is not a non-zero multiple of 64")]
    MaxPayload {
        /// The value.
        bytes: usize,
    },
    /// `fifo_depth` of 0.
    #[error("fifo_depth = 0: a FIFO must hold at least one packet")]
    FifoDepth,
}

/// Everything the model needs to know about one accelerator instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoldenConfig {
    /// The instance's element format (generator parameter).
    pub format: FpFormat,
    /// Flush subnormals to zero (generator parameter).
    pub ftz: bool,
    /// The `agg_udp_port` register.
    pub agg_udp_port: u16,
    /// Largest accepted payload (generator parameter).
    pub max_payload_bytes: usize,
    /// One-hot tuser code of each port index; its length is the `ports` parameter.
    pub port_codes: Vec<u8>,
    /// Per source port index, the tuser destination of bypassed frames (any mask).
    pub bypass_dst: Vec<u8>,
    /// The job slots' registers; the length is the `slots` parameter.
    pub slots: Vec<SlotConfig>,
    /// FIFO depth in packets, or `None` for unbounded FIFOs (see
    /// [`super::golden::GoldenOutcome::overflow_at`]).
    pub fifo_depth: Option<usize>,
    /// Longest frame let in (generator parameter); longer frames are `oversize`.
    pub max_frame_bytes: usize,
    /// Host (DMA) source codes and the tuser destination of their frames
    /// (`host_dst{k}` registers).
    pub host_routes: Vec<(u8, u8)>,
    /// The `full_wait` register: cycles a packet may wait on a full FIFO. The
    /// model assumes no such wait expires (see [`super::golden::GoldenOutcome::overflow_at`]).
    pub full_wait: u32,
    /// The `slot_timeout` register. The model assumes no slot times out.
    pub slot_timeout: u32,
}

/// The default bypass map: port indices 0↔1, 2↔3, … (a wire); an odd last port
/// sends back to itself.
pub fn default_bypass_map(port_codes: &[u8]) -> Vec<u8> {
    (0..port_codes.len())
        .map(|i| port_codes.get(i ^ 1).copied().unwrap_or(port_codes[i]))
        .collect()
}

impl GoldenConfig {
    /// An instance over `port_codes` with `slots`, the default bypass map,
    /// [`DEFAULT_AGG_UDP_PORT`], [`DEFAULT_MAX_PAYLOAD_BYTES`], no ftz, unbounded
    /// FIFOs, and the hardware's defaults for the frame limit, the host routes and
    /// the two timeouts.
    pub fn new(format: FpFormat, port_codes: &[u8], slots: Vec<SlotConfig>) -> Self {
        GoldenConfig {
            format,
            ftz: false,
            agg_udp_port: DEFAULT_AGG_UDP_PORT,
            max_payload_bytes: DEFAULT_MAX_PAYLOAD_BYTES,
            port_codes: port_codes.to_vec(),
            bypass_dst: default_bypass_map(port_codes),
            slots,
            fifo_depth: None,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES as usize,
            host_routes: netfpga_host_routes(port_codes),
            full_wait: DEFAULT_FULL_WAIT,
            slot_timeout: DEFAULT_SLOT_TIMEOUT,
        }
    }

    /// Checks the configuration against the generator's ranges.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let n = self.port_codes.len();
        if !(2..=8).contains(&n) {
            return Err(ConfigError::PortCount { count: n });
        }
        for (index, &code) in self.port_codes.iter().enumerate() {
            if code.count_ones() != 1 {
                return Err(ConfigError::PortCode { index, code });
            }
            if self.port_codes[..index].contains(&code) {
                return Err(ConfigError::DuplicatePortCode { code });
            }
        }
        if self.bypass_dst.len() != n {
            return Err(ConfigError::BypassMapLength {
                got: self.bypass_dst.len(),
                ports: n,
            });
        }
        if !(1..=16).contains(&self.slots.len()) {
            return Err(ConfigError::SlotCount {
                count: self.slots.len(),
            });
        }
        for (slot, s) in self.slots.iter().enumerate() {
            if n < 8 && s.ports >> n != 0 {
                return Err(ConfigError::SlotPorts {
                    slot,
                    ports: s.ports,
                    port_count: n,
                });
            }
            if s.enable && s.ports == 0 {
                return Err(ConfigError::EmptySlot { slot });
            }
        }
        let m = self.max_payload_bytes;
        if m == 0 || !m.is_multiple_of(64) {
            return Err(ConfigError::MaxPayload { bytes: m });
        }
        if self.fifo_depth == Some(0) {
            return Err(ConfigError::FifoDepth);
        }
        Ok(())
    }

    /// The route of frames from host (DMA) source code `code`, if it is one.
    pub fn host_route(&self, code: u8) -> Option<u8> {
        self.host_routes
            .iter()
            .find(|&&(src, _)| src == code)
            .map(|&(_, dst)| dst)
    }

    /// The port index whose one-hot code is `code`.
    pub fn port_index(&self, code: u8) -> Option<usize> {
        self.port_codes.iter().position(|&c| c == code)
    }

    /// The slot an aggregation packet from port index `port` belongs to: the
    /// lowest-numbered enabled slot with its (`job_id`, `tree_id`) in which `port`
    /// participates.
    pub fn slot_for(&self, job_id: u16, tree_id: u8, port: usize) -> Option<usize> {
        self.slots.iter().position(|s| {
            s.enable && s.job_id == job_id && s.tree_id == tree_id && s.has_port(port)
        })
    }
}
