//! `ModuleBuilder`: the object a generator function fills with ports, logic, state
//! and instances, then turns into a validated `Module` with `finish()`.

use crate::bits::Bits;
use crate::ir::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT_BUILDER: AtomicU64 = AtomicU64::new(1);

/// Largest width the builder accepts for one net.
pub const MAX_WIDTH: u32 = 1 << 20;

/// A value in the module being built: a handle to one net and its width.
/// Copy it freely; it is only meaningful with the builder that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Signal {
    pub(crate) builder: u64,
    pub(crate) net: NetId,
    pub(crate) width: u32,
}

impl Signal {
    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The IR net this signal stands for.
    pub fn net(&self) -> NetId {
        self.net
    }
}

/// A clock domain of the module being built (see [`ModuleBuilder::domain`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Domain {
    pub(crate) builder: u64,
    pub(crate) id: DomainId,
}

/// Builds one module. Mistakes (bad widths, names, connections) are recorded where
/// they are made, with the caller's source location, and returned by [`finish`];
/// the builder itself never panics on user input.
///
/// [`finish`]: ModuleBuilder::finish
pub struct ModuleBuilder {
    pub(crate) id: u64,
    pub(crate) data: ModuleData,
    pub(crate) errors: Vec<HdlError>,
    names: HashMap<String, &'static str>,
    pub(crate) reg_of: HashMap<NetId, RegId>,
    pub(crate) dual_clock_mems: BTreeSet<MemId>,
    /// Inverted copies of reset nets, shared by every instance that needs one.
    pub(crate) inverted_resets: HashMap<NetId, NetId>,
    /// Where each wire and output port to be driven later was declared, so that
    /// one left undriven is reported at its generator line.
    declared_at: BTreeMap<NetId, &'static Location<'static>>,
    /// While set (see [`located`](Self::located)), the location of every new net.
    located_at: Option<&'static Location<'static>>,
    /// The prefix of every name made inside [`scope`](Self::scope): the open scopes'
    /// prefixes, each followed by `_` (empty outside any scope).
    scope: String,
}

impl ModuleBuilder {
    /// Starts a module called `name` (a legal Verilog identifier).
    #[track_caller]
    pub fn new(name: &str) -> Self {
        let mut b = ModuleBuilder {
            id: NEXT_BUILDER.fetch_add(1, Ordering::Relaxed),
            data: ModuleData {
                name: name.to_string(),
                ports: vec![],
                nets: vec![],
                domains: vec![],
                regs: vec![],
                mems: vec![],
                instances: vec![],
                summary: PortSummary::default(),
                parameters: vec![],
                location: SourceLoc::caller(),
            },
            errors: vec![],
            names: HashMap::new(),
            reg_of: HashMap::new(),
            dual_clock_mems: BTreeSet::new(),
            inverted_resets: HashMap::new(),
            declared_at: BTreeMap::new(),
            located_at: None,
            scope: String::new(),
        };
        if !is_legal_identifier(name) {
            b.error(
                Some(name),
                HdlErrorKind::BadName(format!("module name `{name}` is not a legal identifier")),
            );
        }
        b
    }

    /// The module's name.
    pub fn name(&self) -> &str {
        &self.data.name
    }

    /// Records an error made at the caller's location.
    #[track_caller]
    pub(crate) fn error(&mut self, signal: Option<&str>, kind: HdlErrorKind) {
        let e = HdlError::new(&self.data.name, signal, kind).at(Location::caller());
        self.errors.push(e);
    }

    /// Builds with `build`, naming every value, register, wire, memory and instance
    /// named inside it `{prefix}_{name}` (scopes nest: `lane0_align_shift`). Ports and
    /// parameters keep their names: they are the module's interface. For repeated
    /// structure (one scope per queue, per lane) built by one helper.
    #[track_caller]
    pub fn scope<R>(&mut self, prefix: &str, build: impl FnOnce(&mut Self) -> R) -> R {
        let outer = self.scope.len();
        if is_legal_identifier(&format!("{prefix}_")) {
            self.scope.push_str(prefix);
            self.scope.push('_');
        } else {
            self.error(
                Some(prefix),
                HdlErrorKind::BadName(format!("scope `{prefix}` is not a legal identifier")),
            );
        }
        let r = build(self);
        self.scope.truncate(outer);
        r
    }

