//! The netlist data structures: a `Module` is nets, ports, clock domains,
//! registers, memories and instances of other modules.

use super::error::{HdlError, HdlErrorKind};
use super::names::is_legal_identifier;
use crate::bits::Bits;
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::panic::Location;
use std::sync::Arc;

/// Index of a net in its module's `nets`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NetId(pub u32);

/// Index of a port in its module's `ports`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortId(pub u32);

/// Index of a clock domain in its module's `domains`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DomainId(pub u32);

/// Index of a register in its module's `regs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegId(pub u32);

/// Index of a memory in its module's `mems`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemId(pub u32);

/// Index of an instance in its module's `instances`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstId(pub u32);

/// Where in the generator's Rust source something of the IR was built: the line of
/// the builder call (`#[track_caller]` carries it through the builder API) that made a
/// net, an instance or a module.
///
/// It is metadata, not structure: equality and hashing ignore it, so two modules that
/// differ only in where they were built are the same module (and are emitted once).
#[derive(Clone, Copy, Debug, Default)]
pub struct SourceLoc(Option<&'static Location<'static>>);

impl SourceLoc {
    /// The location of the caller (through any chain of `#[track_caller]` functions).
    #[track_caller]
    pub fn caller() -> Self {
        SourceLoc(Some(Location::caller()))
    }

    /// The location `loc`.
    pub fn at(loc: &'static Location<'static>) -> Self {
        SourceLoc(Some(loc))
    }

    /// No known location (nets made by IR passes rather than by a builder call).
    pub fn unknown() -> Self {
        SourceLoc(None)
    }

    /// `file:line`, the file relative to the workspace root with `/` separators, or
    /// `None` when unknown. Cargo names the files of workspace crates relative to the
    /// workspace root already; an absolute path under the root of the workspace `hdl`
    /// was built in is made relative to it, any other path is kept as it is.
    pub fn relative(&self) -> Option<String> {
        let loc = self.0?;
        let file = loc.file().replace('\\', "/");
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../").replace('\\', "/");
        let root = root.strip_suffix("hdl/../").unwrap_or(&root);
        let file = file.strip_prefix(root).unwrap_or(&file);
        Some(format!("{file}:{}", loc.line()))
    }
}

impl PartialEq for SourceLoc {
    /// Always true: a location never makes two IR objects different.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for SourceLoc {}

impl Hash for SourceLoc {
    /// Hashes nothing, consistent with [`PartialEq`].
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

/// A finished, validated module. Cheap to clone (shared), immutable.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Module(Arc<ModuleData>);

impl Module {
    /// Wraps validated data; only `ModuleBuilder::finish` and IR passes call this.
    pub(crate) fn from_data(data: ModuleData) -> Self {
        Module(Arc::new(data))
    }

    /// The same module called `name`: how a generated top takes the name a project
    /// expects (NetFPGA's `output_port_lookup`). Errors if `name` is not a legal
    /// Verilog identifier.
    pub fn renamed(&self, name: &str) -> Result<Module, HdlError> {
        if !is_legal_identifier(name) {
            return Err(HdlError::new(
                &self.name,
                None,
                HdlErrorKind::BadName(format!(
                    "module name `{name}` is not a legal Verilog identifier"
                )),
            ));
        }
        let mut data = (*self.0).clone();
        data.name = name.to_string();
        Ok(Module::from_data(data))
    }

