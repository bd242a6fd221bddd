//! The Verilog text of one module: header, declarations, continuous assigns, registers,
//! memories, instances and the `_unused_ok` line.

use super::expr::{prec, Refs};
use super::fold::Folds;
use super::inline::{Plan, Recorder};
use super::names::ModuleNames;
use super::unused::Usage;
use super::wrap::wrap_concat;
use super::{lzc, params, seq, EmitOptions};
use crate::GenError;
use hdl::ir::{comb_order, Direction, Driver, NetId, Op, SourceLoc};
use hdl::Module;

/// Declares the file's keywords to be Verilog-2005's, so that names SystemVerilog took
/// (`global`, `cross`, `soft`, …, legal in the builder) parse in Verilator and Vivado,
/// which read `.v` files as SystemVerilog by default. Yosys 0.23 lacks the directive but
/// reads Verilog-2005 keywords anyway, hence the guard.
const KEYWORDS_BEGIN: &str = "`ifndef YOSYS\n`begin_keywords \"1364-2005\"\n`endif\n";

/// Closes [`KEYWORDS_BEGIN`].
const KEYWORDS_END: &str = "`ifndef YOSYS\n`end_keywords\n`endif\n";

/// The sections of a module body being written, each a sequence of indented lines.
#[derive(Debug, Default)]
pub(crate) struct Body {
    /// Whether declarations and instances carry `// @[file:line]` source locators.
    pub(crate) locators: bool,
    /// Net, helper and memory declarations.
    pub(crate) decls: String,
    /// Continuous assigns.
    pub(crate) logic: String,
    /// `initial` and `always` blocks.
    pub(crate) seq: String,
    /// Module instances.
    pub(crate) insts: String,
}

/// `[W-1:0] ` for a vector of `width` bits, nothing for a scalar.
pub(crate) fn range(width: u32) -> String {
    if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    }
}

impl Body {
    /// An empty body; `locators` as in [`EmitOptions`].
    pub(crate) fn new(locators: bool) -> Self {
        Body {
            locators,
            ..Body::default()
        }
    }

    /// ` // @[file:line]` for `loc` when locators are on and the location is known,
    /// else nothing.
    pub(crate) fn locator(&self, loc: &SourceLoc) -> String {
        match loc.relative() {
            Some(at) if self.locators => format!(" // @[{at}]"),
            _ => String::new(),
        }
    }

    /// Declares `name` of `width` bits (a scalar when 1 bit): `kind` is `wire` or `reg`,
    /// with the locator of the generator line that made it.
    pub(crate) fn decl_at(&mut self, kind: &str, width: u32, name: &str, loc: &SourceLoc) {
        let at = self.locator(loc);
        self.decls
            .push_str(&format!("    {kind} {}{name};{at}\n", range(width)));
    }

    /// Declares `name` as a vector `[width-1:0]` even when 1 bit (so it can be
    /// indexed), with the locator of the generator line it helps to implement.
    pub(crate) fn decl_vector(&mut self, kind: &str, width: u32, name: &str, loc: &SourceLoc) {
        let at = self.locator(loc);
        self.decls
            .push_str(&format!("    {kind} [{}:0] {name};{at}\n", width - 1));
    }

    /// `wire [W-1:0] name = rhs;` with the locator of the generator line that made it:
    /// a wire declared with its value, in the logic section.
    pub(crate) fn wire_is(&mut self, width: u32, name: &str, rhs: &str, loc: &SourceLoc) {
        let at = self.locator(loc);
        let lead = format!("    wire {}{name} = ", range(width));
        let rhs = wrap_concat(lead.len(), rhs);
        self.logic.push_str(&format!("{lead}{rhs};{at}\n"));
    }

    /// `assign lhs = rhs;`
    pub(crate) fn assign(&mut self, lhs: &str, rhs: &str) {
        let lead = format!("    assign {lhs} = ");
        let rhs = wrap_concat(lead.len(), rhs);
        self.logic.push_str(&format!("{lead}{rhs};\n"));
    }

