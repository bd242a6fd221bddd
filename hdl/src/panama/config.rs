//! Generator parameters of the PANAMA accelerator, their validation and the sizes
//! derived from them.

use super::parser::{ParserConfig, DATA_WIDTHS, MAX_MAX_PAYLOAD_BYTES};
use crate::blocks::fp::{FpAddConfig, FpFormat, FpTreeConfig};
use crate::ir::HdlError;

const NAME: &str = "panama";

/// Bytes of the Ethernet + IPv4 + UDP + PANAMA headers: the payload starts here.
pub const HEADERS_BYTES: u32 = 64;
/// Largest frame the store-and-forward landing buffer is sized for by default
/// (jumbo frames of 9000 bytes of IP payload fit).
pub const DEFAULT_MAX_FRAME_BYTES: u32 = 9600;
/// Reset value of the `full_wait` register: cycles an aggregation packet may hold
/// the input while its packet buffer is full before it is dropped (20.5 µs at
/// 200 MHz, 12 µs at 340 MHz).
pub const DEFAULT_FULL_WAIT: u32 = 4096;
/// Reset value of the `slot_timeout` register: cycles a slot may hold packets
/// without becoming ready before its heads are flushed (5 ms at 200 MHz,
/// 2.9 ms at 340 MHz).
pub const DEFAULT_SLOT_TIMEOUT: u32 = 1_000_000;

/// Packets per (slot, port) buffer by default: the depth `wirespeed gen panama`
/// has always generated (`panama_w256_n4_s4_d8_…`) and the README's resource
/// figures and shared-cluster deployment assume; a worker may run this many
/// packets ahead of its job before the input waits `full_wait`.
pub const DEFAULT_FIFO_DEPTH: u32 = 8;

/// Cycles of pipeline between the dispatcher moving a beat and the input taking
/// the next (landing read, parser stage and skid buffer), with margin.
pub const STALL_PIPELINE_CYCLES: u64 = 8;

/// Every parameter of one accelerator instance (PANAMA.md, "Generator parameters").
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PanamaConfig {
    /// `tdata` width: 256, 512 or 1024 bits.
    pub data_width: u32,
    /// One-hot tuser code of each accelerator port, in port-index order (2 to 8
    /// ports). Port index *i* is bit *i* of a slot's participating-port bitmap.
    pub port_codes: Vec<u8>,
    /// Number of job slots (1 to 16).
    pub slots: u32,
    /// Packets per (slot, port) buffer: a power of two, 1 to 64.
    pub fifo_depth: u32,
    /// Largest aggregation payload in bytes (a multiple of 64).
    pub max_payload_bytes: u32,
    /// Element format of the adder tree.
    pub format: FpFormat,
    /// Flush subnormal inputs and outputs to signed zero.
    pub ftz: bool,
    /// Register cuts inside each floating-point adder (0 to 7).
    pub adder_stages: u32,
    /// Result buffer banks (2 to 8): aggregations summed ahead of the one whose
    /// result packets are going out.
    pub result_banks: u32,
    /// Largest frame of any kind, in bytes: sizes the store-and-forward landing
    /// and bypass buffers (each holds at least two such frames). Longer frames
    /// are cut off as they arrive, dropped and counted (`oversize`).
    pub max_frame_bytes: u32,
    /// Reset value of the `full_wait` register (cycles; 0 = drop at once).
    pub full_wait: u32,
    /// Reset value of the `slot_timeout` register (cycles).
    pub slot_timeout: u32,
    /// Host (DMA) source ports that are not accelerator ports: (one-hot source
    /// code, reset value of its `host_dst` route register). Frames from them are
    /// bypassed to that route.
    pub host_routes: Vec<(u8, u8)>,
}

/// NetFPGA's host routes for `port_codes`: the DMA queue of each port is the
/// one-hot bit above the port's (SUME nf0 0x01 ↔ dma0 0x02, PLUS CMAC0 0x01 ↔
/// 0x02); frames from it go to that port. DMA codes that are accelerator ports
/// themselves, or past bit 7, are left out.
pub fn netfpga_host_routes(port_codes: &[u8]) -> Vec<(u8, u8)> {
    port_codes
        .iter()
        .filter_map(|&c| {
            let dma = c.checked_shl(1).filter(|&d| d != 0)?;
            (!port_codes.contains(&dma)).then_some((dma, c))
        })
        .collect()
}

