//! `fp_add_tree`: `inputs` operands × `lanes` lanes summed by a balanced tree of
//! `fp_add` instances, in PANAMA's fixed order.

use super::add::{fp_add, FpAddConfig, MAX_STAGES};
use super::format::FpFormat;
use crate::dsl::{Domain, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};

/// Options of an adder tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FpTreeConfig {
    /// Number of operands per lane (1..=64).
    pub inputs: u32,
    /// Number of independent lanes (1..=256).
    pub lanes: u32,
    /// The adders' format, pipeline depth and flush-to-zero option.
    pub adder: FpAddConfig,
}

impl Default for FpTreeConfig {
    /// 4 operands × 16 lanes of the default adder ([`FpAddConfig::default`]).
    fn default() -> Self {
        FpTreeConfig {
            inputs: 4,
            lanes: 16,
            adder: FpAddConfig::default(),
        }
    }
}

impl FpTreeConfig {
    /// Number of adder levels: ⌈log2(inputs)⌉.
    pub fn levels(&self) -> u32 {
        self.inputs.next_power_of_two().trailing_zeros()
    }

    /// Cycles from `in_valid` to `out_valid`.
    pub fn latency(&self) -> u32 {
        self.levels() * self.adder.stages
    }
}

/// The bit pattern of −0.0, the exact identity of addition, in `format`.
pub fn negative_zero(format: FpFormat) -> u64 {
    1u64 << (format.width() - 1)
}

/// Generates `fp_add_tree_{format}_i{inputs}_l{lanes}_p{stages}[_ftz]`.
///
/// Ports: `in_data[inputs·lanes·w]` (operand `i`, lane `j` at bits
/// `[(i·lanes + j)·w +: w]`), `in_present[inputs]`, `in_valid`,
/// `out_data[lanes·w]`, `out_valid`; with pipelined adders also `clk`, `rst`
/// (active high). An absent operand counts as −0.0. Each level pairs operands
/// (0,1), (2,3), … in order; an odd last operand goes to the next level through
/// registers of the adders' depth, so `out_valid` follows `in_valid` by
/// [`FpTreeConfig::latency`] cycles and one sum per lane leaves per cycle.
pub fn fp_add_tree(cfg: &FpTreeConfig) -> Result<Module, HdlError> {
    const NAME: &str = "fp_add_tree";
    if !(1..=64).contains(&cfg.inputs) {
        return Err(HdlError::parameter(
            NAME,
            "inputs",
            format!("{} is not in 1..=64", cfg.inputs),
        ));
    }
    if !(1..=256).contains(&cfg.lanes) {
        return Err(HdlError::parameter(
            NAME,
            "lanes",
            format!("{} is not in 1..=256", cfg.lanes),
        ));
    }
    if cfg.adder.stages > MAX_STAGES {
        return Err(HdlError::parameter(
            NAME,
            "stages",
            format!("{} is not in 0..={MAX_STAGES}", cfg.adder.stages),
        ));
    }
    let f = cfg.adder.format;
    let w = f.width();
    let name = format!(
        "fp_add_tree_{}_i{}_l{}_p{}{}",
        f,
        cfg.inputs,
        cfg.lanes,
        cfg.adder.stages,
        if cfg.adder.ftz { "_ftz" } else { "" }
    );
    let mut m = ModuleBuilder::new(&name);
    let domain = (cfg.adder.stages > 0)
        .then(|| m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh));
    let data = m.input("in_data", cfg.inputs * cfg.lanes * w);
    let present = m.input("in_present", cfg.inputs);
    let mut valid = m.input("in_valid", 1);
    let adder = fp_add(&cfg.adder)?;

    let neg_zero = m.lit(negative_zero(f), w);
    let identity = m.replicate(neg_zero, cfg.lanes);
    let mut operands: Vec<Signal> = (0..cfg.inputs)
        .map(|i| {
            let x = m.slice(data, i * cfg.lanes * w, cfg.lanes * w);
            let here = m.bit(present, i);
            m.mux(here, x, identity)
        })
        .collect();

    let mut level = 0;
    while operands.len() > 1 {
        let mut next = Vec::with_capacity(operands.len().div_ceil(2));
        let mut next_valid = None;
        for (p, pair) in operands.chunks(2).enumerate() {
            match pair {
                [x, y] => {
                    let (sum, v) =
                        add_lanes(&mut m, cfg, &adder, domain, (level, p), *x, *y, valid);
                    next_valid.get_or_insert(v);
                    next.push(sum);
                }
                [x] => {
                    let carried = match domain {
                        Some(d) => m.delay(d, &format!("carry_l{level}"), *x, cfg.adder.stages),
                        None => *x,
                    };
                    next.push(carried);
                }
                _ => unreachable!("chunks(2)"),
            }
        }
        valid = next_valid.expect("a level with two or more operands has a pair");
        operands = next;
        level += 1;
    }
    m.output("out_data", operands[0]);
    m.output("out_valid", valid);
    m.finish()
}

/// One pair of operands summed lane by lane; returns the sums and the valid of the
/// first lane's adder.
#[allow(clippy::too_many_arguments)]
fn add_lanes(
    m: &mut ModuleBuilder,
    cfg: &FpTreeConfig,
    adder: &Module,
    domain: Option<Domain>,
    (level, pair): (u32, usize),
    x: Signal,
    y: Signal,
    valid: Signal,
) -> (Signal, Signal) {
    let w = cfg.adder.format.width();
    let mut sums = Vec::with_capacity(cfg.lanes as usize);
    let mut out_valid = None;
    for lane in 0..cfg.lanes {
        let u = m.instance(&format!("u_add_l{level}_p{pair}_lane{lane}"), adder);
        if let Some(d) = domain {
            m.bind_domain(u, "clk", d);
        }
        let a = m.slice(x, lane * w, w);
        let b = m.slice(y, lane * w, w);
        m.connect(u, "a", a);
        m.connect(u, "b", b);
        m.connect(u, "in_valid", valid);
        sums.push(m.instance_output(u, "y"));
        out_valid.get_or_insert_with(|| m.instance_output(u, "out_valid"));
    }
    let v = out_valid.expect("lanes >= 1");
    (m.join_lanes(&sums), v)
}
