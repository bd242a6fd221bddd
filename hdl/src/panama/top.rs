//! The PANAMA accelerator as a NetFPGA `output_port_lookup` replacement: the
//! core ([`super::core`]) plus its AXI-Lite register file in its own clock domain.
//!
//! Ports, as the NetFPGA-PLUS `switch_output_port_lookup` (PANAMA.md, "Interface"):
//! `axis_aclk`, `axis_resetn` (active low); `s_axis_{tdata,tkeep,tuser,tvalid,tready,tlast}`
//! and `m_axis_*` (`tuser` 128 bits); and the AXI-Lite slave `S_AXI_ACLK`,
//! `S_AXI_ARESETN` (active low), `S_AXI_AW*`, `S_AXI_W*`, `S_AXI_B*`, `S_AXI_AR*`,
//! `S_AXI_R*` (12-bit address, 32-bit data). Every register value crosses between
//! the two clocks through `hdl::blocks::cdc` synchronizers inside the register file.
//!
//! # Register map
//! [`registers`] lists it; `wirespeed gen panama` writes it as Markdown, C header
//! and JSON. Counters are read-only and cleared by writing any value to them.

use super::config::PanamaConfig;
use super::core::{panama_core, COUNTERS};
use super::parser::USER_WIDTH;
use crate::blocks::axil_regfile::{axil_regfile, Access, RegFileSpec, RegisterMap, RegisterSpec};
use crate::dsl::{AxisConfig, ModuleBuilder};
use crate::ir::{Direction, HdlError, Module, Parameter, PortKind, ResetPolarity};

/// Value of the read-only `id` register: "PANA".
pub const ID: u32 = 0x5041_4E41;
/// Reset value of `agg_udp_port` (0x5041, "PA").
pub const DEFAULT_AGG_UDP_PORT: u32 = 0x5041;
/// AXI-Lite address width (a 4 KiB window).
pub const ADDR_WIDTH: u32 = 12;
/// AXI-Lite data width.
pub const AXIL_DATA_WIDTH: u32 = 32;
/// The top's module name unless a project asks for another (`Module::renamed`).
pub const TOP_NAME: &str = "panama";

/// The Verilog parameters NetFPGA's reference datapath passes to its
/// `output_port_lookup` (SUME's `output_port_lookup_ip` wrapper, PLUS's
/// `switch_output_port_lookup`), declared with the values `cfg` was generated for.
/// Overriding a width breaks elaboration; `C_BASEADDR` may be any address aligned to the
/// register window (the interconnect decodes it; the top sees only the offset).
pub fn netfpga_parameters(cfg: &PanamaConfig) -> Vec<Parameter> {
    let width = u64::from(cfg.data_width);
    let user = u64::from(USER_WIDTH);
    vec![
        Parameter::integer("C_M_AXIS_DATA_WIDTH", width),
        Parameter::integer("C_S_AXIS_DATA_WIDTH", width),
        Parameter::integer("C_M_AXIS_TUSER_WIDTH", user),
        Parameter::integer("C_S_AXIS_TUSER_WIDTH", user),
        Parameter::integer("C_S_AXI_DATA_WIDTH", u64::from(AXIL_DATA_WIDTH)),
        Parameter::integer("C_S_AXI_ADDR_WIDTH", u64::from(ADDR_WIDTH)),
        Parameter::base_address("C_BASEADDR", 32, 0, ADDR_WIDTH),
    ]
}

/// The `params` register: `[7:0]` ports, `[15:8]` slots, `[17:16]` format code,
/// `[18]` ftz, `[20:19]` data width (0: 256, 1: 512, 2: 1024), `[27:21]`
/// fifo_depth − 1.
pub fn params_word(cfg: &PanamaConfig) -> u32 {
    let width_code = cfg.data_width.trailing_zeros() - 8;
    cfg.ports()
        | cfg.slots << 8
        | u32::from(cfg.format.code()) << 16
        | u32::from(cfg.ftz) << 18
        | width_code << 19
        | (cfg.fifo_depth - 1) << 21
}