impl PanamaConfig {
    /// An instance for `data_width` over `port_codes` with the defaults: 4 slots,
    /// [`DEFAULT_FIFO_DEPTH`] packets per buffer, 1024-byte payloads, fp32 with subnormals, 5 adder
    /// stages, 4 result banks, 9600-byte frames, [`DEFAULT_FULL_WAIT`],
    /// [`DEFAULT_SLOT_TIMEOUT`] and NetFPGA's host routes
    /// ([`netfpga_host_routes`]).
    pub fn new(data_width: u32, port_codes: &[u8]) -> Self {
        PanamaConfig {
            data_width,
            port_codes: port_codes.to_vec(),
            slots: 4,
            fifo_depth: DEFAULT_FIFO_DEPTH,
            max_payload_bytes: 1024,
            format: FpFormat::Fp32,
            ftz: false,
            adder_stages: 5,
            result_banks: 4,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            full_wait: DEFAULT_FULL_WAIT,
            slot_timeout: DEFAULT_SLOT_TIMEOUT,
            host_routes: netfpga_host_routes(port_codes),
        }
    }

    /// Checks every parameter and their combinations; the error names the
    /// parameter and says why.
    pub fn validate(&self) -> Result<(), HdlError> {
        let bad = |param: &str, reason: String| Err(HdlError::parameter(NAME, param, reason));
        if !DATA_WIDTHS.contains(&self.data_width) {
            return bad(
                "data_width",
                format!(
                    "{} is not one of {DATA_WIDTHS:?} (the NetFPGA datapath widths)",
                    self.data_width
                ),
            );
        }
        let n = self.port_codes.len();
        if !(2..=8).contains(&n) {
            return bad("ports", format!("{n} ports: the accelerator has 2 to 8"));
        }
        for (i, &code) in self.port_codes.iter().enumerate() {
            if code.count_ones() != 1 {
                return bad(
                    "port_codes",
                    format!("port {i}: {code:#04x} is not a one-hot tuser port code"),
                );
            }
            if self.port_codes[..i].contains(&code) {
                return bad("port_codes", format!("{code:#04x} is used by two ports"));
            }
        }
        if !(1..=16).contains(&self.slots) {
            return bad("slots", format!("{} is not in 1..=16", self.slots));
        }
        if !self.fifo_depth.is_power_of_two() || self.fifo_depth > 64 {
            return bad(
                "fifo_depth",
                format!(
                    "{} packets: a power of two from 1 to 64 is needed",
                    self.fifo_depth
                ),
            );
        }
        let p = self.max_payload_bytes;
        if p == 0 || !p.is_multiple_of(64) || p > MAX_MAX_PAYLOAD_BYTES {
            return bad(
                "max_payload_bytes",
                format!("{p} is not a multiple of 64 in 64..={MAX_MAX_PAYLOAD_BYTES}"),
            );
        }
        if self.adder_stages > 7 {
            return bad(
                "adder_stages",
                format!("{} is not in 0..=7", self.adder_stages),
            );
        }
        if !(2..=8).contains(&self.result_banks) {
            return bad(
                "result_banks",
                format!("{} is not in 2..=8", self.result_banks),
            );
        }
        let longest_agg = HEADERS_BYTES + p;
        if self.max_frame_bytes < longest_agg || self.max_frame_bytes > 65_535 {
            return bad(
                "max_frame_bytes",
                format!(
                    "{} must hold the longest aggregation frame ({longest_agg} bytes = 64 + \
                     max_payload_bytes) and fit tuser's 16-bit length",
                    self.max_frame_bytes
                ),
            );
        }
        for (i, &(src, _)) in self.host_routes.iter().enumerate() {
            if src.count_ones() != 1 || self.port_codes.contains(&src) {
                return bad(
                    "host_routes",
                    format!("{src:#04x} is not a one-hot code distinct from the accelerator ports"),
                );
            }
            if self.host_routes[..i].iter().any(|&(s, _)| s == src) {
                return bad("host_routes", format!("{src:#04x} is routed twice"));
            }
        }
        let words =
            u64::from(self.slots) * u64::from(self.fifo_depth) * u64::from(self.cell_beats());
        if words > 1 << 16 {
            return bad(
                "fifo_depth",
                format!(
                    "{} slots × {} packets × {} beats = {words} beats per port buffer, more \
                     than 65536: lower slots, fifo_depth or max_payload_bytes",
                    self.slots,
                    self.fifo_depth,
                    self.cell_beats()
                ),
            );
        }
        Ok(())
    }