    /// True if both handles share the same data (same module object).
    pub fn ptr_eq(&self, other: &Module) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for Module {
    type Target = ModuleData;
    fn deref(&self) -> &ModuleData {
        &self.0
    }
}

/// Everything a module is made of.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ModuleData {
    /// Module name, a legal Verilog identifier.
    pub name: String,
    /// Ports in declaration order.
    pub ports: Vec<Port>,
    /// All nets; a net's index is its `NetId`.
    pub nets: Vec<Net>,
    /// Clock domains declared in this module.
    pub domains: Vec<ClockDomain>,
    /// Registers.
    pub regs: Vec<Register>,
    /// Memories.
    pub mems: Vec<Memory>,
    /// Instances of other modules.
    pub instances: Vec<Instance>,
    /// What the module's ports look like from outside (domains, combinational paths).
    pub summary: PortSummary,
    /// Verilog parameters the module declares for the context that instantiates it.
    pub parameters: Vec<Parameter>,
    /// Where the generator started the module (its `ModuleBuilder::new` call).
    pub location: SourceLoc,
}

impl Module {
    /// This module and every distinct module below it (each name once), depth
    /// first in instance order, this one first.
    pub fn distinct_modules(&self) -> Vec<Module> {
        let mut seen = BTreeSet::new();
        let mut order = vec![];
        let mut todo = vec![self.clone()];
        while let Some(m) = todo.pop() {
            if !seen.insert(m.name.clone()) {
                continue;
            }
            todo.extend(m.instances.iter().rev().map(|i| i.module.clone()));
            order.push(m);
        }
        order
    }
}

impl ModuleData {
    /// The names of every module instantiated below this one, at any depth.
    pub fn descendant_names(&self) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        let mut todo: Vec<&ModuleData> = vec![self];
        while let Some(m) = todo.pop() {
            for inst in &m.instances {
                if names.insert(inst.module.name.clone()) {
                    todo.push(&inst.module);
                }
            }
        }
        names
    }

    /// The port called `name`.
    pub fn port(&self, name: &str) -> Option<(PortId, &Port)> {
        self.ports
            .iter()
            .enumerate()
            .find(|(_, p)| p.name == name)
            .map(|(i, p)| (PortId(i as u32), p))
    }

    /// The net with id `id`.
    pub fn net(&self, id: NetId) -> &Net {
        &self.nets[id.0 as usize]
    }

    /// The net whose value `id` carries, through wires (aliases).
    pub fn source(&self, mut id: NetId) -> NetId {
        while let Driver::Alias(src) = self.net(id).driver {
            id = src;
        }
        id
    }

    /// The literal `id` carries (through wires), if it carries one.
    pub fn literal(&self, id: NetId) -> Option<&Bits> {
        match &self.net(self.source(id)).driver {
            Driver::Op(Op::Const(k)) => Some(k),
            _ => None,
        }
    }

    /// The domain called `name`.
    pub fn domain(&self, name: &str) -> Option<(DomainId, &ClockDomain)> {
        self.domains
            .iter()
            .enumerate()
            .find(|(_, d)| d.name == name)
            .map(|(i, d)| (DomainId(i as u32), d))
    }

    /// A human-readable name for a net: its own name, or a description of its driver.
    pub fn describe_net(&self, id: NetId) -> String {
        let net = self.net(id);
        match &net.name {
            Some(n) => n.clone(),
            None => format!("<{} #{}>", net.driver.kind_name(), id.0),
        }
    }
}

/// Direction of a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Driven from outside.
    Input,
    /// Driven by the module.
    Output,
}

/// What a port carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PortKind {
    /// Ordinary data.
    Data,
    /// The clock of a domain (an input).
    Clock,
    /// The synchronous reset of a domain (an input).
    Reset,
}

/// A module port.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Port {
    /// Port name.
    pub name: String,
    /// Input or output.
    pub direction: Direction,
    /// Data, clock or reset.
    pub kind: PortKind,
    /// The net inside the module that is this port.
    pub net: NetId,
}

/// A named bundle of bits inside a module.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Net {
    /// Name given by the builder (ports, wires, registers, named values), if any.
    pub name: Option<String>,
    /// Width in bits, at least 1.
    pub width: u32,
    /// What gives the net its value.
    pub driver: Driver,
    /// The generator line that made the net (an operation, port, wire, register …).
    pub location: SourceLoc,
}

/// The single source of a net's value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Driver {
    /// An input port (data, clock or reset).
    Input(PortId),
    /// A combinational operation.
    Op(Op),
    /// Equal to another net (a wire or output that was assigned).
    Alias(NetId),
    /// The output of a register.
    Reg(RegId),
    /// The registered data of a memory read port.
    MemRead {
        /// The memory.
        mem: MemId,
        /// Index into the memory's `reads`.
        port: u32,
    },
    /// An output port of an instance.
    InstanceOutput {
        /// The instance.
        inst: InstId,
        /// Port index in the instantiated module.
        port: PortId,
    },
    /// Not driven (yet). Validation rejects a finished module with such a net.
    Undriven,
}

