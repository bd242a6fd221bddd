//! The catalog of generatable blocks: their names, parameters with defaults, and how
//! to build each from `key=value` settings. `wirespeed list` prints it and
//! `wirespeed gen` uses it.

use hdl::blocks::axil_regfile::{axil_regfile, Access, RegFileSpec, RegisterSpec};
use hdl::blocks::count_action::{count_action, CountActionConfig};
use hdl::blocks::fp::{fp_add, fp_add_tree, FpAddConfig, FpFormat, FpTreeConfig};
use hdl::blocks::{cdc, counter, fifo, skid};
use hdl::dsl::AxisConfig;
use hdl::Module;
use std::collections::BTreeMap;

mod lightning;
mod panama;
pub use lightning::lightning_config;
pub use panama::panama_config;

/// A parameter's default value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamDefault {
    /// A fixed value: the block's typed configuration's default, as text.
    Value(String),
    /// A value the block derives from its other settings when it is built (the
    /// board, the weights file): `rule` says how; `value` is what it comes to with
    /// the block's default settings (`None` if that cannot be worked out here).
    Derived {
        /// How the value is derived, e.g. "the board's datapath width".
        rule: &'static str,
        /// The value with the default settings.
        value: Option<String>,
    },
}

impl std::fmt::Display for ParamDefault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamDefault::Value(v) => f.write_str(v),
            ParamDefault::Derived {
                rule,
                value: Some(v),
            } => write!(f, "{v} ({rule})"),
            ParamDefault::Derived { rule, value: None } => write!(f, "{rule}"),
        }
    }
}

/// A parameter of a block: its name, default value and meaning.
#[derive(Clone, Debug)]
pub struct ParamSpec {
    /// Name used with `--set name=value`.
    pub name: &'static str,
    /// Default value.
    pub default: ParamDefault,
    /// What it means and which values it takes.
    pub help: &'static str,
}

impl ParamSpec {
    /// A parameter whose default is `default`.
    pub fn value(name: &'static str, default: impl ToString, help: &'static str) -> Self {
        ParamSpec {
            name,
            default: ParamDefault::Value(default.to_string()),
            help,
        }
    }

    /// A parameter whose default the block derives by `rule` when it is built;
    /// `value` is what it comes to with the default settings.
    pub fn derived(
        name: &'static str,
        rule: &'static str,
        value: Option<String>,
        help: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            default: ParamDefault::Derived { rule, value },
            help,
        }
    }
}

/// What generating a block produced: the top module and extra files (name, text).
pub struct Generated {
    /// The top module.
    pub module: Module,
    /// Extra outputs such as a register map (Markdown, C header, JSON), written next
    /// to the Verilog by the same all-or-nothing writer.
    pub extra_files: Vec<(String, String)>,
    /// The board the block targets, if any: its XDC, Vivado TCL and register-map
    /// files are written with the Verilog.
    pub board: Option<BoardTarget>,
    /// Every parameter of the block with the value used, for the manifest. A
    /// block's build function fills in the values it resolved (derived defaults,
    /// normalized spellings); [`BlockSpec::build`] adds the settings for the rest.
    pub parameters: BTreeMap<String, String>,
}

/// A block generated for a board.
pub struct BoardTarget {
    /// The board.
    pub board: gen::board::Board,
    /// Which top-level clock port has which board clock role.
    pub clocks: Vec<gen::board::ClockBinding>,
    /// The block's register map, if it has one.
    pub registers: Option<hdl::blocks::axil_regfile::RegisterMap>,
}

/// A generatable block.
pub struct BlockSpec {
    /// Name used on the command line.
    pub name: &'static str,
    /// One-line description.
    pub summary: &'static str,
    params: fn() -> Vec<ParamSpec>,
    build: fn(&Settings) -> Result<Generated, CatalogError>,
}