    /// `name` inside the open scopes.
    pub(crate) fn scoped(&self, name: &str) -> String {
        format!("{}{name}", self.scope)
    }

    /// Reserves `name` in the module's namespace; records an error if it is taken or illegal.
    #[track_caller]
    pub(crate) fn claim_name(&mut self, name: &str, what: &'static str) -> bool {
        if !is_legal_identifier(name) {
            self.error(
                Some(name),
                HdlErrorKind::BadName(format!("{what} name `{name}` is not a legal identifier")),
            );
            return false;
        }
        if let Some(prev) = self.names.get(name) {
            let prev = *prev;
            self.error(
                Some(name),
                HdlErrorKind::BadName(format!(
                    "{what} `{name}` clashes with a {prev} of that name"
                )),
            );
            return false;
        }
        self.names.insert(name.to_string(), what);
        true
    }

    /// Checks a width is in range; returns a usable width either way.
    #[track_caller]
    pub(crate) fn check_width(&mut self, name: &str, width: u32) -> u32 {
        if width == 0 || width > MAX_WIDTH {
            self.error(
                Some(name),
                HdlErrorKind::InvalidWidth(format!(
                    "`{name}` is {width} bits; widths must be 1 to {MAX_WIDTH}"
                )),
            );
            return 1;
        }
        width
    }

    /// Adds a net, made at the caller's location, and returns its signal.
    #[track_caller]
    pub(crate) fn new_net(&mut self, name: Option<String>, width: u32, driver: Driver) -> Signal {
        let id = NetId(self.data.nets.len() as u32);
        self.data.nets.push(Net {
            name,
            width,
            driver,
            location: SourceLoc::at(self.located_at.unwrap_or(Location::caller())),
        });
        Signal {
            builder: self.id,
            net: id,
            width,
        }
    }