impl Driver {
    /// Short name of the driver kind, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Driver::Input(_) => "input",
            Driver::Op(op) => op.name(),
            Driver::Alias(_) => "wire",
            Driver::Reg(_) => "register",
            Driver::MemRead { .. } => "memory read",
            Driver::InstanceOutput { .. } => "instance output",
            Driver::Undriven => "undriven",
        }
    }
}

/// Two-operand operations whose operands are zero-extended to the result width
/// and whose result is taken modulo 2^width (the builder chooses the width).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ArithOp {
    /// Sum.
    Add,
    /// Difference (two's complement).
    Sub,
    /// Unsigned product.
    Mul,
}

/// Bitwise two-operand operations on equal widths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BitOp {
    /// `a & b`.
    And,
    /// `a | b`.
    Or,
    /// `a ^ b`.
    Xor,
}

/// Comparisons of two equal-width operands; the result is 1 bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CmpOp {
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// Unsigned `a < b`.
    LtU,
    /// Unsigned `a <= b`.
    LeU,
    /// Two's complement `a < b`.
    LtS,
    /// Two's complement `a <= b`.
    LeS,
}

/// Reductions of all bits of one operand to 1 bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ReduceOp {
    /// All bits set.
    And,
    /// Any bit set.
    Or,
    /// Odd number of bits set.
    Xor,
}

/// Shift directions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ShiftOp {
    /// Towards the MSB, zeros in.
    Left,
    /// Towards the LSB, zeros in.
    RightLogical,
    /// Towards the LSB, copies of the MSB in.
    RightArithmetic,
}

/// How far to shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftAmount {
    /// A constant number of bit positions.
    Const(u32),
    /// An unsigned amount given by a net; amounts ≥ width shift everything out.
    Net(NetId),
}

/// A combinational operation; its result width is the width of the net it drives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// A constant of exactly the net's width.
    Const(Bits),
    /// Bitwise complement (same width).
    Not(NetId),
    /// Bitwise and/or/xor (all widths equal).
    Bit(BitOp, NetId, NetId),
    /// Add/sub/mul: operands no wider than the result, zero-extended, result mod 2^width.
    Arith(ArithOp, NetId, NetId),
    /// Comparison (operand widths equal, result 1 bit).
    Cmp(CmpOp, NetId, NetId),
    /// `sel ? if_true : if_false` (sel 1 bit, both arms the net's width).
    Mux {
        /// Select, 1 bit.
        sel: NetId,
        /// Value when `sel` is 1.
        if_true: NetId,
        /// Value when `sel` is 0.
        if_false: NetId,
    },
    /// Bits `[lo + width - 1 : lo]` of `src`.
    Slice {
        /// Source net.
        src: NetId,
        /// Lowest bit taken.
        lo: u32,
    },
    /// Concatenation, most significant part first (as Verilog `{a, b}`).
    Concat(Vec<NetId>),
    /// `count` copies of `src` side by side.
    Replicate {
        /// Source net.
        src: NetId,
        /// Number of copies.
        count: u32,
    },
    /// Zero- or sign-extension of `src` to the net's (larger or equal) width.
    Extend {
        /// Source net.
        src: NetId,
        /// Sign-extend if true, zero-extend otherwise.
        signed: bool,
    },
    /// Shift of `src` (same width as the result).
    Shift {
        /// Direction.
        op: ShiftOp,
        /// Value shifted.
        src: NetId,
        /// Distance.
        amount: ShiftAmount,
    },
    /// Reduction to 1 bit.
    Reduce(ReduceOp, NetId),
    /// Number of leading zeros of `src` (its width if `src` is 0).
    LeadingZeros(NetId),
}

