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

/// A parameter of a block: its name, default value and meaning.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    /// Name used with `--set name=value`.
    pub name: &'static str,
    /// Default value, as text.
    pub default: &'static str,
    /// What it means and which values it takes.
    pub help: &'static str,
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
    /// Parameters and defaults.
    pub params: &'static [ParamSpec],
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
    #[error("parameter `{param}` is given twice (`{first}` and `{second}`; `--board` sets `board`); give it once")]
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

/// Resolved settings: every parameter of the block, given or defaulted.
pub struct Settings(BTreeMap<String, String>);

impl Settings {
    fn get(&self, name: &str) -> &str {
        self.0.get(name).map(String::as_str).unwrap_or("")
    }

    fn u32(&self, name: &str) -> Result<u32, CatalogError> {
        let v = self.get(name);
        v.parse().map_err(|_| CatalogError::BadValue {
            param: name.into(),
            value: v.into(),
            reason: "expected a non-negative integer".into(),
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

    /// All settings, for the manifest.
    pub fn as_map(&self) -> &BTreeMap<String, String> {
        &self.0
    }
}

fn module_only(module: Module) -> Generated {
    Generated {
        module,
        extra_files: vec![],
        board: None,
    }
}

const WIDTH_DEPTH: &[ParamSpec] = &[
    ParamSpec {
        name: "width",
        default: "32",
        help: "word width in bits (1..=4096)",
    },
    ParamSpec {
        name: "depth",
        default: "512",
        help: "capacity in words",
    },
];

const FP_ADD: &[ParamSpec] = &[
    ParamSpec {
        name: "format",
        default: "fp32",
        help: "fp32 | bf16 | fp16",
    },
    ParamSpec {
        name: "stages",
        default: "3",
        help: "pipeline registers, 0 (combinational) to 7",
    },
    ParamSpec {
        name: "ftz",
        default: "false",
        help: "flush subnormal inputs and outputs to signed zero",
    },
];

const FP_TREE: &[ParamSpec] = &[
    ParamSpec {
        name: "inputs",
        default: "4",
        help: "operands per lane (1..=64)",
    },
    ParamSpec {
        name: "lanes",
        default: "16",
        help: "parallel lanes (1..=256)",
    },
    FP_ADD[0],
    FP_ADD[1],
    FP_ADD[2],
];

/// Every block `wirespeed gen` can write.
pub fn blocks() -> &'static [BlockSpec] {
    &[
        BlockSpec {
            name: "fifo",
            summary: "synchronous first-word-fall-through FIFO in block RAM",
            params: WIDTH_DEPTH,
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
            params: &[
                ParamSpec {
                    name: "width",
                    default: "32",
                    help: "word width in bits (1..=4096)",
                },
                ParamSpec {
                    name: "depth",
                    default: "512",
                    help: "capacity in words (a power of two, >= 4)",
                },
            ],
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
            params: &[
                ParamSpec {
                    name: "width",
                    default: "1",
                    help: "bits synchronized independently",
                },
                ParamSpec {
                    name: "stages",
                    default: "2",
                    help: "flops in the chain (2..=8)",
                },
            ],
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
            params: &[],
            build: |_| Ok(module_only(cdc::pulse_sync()?)),
        },
        BlockSpec {
            name: "handshake-sync",
            summary: "multi-bit word crossing with a toggle request/acknowledge handshake",
            params: &[ParamSpec {
                name: "width",
                default: "32",
                help: "word width in bits",
            }],
            build: |s| Ok(module_only(cdc::handshake_sync(s.u32("width")?)?)),
        },
        BlockSpec {
            name: "axis-skid",
            summary: "AXI-Stream skid buffer: registered tready, full throughput",
            params: &[
                ParamSpec {
                    name: "data_width",
                    default: "256",
                    help: "tdata width in bits (a multiple of 8 with packets=true)",
                },
                ParamSpec {
                    name: "user_width",
                    default: "128",
                    help: "tuser width in bits (0 = no tuser)",
                },
                ParamSpec {
                    name: "packets",
                    default: "true",
                    help: "carry tkeep and tlast",
                },
            ],
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
            params: &[
                ParamSpec {
                    name: "name",
                    default: "regfile",
                    help: "module name",
                },
                ParamSpec {
                    name: "registers",
                    default: "control:rw:32,status:ro:32,packets:cow:32",
                    help: "comma-separated name:access:width (access rw | ro | cow)",
                },
                ParamSpec {
                    name: "addr_width",
                    default: "12",
                    help: "AXI-Lite address bits",
                },
                ParamSpec {
                    name: "separate_clock",
                    default: "true",
                    help: "AXI-Lite on S_AXI_ACLK, datapath ports on clk, with crossings",
                },
            ],
            build: build_regfile,
        },
        BlockSpec {
            name: "fp-add",
            summary: "pipelined IEEE-754 adder, round to nearest even, subnormals or ftz",
            params: FP_ADD,
            build: |s| Ok(module_only(fp_add(&s.adder()?)?)),
        },
        BlockSpec {
            name: "fp-add-tree",
            summary: "balanced tree of fp-add: inputs x lanes, PANAMA's pairing order",
            params: FP_TREE,
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
            params: &[
                ParamSpec {
                    name: "events",
                    default: "16",
                    help: "event strobes counted per cycle (1 = a single strobe)",
                },
                ParamSpec {
                    name: "count_width",
                    default: "16",
                    help: "count and target width (1..=48)",
                },
            ],
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
            params: &[ParamSpec {
                name: "width",
                default: "32",
                help: "counter width (1..=64)",
            }],
            build: |s| Ok(module_only(counter::up_counter(s.u32("width")?)?)),
        },
        BlockSpec {
            name: "panama",
            summary: "PANAMA in-network aggregation accelerator for a NetFPGA board (`--board`)",
            params: panama::PARAMS,
            build: panama::build,
        },
        BlockSpec {
            name: "lightning",
            summary: "Lightning photonic-inference top for an RFSoC board (`--board`)",
            params: lightning::PARAMS,
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
        let width = width
            .parse()
            .map_err(|_| bad(&format!("width `{width}` is not a number")))?;
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
    /// Resolves `key=value` settings against the block's parameters (defaults for
    /// the rest).
    pub fn settings(&self, sets: &[String]) -> Result<Settings, CatalogError> {
        let mut map: BTreeMap<String, String> = self
            .params
            .iter()
            .map(|p| (p.name.to_string(), p.default.to_string()))
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
            if !map.contains_key(key) {
                let known: Vec<&str> = self.params.iter().map(|p| p.name).collect();
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

    /// Builds the block with resolved settings.
    pub fn build(&self, settings: &Settings) -> Result<Generated, CatalogError> {
        (self.build)(settings)
    }
}