    /// `assign lhs = rhs;` with the locator of the generator line that made it (an
    /// output port's value).
    pub(crate) fn assign_at(&mut self, lhs: &str, rhs: &str, loc: &SourceLoc) {
        let at = self.locator(loc);
        let lead = format!("    assign {lhs} = ");
        let rhs = wrap_concat(lead.len(), rhs);
        self.logic.push_str(&format!("{lead}{rhs};{at}\n"));
    }
}

/// True if `net` is driven from a procedural block (`reg` in Verilog-2005).
fn is_procedural(m: &Module, net: NetId) -> bool {
    matches!(m.net(net).driver, Driver::Reg(_) | Driver::MemRead { .. })
}

/// The attribute that marks a synchronizer flop (see `hdl::ir::Register::async_reg`)
/// for Vivado: its chain's flops placed together, kept out of shift registers and
/// reported as a synchronizer.
const ASYNC_REG: &str = "(* ASYNC_REG = \"TRUE\" *) ";

/// [`ASYNC_REG`] when `net` is a synchronizer flop's output, else nothing.
fn attributes(m: &Module, net: NetId) -> &'static str {
    match m.net(net).driver {
        Driver::Reg(r) if m.regs[r.0 as usize].async_reg => ASYNC_REG,
        _ => "",
    }
}

/// The Verilog text of `m`, declared as module `verilog_name`; `child_name` gives the
/// (possibly uniquified) module name of each instantiated module.
pub(crate) fn emit_module(
    m: &Module,
    verilog_name: &str,
    child_name: &dyn Fn(&Module) -> String,
    options: &EmitOptions,
    note: Option<&str>,
) -> Result<String, GenError> {
    let (names, space) = ModuleNames::new(m, options.inline)?;
    let order = comb_order(m).map_err(|e| GenError::Malformed {
        module: m.name.clone(),
        signal: e.signal.clone().unwrap_or_default(),
        reason: e.kind.to_string(),
    })?;
    let folds = Folds::new(m, &order);
    // First pass (with inlining on): every net by name, recording how each is read.
    let plan = if options.inline {
        let mut refs = Refs {
            m,
            names: &names,
            usage: Usage::new(m),
            space: space.clone(),
            recorder: Some(Recorder::new(m.nets.len())),
            plan: None,
            folds: &folds,
        };
        write_body(&mut refs, &mut Body::new(false), &order, child_name)?;
        match &refs.recorder {
            Some(rec) => Plan::new(m, rec),
            None => Plan::none(m.nets.len()),
        }
    } else {
        Plan::none(m.nets.len())
    };
    let mut refs = Refs {
        m,
        names: &names,
        usage: Usage::new(m),
        space,
        recorder: None,
        plan: Some(&plan),
        folds: &folds,
    };
    let mut body = Body::new(options.locators);
    write_body(&mut refs, &mut body, &order, child_name)?;

    let mut text = banner(m, verilog_name, options.locators, note);
    text.push_str(KEYWORDS_BEGIN);
    text.push_str("`default_nettype none\n\n");
    text.push_str(&header(m, &names, verilog_name));
    let unused_name = refs.space.fresh("_unused_ok");
    let unused = refs
        .usage
        .unused_wire(&names, &unused_name)
        .unwrap_or_default();
    let checks = params::checks(m);
    let sections = [
        &checks,
        &body.decls,
        &body.logic,
        &body.seq,
        &body.insts,
        &unused,
    ];
    for s in sections {
        if !s.is_empty() {
            text.push('\n');
            text.push_str(s);
        }
    }
    text.push_str("\nendmodule\n\n`default_nettype wire\n");
    text.push_str(KEYWORDS_END);
    Ok(text)
}

/// The comment that opens a module's file: what generated it (wirespeed's version, the
/// HDL module and, with locators on, the generator line that built it) and, for the
/// top, `note` (the block and parameters given in [`EmitOptions::top_note`]).
fn banner(m: &Module, verilog_name: &str, locators: bool, note: Option<&str>) -> String {
    let mut text = format!(
        "// Generated by wirespeed {} from HDL module `{}`. Do not edit.\n",
        env!("CARGO_PKG_VERSION"),
        m.name
    );
    if m.name != verilog_name {
        text.push_str(&format!(
            "// Emitted as `{verilog_name}`: another module of the design is also called `{}`.\n",
            m.name
        ));
    }
    if let Some(at) = m.location.relative().filter(|_| locators) {
        text.push_str(&format!("// Built by the generator at @[{at}].\n"));
    }
    if let Some(note) = note {
        for line in note.lines() {
            text.push_str(&format!("// {line}\n"));
        }
    }
    text
}