impl Op {
    /// Short operator name, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Const(_) => "constant",
            Op::Not(_) => "not",
            Op::Bit(BitOp::And, ..) => "and",
            Op::Bit(BitOp::Or, ..) => "or",
            Op::Bit(BitOp::Xor, ..) => "xor",
            Op::Arith(ArithOp::Add, ..) => "add",
            Op::Arith(ArithOp::Sub, ..) => "sub",
            Op::Arith(ArithOp::Mul, ..) => "mul",
            Op::Cmp(..) => "compare",
            Op::Mux { .. } => "mux",
            Op::Slice { .. } => "slice",
            Op::Concat(_) => "concat",
            Op::Replicate { .. } => "replicate",
            Op::Extend { .. } => "extend",
            Op::Shift { .. } => "shift",
            Op::Reduce(..) => "reduce",
            Op::LeadingZeros(_) => "leading-zeros",
        }
    }

    /// The nets this operation reads, in a fixed order.
    pub fn operands(&self) -> Vec<NetId> {
        match self {
            Op::Const(_) => vec![],
            Op::Not(a)
            | Op::Slice { src: a, .. }
            | Op::Replicate { src: a, .. }
            | Op::Extend { src: a, .. }
            | Op::Reduce(_, a)
            | Op::LeadingZeros(a) => vec![*a],
            Op::Bit(_, a, b) | Op::Arith(_, a, b) | Op::Cmp(_, a, b) => vec![*a, *b],
            Op::Mux {
                sel,
                if_true,
                if_false,
            } => vec![*sel, *if_true, *if_false],
            Op::Concat(parts) => parts.clone(),
            Op::Shift { src, amount, .. } => match amount {
                ShiftAmount::Const(_) => vec![*src],
                ShiftAmount::Net(n) => vec![*src, *n],
            },
        }
    }
}

/// Reset polarity of a clock domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResetPolarity {
    /// Reset when the reset signal is 1.
    ActiveHigh,
    /// Reset when the reset signal is 0 (NetFPGA's `axis_resetn`).
    ActiveLow,
}

/// A clock domain: registers clocked on the rising edge of `clock`, reset synchronously.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClockDomain {
    /// Domain name (used to bind instances' domains).
    pub name: String,
    /// The clock input port's net.
    pub clock: NetId,
    /// The reset input port's net, if the domain has a reset.
    pub reset: Option<NetId>,
    /// Reset polarity.
    pub polarity: ResetPolarity,
}

/// A register: `q <= reset ? reset_value : (enable ? next : q)` on each rising clock edge.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Register {
    /// The net carrying the register's output.
    pub q: NetId,
    /// Clock domain.
    pub domain: DomainId,
    /// Next value (same width as `q`).
    pub next: NetId,
    /// Load enable (1 bit); always enabled if `None`.
    pub enable: Option<NetId>,
    /// Value loaded while the domain's reset is asserted; not reset if `None`.
    pub reset_value: Option<Bits>,
    /// `next` may come from another clock domain: the first flop of a synchronizer,
    /// or a word captured when a handshake has held it stable. Only `hdl::blocks`'s
    /// crossing blocks set this.
    pub crossing: bool,
    /// A flop of a synchronizer chain: its first (which samples another domain, so
    /// `crossing` is set) or a later one that copies the flop before it. The Verilog
    /// marks it `(* ASYNC_REG = "TRUE" *)`, so that Vivado places the chain's flops
    /// together, keeps them out of shift registers and reports the chain as a
    /// synchronizer. Only `hdl::blocks`'s crossing blocks set this.
    pub async_reg: bool,
}

/// A simple-dual-port memory with synchronous reads (block-RAM style).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Memory {
    /// Name (the Verilog array's name).
    pub name: String,
    /// Word width in bits.
    pub width: u32,
    /// Number of words.
    pub depth: u32,
    /// Initial contents (`depth` words of `width` bits), if any; otherwise zeros.
    pub init: Option<Vec<Bits>>,
    /// The write port, if any (a memory without one is a ROM).
    pub write: Option<MemWrite>,
    /// Synchronous read ports.
    pub reads: Vec<MemRead>,
    /// The generator line that made the memory.
    pub location: SourceLoc,
}