/// Why a block could not be generated from the given settings.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// No block of that name.
    #[error("unknown block `{0}`; `wirespeed list` shows the blocks")]
    UnknownBlock(String),
    /// A `--set` that is not `key=value`.
    #[error("`--set {0}` is not of the form key=value")]
    Malformed(String),
    /// A parameter the block does not have.
    #[error("block `{block}` has no parameter `{param}`; its parameters are: {known}")]
    UnknownParam {
        /// The block.
        block: String,
        /// The unknown parameter.
        param: String,
        /// The parameters it has.
        known: String,
    },
    /// A parameter given twice (`--board` sets `board` too).
    #[error("parameter `{param}` is given twice (`{first}` and `{second}`{}); give it once", if param == "board" { "; `--board` sets `board`" } else { "" })]
    Repeated {
        /// The parameter.
        param: String,
        /// The first value.
        first: String,
        /// The second value.
        second: String,
    },
    /// A value that does not parse or is out of range.
    #[error("parameter `{param}` = `{value}`: {reason}")]
    BadValue {
        /// The parameter.
        param: String,
        /// The value given.
        value: String,
        /// Why it is wrong.
        reason: String,
    },
    /// The generator rejected the design.
    #[error(transparent)]
    Design(#[from] hdl::HdlError),
    /// A document of the block (e.g. its register map's C header) cannot be made.
    #[error(transparent)]
    Output(#[from] gen::GenError),
}

/// Settings of a block: every parameter given, or its fixed default; a parameter
/// with a derived default only when given.
pub struct Settings(BTreeMap<String, String>);

impl Settings {
    fn get(&self, name: &str) -> &str {
        self.0.get(name).map(String::as_str).unwrap_or("")
    }

    /// The value given for `name`, if any (or its fixed default).
    fn given(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The setting `name` as a number, or `derived` when it was not given.
    fn u32_or(&self, name: &str, derived: u32) -> Result<u32, CatalogError> {
        match self.given(name) {
            Some(_) => self.u32(name),
            None => Ok(derived),
        }
    }

    fn u32(&self, name: &str) -> Result<u32, CatalogError> {
        let v = self.get(name);
        parse_u32(v).map_err(|reason| CatalogError::BadValue {
            param: name.into(),
            value: v.into(),
            reason,
        })
    }

    fn format(&self, name: &str) -> Result<FpFormat, CatalogError> {
        let v = self.get(name);
        v.parse().map_err(|reason| CatalogError::BadValue {
            param: name.into(),
            value: v.into(),
            reason,
        })
    }

    fn adder(&self) -> Result<FpAddConfig, CatalogError> {
        Ok(FpAddConfig {
            format: self.format("format")?,
            stages: self.u32("stages")?,
            ftz: self.bool("ftz")?,
        })
    }

    fn bool(&self, name: &str) -> Result<bool, CatalogError> {
        match self.get(name) {
            "true" | "1" | "yes" => Ok(true),
            "false" | "0" | "no" => Ok(false),
            v => Err(CatalogError::BadValue {
                param: name.into(),
                value: v.into(),
                reason: "expected true or false (1/0 and yes/no are accepted too)".into(),
            }),
        }
    }

    /// The settings given or defaulted (derived defaults not included).
    pub fn as_map(&self) -> &BTreeMap<String, String> {
        &self.0
    }
}

/// A parameter's number as a user writes it: decimal, `0x` hexadecimal or `0b`
/// binary, with `_` between digits allowed (`0xFFFF_FFFF`, `200_000`). The error
/// says whether the text is not a number or the number does not fit 32 bits.
pub fn parse_u32(text: &str) -> Result<u32, String> {
    let (digits, radix) = match text.get(..2) {
        Some("0x" | "0X") => (&text[2..], 16),
        Some("0b" | "0B") => (&text[2..], 2),
        _ => (text, 10),
    };
    let well_formed = !digits.is_empty()
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && digits.chars().all(|c| c == '_' || c.is_digit(radix));
    if !well_formed {
        return Err(
            "expected a non-negative integer (decimal, 0x hexadecimal or 0b binary)".into(),
        );
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    u32::from_str_radix(&clean, radix)
        .map_err(|_| format!("out of range: at most {} (0x{:X})", u32::MAX, u32::MAX))
}

fn module_only(module: Module) -> Generated {
    Generated {
        module,
        extra_files: vec![],
        board: None,
        parameters: BTreeMap::new(),
    }
}

/// Word width of the FIFOs by default; the FIFO generators take plain numbers,
/// so the catalog is these defaults' one source.
const FIFO_WIDTH: u32 = 32;
/// Capacity of the FIFOs by default, in words.
const FIFO_DEPTH: u32 = 512;
/// The register list of the `axil-regfile` block by default.
const DEFAULT_REGISTERS: &str = "control:rw:32,status:ro:32,packets:cow:32";

/// Parameters of the fp adder with `d`'s values as defaults.
fn fp_add_params(d: &FpAddConfig) -> Vec<ParamSpec> {
    vec![
        ParamSpec::value("format", d.format.name(), "fp32 | bf16 | fp16"),
        ParamSpec::value(
            "stages",
            d.stages,
            "pipeline registers, 0 (combinational) to 7",
        ),
        ParamSpec::value(
            "ftz",
            d.ftz,
            "flush subnormal inputs and outputs to signed zero",
        ),
    ]
}

/// Parameters of `fp-add-tree`: [`FpTreeConfig::default`].
fn fp_tree_params() -> Vec<ParamSpec> {
    let d = FpTreeConfig::default();
    let mut params = vec![
        ParamSpec::value("inputs", d.inputs, "operands per lane (1..=64)"),
        ParamSpec::value("lanes", d.lanes, "parallel lanes (1..=256)"),
    ];
    params.extend(fp_add_params(&d.adder));
    params
}

/// Parameters of `fifo`.
fn fifo_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::value("width", FIFO_WIDTH, "word width in bits (1..=4096)"),
        ParamSpec::value("depth", FIFO_DEPTH, "capacity in words"),
    ]
}

/// Parameters of `async-fifo`.
fn async_fifo_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::value("width", FIFO_WIDTH, "word width in bits (1..=4096)"),
        ParamSpec::value(
            "depth",
            FIFO_DEPTH,
            "capacity in words (a power of two, >= 4)",
        ),
    ]
}

