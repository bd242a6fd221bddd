//! The Verilog-2005 back end: one source file per unique module of a design.
//!
//! The output is deterministic (the same design gives byte-identical text), keeps the
//! builder's names (ports, wires, registers, memories and instances; unnamed nets are
//! `_n<id>`), and is written to be clean under `verilator --lint-only -Wall`, to compile
//! with `iverilog -g2005` and to synthesize with `yosys synth_xilinx`, memories as
//! block RAM. Notable choices:
//!
//! - a value read once and not named is written inline in the expression that reads it
//!   (see `inline` for the exact rule); values read several times, named values,
//!   registers, memory ports and instance ports are wires. Every expression has its
//!   net's width wherever it stands, so Verilog's context-dependent widths never come
//!   into play;
//! - wires, registers and instances carry `// @[file.rs:line]` source locators naming
//!   the generator line that built them, relative to the workspace root, and each file
//!   opens with what generated it ([`EmitOptions`] turns locators off);
//! - add/sub/mul zero-extend their operands to the result width explicitly;
//! - unsigned `<`/`<=` are written plainly (`a < b`) when neither side can fold to the
//!   literal that decides the comparison (see `fold`), and otherwise as signed compares
//!   of zero-extended operands (`$signed({1'b0, a}) < $signed({1'b0, b})`): Verilator
//!   folds constants through wires and logic and would report a compare with a
//!   constant 0 or all-ones operand (UNSIGNED/CMPCONST, fatal for a model's build);
//! - constant shifts are slices and concatenations, dynamic ones `<<`, `>>` and
//!   `$signed(x) >>> n`, whose Verilog semantics for amounts ≥ width (zeros, sign bits)
//!   are the IR's;
//! - leading-zero counts are balanced trees of assigns (see `lzc`);
//! - memory reads past the end of a non-power-of-two memory read zero;
//! - every bit nothing reads is named in one `wire _unused_ok = &{...}` (see `unused`);
//! - each file declares Verilog-2005 keywords (`` `begin_keywords "1364-2005" ``), so
//!   names SystemVerilog reserves but Verilog-2005 does not (`global`, `cross`, …) work
//!   in tools that read `.v` as SystemVerilog.

mod expr;
mod fold;
mod inline;
mod lzc;
mod module;
mod names;
mod params;
mod seq;
mod unused;
mod wrap;

use crate::GenError;
use hdl::Module;
use std::collections::{BTreeSet, HashMap};

/// How [`emit_with`] writes Verilog. The default (what [`emit`] uses) inlines and
/// writes source locators.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmitOptions {
    /// Write a value read once and not named inside the expression that reads it
    /// (off: every operation is a wire of its own, as a netlist).
    pub inline: bool,
    /// Write `// @[path/to/file.rs:line]` after every wire, register and instance and
    /// name the generator line of each module in its opening comment.
    pub locators: bool,
    /// Lines to add to the top module's opening comment (the block and parameters it
    /// was generated with, for example), if any.
    pub top_note: Option<String>,
}

impl Default for EmitOptions {
    fn default() -> Self {
        EmitOptions {
            inline: true,
            locators: true,
            top_note: None,
        }
    }
}

/// A generated design: one Verilog source file per unique module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Design {
    /// Name of the top module (its file is the last of `files`).
    pub top: String,
    /// `(file name, text)` per module, the file named after the module (`<module>.v`);
    /// every module comes after the modules it instantiates.
    pub files: Vec<(String, String)>,
}

impl Design {
    /// The text of the file called `file_name`, if the design has it.
    pub fn file(&self, file_name: &str) -> Option<&str> {
        self.files
            .iter()
            .find(|(n, _)| n == file_name)
            .map(|(_, t)| t.as_str())
    }

    /// The names of the emitted modules, in file order (top last).
    pub fn module_names(&self) -> Vec<&str> {
        self.files
            .iter()
            .map(|(n, _)| n.strip_suffix(".v").unwrap_or(n))
            .collect()
    }
}

/// The unique modules of a hierarchy and the Verilog name of each.
struct Hierarchy {
    /// Unique modules in first-seen depth-first (pre-)order; the top is first.
    modules: Vec<Module>,
    /// Index into `modules` of each unique module.
    index: HashMap<Module, usize>,
    /// Verilog module name of each unique module.
    names: Vec<String>,
}

