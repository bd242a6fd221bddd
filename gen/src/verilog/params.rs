//! A module's Verilog parameters: the `#( … )` list of its header, and the generate
//! block that stops elaboration when an instantiation overrides one with a value the
//! design was not generated for.
//!
//! The check instantiates a module that does not exist, named after the broken rule
//! (`C_M_AXIS_DATA_WIDTH_must_be_256`), inside a generate branch taken only on a bad
//! value. Verilog-2005 has no elaboration-time `$error`; a missing module is an
//! elaboration error in every tool (Verilator, Icarus, Yosys, Vivado), and its name is
//! the message. With the generated values the branch is never elaborated.

use hdl::ir::{Parameter, ParameterAccepts, ParameterKind};
use hdl::Module;

/// The value of `p` as a Verilog literal: decimal for integers, sized hex for vectors.
fn literal(p: &Parameter, value: u64) -> String {
    match p.kind {
        ParameterKind::Integer => value.to_string(),
        ParameterKind::Bits(w) => {
            format!("{w}'h{value:0digits$X}", digits = w.div_ceil(4) as usize)
        }
    }
}

/// The parameter list of `m`'s header (`#(\n    parameter … = …,\n …\n)`), or nothing
/// if it declares none.
pub(crate) fn header_list(m: &Module) -> String {
    if m.parameters.is_empty() {
        return String::new();
    }
    let rows: Vec<(String, &str, String)> = m
        .parameters
        .iter()
        .map(|p| {
            let kind = match p.kind {
                ParameterKind::Integer => "integer".to_string(),
                ParameterKind::Bits(w) => format!("[{}:0]", w - 1),
            };
            (kind, p.name.as_str(), literal(p, p.value))
        })
        .collect();
    let kind_w = rows.iter().map(|(k, _, _)| k.len()).max().unwrap_or(0);
    let name_w = rows.iter().map(|(_, n, _)| n.len()).max().unwrap_or(0);
    let mut text = String::from("#(\n");
    for (i, (kind, name, value)) in rows.iter().enumerate() {
        let sep = if i + 1 == rows.len() { "" } else { "," };
        text.push_str(&format!(
            "    parameter {kind:<kind_w$} {name:<name_w$} = {value}{sep}\n"
        ));
    }
    text.push(')');
    text
}

/// The condition under which `p`'s value breaks its rule, and the rule as an identifier
/// fragment; `None` if every value is accepted.
fn violation(p: &Parameter) -> Option<(String, String)> {
    match p.accepts {
        ParameterAccepts::Exactly => Some((
            format!("{} != {}", p.name, literal(p, p.value)),
            format!("must_be_{}", p.value),
        )),
        ParameterAccepts::AlignedTo { bits: 0 } => None,
        ParameterAccepts::AlignedTo { bits } => Some((
            format!("{}[{}:0] != {bits}'h0", p.name, bits - 1),
            format!("must_be_aligned_to_{}_bytes", 1u128 << bits),
        )),
    }
}

/// The generate block checking every parameter of `m` (indented, ending in a newline),
/// or nothing if none needs a check.
pub(crate) fn checks(m: &Module) -> String {
    let rules: Vec<(&str, String, String)> = m
        .parameters
        .iter()
        .filter_map(|p| violation(p).map(|(cond, rule)| (p.name.as_str(), cond, rule)))
        .collect();
    if rules.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "    // Generated for the parameter values above: overriding one with a value the\n    \
         // design does not fit stops elaboration at a module named after the rule.\n    \
         generate\n",
    );
    for (name, cond, rule) in rules {
        text.push_str(&format!(
            "        if ({cond}) begin : check_{name}\n            \
             {name}_{rule} parameter_check_failed ();\n        \
             end\n"
        ));
    }
    text.push_str("    endgenerate\n");
    text
}