/// Parameters of `sync-bits`.
fn sync_bits_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::value("width", 1, "bits synchronized independently"),
        ParamSpec::value("stages", 2, "flops in the chain (2..=8)"),
    ]
}

/// Parameters of `axis-skid`.
fn axis_skid_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::value(
            "data_width",
            256,
            "tdata width in bits (a multiple of 8 with packets=true)",
        ),
        ParamSpec::value("user_width", 128, "tuser width in bits (0 = no tuser)"),
        ParamSpec::value("packets", true, "carry tkeep and tlast"),
    ]
}

/// Parameters of `axil-regfile`.
fn regfile_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::value("name", "regfile", "module name"),
        ParamSpec::value(
            "registers",
            DEFAULT_REGISTERS,
            "comma-separated name:access:width (access rw | ro | cow)",
        ),
        ParamSpec::value("addr_width", 12, "AXI-Lite address bits"),
        ParamSpec::value(
            "separate_clock",
            true,
            "AXI-Lite on S_AXI_ACLK, datapath ports on clk, with crossings",
        ),
    ]
}

/// Parameters of `count-action`: [`CountActionConfig::default`].
fn count_action_params() -> Vec<ParamSpec> {
    let d = CountActionConfig::default();
    vec![
        ParamSpec::value(
            "events",
            d.events,
            "event strobes counted per cycle (1 = a single strobe)",
        ),
        ParamSpec::value(
            "count_width",
            d.count_width,
            "count and target width (1..=48)",
        ),
    ]
}