impl Hierarchy {
    fn new(top: &Module) -> Self {
        let mut h = Hierarchy {
            modules: Vec::new(),
            index: HashMap::new(),
            names: Vec::new(),
        };
        h.visit(top);
        // Different modules that share a name: the first seen keeps it, the others get
        // `_1`, `_2`, … skipping any name some module of the design already has.
        let all: BTreeSet<&str> = h.modules.iter().map(|m| m.name.as_str()).collect();
        let mut taken: BTreeSet<String> = BTreeSet::new();
        for m in &h.modules {
            let name = if !taken.contains(&m.name) {
                m.name.clone()
            } else {
                (1u64..)
                    .map(|i| format!("{}_{i}", m.name))
                    .find(|c| !taken.contains(c) && !all.contains(c.as_str()))
                    .unwrap_or_default()
            };
            taken.insert(name.clone());
            h.names.push(name);
        }
        h
    }

    fn visit(&mut self, m: &Module) {
        if self.index.contains_key(m) {
            return;
        }
        self.index.insert(m.clone(), self.modules.len());
        self.modules.push(m.clone());
        for inst in &m.instances {
            self.visit(&inst.module);
        }
    }

    /// Indices of the unique modules, every module after the ones it instantiates.
    fn dependency_order(&self) -> Vec<usize> {
        let mut done = vec![false; self.modules.len()];
        let mut order = Vec::with_capacity(self.modules.len());
        self.post_order(0, &mut done, &mut order);
        order
    }

    fn post_order(&self, i: usize, done: &mut [bool], order: &mut Vec<usize>) {
        if done[i] {
            return;
        }
        done[i] = true;
        for inst in &self.modules[i].instances {
            if let Some(&c) = self.index.get(&inst.module) {
                self.post_order(c, done, order);
            }
        }
        order.push(i);
    }
}

/// Emits `top` and every module below it as Verilog-2005, one file per unique module.
///
/// Identical modules (equal as IR) are emitted once; different modules with the same
/// name are told apart by suffixes `_1`, `_2`, … in first-seen depth-first order, and
/// their instances use the new names. Fails on IR that breaks its own invariants
/// (which `ModuleBuilder::finish` rules out), on names Verilog cannot take, and on
/// top-level ports named after a C++ word Verilator reserves (such as `switch`).
pub fn emit(top: &Module) -> Result<Design, GenError> {
    emit_with(top, &EmitOptions::default())
}

/// [`emit`] with `options` (inlining, source locators, a note in the top's comment).
pub fn emit_with(top: &Module, options: &EmitOptions) -> Result<Design, GenError> {
    let h = Hierarchy::new(top);
    if let Some(m) = h
        .modules
        .iter()
        .find(|m| !hdl::ir::is_legal_identifier(&m.name))
    {
        return Err(GenError::BadName {
            module: m.name.clone(),
            what: "module",
            name: m.name.clone(),
            reason: "not a legal identifier".into(),
        });
    }
    if let Some(p) = top
        .ports
        .iter()
        .find(|p| names::is_verilator_cpp_word(&p.name))
    {
        return Err(GenError::BadName {
            module: top.name.clone(),
            what: "top-level port",
            name: p.name.clone(),
            reason: "Verilator reserves it for its C++ model (SYMRSVDWORD); rename the port".into(),
        });
    }
    let child_name = |m: &Module| -> String {
        h.index
            .get(m)
            .map(|&i| h.names[i].clone())
            .unwrap_or_else(|| m.name.clone())
    };
    let mut files = Vec::with_capacity(h.modules.len());
    for i in h.dependency_order() {
        let name = &h.names[i];
        let note = options.top_note.as_deref().filter(|_| i == 0);
        let text = module::emit_module(&h.modules[i], name, &child_name, options, note)?;
        files.push((format!("{name}.v"), text));
    }
    Ok(Design {
        top: h.names[0].clone(),
        files,
    })
}

#[cfg(test)]
mod fold_tests;
#[cfg(test)]
mod inline_tests;
#[cfg(test)]
mod tests;