/// Declarations, assigns, registers, memories and instances of `refs.m` into `body`.
/// `order` is the module's nets in dataflow order (`comb_order`).
fn write_body(
    refs: &mut Refs<'_>,
    body: &mut Body,
    order: &[NetId],
    child_name: &dyn Fn(&Module) -> String,
) -> Result<(), GenError> {
    let m = refs.m;
    let names = refs.names;
    let port_nets: Vec<bool> = {
        let mut v = vec![false; m.nets.len()];
        for p in &m.ports {
            v[p.net.0 as usize] = true;
        }
        v
    };
    for (i, net) in m.nets.iter().enumerate() {
        let id = NetId(i as u32);
        if net.width == 0 {
            return Err(refs.malformed(id, "zero width".into()));
        }
        if port_nets[i] || refs.is_inlined(id) || declared_with_value(m, id, false) {
            continue;
        }
        match &net.driver {
            Driver::Undriven => return Err(refs.malformed(id, "net is not driven".into())),
            Driver::Input(_) => {
                return Err(refs.malformed(id, "input-driven net is not a port".into()))
            }
            _ => {}
        }
        let kind = if is_procedural(m, id) { "reg" } else { "wire" };
        let kind = format!("{}{kind}", attributes(m, id));
        body.decl_at(&kind, net.width, names.net(id), &net.location);
    }

    // Combinational logic in dataflow order, so that every wire declared with its value
    // comes after the wires its value reads.
    for &id in order {
        if refs.is_dead(id) {
            // Not declared: nothing of it may be named as unused either.
            refs.usage.read_all(id);
            continue;
        }
        if refs.is_inlined(id) {
            continue;
        }
        if let Some(x) = written_as_port(refs, id) {
            // Its value's own assign writes this port.
            refs.usage.read_all(x);
            continue;
        }
        if let Some(r) = &mut refs.recorder {
            r.consumer(Some(id));
        }
        let as_port = port_nets[id.0 as usize] || names.is_port_valued(id);
        logic(refs, body, id, as_port)?;
        if let Some(r) = &mut refs.recorder {
            r.consumer(None);
        }
    }

    for (i, r) in m.regs.iter().enumerate() {
        seq::register(refs, body, i, r)?;
    }
    for i in 0..m.mems.len() {
        seq::memory(refs, body, i)?;
    }
    for (i, inst) in m.instances.iter().enumerate() {
        instance(refs, body, &names.instances[i], inst, child_name)?;
    }
    Ok(())
}

/// The value an output port's net copies, if that value's own assign writes the port
/// (`assign full = …;`, the value named after the port and not inlined). The first
/// pass, which records how nets are read, writes every port as usual, so that the
/// copy counts as a reader when the plan decides what to inline.
fn written_as_port(refs: &Refs<'_>, id: NetId) -> Option<NetId> {
    if refs.recorder.is_some() {
        return None;
    }
    let Driver::Alias(x) = refs.m.net(id).driver else {
        return None;
    };
    let mine = refs.names.is_port_valued(x) && refs.names.net(x) == refs.names.net(id);
    (mine && !refs.is_inlined(x)).then_some(x)
}

/// True if `net` is declared together with its value (`wire x = …;`): a net that is
/// not a port (`port`), driven by an operation other than leading zeros or by a plain
/// assign.
fn declared_with_value(m: &Module, net: NetId, port: bool) -> bool {
    !port
        && match &m.net(net).driver {
            Driver::Alias(_) => true,
            Driver::Op(op) => !matches!(op, Op::LeadingZeros(_)),
            _ => false,
        }
}

