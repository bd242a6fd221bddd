//! An AXI-Lite register file generated from a list of named registers, with its
//! register map as data (for documentation and C headers), optionally in its own
//! clock domain with safe crossings to the datapath.

use super::cdc::{cross_pulse, cross_word, handshake_sync};
use crate::dsl::{AxiLiteConfig, AxiLiteSlave, Domain, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};
use serde::Serialize;

/// How software may access a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Software writes it (byte strobes honoured) and reads it back; the datapath
    /// sees its value on output port `<name>`.
    ReadWrite,
    /// The datapath drives it through input port `<name>`; software reads it;
    /// writes are answered with SLVERR and ignored.
    ReadOnly,
    /// Read-only value from input port `<name>`; any write pulses output
    /// `<name>_clear` for one datapath cycle (e.g. to clear a counter).
    ClearOnWrite,
}

/// A named bit field of a register: bits `[lsb + width - 1 : lsb]` of its word.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldSpec {
    /// Name: an identifier, unique within its register.
    pub name: String,
    /// Lowest bit.
    pub lsb: u32,
    /// Width in bits (at least 1; the field lies within the register's width).
    pub width: u32,
    /// One line for the documentation.
    pub description: String,
}

impl FieldSpec {
    /// A field `name` of `width` bits from bit `lsb`, described by `description`.
    pub fn new(name: &str, lsb: u32, width: u32, description: &str) -> Self {
        FieldSpec {
            name: name.to_string(),
            lsb,
            width,
            description: description.to_string(),
        }
    }

    /// The field's bits in place in the 32-bit word (0 if it does not fit the word).
    pub fn mask(&self) -> u32 {
        let ones = if self.width >= 32 {
            u32::MAX
        } else {
            (1u32 << self.width) - 1
        };
        ones.checked_shl(self.lsb).unwrap_or(0)
    }
}

/// One register of a register file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterSpec {
    /// Name: a port-name-friendly identifier.
    pub name: String,
    /// Access type.
    pub access: Access,
    /// Width in bits (1..=32), right-aligned in the 32-bit word.
    pub width: u32,
    /// Reset value (read-write registers).
    pub reset: u32,
    /// One line for the documentation.
    pub description: String,
    /// Named bit fields, in the order given (no two overlap).
    pub fields: Vec<FieldSpec>,
    /// A clear-on-write register whose write is a command (e.g. `start`) rather than
    /// the clearing of a value: drivers offer it as a method named after the register.
    pub command: bool,
    /// A read-write register the hardware may also load (e.g. with a calibrated
    /// value): inputs `<name>_load` and `<name>_load_value` in the AXI-Lite clock
    /// domain (register files without a separate clock only). A software write in
    /// the same cycle wins.
    pub hardware_load: bool,
}

impl RegisterSpec {
    /// A register with the given name, access and width, reset 0, no description,
    /// no fields, not a command.
    pub fn new(name: &str, access: Access, width: u32) -> Self {
        RegisterSpec {
            name: name.to_string(),
            access,
            width,
            reset: 0,
            description: String::new(),
            fields: Vec::new(),
            command: false,
            hardware_load: false,
        }
    }

    /// The same register with one more bit field.
    pub fn field(mut self, name: &str, lsb: u32, width: u32, description: &str) -> Self {
        self.fields
            .push(FieldSpec::new(name, lsb, width, description));
        self
    }

    /// The same register marked as a command (see [`RegisterSpec::command`]); only a
    /// [`Access::ClearOnWrite`] register can be one.
    pub fn as_command(mut self) -> Self {
        self.command = true;
        self
    }

    /// The same register, loadable by the hardware (see
    /// [`RegisterSpec::hardware_load`]); only a [`Access::ReadWrite`] register can be.
    pub fn loadable(mut self) -> Self {
        self.hardware_load = true;
        self
    }

    /// The same register with reset value `reset`.
    pub fn with_reset(mut self, reset: u32) -> Self {
        self.reset = reset;
        self
    }

    /// The same register with a description.
    pub fn describe(mut self, text: &str) -> Self {
        self.description = text.to_string();
        self
    }
}