/// A memory write port: on a rising edge of its domain's clock, if `enable`, `mem[addr] <= data`.
/// A write to an address ≥ depth is ignored.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemWrite {
    /// Clock domain.
    pub domain: DomainId,
    /// Address (`addr_width(depth)` bits).
    pub addr: NetId,
    /// Data (memory width).
    pub data: NetId,
    /// Write enable (1 bit).
    pub enable: NetId,
}

/// A synchronous read port: on a rising edge, if `enable`, `data <= mem[addr]`,
/// reading the contents from before any write at the same edge (read-first).
/// An address ≥ depth reads zero.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemRead {
    /// Clock domain.
    pub domain: DomainId,
    /// Address (`addr_width(depth)` bits).
    pub addr: NetId,
    /// Read enable (1 bit); always reading if `None`.
    pub enable: Option<NetId>,
    /// The net carrying the registered read data.
    pub data: NetId,
}

/// A Verilog parameter a module declares so that it fits a context that passes one,
/// such as NetFPGA's `C_M_AXIS_DATA_WIDTH`. It is interface, not logic: the design was
/// generated for `value`, nothing inside reads it, and the emitted Verilog stops
/// elaboration when an instantiation overrides it with a value outside `accepts`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Parameter {
    /// Parameter name, a legal Verilog identifier.
    pub name: String,
    /// The value the design was generated for (the declared default).
    pub value: u64,
    /// How the value is declared: an `integer`, or a bit vector of a given width.
    pub kind: ParameterKind,
    /// Which overriding values the design still fits.
    pub accepts: ParameterAccepts,
}

/// How a [`Parameter`] is declared in Verilog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParameterKind {
    /// `parameter integer NAME = 256` (widths, counts).
    Integer,
    /// `parameter [W-1:0] NAME = W'h…` (addresses), `W` bits (1..=64).
    Bits(u32),
}

/// Which values of a [`Parameter`] the generated design fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParameterAccepts {
    /// Only the generated value.
    Exactly,
    /// Any value whose low `bits` bits are zero (a base address aligned to the
    /// module's address window).
    AlignedTo {
        /// Bits that must be zero.
        bits: u32,
    },
}

impl Parameter {
    /// A parameter declared `integer` that accepts only `value`.
    pub fn integer(name: &str, value: u64) -> Self {
        Parameter {
            name: name.to_string(),
            value,
            kind: ParameterKind::Integer,
            accepts: ParameterAccepts::Exactly,
        }
    }

    /// A `width`-bit base address `value` that accepts any value aligned to a window of
    /// `2^window_bits` bytes.
    pub fn base_address(name: &str, width: u32, value: u64, window_bits: u32) -> Self {
        Parameter {
            name: name.to_string(),
            value,
            kind: ParameterKind::Bits(width),
            accepts: ParameterAccepts::AlignedTo { bits: window_bits },
        }
    }

    /// True if an instantiation may set the parameter to `value`.
    pub fn accepts(&self, value: u64) -> bool {
        match self.accepts {
            ParameterAccepts::Exactly => value == self.value,
            ParameterAccepts::AlignedTo { bits } => {
                bits == 0 || (bits < 64 && value & ((1u64 << bits) - 1) == 0)
            }
        }
    }
}

/// An instance of another module.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Instance {
    /// Instance name.
    pub name: String,
    /// The instantiated module.
    pub module: Module,
    /// For each port of `module` (by index): the parent net connected to it.
    /// Inputs (data, clock, reset) are driven by that net; outputs drive it.
    pub connections: Vec<Option<NetId>>,
    /// The generator line that instantiated the module.
    pub location: SourceLoc,
}

/// What a module's ports look like from outside: used to check hierarchy for
/// combinational loops and clock-domain crossings without looking inside.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PortSummary {
    /// Per port (by index), the module's domains the port belongs to: for inputs,
    /// the domains whose logic samples it; for outputs, the domains it is computed from.
    pub domains: Vec<BTreeSet<DomainId>>,
    /// Per output port (by index; empty for inputs), the input ports it depends on
    /// combinationally.
    pub comb_inputs: Vec<BTreeSet<PortId>>,
}

/// Number of address bits needed for `depth` words (at least 1).
pub fn addr_width(depth: u32) -> u32 {
    (32 - depth.saturating_sub(1).leading_zeros()).max(1)
}