/// Every block `wirespeed gen` can write.
pub fn blocks() -> &'static [BlockSpec] {
    &[
        BlockSpec {
            name: "fifo",
            summary: "synchronous first-word-fall-through FIFO in block RAM",
            params: fifo_params,
            build: |s| {
                Ok(module_only(fifo::sync_fifo(
                    s.u32("width")?,
                    s.u32("depth")?,
                )?))
            },
        },
        BlockSpec {
            name: "async-fifo",
            summary: "asynchronous FIFO (Gray-coded pointers) between two clock domains",
            params: async_fifo_params,
            build: |s| {
                Ok(module_only(fifo::async_fifo(
                    s.u32("width")?,
                    s.u32("depth")?,
                )?))
            },
        },
        BlockSpec {
            name: "sync-bits",
            summary: "multi-flop synchronizer for level signals",
            params: sync_bits_params,
            build: |s| {
                Ok(module_only(cdc::sync_bits(
                    s.u32("width")?,
                    s.u32("stages")?,
                )?))
            },
        },
        BlockSpec {
            name: "pulse-sync",
            summary: "single-cycle pulse crossing (toggle + two-flop synchronizer)",
            params: Vec::new,
            build: |_| Ok(module_only(cdc::pulse_sync()?)),
        },
        BlockSpec {
            name: "handshake-sync",
            summary: "multi-bit word crossing with a toggle request/acknowledge handshake",
            params: || vec![ParamSpec::value("width", 32, "word width in bits")],
            build: |s| Ok(module_only(cdc::handshake_sync(s.u32("width")?)?)),
        },
        BlockSpec {
            name: "axis-skid",
            summary: "AXI-Stream skid buffer: registered tready, full throughput",
            params: axis_skid_params,
            build: |s| {
                let cfg = AxisConfig {
                    data_width: s.u32("data_width")?,
                    user_width: s.u32("user_width")?,
                    packets: s.bool("packets")?,
                };
                Ok(module_only(skid::axis_skid(&cfg)?))
            },
        },
        BlockSpec {
            name: "axil-regfile",
            summary: "AXI-Lite register file from a register list, with its register map",
            params: regfile_params,
            build: build_regfile,
        },
        BlockSpec {
            name: "fp-add",
            summary: "pipelined IEEE-754 adder, round to nearest even, subnormals or ftz",
            params: || fp_add_params(&FpAddConfig::default()),
            build: |s| Ok(module_only(fp_add(&s.adder()?)?)),
        },
        BlockSpec {
            name: "fp-add-tree",
            summary: "balanced tree of fp-add: inputs x lanes, PANAMA's pairing order",
            params: fp_tree_params,
            build: |s| {
                let cfg = FpTreeConfig {
                    inputs: s.u32("inputs")?,
                    lanes: s.u32("lanes")?,
                    adder: s.adder()?,
                };
                Ok(module_only(fp_add_tree(&cfg)?))
            },
        },
        BlockSpec {
            name: "count-action",
            summary: "Lightning's count-action unit: count events, fire at a run-time target",
            params: count_action_params,
            build: |s| {
                let cfg = CountActionConfig {
                    events: s.u32("events")?,
                    count_width: s.u32("count_width")?,
                };
                Ok(module_only(count_action(&cfg)?))
            },
        },
        BlockSpec {
            name: "counter",
            summary: "up-counter with synchronous load and enable",
            params: || vec![ParamSpec::value("width", 32, "counter width (1..=64)")],
            build: |s| Ok(module_only(counter::up_counter(s.u32("width")?)?)),
        },
        BlockSpec {
            name: "panama",
            summary: "PANAMA in-network aggregation accelerator for a NetFPGA board (`--board`)",
            params: panama::params,
            build: panama::build,
        },
        BlockSpec {
            name: "lightning",
            summary: "Lightning photonic-inference top for an RFSoC board (`--board`)",
            params: lightning::params,
            build: lightning::build,
        },
    ]
}

fn build_regfile(s: &Settings) -> Result<Generated, CatalogError> {
    let list = s.get("registers");
    let bad = |reason: &str| CatalogError::BadValue {
        param: "registers".into(),
        value: list.into(),
        reason: reason.into(),
    };
    let mut registers = Vec::new();
    for item in list.split(',').filter(|i| !i.is_empty()) {
        let fields: Vec<&str> = item.split(':').collect();
        let [name, access, width] = fields[..] else {
            return Err(bad(&format!("`{item}` is not name:access:width")));
        };
        let access = match access {
            "rw" => Access::ReadWrite,
            "ro" => Access::ReadOnly,
            "cow" => Access::ClearOnWrite,
            other => return Err(bad(&format!("access `{other}` is not rw, ro or cow"))),
        };
        let width =
            parse_u32(width).map_err(|reason| bad(&format!("width `{width}`: {reason}")))?;
        registers.push(RegisterSpec::new(name, access, width));
    }
    let spec = RegFileSpec {
        name: s.get("name").to_string(),
        registers,
        addr_width: s.u32("addr_width")?,
        separate_clock: s.bool("separate_clock")?,
    };
    let (module, map) = axil_regfile(&spec)?;
    let extra_files = gen::board::register_map_files(&map, &spec.name)?;
    Ok(Generated {
        module,
        extra_files,
        board: None,
        parameters: BTreeMap::new(),
    })
}