/// What to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegFileSpec {
    /// Module name.
    pub name: String,
    /// Registers, at byte offsets 0, 4, 8, … in this order.
    pub registers: Vec<RegisterSpec>,
    /// AXI-Lite address width (12 for a 4 KiB window).
    pub addr_width: u32,
    /// If true, the AXI-Lite side runs on its own clock (`S_AXI_ACLK`) and the
    /// datapath ports on domain `core` (`clk`, `rst` active high), every value
    /// crossing through `hdl::blocks::cdc`; if false, everything runs on `S_AXI_ACLK`.
    pub separate_clock: bool,
}

/// One entry of a register map.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RegisterEntry {
    /// Register name.
    pub name: String,
    /// Byte offset in the AXI-Lite window.
    pub offset: u32,
    /// Width in bits (right-aligned).
    pub width: u32,
    /// Access type.
    pub access: Access,
    /// Reset value.
    pub reset: u32,
    /// Description.
    pub description: String,
    /// A write is a command (see [`RegisterSpec::command`]); in JSON only when true.
    #[serde(skip_serializing_if = "is_false")]
    pub command: bool,
    /// The hardware may load the register (see [`RegisterSpec::hardware_load`]);
    /// in JSON only when true.
    #[serde(skip_serializing_if = "is_false")]
    pub hardware_load: bool,
    /// Named bit fields; in JSON only when there are some.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FieldSpec>,
}

/// Whether `b` is false (keeps `command` out of JSON unless set).
fn is_false(b: &bool) -> bool {
    !*b
}

/// A register file's map: what documentation and C headers are made from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RegisterMap {
    /// The register file's module name.
    pub block: String,
    /// AXI-Lite address width.
    pub addr_width: u32,
    /// Data width (always 32).
    pub data_width: u32,
    /// The registers in address order.
    pub registers: Vec<RegisterEntry>,
}

const OKAY: u64 = 0b00;
const SLVERR: u64 = 0b10;

fn check(spec: &RegFileSpec) -> Result<(), HdlError> {
    let p = |param: &str, reason: String| Err(HdlError::parameter(&spec.name, param, reason));
    if !(4..=32).contains(&spec.addr_width) {
        return p(
            "addr_width",
            format!("{} is not in 4..=32", spec.addr_width),
        );
    }
    if spec.registers.is_empty() {
        return p("registers", "the register list is empty".into());
    }
    let capacity = 1u64 << (spec.addr_width - 2);
    if spec.registers.len() as u64 > capacity {
        return p(
            "registers",
            format!(
                "{} registers do not fit a {}-bit address space ({capacity} words)",
                spec.registers.len(),
                spec.addr_width
            ),
        );
    }
    for (i, r) in spec.registers.iter().enumerate() {
        if let Some(first) = spec.registers[..i].iter().position(|o| o.name == r.name) {
            return p(
                &r.name,
                format!("a second register of this name (registers {first} and {i})"),
            );
        }
        if !(1..=32).contains(&r.width) {
            return p(&r.name, format!("width {} is not in 1..=32", r.width));
        }
        if r.width < 32 && r.reset >> r.width != 0 {
            return p(
                &r.name,
                format!("reset value {:#x} does not fit {} bits", r.reset, r.width),
            );
        }
        if r.hardware_load && (r.access != Access::ReadWrite || spec.separate_clock) {
            return p(
                &r.name,
                "only a read-write register of a single-clock register file can be loaded by the hardware".into(),
            );
        }
        if r.command && r.access != Access::ClearOnWrite {
            return p(
                &r.name,
                "only a clear-on-write register can be a command".into(),
            );
        }
        check_fields(r).map_err(|reason| HdlError::parameter(&spec.name, &r.name, reason))?;
    }
    Ok(())
}

/// Checks `r`'s fields: named, at least one bit wide, inside the register, no two
/// with the same name or overlapping bits. The error says which field and why.
fn check_fields(r: &RegisterSpec) -> Result<(), String> {
    for (i, f) in r.fields.iter().enumerate() {
        if f.name.is_empty() {
            return Err(format!("field {i} has no name"));
        }
        if f.width == 0 {
            return Err(format!("field `{}` has width 0", f.name));
        }
        if u64::from(f.lsb) + u64::from(f.width) > u64::from(r.width) {
            return Err(format!(
                "field `{}` [{}:{}] does not fit the register's {} bits",
                f.name,
                u64::from(f.lsb) + u64::from(f.width) - 1,
                f.lsb,
                r.width
            ));
        }
        for g in &r.fields[..i] {
            if g.name == f.name {
                return Err(format!("two fields are named `{}`", f.name));
            }
            if g.mask() & f.mask() != 0 {
                return Err(format!("fields `{}` and `{}` overlap", g.name, f.name));
            }
        }
    }
    Ok(())
}