/// The logic that drives `net` (`port`: it is a port, assigned rather than declared).
fn logic(refs: &mut Refs<'_>, body: &mut Body, id: NetId, port: bool) -> Result<(), GenError> {
    let net = refs.m.net(id);
    let rhs = match &net.driver {
        Driver::Op(Op::LeadingZeros(src)) => {
            lzc::emit(refs, body, id, *src);
            return Ok(());
        }
        Driver::Op(op) => {
            let rhs = refs.op_expr(id, op)?;
            if let Some(r) = &mut refs.recorder {
                r.expression(id, &rhs);
            }
            rhs.text
        }
        Driver::Alias(src) => {
            if refs.width(*src) != net.width {
                return Err(refs.malformed(id, "alias of a net of another width".into()));
            }
            refs.operand(*src, prec::NONE)?
        }
        _ => return Ok(()),
    };
    let name = refs.names.net(id);
    if port {
        body.assign_at(name, &rhs, &net.location);
    } else {
        body.wire_is(net.width, name, &rhs, &net.location);
    }
    Ok(())
}

/// `module name #(parameters) (ports);` with one aligned declaration per line.
fn header(m: &Module, names: &ModuleNames, verilog_name: &str) -> String {
    let declared = match params::header_list(m) {
        list if list.is_empty() => verilog_name.to_string(),
        list => format!("{verilog_name} {list}"),
    };
    if m.ports.is_empty() {
        return format!("module {declared};\n");
    }
    let rows: Vec<(String, String, &str)> = m
        .ports
        .iter()
        .map(|p| {
            let dir = match p.direction {
                Direction::Input => "input  wire",
                Direction::Output if is_procedural(m, p.net) => "output reg ",
                Direction::Output => "output wire",
            };
            (
                format!("{}{dir}", attributes(m, p.net)),
                range(m.net(p.net).width),
                names.net(p.net),
            )
        })
        .collect();
    let range_w = rows.iter().map(|(_, r, _)| r.len()).max().unwrap_or(0);
    let mut text = format!("module {declared} (\n");
    for (i, (dir, r, name)) in rows.iter().enumerate() {
        let sep = if i + 1 == rows.len() { "" } else { "," };
        text.push_str(&format!("    {dir} {r:<range_w$}{name}{sep}\n"));
    }
    text.push_str(");\n");
    text
}

/// One instance with a named connection for every port.
fn instance(
    refs: &mut Refs<'_>,
    body: &mut Body,
    inst_name: &str,
    inst: &hdl::ir::Instance,
    child_name: &dyn Fn(&Module) -> String,
) -> Result<(), GenError> {
    let child = &inst.module;
    let err = |reason: String| GenError::Malformed {
        module: refs.m.name.clone(),
        signal: inst.name.clone(),
        reason,
    };
    if inst.connections.len() != child.ports.len() {
        return Err(err(format!(
            "{} connections for {} ports",
            inst.connections.len(),
            child.ports.len()
        )));
    }
    let mut conns = Vec::with_capacity(child.ports.len());
    for (port, conn) in child.ports.iter().zip(&inst.connections) {
        let Some(net) = *conn else {
            return Err(err(format!("port `{}` is not connected", port.name)));
        };
        let (pw, nw) = (child.net(port.net).width, refs.width(net));
        if pw != nw {
            return Err(err(format!(
                "port `{}` is {pw} bits, connected to {nw} bits",
                port.name
            )));
        }
        let text = match port.direction {
            Direction::Input => refs.connection(net)?,
            Direction::Output => refs.names.net(net).to_string(),
        };
        conns.push(format!(".{}({text})", port.name));
    }
    let module_name = child_name(child);
    let at = body.locator(&inst.location);
    if conns.is_empty() {
        body.insts
            .push_str(&format!("    {module_name} {inst_name} ();{at}\n"));
        return Ok(());
    }
    body.insts
        .push_str(&format!("    {module_name} {inst_name} ({at}\n"));
    let n = conns.len();
    for (i, c) in conns.into_iter().enumerate() {
        let sep = if i + 1 == n { "" } else { "," };
        body.insts.push_str(&format!("        {c}{sep}\n"));
    }
    body.insts.push_str("    );\n");
    Ok(())
}