/// The register file's registers, in address order (offsets 0, 4, 8, …).
pub fn registers(cfg: &PanamaConfig) -> Vec<RegisterSpec> {
    let mut r = vec![
        RegisterSpec::new("id", Access::ReadOnly, 32)
            .with_reset(ID)
            .describe("0x50414E41 (\"PANA\"): identifies the accelerator"),
        RegisterSpec::new("params", Access::ReadOnly, 32)
            .with_reset(params_word(cfg))
            .describe("generator parameters: [7:0] ports, [15:8] slots, [17:16] format, [18] ftz, [20:19] width code, [27:21] fifo_depth-1")
            .field("ports", 0, 8, "number of ports")
            .field("slots", 8, 8, "number of job slots")
            .field("format", 16, 2, "number format: 0 fp32, 1 bf16, 2 fp16")
            .field("ftz", 18, 1, "1: subnormals flushed to zero")
            .field("width_code", 19, 2, "datapath width: 0 256, 1 512, 2 1024 bits")
            .field("fifo_depth_minus_1", 21, 7, "packet buffer depth - 1 (packets)"),
        RegisterSpec::new("agg_udp_port", Access::ReadWrite, 16)
            .with_reset(DEFAULT_AGG_UDP_PORT)
            .describe("UDP destination port of aggregation packets (change between frames)"),
    ];
    for (p, d) in cfg.default_bypass_dst().into_iter().enumerate() {
        r.push(
            RegisterSpec::new(&format!("bypass_dst{p}"), Access::ReadWrite, 8)
                .with_reset(u32::from(d))
                .describe(&format!(
                    "tuser destination of bypassed frames from port {p} (code {:#04x})",
                    cfg.port_codes[p]
                )),
        );
    }
    for (k, &(code, dst)) in cfg.host_routes.iter().enumerate() {
        r.push(
            RegisterSpec::new(&format!("host_dst{k}"), Access::ReadWrite, 8)
                .with_reset(u32::from(dst))
                .describe(&format!(
                    "tuser destination of frames from host (DMA) port code {code:#04x}"
                )),
        );
    }
    r.push(
        RegisterSpec::new("full_wait", Access::ReadWrite, 32)
            .with_reset(cfg.full_wait)
            .describe("cycles an aggregation packet may hold the input on a full packet buffer before it is dropped (0: drop at once)"),
    );
    r.push(
        RegisterSpec::new("slot_timeout", Access::ReadWrite, 32)
            .with_reset(cfg.slot_timeout)
            .describe("cycles a slot may hold packets without a head at every participating port before its heads are flushed"),
    );
    for s in 0..cfg.slots {
        r.push(
            RegisterSpec::new(&format!("slot{s}_enable"), Access::ReadWrite, 1)
                .describe(&format!("slot {s} matches packets when 1")),
        );
        r.push(
            RegisterSpec::new(&format!("slot{s}_job_id"), Access::ReadWrite, 16)
                .describe(&format!("slot {s}: job_id to match")),
        );
        r.push(
            RegisterSpec::new(&format!("slot{s}_tree_id"), Access::ReadWrite, 8)
                .describe(&format!("slot {s}: tree_id to match")),
        );
        let mut ports =
            RegisterSpec::new(&format!("slot{s}_ports"), Access::ReadWrite, cfg.ports()).describe(
                &format!("slot {s}: participating ports, bit i = port index i"),
            );
        for (i, code) in cfg.port_codes.iter().enumerate() {
            ports = ports.field(
                &format!("port{i}"),
                i as u32,
                1,
                &format!("port index {i} (code {code:#04x}) takes part"),
            );
        }
        r.push(ports);
    }
    for (name, what) in COUNTERS {
        r.push(
            RegisterSpec::new(name, Access::ClearOnWrite, 32)
                .describe(&format!("counter: {what}; write to clear")),
        );
    }
    r
}