/// Generates the register file and its map. Ports: the AXI-Lite slave `S_AXI_*`
/// (with `S_AXI_ACLK`, `S_AXI_ARESETN` active low), and per register the datapath
/// ports described at [`Access`]. Unmapped addresses read 0 with SLVERR.
pub fn axil_regfile(spec: &RegFileSpec) -> Result<(Module, RegisterMap), HdlError> {
    check(spec)?;
    let mut m = ModuleBuilder::new(&spec.name);
    let axil = m.domain(
        "axil",
        "S_AXI_ACLK",
        Some("S_AXI_ARESETN"),
        ResetPolarity::ActiveLow,
    );
    let core = spec
        .separate_clock
        .then(|| m.domain("core", "clk", Some("rst"), ResetPolarity::ActiveHigh));
    let bus = m.axilite_slave(&AxiLiteConfig {
        prefix: "S_AXI".into(),
        addr_width: spec.addr_width,
        uppercase: true,
    });
    let iw = spec.addr_width - 2;

    let w = write_channel(&mut m, axil, &bus, iw);
    let r = read_channel(&mut m, axil, &bus, iw);
    let strb_mask = strobe_mask(&mut m, w.strb);

    let mut read_values = Vec::new();
    let mut write_ok = Vec::new();
    let mut entries = Vec::new();
    for (i, reg) in spec.registers.iter().enumerate() {
        let hit = m.eq_const(w.index, i as u64);
        let hit = m.named(&format!("{}_addressed", reg.name), hit);
        let wr = m.and(w.do_write, hit);
        if reg.access != Access::ReadOnly {
            write_ok.push(hit);
        }
        let value = match reg.access {
            Access::ReadWrite => {
                writable_register(&mut m, (axil, core), reg, (w.data, strb_mask), wr)?
            }
            Access::ReadOnly | Access::ClearOnWrite => {
                status_register(&mut m, (axil, core), reg, wr)?
            }
        };
        let rhit = m.eq_const(r.index, i as u64);
        let word = m.zext(value, 32);
        read_values.push((rhit, word));
        entries.push(RegisterEntry {
            name: reg.name.clone(),
            offset: 4 * i as u32,
            width: reg.width,
            access: reg.access,
            reset: reg.reset,
            description: reg.description.clone(),
            command: reg.command,
            hardware_load: reg.hardware_load,
            fields: reg.fields.clone(),
        });
    }
    respond(&mut m, spec, &w, &r, &read_values, &write_ok);

    m.assign(bus.awready, w.awready);
    m.assign(bus.wready, w.wready);
    m.assign(bus.bvalid, w.bvalid);
    m.assign(bus.bresp, w.bresp);
    m.assign(bus.arready, r.arready);
    m.assign(bus.rvalid, r.rvalid);
    m.assign(bus.rdata, r.rdata);
    m.assign(bus.rresp, r.rresp);
    let map = RegisterMap {
        block: spec.name.clone(),
        addr_width: spec.addr_width,
        data_width: 32,
        registers: entries,
    };
    Ok((m.finish()?, map))
}

/// The write channel's state: address and data latched independently, then written.
struct WriteChannel {
    /// Register index of the latched address.
    index: Signal,
    /// Latched write data (32 bits).
    data: Signal,
    /// Latched byte strobes (4 bits).
    strb: Signal,
    /// Address and data are both latched and no response is pending: write now.
    do_write: Signal,
    bvalid: Signal,
    /// Registered write response; [`respond`] drives it.
    bresp: Signal,
    awready: Signal,
    wready: Signal,
}