    /// Runs `f`, every net it makes located at this call's caller (closures cannot
    /// pass `#[track_caller]` on; helpers that loop through closures use this).
    /// Nested calls keep the outermost location.
    #[track_caller]
    pub(crate) fn located<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let outer = self.located_at;
        if outer.is_none() {
            self.located_at = Some(Location::caller());
        }
        let result = f(self);
        self.located_at = outer;
        result
    }

    /// Checks `s` was made by this builder; records an error (and returns false) if not.
    #[track_caller]
    pub(crate) fn owns(&mut self, s: Signal) -> bool {
        if s.builder != self.id || s.net.0 as usize >= self.data.nets.len() {
            self.error(
                None,
                HdlErrorKind::IllegalUse(
                    "a signal made by another module's builder was used here".to_string(),
                ),
            );
            return false;
        }
        true
    }

    /// Human-readable name of a signal for messages.
    pub(crate) fn describe(&self, s: Signal) -> String {
        if s.net.0 as usize >= self.data.nets.len() {
            return format!("<foreign #{}>", s.net.0);
        }
        self.data.describe_net(s.net)
    }

    /// Declares the Verilog parameter `p` (see [`Parameter`]). Records an error if its
    /// name is illegal or taken, a bit-vector kind is not 1..=64 bits wide or too narrow
    /// for the value, or the parameter would not accept its own value.
    #[track_caller]
    pub fn parameter(&mut self, p: Parameter) {
        if !self.claim_name(&p.name, "parameter") {
            return;
        }
        let kind_bits = match p.kind {
            ParameterKind::Integer => 31,
            ParameterKind::Bits(w) => w,
        };
        let problem = match p.kind {
            ParameterKind::Bits(w) if !(1..=64).contains(&w) => {
                Some(format!("{w} bits is not 1..=64"))
            }
            ParameterKind::Bits(w) if w < 64 && p.value >> w != 0 => {
                Some(format!("value {:#x} does not fit {w} bits", p.value))
            }
            _ if matches!(p.accepts, ParameterAccepts::AlignedTo { bits } if bits > kind_bits) => {
                Some(format!("alignment wider than its {kind_bits} bits"))
            }
            ParameterKind::Integer if p.value > i32::MAX as u64 => {
                Some(format!("value {} does not fit a Verilog integer", p.value))
            }
            _ if !p.accepts(p.value) => Some(format!(
                "value {:#x} is outside the values it accepts",
                p.value
            )),
            _ => None,
        };
        if let Some(reason) = problem {
            self.error(
                Some(&p.name),
                HdlErrorKind::Parameter(format!("parameter `{}`: {reason}", p.name)),
            );
            return;
        }
        self.data.parameters.push(p);
    }

    /// A data input port of `width` bits.
    #[track_caller]
    pub fn input(&mut self, name: &str, width: u32) -> Signal {
        self.port(name, width, Direction::Input, PortKind::Data)
    }

    #[track_caller]
    pub(crate) fn port(
        &mut self,
        name: &str,
        width: u32,
        direction: Direction,
        kind: PortKind,
    ) -> Signal {
        let width = self.check_width(name, width);
        self.claim_name(name, "port");
        let port = PortId(self.data.ports.len() as u32);
        let driver = match direction {
            Direction::Input => Driver::Input(port),
            Direction::Output => Driver::Undriven,
        };
        let s = self.new_net(Some(name.to_string()), width, driver);
        if direction == Direction::Output {
            self.declared_at.insert(s.net, Location::caller());
        }
        self.data.ports.push(Port {
            name: name.to_string(),
            direction,
            kind,
            net: s.net,
        });
        s
    }

    /// An output port driven by `value` (its width is the value's).
    #[track_caller]
    pub fn output(&mut self, name: &str, value: Signal) {
        let o = self.port(name, value.width, Direction::Output, PortKind::Data);
        self.assign(o, value);
    }

    /// An output port of `width` bits, to be driven later with [`assign`](Self::assign).
    #[track_caller]
    pub fn output_wire(&mut self, name: &str, width: u32) -> Signal {
        self.port(name, width, Direction::Output, PortKind::Data)
    }

    /// A named wire of `width` bits, to be driven later with [`assign`](Self::assign)
    /// (for feedback paths and signals used before they are computed).
    #[track_caller]
    pub fn wire(&mut self, name: &str, width: u32) -> Signal {
        let name = &self.scoped(name);
        let width = self.check_width(name, width);
        self.claim_name(name, "wire");
        let s = self.new_net(Some(name.to_string()), width, Driver::Undriven);
        self.declared_at.insert(s.net, Location::caller());
        s
    }

    /// Drives wire or output `dst` with `src`; widths must be equal and `dst` undriven.
    #[track_caller]
    pub fn assign(&mut self, dst: Signal, src: Signal) {
        if !self.owns(dst) || !self.owns(src) {
            return;
        }
        let dst_name = self.describe(dst);
        if dst.width != src.width {
            let detail = format!(
                "`{dst_name}` is {} bits but `{}` is {} bits",
                dst.width,
                self.describe(src),
                src.width
            );
            self.error(
                Some(&dst_name),
                HdlErrorKind::WidthMismatch {
                    op: "assign".into(),
                    detail,
                },
            );
            return;
        }
        match self.data.nets[dst.net.0 as usize].driver.clone() {
            Driver::Undriven => {
                self.data.nets[dst.net.0 as usize].driver = Driver::Alias(src.net);
            }
            other => {
                let prev = match other {
                    Driver::Alias(s) => format!("`{}`", self.data.describe_net(s)),
                    d => format!("a {}", d.kind_name()),
                };
                self.error(Some(&dst_name), HdlErrorKind::MultipleDrivers(prev));
            }
        }
    }

    /// Gives `value` a readable name (used in Verilog, VCD and messages) and returns it.
    /// An unnamed computed value is renamed in place; otherwise a named copy is made.
    /// The name is taken inside the open [`scope`](Self::scope)s; a Verilog or
    /// SystemVerilog keyword gets a trailing `_`; if another value of the module already
    /// has it, the first free `{name}_1`, `{name}_2`, … is used, so a helper called twice
    /// names both its values, deterministically in build order.
    #[track_caller]
    pub fn named(&mut self, name: &str, value: Signal) -> Signal {
        if !self.owns(value) {
            return value;
        }
        let mut base = self.scoped(name);
        // A reserved word (`class`, `dist`) is escaped with a trailing underscore.
        if !is_legal_identifier(&base) && is_legal_identifier(&format!("{base}_")) {
            base.push('_');
        }
        let name = &(0..)
            .map(|k| match k {
                0 => base.clone(),
                k => format!("{base}_{k}"),
            })
            .find(|n| !self.names.contains_key(n))
            .expect("a free suffix exists: the namespace is finite");
        if !self.claim_name(name, "wire") {
            return value;
        }
        let net = &mut self.data.nets[value.net.0 as usize];
        if net.name.is_none() && matches!(net.driver, Driver::Op(_)) {
            net.name = Some(name.to_string());
            value
        } else {
            self.new_net(
                Some(name.to_string()),
                value.width,
                Driver::Alias(value.net),
            )
        }
    }

    /// Declares clock domain `name` with clock input `clock` and, if given, a reset
    /// input `reset` of the given polarity. Registers and memories name the domain.
    #[track_caller]
    pub fn domain(
        &mut self,
        name: &str,
        clock: &str,
        reset: Option<&str>,
        polarity: ResetPolarity,
    ) -> Domain {
        if self.data.domains.iter().any(|d| d.name == name) {
            self.error(
                Some(name),
                HdlErrorKind::BadName(format!("clock domain `{name}` is declared twice")),
            );
        }
        let clk = self.port(clock, 1, Direction::Input, PortKind::Clock);
        let rst = reset.map(|r| self.port(r, 1, Direction::Input, PortKind::Reset).net);
        let id = DomainId(self.data.domains.len() as u32);
        self.data.domains.push(ClockDomain {
            name: name.to_string(),
            clock: clk.net,
            reset: rst,
            polarity,
        });
        Domain {
            builder: self.id,
            id,
        }
    }

    /// The reset signal of `domain` as an active-high 1-bit value (for logic that
    /// must see reset, such as an output that is forced low during reset).
    #[track_caller]
    pub fn reset_active(&mut self, domain: Domain) -> Signal {
        if !self.owns_domain(domain) {
            return self.lit(0, 1);
        }
        let d = self.data.domains[domain.id.0 as usize].clone();
        match d.reset {
            None => self.lit(0, 1),
            Some(net) => {
                let r = Signal {
                    builder: self.id,
                    net,
                    width: 1,
                };
                match d.polarity {
                    ResetPolarity::ActiveHigh => r,
                    ResetPolarity::ActiveLow => self.not(r),
                }
            }
        }
    }

    /// Checks a domain handle belongs to this builder.
    #[track_caller]
    pub(crate) fn owns_domain(&mut self, d: Domain) -> bool {
        if d.builder != self.id || d.id.0 as usize >= self.data.domains.len() {
            self.error(
                None,
                HdlErrorKind::IllegalUse("a clock domain of another module was used here".into()),
            );
            return false;
        }
        true
    }

    /// Validates the module and returns it. The first recorded mistake, or the first
    /// structural problem (undriven nets, unconnected instance ports, combinational
    /// loops, unsynchronized clock-domain crossings), is returned as the error.
    pub fn finish(mut self) -> Result<Module, HdlError> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(e);
        }
        for (i, mem) in self.data.mems.iter().enumerate() {
            let id = MemId(i as u32);
            if let Some(w) = &mem.write {
                if let Some(r) = mem.reads.iter().find(|r| r.domain != w.domain) {
                    if !self.dual_clock_mems.contains(&id) {
                        return Err(HdlError::new(
                            &self.data.name,
                            Some(&mem.name),
                            HdlErrorKind::CrossDomain(format!(
                                "memory `{}` is written in domain `{}` and read in domain `{}`; use hdl::blocks::fifo::async_fifo",
                                mem.name,
                                self.data.domains[w.domain.0 as usize].name,
                                self.data.domains[r.domain.0 as usize].name
                            )),
                        ));
                    }
                }
            }
        }
        for (&net, &at) in &self.declared_at {
            if self.data.nets[net.0 as usize].driver == Driver::Undriven {
                let output = self
                    .data
                    .ports
                    .iter()
                    .any(|p| p.net == net && p.direction == Direction::Output);
                let what = if output { "output" } else { "wire" };
                let name = self.data.describe_net(net);
                let kind = HdlErrorKind::Undriven(format!("{what} `{name}`"));
                return Err(HdlError::new(&self.data.name, Some(&name), kind).at(at));
            }
        }
        validate(&mut self.data)?;
        Ok(Module::from_data(self.data))
    }
}

/// Converts a reset value given as `u64` to `Bits`, for the builder's register helpers.
pub(crate) fn bits_or_error(value: u64, width: u32) -> Result<Bits, String> {
    Bits::from_u64(value, width).map_err(|e| e.to_string())
}