/// Generates the top ([`TOP_NAME`], with [`netfpga_parameters`]) and its register map.
pub fn panama_top(cfg: &PanamaConfig) -> Result<(Module, RegisterMap), HdlError> {
    let core = panama_core(cfg)?;
    let specs = registers(cfg);
    let (regs, map) = axil_regfile(&RegFileSpec {
        name: format!("panama_regs_{}", cfg.module_suffix()),
        registers: specs.clone(),
        addr_width: ADDR_WIDTH,
        separate_clock: true,
    })?;
    let mut m = ModuleBuilder::new(TOP_NAME);
    for p in netfpga_parameters(cfg) {
        m.parameter(p);
    }
    let clk = m.domain(
        "clk",
        "axis_aclk",
        Some("axis_resetn"),
        ResetPolarity::ActiveLow,
    );
    let axil = m.domain(
        "axil",
        "S_AXI_ACLK",
        Some("S_AXI_ARESETN"),
        ResetPolarity::ActiveLow,
    );
    let axis = AxisConfig::packets(cfg.data_width, USER_WIDTH);
    let s = m.axis_in("s_axis", &axis);
    let o = m.axis_out("m_axis", &axis);
    let c = m.instance("u_core", &core);
    let r = m.instance("u_regs", &regs);
    m.bind_domain(c, "clk", clk);
    m.bind_domain(r, "axil", axil);
    m.bind_domain(r, "core", clk);

    // Streams straight to the core.
    for (port, sig) in [
        ("s_axis_tdata", Some(s.beat.tdata)),
        ("s_axis_tkeep", s.beat.tkeep),
        ("s_axis_tuser", s.beat.tuser),
        ("s_axis_tlast", s.beat.tlast),
        ("s_axis_tvalid", Some(s.tvalid)),
        ("m_axis_tready", Some(o.tready)),
    ] {
        if let Some(sig) = sig {
            m.connect(c, port, sig);
        }
    }
    let ready = m.instance_output(c, "s_axis_tready");
    m.assign(s.tready, ready);
    let valid = m.instance_output(c, "m_axis_tvalid");
    m.assign(o.tvalid, valid);
    for (port, sig) in [
        ("m_axis_tdata", Some(o.beat.tdata)),
        ("m_axis_tkeep", o.beat.tkeep),
        ("m_axis_tuser", o.beat.tuser),
        ("m_axis_tlast", o.beat.tlast),
    ] {
        if let Some(sig) = sig {
            let v = m.instance_output(c, port);
            m.assign(sig, v);
        }
    }

    // AXI-Lite to the top's ports.
    for port in regs.ports.iter().filter(|p| p.kind == PortKind::Data) {
        if !port.name.starts_with("S_AXI_") {
            continue;
        }
        let width = regs.nets[port.net.0 as usize].width;
        match port.direction {
            Direction::Input => {
                let x = m.input(&port.name, width);
                m.connect(r, &port.name, x);
            }
            Direction::Output => {
                let x = m.instance_output(r, &port.name);
                m.output(&port.name, x);
            }
        }
    }

    // Registers to the core, by name.
    for spec in &specs {
        match spec.access {
            Access::ReadWrite => {
                let v = m.instance_output(r, &spec.name);
                m.connect(c, &spec.name, v);
            }
            Access::ReadOnly => {
                let v = m.lit(u64::from(spec.reset), spec.width);
                m.connect(r, &spec.name, v);
            }
            Access::ClearOnWrite => {
                let v = m.instance_output(c, &spec.name);
                m.connect(r, &spec.name, v);
                let clear = m.instance_output(r, &format!("{}_clear", spec.name));
                m.connect(c, &format!("{}_clear", spec.name), clear);
            }
        }
    }
    let top = m.finish()?;
    Ok((top, map))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::fp::FpFormat;

    /// The `params` word read through its register's own fields (as the register
    /// map's JSON and the Python driver read it) gives back the generator's
    /// parameters, for every data width and format, with and without ftz.
    #[test]
    fn params_fields_decode_to_the_generator_parameters() {
        let cases = [
            (256, FpFormat::Fp32, false, 8, 0),
            (512, FpFormat::Bf16, true, 16, 1),
            (1024, FpFormat::Fp16, true, 64, 2),
        ];
        for (width, format, ftz, fifo_depth, format_code) in cases {
            let cfg = PanamaConfig {
                format,
                ftz,
                fifo_depth,
                slots: 3,
                ..PanamaConfig::new(width, &[0x01, 0x04, 0x10, 0x40, 0x02])
            };
            cfg.validate().unwrap_or_else(|e| panic!("{e}"));
            let word = params_word(&cfg);
            let spec = registers(&cfg)
                .into_iter()
                .find(|r| r.name == "params")
                .expect("the map has params");
            assert_eq!(spec.reset, word, "{width}: the register's value");
            let field = |name: &str| {
                let f = spec.fields.iter().find(|f| f.name == name);
                let f = f.unwrap_or_else(|| panic!("params has no field {name}"));
                word >> f.lsb & ((1 << f.width) - 1)
            };
            assert_eq!(field("ports"), 5, "{width}: ports");
            assert_eq!(field("slots"), 3, "{width}: slots");
            assert_eq!(field("format"), format_code, "{width}: format");
            assert_eq!(field("ftz"), u32::from(ftz), "{width}: ftz");
            assert_eq!(256 << field("width_code"), width, "{width}: width");
            assert_eq!(
                field("fifo_depth_minus_1") + 1,
                fifo_depth,
                "{width}: depth"
            );
        }
    }
}