    /// Number of ports.
    pub fn ports(&self) -> u32 {
        self.port_codes.len() as u32
    }

    /// Bytes per beat.
    pub fn beat_bytes(&self) -> u32 {
        self.data_width / 8
    }

    /// Beats of the longest aggregation frame: one buffer cell.
    pub fn cell_beats(&self) -> u32 {
        (HEADERS_BYTES + self.max_payload_bytes).div_ceil(self.beat_bytes())
    }

    /// Beats holding the 64 header bytes (2 at 256 bits, else 1).
    pub fn header_beats(&self) -> u32 {
        HEADERS_BYTES.div_ceil(self.beat_bytes())
    }

    /// Beats of the longest frame let in: a frame that has not ended after this
    /// many beats is cut off and dropped (`oversize`).
    pub fn max_frame_beats(&self) -> u32 {
        self.max_frame_bytes.div_ceil(self.beat_bytes())
    }

    /// Depth in beats of the landing and bypass buffers: two longest frames,
    /// rounded up to a power of two.
    pub fn frame_buffer_beats(&self) -> u32 {
        (2 * self.max_frame_beats()).next_power_of_two()
    }

    /// Longest run of cycles the input can be held (`s_axis_tready` low with a
    /// beat offered) counting only cycles in which `m_axis_tready` is high:
    /// one bounded wait on a full packet buffer (`full_wait` cycles, the register's
    /// value), then at most one result frame ([`Self::cell_beats`]) the fair
    /// arbiter sends before the bypass path moves again, plus
    /// [`STALL_PIPELINE_CYCLES`] of pipeline.
    pub fn input_stall_bound(&self, full_wait: u32) -> u64 {
        u64::from(full_wait) + u64::from(self.cell_beats()) + STALL_PIPELINE_CYCLES
    }

    /// Elements per beat: the adder tree's lanes.
    pub fn lanes(&self) -> u32 {
        self.data_width / self.format.width()
    }

    /// The adder tree's configuration.
    pub fn tree(&self) -> FpTreeConfig {
        FpTreeConfig {
            inputs: self.ports(),
            lanes: self.lanes(),
            adder: FpAddConfig {
                format: self.format,
                stages: self.adder_stages,
                ftz: self.ftz,
            },
        }
    }

    /// The header parser's configuration.
    pub fn parser(&self) -> ParserConfig {
        ParserConfig {
            data_width: self.data_width,
            max_payload_bytes: self.max_payload_bytes,
        }
    }

    /// The default bypass destination of each port: port indices 0↔1, 2↔3, …
    /// (a wire); an odd last port sends back to itself.
    pub fn default_bypass_dst(&self) -> Vec<u8> {
        let c = &self.port_codes;
        (0..c.len())
            .map(|i| c.get(i ^ 1).copied().unwrap_or(c[i]))
            .collect()
    }

    /// A name that tells instances apart:
    /// `panama_w{width}_n{ports}_s{slots}_d{depth}_p{payload}_{format}[_ftz]_a{stages}`.
    pub fn module_suffix(&self) -> String {
        format!(
            "w{}_n{}_s{}_d{}_p{}_{}{}_a{}",
            self.data_width,
            self.ports(),
            self.slots,
            self.fifo_depth,
            self.max_payload_bytes,
            self.format.name(),
            if self.ftz { "_ftz" } else { "" },
            self.adder_stages
        )
    }
}