/// The block called `name` with its settings resolved from `key=value` pairs
/// and an optional `--board` (the same as `board=NAME`).
pub fn find_with_settings(
    name: &str,
    sets: &[String],
    board: Option<&str>,
) -> Result<(&'static BlockSpec, Settings), CatalogError> {
    let spec = find(name)?;
    let mut sets = sets.to_vec();
    if let Some(b) = board {
        sets.push(format!("board={b}"));
    }
    let settings = spec.settings(&sets)?;
    Ok((spec, settings))
}

/// The block called `name`, or an error listing the known blocks.
pub fn find(name: &str) -> Result<&'static BlockSpec, CatalogError> {
    blocks()
        .iter()
        .find(|b| b.name == name)
        .ok_or_else(|| CatalogError::UnknownBlock(name.to_string()))
}

impl BlockSpec {
    /// The block's parameters, their meaning and defaults (from the typed
    /// configurations of the designs).
    pub fn params(&self) -> Vec<ParamSpec> {
        (self.params)()
    }

    /// Resolves `key=value` settings against the block's parameters (fixed
    /// defaults for the rest; derived defaults are resolved when it is built).
    pub fn settings(&self, sets: &[String]) -> Result<Settings, CatalogError> {
        let params = self.params();
        let mut map: BTreeMap<String, String> = params
            .iter()
            .filter_map(|p| match &p.default {
                ParamDefault::Value(v) => Some((p.name.to_string(), v.clone())),
                ParamDefault::Derived { .. } => None,
            })
            .collect();
        let mut given: BTreeMap<&str, &str> = BTreeMap::new();
        for set in sets {
            let Some((key, value)) = set.split_once('=') else {
                return Err(CatalogError::Malformed(set.clone()));
            };
            if let Some(first) = given.insert(key, value) {
                return Err(CatalogError::Repeated {
                    param: key.into(),
                    first: first.into(),
                    second: value.into(),
                });
            }
            if !params.iter().any(|p| p.name == key) {
                let known: Vec<&str> = params.iter().map(|p| p.name).collect();
                return Err(CatalogError::UnknownParam {
                    block: self.name.into(),
                    param: key.into(),
                    known: if known.is_empty() {
                        "(none)".into()
                    } else {
                        known.join(", ")
                    },
                });
            }
            map.insert(key.to_string(), value.to_string());
        }
        Ok(Settings(map))
    }

    /// Builds the block with resolved settings; [`Generated::parameters`] holds
    /// every parameter with the value used.
    pub fn build(&self, settings: &Settings) -> Result<Generated, CatalogError> {
        let mut generated = (self.build)(settings)?;
        for (name, value) in settings.as_map() {
            generated
                .parameters
                .entry(name.clone())
                .or_insert_with(|| value.clone());
        }
        Ok(generated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_records_every_parameter_it_was_built_with() {
        for block in blocks() {
            let g = block
                .build(&block.settings(&[]).expect("defaults"))
                .unwrap_or_else(|e| panic!("{}: {e}", block.name));
            let names: Vec<&str> = g.parameters.keys().map(String::as_str).collect();
            let mut want: Vec<&str> = block.params().iter().map(|p| p.name).collect();
            want.sort_unstable();
            assert_eq!(names, want, "{}", block.name);
            for p in block.params() {
                if let ParamDefault::Derived { value: Some(v), .. } = &p.default {
                    assert_eq!(&g.parameters[p.name], v, "{}.{}", block.name, p.name);
                }
            }
        }
    }

    #[test]
    fn numbers_parse_in_decimal_hexadecimal_and_binary_with_separators() {
        for (text, want) in [
            ("0", 0),
            ("200000", 200_000),
            ("200_000", 200_000),
            ("0xFFFFFFFF", u32::MAX),
            ("0XffFF_ffff", u32::MAX),
            ("0x10", 16),
            ("0b101", 5),
            ("4294967295", u32::MAX),
        ] {
            assert_eq!(parse_u32(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn a_number_too_large_is_out_of_range_and_a_non_number_is_not_a_number() {
        for text in ["4294967296", "0x1_0000_0000", "99999999999999999999"] {
            let reason = parse_u32(text).expect_err(text);
            assert!(reason.contains("out of range"), "{text}: {reason}");
        }
        for text in ["", "abc", "-1", "0x", "0b2", "_1", "1_", "1.5", "+3", " 1"] {
            let reason = parse_u32(text).expect_err(text);
            assert!(reason.contains("non-negative integer"), "{text}: {reason}");
        }
    }
}