/// The write channel: latch address and data independently, then write and respond.
fn write_channel(m: &mut ModuleBuilder, axil: Domain, bus: &AxiLiteSlave, iw: u32) -> WriteChannel {
    let aw_full = m.reg(axil, "aw_full", 1);
    let aw_index = m.reg(axil, "aw_index", iw);
    let w_full = m.reg(axil, "w_full", 1);
    let w_data = m.reg(axil, "w_data", 32);
    let w_strb = m.reg(axil, "w_strb", 4);
    let bvalid = m.reg(axil, "bvalid_q", 1);
    let bresp = m.reg(axil, "bresp_q", 2);
    let awready = m.not(aw_full);
    let awready = m.named("awready", awready);
    let wready = m.not(w_full);
    let wready = m.named("wready", wready);
    let aw_take = m.and(bus.awvalid, awready);
    let w_take = m.and(bus.wvalid, wready);
    let both = m.and(aw_full, w_full);
    let no_b = m.not(bvalid);
    let do_write = m.and(both, no_b);
    let do_write = m.named("do_write", do_write);
    let awi = m.slice(bus.awaddr, 2, iw);
    m.set_next(aw_index, awi);
    m.set_enable(aw_index, aw_take);
    m.set_next(w_data, bus.wdata);
    m.set_enable(w_data, w_take);
    m.set_next(w_strb, bus.wstrb);
    m.set_enable(w_strb, w_take);
    let no_write = m.not(do_write);
    let aw_full_next = m.mux(aw_full, no_write, aw_take);
    m.set_next(aw_full, aw_full_next);
    let w_full_next = m.mux(w_full, no_write, w_take);
    m.set_next(w_full, w_full_next);
    let b_done = m.and(bvalid, bus.bready);
    let b_pending = m.not(b_done);
    let b_keep = m.and(bvalid, b_pending);
    let bvalid_next = m.or(b_keep, do_write);
    m.set_next(bvalid, bvalid_next);
    WriteChannel {
        index: aw_index,
        data: w_data,
        strb: w_strb,
        do_write,
        bvalid,
        bresp,
        awready,
        wready,
    }
}

/// The read channel's state: one outstanding read, data registered.
struct ReadChannel {
    rvalid: Signal,
    /// Registered read data; [`respond`] drives it.
    rdata: Signal,
    /// Registered read response; [`respond`] drives it.
    rresp: Signal,
    arready: Signal,
    /// A read address is taken this cycle.
    take: Signal,
    /// Register index of the read address.
    index: Signal,
}

/// The read channel: one outstanding read; data registered.
fn read_channel(m: &mut ModuleBuilder, axil: Domain, bus: &AxiLiteSlave, iw: u32) -> ReadChannel {
    let rvalid = m.reg(axil, "rvalid_q", 1);
    let rdata = m.reg(axil, "rdata_q", 32);
    let rresp = m.reg(axil, "rresp_q", 2);
    let arready = m.not(rvalid);
    let arready = m.named("arready", arready);
    let ar_take = m.and(bus.arvalid, arready);
    let r_done = m.and(rvalid, bus.rready);
    let r_pending = m.not(r_done);
    let r_keep = m.and(rvalid, r_pending);
    let rvalid_next = m.or(r_keep, ar_take);
    m.set_next(rvalid, rvalid_next);
    let ari = m.slice(bus.araddr, 2, iw);
    ReadChannel {
        rvalid,
        rdata,
        rresp,
        arready,
        take: ar_take,
        index: ari,
    }
}

/// The 4 byte strobes widened to a 32-bit mask, for merging a written word into an
/// old value byte by byte.
fn strobe_mask(m: &mut ModuleBuilder, strb: Signal) -> Signal {
    let strb_bits: Vec<Signal> = (0..4)
        .map(|i| {
            let b = m.bit(strb, i);
            m.replicate(b, 8)
        })
        .collect();
    let strb_mask = m.join_lanes(&strb_bits);
    m.named("strb_mask", strb_mask)
}

