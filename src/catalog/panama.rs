//! The `panama` block: the accelerator top for a NetFPGA board, with the board's
//! XDC, Vivado TCL and the register map.

use super::{BoardTarget, CatalogError, Generated, ParamSpec, Settings};
use gen::board::{Board, ClockBinding, Family};
use hdl::panama::config::PanamaConfig;
use hdl::panama::top::panama_top;
use std::collections::BTreeMap;

/// The board `gen panama` targets without `--board`.
const DEFAULT_BOARD: &str = "netfpga-sume";

/// Parameters of the `panama` block: defaults from [`PanamaConfig::new`] and, for
/// the board-derived ones, from the default board.
pub(super) fn params() -> Vec<ParamSpec> {
    let board = Board::named(DEFAULT_BOARD).ok();
    let d = PanamaConfig::new(
        board.as_ref().map_or(0, |b| b.data_width),
        &board
            .as_ref()
            .map(Board::ethernet_codes)
            .unwrap_or_default(),
    );
    let derived =
        |f: &dyn Fn(&Board) -> Option<u32>| board.as_ref().and_then(f).map(|v| v.to_string());
    vec![
        ParamSpec::value(
            "board",
            DEFAULT_BOARD,
            "netfpga-sume | netfpga-plus-au250 | netfpga-plus-au280 (also `--board`)",
        ),
        ParamSpec::derived(
            "data_width",
            "from the board: its datapath width",
            derived(&|b| Some(b.data_width)),
            "256 | 512 | 1024 bits",
        ),
        ParamSpec::derived(
            "ports",
            "from the board: its Ethernet ports",
            derived(&|b| Some(b.ethernet_codes().len() as u32)),
            "2..=8 accelerator ports: the board's Ethernet ports, then its DMA queues",
        ),
        ParamSpec::value("slots", d.slots, "job slots (1..=16)"),
        ParamSpec::value(
            "fifo_depth",
            d.fifo_depth,
            "packets per (slot, port) buffer, a power of two (1..=64)",
        ),
        ParamSpec::value(
            "max_payload_bytes",
            d.max_payload_bytes,
            "largest aggregation payload, a multiple of 64",
        ),
        ParamSpec::value("format", d.format.name(), "fp32 | bf16 | fp16"),
        ParamSpec::value("ftz", d.ftz, "flush subnormals to zero"),
        ParamSpec::derived(
            "adder_stages",
            "from the board's datapath clock: 5 up to 250 MHz, else 7",
            derived(&Board::fp_adder_stages),
            "register cuts per fp adder, 0..=7",
        ),
        ParamSpec::value(
            "result_banks",
            d.result_banks,
            "result buffer banks (2..=8)",
        ),
        ParamSpec::value(
            "max_frame_bytes",
            d.max_frame_bytes,
            "largest frame of any kind; longer ones are cut off and dropped (oversize)",
        ),
        ParamSpec::value(
            "full_wait",
            d.full_wait,
            "reset value of full_wait: cycles a packet may hold the input on a full buffer",
        ),
        ParamSpec::value(
            "slot_timeout",
            d.slot_timeout,
            "reset value of slot_timeout: cycles a slot may wait before its heads are flushed",
        ),
    ]
}

/// The accelerator configuration and board the settings describe.
pub fn panama_config(s: &Settings) -> Result<(PanamaConfig, Board), CatalogError> {
    let board = Board::named(s.get("board"))?;
    board
        .require_family(Family::Netfpga, "PANAMA")
        .map_err(|e| CatalogError::BadValue {
            param: "board".into(),
            value: board.name.clone(),
            reason: e.to_string(),
        })?;
    let mut codes = board.port_codes();
    let ports = s.u32_or("ports", board.ethernet_codes().len() as u32)?;
    if ports as usize > codes.len() {
        return Err(CatalogError::BadValue {
            param: "ports".into(),
            value: ports.to_string(),
            reason: format!("board {} has {} ports", board.name, codes.len()),
        });
    }
    codes.truncate(ports as usize);
    let adder_stages = board
        .fp_adder_stages()
        .ok_or_else(|| CatalogError::BadValue {
            param: "board".into(),
            value: board.name.clone(),
            reason: "the board description has no datapath clock".into(),
        })?;
    let defaults = PanamaConfig::new(board.data_width, &codes);
    let dma = board.dma_codes();
    let host_routes = defaults
        .host_routes
        .iter()
        .copied()
        .filter(|(src, _)| dma.contains(src))
        .collect();
    let cfg = PanamaConfig {
        data_width: s.u32_or("data_width", board.data_width)?,
        port_codes: codes,
        slots: s.u32("slots")?,
        fifo_depth: s.u32("fifo_depth")?,
        max_payload_bytes: s.u32("max_payload_bytes")?,
        format: s.format("format")?,
        ftz: s.bool("ftz")?,
        adder_stages: s.u32_or("adder_stages", adder_stages)?,
        result_banks: s.u32("result_banks")?,
        max_frame_bytes: s.u32("max_frame_bytes")?,
        full_wait: s.u32("full_wait")?,
        slot_timeout: s.u32("slot_timeout")?,
        host_routes,
    };
    cfg.validate()?;
    Ok((cfg, board))
}

/// Every parameter of the block with the value `cfg` on `board` uses.
fn resolved(cfg: &PanamaConfig, board: &Board) -> BTreeMap<String, String> {
    [
        ("board", board.name.clone()),
        ("data_width", cfg.data_width.to_string()),
        ("ports", cfg.ports().to_string()),
        ("slots", cfg.slots.to_string()),
        ("fifo_depth", cfg.fifo_depth.to_string()),
        ("max_payload_bytes", cfg.max_payload_bytes.to_string()),
        ("format", cfg.format.name().to_string()),
        ("ftz", cfg.ftz.to_string()),
        ("adder_stages", cfg.adder_stages.to_string()),
        ("result_banks", cfg.result_banks.to_string()),
        ("max_frame_bytes", cfg.max_frame_bytes.to_string()),
        ("full_wait", cfg.full_wait.to_string()),
        ("slot_timeout", cfg.slot_timeout.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Builds the accelerator top for the settings' board.
pub(super) fn build(s: &Settings) -> Result<Generated, CatalogError> {
    let (cfg, board) = panama_config(s)?;
    let (module, map) = panama_top(&cfg)?;
    let parameters = resolved(&cfg, &board);
    Ok(Generated {
        module,
        extra_files: vec![],
        parameters,
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
