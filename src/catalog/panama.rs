//! The `panama` block: the accelerator top for a NetFPGA board, with the board's
//! XDC, Vivado TCL and the register map.

use super::{BoardTarget, CatalogError, Generated, ParamSpec, Settings};
use gen::board::{Board, ClockBinding, Family, PortKind};
use hdl::panama::config::PanamaConfig;
use hdl::panama::top::panama_top;

/// Parameters of the `panama` block; `board` picks the defaults marked "board".
pub(super) const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "board",
        default: "netfpga-sume",
        help: "netfpga-sume | netfpga-plus-au250 | netfpga-plus-au280 (also `--board`)",
    },
    ParamSpec {
        name: "data_width",
        default: "board",
        help: "256 | 512 | 1024 bits (board: the board's datapath)",
    },
    ParamSpec {
        name: "ports",
        default: "board",
        help: "2..=8 accelerator ports (board: its Ethernet ports, then DMA)",
    },
    ParamSpec {
        name: "slots",
        default: "4",
        help: "job slots (1..=16)",
    },
    ParamSpec {
        name: "fifo_depth",
        default: "8",
        help: "packets per (slot, port) buffer, a power of two (1..=64)",
    },
    ParamSpec {
        name: "max_payload_bytes",
        default: "1024",
        help: "largest aggregation payload, a multiple of 64",
    },
    ParamSpec {
        name: "format",
        default: "fp32",
        help: "fp32 | bf16 | fp16",
    },
    ParamSpec {
        name: "ftz",
        default: "false",
        help: "flush subnormals to zero",
    },
    ParamSpec {
        name: "adder_stages",
        default: "board",
        help: "register cuts per fp adder, 0..=7 (board: 5 up to 250 MHz, else 7)",
    },
    ParamSpec {
        name: "result_banks",
        default: "4",
        help: "result buffer banks (2..=8)",
    },
    ParamSpec {
        name: "max_frame_bytes",
        default: "9600",
        help: "largest frame of any kind; longer ones are cut off and dropped (oversize)",
    },
    ParamSpec {
        name: "full_wait",
        default: "config",
        help: "reset value of full_wait: cycles a packet may hold the input on a full buffer (config: 4096)",
    },
    ParamSpec {
        name: "slot_timeout",
        default: "config",
        help: "reset value of slot_timeout: cycles a slot may wait before its heads are flushed (config: 1000000)",
    },
];

/// The setting `name`, or `config_value` (the typed config's default) for "config".
fn or_config(s: &Settings, name: &str, config_value: u32) -> Result<u32, CatalogError> {
    if s.get(name) == "config" {
        Ok(config_value)
    } else {
        s.u32(name)
    }
}

fn or_board(s: &Settings, name: &str, board_value: u32) -> Result<u32, CatalogError> {
    if s.get(name) == "board" {
        Ok(board_value)
    } else {
        s.u32(name)
    }
}

/// The accelerator configuration and board the settings describe.
pub fn panama_config(s: &Settings) -> Result<(PanamaConfig, Board), CatalogError> {
    let board = Board::named(s.get("board"))?;
    if board.family != Family::Netfpga {
        return Err(CatalogError::BadValue {
            param: "board".into(),
            value: board.name.clone(),
            reason: "PANAMA runs on a NetFPGA board (netfpga-sume, netfpga-plus-au250, netfpga-plus-au280)".into(),
        });
    }
    let mut codes: Vec<u8> = board
        .ports
        .iter()
        .filter(|p| p.kind == PortKind::Ethernet)
        .map(|p| p.one_hot as u8)
        .collect();
    let ethernet = codes.len() as u32;
    codes.extend(
        board
            .ports
            .iter()
            .filter(|p| p.kind == PortKind::Dma)
            .map(|p| p.one_hot as u8),
    );
    let ports = or_board(s, "ports", ethernet)?;
    if ports as usize > codes.len() {
        return Err(CatalogError::BadValue {
            param: "ports".into(),
            value: ports.to_string(),
            reason: format!("board {} has {} ports", board.name, codes.len()),
        });
    }
    codes.truncate(ports as usize);
    let mhz = board.clock("datapath").map_or(200.0, |c| c.mhz);
    let defaults = PanamaConfig::new(board.data_width, &codes);
    let dma: Vec<u8> = board
        .ports
        .iter()
        .filter(|p| p.kind == PortKind::Dma)
        .map(|p| p.one_hot as u8)
        .collect();
    let host_routes = defaults
        .host_routes
        .iter()
        .copied()
        .filter(|(src, _)| dma.contains(src))
        .collect();
    let cfg = PanamaConfig {
        data_width: or_board(s, "data_width", board.data_width)?,
        port_codes: codes,
        slots: s.u32("slots")?,
        fifo_depth: s.u32("fifo_depth")?,
        max_payload_bytes: s.u32("max_payload_bytes")?,
        format: s.format("format")?,
        ftz: s.bool("ftz")?,
        adder_stages: or_board(s, "adder_stages", if mhz <= 250.0 { 5 } else { 7 })?,
        result_banks: s.u32("result_banks")?,
        max_frame_bytes: s.u32("max_frame_bytes")?,
        full_wait: or_config(s, "full_wait", defaults.full_wait)?,
        slot_timeout: or_config(s, "slot_timeout", defaults.slot_timeout)?,
        host_routes,
    };
    cfg.validate()?;
    Ok((cfg, board))
}

/// Builds the accelerator top for the settings' board.
pub(super) fn build(s: &Settings) -> Result<Generated, CatalogError> {
    let (cfg, board) = panama_config(s)?;
    let (module, map) = panama_top(&cfg)?;
    Ok(Generated {
        module,
        extra_files: vec![],
        board: Some(BoardTarget {
            board,
            clocks: vec![
                ClockBinding::new("axis_aclk", "datapath"),
                ClockBinding::new("S_AXI_ACLK", "axil"),
            ],
            registers: Some(map),
        }),
    })
}
