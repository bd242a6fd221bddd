//! The `lightning` block: the Lightning top for an RFSoC board (DAC, ADC and
//! AXI-Lite clocks), with the board's XDC, Vivado TCL and the register map.

use super::{BoardTarget, CatalogError, Generated, ParamSpec, Settings};
use gen::board::{Board, ClockBinding, ConverterKind, Family};
use hdl::lightning::config::{Arith, DatapathConfig, WeightSource};
use hdl::lightning::decode::ACC_WIDTH_MIN;
use hdl::lightning::top::{cores_for_channels, lightning_top, TopConfig};
use hdl::lightning::top_regs::LOGIT_REGISTER_WIDTH;
use hdl::lightning::weights::load_weights;
use std::path::{Path, PathBuf};

/// The shipped digits MLP's weights: a data file that `scripts/train_lightning_mlp.py`
/// writes with its test set into `testbench/data/lightning/`, read at run time.
fn shipped_weights() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testbench/data/lightning/weights.json")
}

/// The board `gen lightning` targets without `--board`.
const DEFAULT_BOARD: &str = "zcu111";

/// Parameters of the `lightning` block: defaults from [`TopConfig::default`] and,
/// for `acc_width`, from the shipped weights file.
pub(super) fn params() -> Vec<ParamSpec> {
    let d = TopConfig::default();
    let shipped_acc = load_weights(&shipped_weights())
        .ok()
        .map(|w| w.acc_width.to_string());
    vec![
        ParamSpec::value("board", DEFAULT_BOARD, "zcu111 | rfsoc4x2 (also `--board`)"),
        ParamSpec::value(
            "weights",
            "shipped",
            "shipped (the 64-32-10 digits MLP) or the path of a weights.json",
        ),
        ParamSpec::derived(
            "acc_width",
            "from the weights file",
            shipped_acc,
            "accumulator bits, 13..=32",
        ),
        ParamSpec::value(
            "arith",
            Arith::default().name(),
            "wirespeed | released-rtl: the arithmetic contract (released-rtl: 16-bit accumulator)",
        ),
        ParamSpec::value(
            "cores",
            1,
            "photonic cores, each two DACs and one ADC: 1..=min(DAC channels / 2, ADC channels) of the board (zcu111: 4, rfsoc4x2: 1)",
        ),
        ParamSpec::value(
            "weight_source",
            "memory",
            "memory (on-chip, from the weights file) | stream (one AXI-Stream slave per core for a DMA engine)",
        ),
        ParamSpec::value(
            "adc_fifo_depth",
            d.adc_fifo_depth,
            "ADC-to-DAC clock FIFO words, a power of two (4..=1024)",
        ),
        ParamSpec::value(
            "command_fifo_depth",
            d.command_fifo_depth,
            "AXI-Lite-to-DAC command queue entries, a power of two (4..=1024)",
        ),
    ]
}

/// The weights file the settings name.
fn weights_path(s: &Settings) -> PathBuf {
    match s.get("weights") {
        "shipped" => shipped_weights(),
        p => Path::new(p).to_path_buf(),
    }
}