/// A read-write register `r` (domains `(axil, core)`): loaded with the written word
/// (`(data, strb_mask)`, merged byte by byte into its value) when `wr`, or from the
/// datapath's `{name}_load` port; its value reaches the datapath as output `{name}`.
/// Returns the value the bus reads.
fn writable_register(
    m: &mut ModuleBuilder,
    (axil, core): (Domain, Option<Domain>),
    r: &RegisterSpec,
    (data, strb_mask): (Signal, Signal),
    wr: Signal,
) -> Result<Signal, HdlError> {
    let q = m.reg_init(axil, &format!("{}_q", r.name), r.width, r.reset as u64);
    let old = m.zext(q, 32);
    let keep = m.not(strb_mask);
    let kept = m.and(old, keep);
    let new = m.and(data, strb_mask);
    let merged = m.or(kept, new);
    let merged = m.named(&format!("{}_written", r.name), merged);
    let merged = m.truncate(merged, r.width);
    if r.hardware_load {
        let load = m.input(&format!("{}_load", r.name), 1);
        let value = m.input(&format!("{}_load_value", r.name), r.width);
        let next = m.mux(wr, merged, value);
        let en = m.or(wr, load);
        m.set_next(q, next);
        m.set_enable(q, en);
    } else {
        m.set_next(q, merged);
        m.set_enable(q, wr);
    }
    let out = match core {
        Some(core) => to_core(m, axil, core, r, q)?,
        None => q,
    };
    m.output(&r.name, out);
    Ok(q)
}

/// A read-only or clear-on-write register `r` (domains `(axil, core)`): the datapath's
/// input `{name}`, and for clear-on-write a one-cycle `{name}_clear` pulse when `wr`.
/// Returns the value the bus reads.
fn status_register(
    m: &mut ModuleBuilder,
    (axil, core): (Domain, Option<Domain>),
    r: &RegisterSpec,
    wr: Signal,
) -> Result<Signal, HdlError> {
    let input = m.input(&r.name, r.width);
    if r.access == Access::ClearOnWrite {
        let clear = match core {
            Some(core) => cross_pulse(m, &format!("u_{}_clear_sync", r.name), axil, core, wr)?,
            None => wr,
        };
        m.output(&format!("{}_clear", r.name), clear);
    }
    Ok(match core {
        Some(core) => cross_word(m, &format!("u_{}_sync", r.name), core, axil, input)?,
        None => input,
    })
}

/// The registered read data and response (SLVERR past the last register) and write
/// response (SLVERR unless `write_ok` holds a hit).
fn respond(
    m: &mut ModuleBuilder,
    spec: &RegFileSpec,
    w: &WriteChannel,
    r: &ReadChannel,
    read_values: &[(Signal, Signal)],
    write_ok: &[Signal],
) {
    let iw = r.index.width();
    let zero = m.zeros(32);
    let read_word = m.select(read_values, zero);
    m.set_next(r.rdata, read_word);
    m.set_enable(r.rdata, r.take);
    let mapped = if spec.registers.len() as u64 == 1u64 << iw {
        m.lit(1, 1)
    } else {
        let count = m.lit(spec.registers.len() as u64, iw);
        m.lt(r.index, count)
    };
    let okay = m.lit(OKAY, 2);
    let slverr = m.lit(SLVERR, 2);
    let read_resp = m.mux(mapped, okay, slverr);
    m.set_next(r.rresp, read_resp);
    m.set_enable(r.rresp, r.take);
    let writable = if write_ok.is_empty() {
        m.lit(0, 1)
    } else {
        m.or_all(write_ok)
    };
    let write_resp = m.mux(writable, okay, slverr);
    m.set_next(w.bresp, write_resp);
    m.set_enable(w.bresp, w.do_write);
}

/// Carries a read-write register's value to the datapath domain: re-sent
/// continuously through a handshake crossing, held in a `core` register that resets
/// to the register's reset value.
fn to_core(
    m: &mut ModuleBuilder,
    axil: Domain,
    core: Domain,
    r: &RegisterSpec,
    value: Signal,
) -> Result<Signal, HdlError> {
    let hs = m.instance(&format!("u_{}_sync", r.name), &handshake_sync(r.width)?);
    m.bind_domain(hs, "src", axil);
    m.bind_domain(hs, "dst", core);
    let one = m.lit(1, 1);
    m.connect(hs, "src_valid", one);
    m.connect(hs, "src_data", value);
    let valid = m.instance_output(hs, "dst_valid");
    let data = m.instance_output(hs, "dst_data");
    let q = m.reg_init(core, &format!("{}_core", r.name), r.width, r.reset as u64);
    m.set_next(q, data);
    m.set_enable(q, valid);
    Ok(q)
}