/// The datapath, the top's parameters and the board the settings describe.
pub fn lightning_config(s: &Settings) -> Result<(DatapathConfig, TopConfig, Board), CatalogError> {
    let board = Board::named(s.get("board"))?;
    board
        .require_family(Family::Rfsoc, "Lightning")
        .map_err(|e| CatalogError::BadValue {
            param: "board".into(),
            value: board.name.clone(),
            reason: e.to_string(),
        })?;
    let adc_samples = board
        .converters
        .iter()
        .find(|c| c.kind == ConverterKind::Adc)
        .map(|c| c.samples_per_clock)
        .ok_or_else(|| CatalogError::BadValue {
            param: "board".into(),
            value: board.name.clone(),
            reason: "the board description has no ADC stream".into(),
        })?;
    let path = weights_path(s);
    let model = load_weights(&path).map_err(|e| CatalogError::BadValue {
        param: "weights".into(),
        value: path.display().to_string(),
        reason: e.to_string(),
    })?;
    let arith = Arith::ALL
        .into_iter()
        .find(|a| a.name() == s.get("arith"))
        .ok_or_else(|| CatalogError::BadValue {
            param: "arith".into(),
            value: s.get("arith").to_string(),
            reason: "not a contract: give wirespeed or released-rtl".into(),
        })?;
    let acc = match s.given("acc_width") {
        None => arith.fixed_acc_width().unwrap_or(model.acc_width),
        Some(_) => {
            let bits = s.u32("acc_width")?;
            if !(ACC_WIDTH_MIN..=LOGIT_REGISTER_WIDTH).contains(&bits) {
                return Err(CatalogError::BadValue {
                    param: "acc_width".into(),
                    value: bits.to_string(),
                    reason: format!(
                        "the board top holds {ACC_WIDTH_MIN}..={LOGIT_REGISTER_WIDTH} bits (its logit registers are {LOGIT_REGISTER_WIDTH} bits wide)"
                    ),
                });
            }
            bits
        }
    };
    let cores = s.u32("cores")?;
    let limit = board_cores(&board)?;
    if cores == 0 || cores > limit {
        return Err(CatalogError::BadValue {
            param: "cores".into(),
            value: cores.to_string(),
            reason: format!(
                "board {} brings out enough converter channels for {} (a core needs two DACs and one ADC)",
                board.name,
                if limit == 1 {
                    "one core only".to_string()
                } else {
                    format!("1..={limit} cores")
                }
            ),
        });
    }
    let mut cfg = DatapathConfig {
        arith,
        ..model.datapath_config(acc, cores)
    };
    cfg.weight_source = match s.get("weight_source") {
        "memory" => WeightSource::Memory,
        "stream" => WeightSource::Stream,
        other => {
            return Err(CatalogError::BadValue {
                param: "weight_source".into(),
                value: other.into(),
                reason: "must be `memory` or `stream`".into(),
            })
        }
    };
    let top = TopConfig {
        adc_samples_per_clock: adc_samples,
        adc_fifo_depth: s.u32("adc_fifo_depth")?,
        command_fifo_depth: s.u32("command_fifo_depth")?,
    };
    top.validate(&cfg)?;
    Ok((cfg, top, board))
}

/// Cores the board's converters can feed: two DACs and one ADC per core.
fn board_cores(board: &Board) -> Result<u32, CatalogError> {
    let channels = |kind| board.converter(kind).map_or(0, |c| c.channels);
    let cores = cores_for_channels(channels(ConverterKind::Dac), channels(ConverterKind::Adc));
    if cores == 0 {
        return Err(CatalogError::BadValue {
            param: "board".into(),
            value: board.name.clone(),
            reason: "the board description has no DAC pair and ADC for a photonic core".into(),
        });
    }
    Ok(cores)
}

/// Builds the Lightning top for the settings' board.
pub(super) fn build(s: &Settings) -> Result<Generated, CatalogError> {
    let (cfg, top, board) = lightning_config(s)?;
    let (module, map) = lightning_top(&cfg, &top)?;
    let parameters = [
        ("acc_width", cfg.acc_width.to_string()),
        ("arith", cfg.arith.name().to_string()),
        ("cores", cfg.cores.to_string()),
        (
            "weight_source",
            match cfg.weight_source {
                WeightSource::Memory => "memory",
                WeightSource::Stream => "stream",
            }
            .to_string(),
        ),
        ("adc_fifo_depth", top.adc_fifo_depth.to_string()),
        ("command_fifo_depth", top.command_fifo_depth.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    Ok(Generated {
        module,
        extra_files: vec![],
        parameters,
        board: Some(BoardTarget {
            board,
            clocks: vec![
                ClockBinding::new("dac_aclk", "dac"),
                ClockBinding::new("adc_aclk", "adc"),
                ClockBinding::new("s_axi_aclk", "axil"),
            ],
            registers: Some(map),
        }),
    })
}
