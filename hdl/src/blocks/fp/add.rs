//! `fp_add`: a pipelined IEEE-754 adder for any binary format, round to nearest,
//! ties to even, with full subnormal support (or flush-to-zero).
//!
//! The datapath has seven steps with a possible register after each:
//! 1. unpack and order the operands by magnitude, detect NaN and infinity;
//! 2. align the smaller significand (guard, round and sticky bits kept);
//! 3. add or subtract the significands;
//! 4. count leading zeros and choose the normalizing shift (stopping at the
//!    subnormal range);
//! 5. normalize;
//! 6. round to nearest, ties to even;
//! 7. pack, with the special results (the output register).
//!
//! `stages` registers are spread over these cuts (see [`cuts_for_depth`]); a valid
//! bit travels with the data, and one result leaves per cycle at every depth.

use super::format::FpFormat;
use crate::dsl::{bits_for, Domain, ModuleBuilder, Signal};
use crate::ir::{HdlError, Module, ResetPolarity};

/// Largest pipeline depth offered.
pub const MAX_STAGES: u32 = 7;

/// Options of an adder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FpAddConfig {
    /// Number format.
    pub format: FpFormat,
    /// Pipeline registers, 0 (combinational) to [`MAX_STAGES`].
    pub stages: u32,
    /// Flush subnormal inputs and outputs to zero of the same sign.
    pub ftz: bool,
}

impl Default for FpAddConfig {
    /// fp32 with subnormals, 3 pipeline registers.
    fn default() -> Self {
        FpAddConfig {
            format: FpFormat::Fp32,
            stages: 3,
            ftz: false,
        }
    }
}

impl FpAddConfig {
    /// The module name this configuration generates.
    pub fn module_name(&self) -> String {
        format!(
            "fp_add_{}_p{}{}",
            self.format,
            self.stages,
            if self.ftz { "_ftz" } else { "" }
        )
    }
}

/// After which of the seven steps a register sits, for each depth.
pub fn cuts_for_depth(stages: u32) -> &'static [u32] {
    match stages {
        0 => &[],
        1 => &[7],
        2 => &[3, 7],
        3 => &[2, 5, 7],
        4 => &[2, 3, 5, 7],
        5 => &[1, 2, 3, 5, 7],
        6 => &[1, 2, 3, 4, 5, 7],
        _ => &[1, 2, 3, 4, 5, 6, 7],
    }
}

/// Registers a group of values at a cut if the depth puts a register there.
struct Pipe<'a> {
    domain: Option<Domain>,
    cuts: &'a [u32],
}

impl Pipe<'_> {
    fn cut<const N: usize>(
        &self,
        m: &mut ModuleBuilder,
        at: u32,
        valid: Signal,
        values: [(&str, Signal); N],
    ) -> (Signal, [Signal; N]) {
        match self.domain {
            Some(d) if self.cuts.contains(&at) => {
                let v = m.register(d, &format!("valid_s{at}"), valid);
                let regs = values.map(|(name, s)| {
                    let r = m.reg_no_reset(d, &format!("{name}_s{at}"), s.width());
                    m.set_next(r, s);
                    r
                });
                (v, regs)
            }
            _ => (valid, values.map(|(_, s)| s)),
        }
    }
}

/// Generates `fp_add_{format}_p{stages}[_ftz]`.
///
/// Ports: `a`, `b`, `y` (format width), `in_valid`, `out_valid`; with `stages > 0`
/// also `clk`, `rst` (active high; only the valid bits are reset). `y` is
/// `a + b` rounded to nearest even, `stages` cycles after the inputs. Any NaN input
/// or ∞ + −∞ gives the canonical quiet NaN; overflow gives ±∞; an exact
/// cancellation gives +0 (and −0 + −0 = −0).
pub fn fp_add(cfg: &FpAddConfig) -> Result<Module, HdlError> {
    if cfg.stages > MAX_STAGES {
        return Err(HdlError::parameter(
            "fp_add",
            "stages",
            format!("{} is not in 0..={MAX_STAGES}", cfg.stages),
        ));
    }
    let mut m = ModuleBuilder::new(&cfg.module_name());
    let domain =
        (cfg.stages > 0).then(|| m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh));
    let w = cfg.format.width();
    let a = m.input("a", w);
    let b = m.input("b", w);
    let valid = m.input("in_valid", 1);
    let pipe = Pipe {
        domain,
        cuts: cuts_for_depth(cfg.stages),
    };
    let (y, out_valid) = build_adder(&mut m, cfg, &pipe, a, b, valid);
    m.output("y", y);
    m.output("out_valid", out_valid);
    m.finish()
}

/// Operand fields after unpacking.
struct Unpacked {
    sign: Signal,
    /// Exponent field, with subnormals (and zero) read as exponent 1.
    exp: Signal,
    /// Significand with its hidden bit (`frac_bits + 1` bits).
    sig: Signal,
    nan: Signal,
    inf: Signal,
    /// The exponent|fraction bits, ordered like the magnitude.
    magnitude: Signal,
}

/// Unpacks operand `x`; its values are named `<p>_sign`, `<p>_exp`, ….
fn unpack(m: &mut ModuleBuilder, f: FpFormat, ftz: bool, x: Signal, p: &str) -> Unpacked {
    let (e, mb) = (f.exp_bits(), f.frac_bits());
    let name = |m: &mut ModuleBuilder, what: &str, v: Signal| m.named(&format!("{p}_{what}"), v);
    let sign = m.bit(x, e + mb);
    let sign = name(m, "sign", sign);
    let exp = m.slice(x, mb, e);
    let exp = name(m, "exp", exp);
    let frac = m.slice(x, 0, mb);
    let frac = name(m, "frac", frac);
    let exp_ones = m.reduce_and(exp);
    let exp_ones = name(m, "exp_max", exp_ones);
    let exp_any = m.reduce_or(exp);
    let exp_any = name(m, "exp_nonzero", exp_any);
    let frac_any = m.reduce_or(frac);
    let frac_any = name(m, "frac_nonzero", frac_any);
    let no_frac = m.not(frac_any);
    let nan = m.and(exp_ones, frac_any);
    let inf = m.and(exp_ones, no_frac);
    let inf = name(m, "inf", inf);
    let one = m.lit(1, e);
    let eff_exp = m.mux(exp_any, exp, one);
    let eff_exp = name(m, "eff_exp", eff_exp);
    // With flush-to-zero a subnormal is a zero of the same sign.
    let frac = if ftz {
        let zero_frac = m.zeros(mb);
        m.mux(exp_any, frac, zero_frac)
    } else {
        frac
    };
    let sig = m.concat(&[exp_any, frac]);
    let sig = name(m, "sig", sig);
    let magnitude = m.concat(&[exp, frac]);
    Unpacked {
        sign,
        exp: eff_exp,
        sig,
        nan,
        inf,
        magnitude,
    }
}

fn build_adder(
    m: &mut ModuleBuilder,
    cfg: &FpAddConfig,
    pipe: &Pipe,
    a: Signal,
    b: Signal,
    valid: Signal,
) -> (Signal, Signal) {
    let f = cfg.format;
    let (e, mb) = (f.exp_bits(), f.frac_bits());
    let ext = mb + 4; // significand with hidden bit + guard, round, sticky

    // 1. Unpack, order by magnitude, specials.
    let ua = unpack(m, f, cfg.ftz, a, "a");
    let ub = unpack(m, f, cfg.ftz, b, "b");
    let a_smaller = m.lt(ua.magnitude, ub.magnitude);
    let a_smaller = m.named("a_smaller", a_smaller);
    let sign = m.mux(a_smaller, ub.sign, ua.sign);
    let sign = m.named("sign", sign);
    let eff_sub = m.xor(ua.sign, ub.sign);
    let eff_sub = m.named("eff_sub", eff_sub);
    let exp_big = m.mux(a_smaller, ub.exp, ua.exp);
    let exp_big = m.named("exp_big", exp_big);
    let exp_small = m.mux(a_smaller, ua.exp, ub.exp);
    let sig_big = m.mux(a_smaller, ub.sig, ua.sig);
    let sig_small = m.mux(a_smaller, ua.sig, ub.sig);
    let dist = m.sub_wrap(exp_big, exp_small);
    let dist = m.named("exp_dist", dist);
    let any_nan = m.or(ua.nan, ub.nan);
    let both_inf = m.and(ua.inf, ub.inf);
    let inf_clash = m.and(both_inf, eff_sub);
    let nan = m.or(any_nan, inf_clash);
    let nan = m.named("nan", nan);
    let inf = m.or(ua.inf, ub.inf);
    let inf = m.named("inf", inf);
    let inf_sign = m.mux(ua.inf, ua.sign, ub.sign);
    let inf_sign = m.named("inf_sign", inf_sign);
    let (valid, [sign, eff_sub, exp_big, sig_big, sig_small, dist, nan, inf, inf_sign]) = pipe.cut(
        m,
        1,
        valid,
        [
            ("sign", sign),
            ("eff_sub", eff_sub),
            ("exp_big", exp_big),
            ("sig_big", sig_big),
            ("sig_small", sig_small),
            ("dist", dist),
            ("nan", nan),
            ("inf", inf),
            ("inf_sign", inf_sign),
        ],
    );

    // 2. Align: shift the smaller significand right by the exponent distance, keeping
    // the bits shifted out as a sticky bit. Distances ≥ ext leave only the sticky bit.
    let sw = bits_for(ext);
    let dist_w = e.max(sw);
    let dist_x = m.zext(dist, dist_w);
    let limit = m.lit(ext as u64, dist_w);
    let too_far = m.gt(dist_x, limit);
    let dist_c = m.mux(too_far, limit, dist_x);
    let dist_c = m.named("align_dist", dist_c);
    let shift = m.truncate(dist_c, sw);
    let grs = m.zeros(3);
    let small_ext = m.concat(&[sig_small, grs]);
    let low = m.zeros(ext);
    let wide = m.concat(&[small_ext, low]);
    let shifted = m.shr_by(wide, shift);
    let shifted = m.named("aligned", shifted);
    let kept = m.slice(shifted, ext, ext);
    let lost = m.truncate(shifted, ext);
    let sticky = m.reduce_or(lost);
    let sticky_x = m.zext(sticky, ext);
    let small_al = m.or(kept, sticky_x);
    let small_al = m.named("small_al", small_al);
    let big_ext = m.concat(&[sig_big, grs]);
    let big_ext = m.named("big_ext", big_ext);
    let (valid, [sign, eff_sub, exp_big, big_ext, small_al, nan, inf, inf_sign]) = pipe.cut(
        m,
        2,
        valid,
        [
            ("sign", sign),
            ("eff_sub", eff_sub),
            ("exp_big", exp_big),
            ("big_ext", big_ext),
            ("small_al", small_al),
            ("nan", nan),
            ("inf", inf),
            ("inf_sign", inf_sign),
        ],
    );

    // 3. Add or subtract (the big operand is never smaller: no negative result).
    let sum = m.add(big_ext, small_al);
    let diff = m.sub(big_ext, small_al);
    let total = m.mux(eff_sub, diff, sum);
    let total = m.named("total", total);
    let (valid, [sign, eff_sub, exp_big, total, nan, inf, inf_sign]) = pipe.cut(
        m,
        3,
        valid,
        [
            ("sign", sign),
            ("eff_sub", eff_sub),
            ("exp_big", exp_big),
            ("total", total),
            ("nan", nan),
            ("inf", inf),
            ("inf_sign", inf_sign),
        ],
    );

    // 4. Count leading zeros and choose the normalizing shift: left by the count, but
    // not below exponent 1 (subnormal results); right by one on a carry.
    let xw = e.max(bits_for(ext)) + 2;
    let carry = m.bit(total, ext);
    let carry = m.named("carry", carry);
    let exp_x = m.zext(exp_big, xw);
    let exp_x = m.named("exp_x", exp_x);
    let one_x = m.lit(1, xw);
    let body = m.truncate(total, ext);
    let body = m.named("body", body);
    let lz = m.leading_zeros(body);
    let lz = m.named("lz", lz);
    let lz_x = m.zext(lz, xw);
    let lz_x = m.named("lz_x", lz_x);
    let room = m.sub_wrap(exp_x, one_x);
    let room = m.named("room", room);
    let lz_fits = m.le(lz_x, room);
    let left = m.mux(lz_fits, lz_x, room);
    let left = m.named("left", left);
    let zero = m.reduce_or(total);
    let zero = m.not(zero);
    let zero = m.named("zero", zero);
    let (valid, [sign, eff_sub, total, carry, exp_x, left, zero, nan, inf, inf_sign]) = pipe.cut(
        m,
        4,
        valid,
        [
            ("sign", sign),
            ("eff_sub", eff_sub),
            ("total", total),
            ("carry", carry),
            ("exp_x", exp_x),
            ("left", left),
            ("zero", zero),
            ("nan", nan),
            ("inf", inf),
            ("inf_sign", inf_sign),
        ],
    );

    // 5. Normalize to a leading one at bit ext-1.
    let one_x = m.lit(1, xw);
    let body = m.truncate(total, ext);
    let lsb = m.bit(total, 0);
    let upper = m.slice(total, 1, ext);
    let lsb_x = m.zext(lsb, ext);
    let carry_sig = m.or(upper, lsb_x);
    let exp_plus = m.add_wrap(exp_x, one_x);
    // `left` ≤ ext (lz ≤ ext), so truncating it to the shifter's width keeps its value.
    let left_sh = m.truncate(left, bits_for(ext));
    let left_full = m.shl_by(body, left_sh);
    let exp_left = m.sub_wrap(exp_x, left);
    let norm = m.mux(carry, carry_sig, left_full);
    let norm = m.named("norm", norm);
    let exp_n = m.mux(carry, exp_plus, exp_left);
    let (valid, [sign, eff_sub, norm, exp_n, zero, nan, inf, inf_sign]) = pipe.cut(
        m,
        5,
        valid,
        [
            ("sign", sign),
            ("eff_sub", eff_sub),
            ("norm", norm),
            ("exp_n", exp_n),
            ("zero", zero),
            ("nan", nan),
            ("inf", inf),
            ("inf_sign", inf_sign),
        ],
    );

    // 6. Round to nearest, ties to even.
    let kept = m.slice(norm, 3, mb + 1);
    let kept = m.named("kept", kept);
    let guard = m.bit(norm, 2);
    let round = m.bit(norm, 1);
    let sticky = m.bit(norm, 0);
    let lsb = m.bit(kept, 0);
    let rest = m.or_all(&[round, sticky, lsb]);
    let up = m.and(guard, rest);
    let up = m.named("round_up", up);
    let up_x = m.zext(up, mb + 1);
    let rounded = m.add(kept, up_x);
    let rounded = m.named("rounded", rounded);
    let overflow = m.bit(rounded, mb + 1);
    let ovf_x = m.zext(overflow, xw);
    let exp_r = m.add_wrap(exp_n, ovf_x);
    let exp_r = m.named("exp_r", exp_r);
    let (valid, [sign, eff_sub, rounded, exp_r, zero, nan, inf, inf_sign]) = pipe.cut(
        m,
        6,
        valid,
        [
            ("sign", sign),
            ("eff_sub", eff_sub),
            ("rounded", rounded),
            ("exp_r", exp_r),
            ("zero", zero),
            ("nan", nan),
            ("inf", inf),
            ("inf_sign", inf_sign),
        ],
    );

    // 7. Pack, with the special results.
    let overflow = m.bit(rounded, mb + 1);
    let overflow = m.named("overflow", overflow);
    let hidden = m.bit(rounded, mb);
    let frac_shifted = m.slice(rounded, 1, mb);
    let frac_plain = m.slice(rounded, 0, mb);
    let frac_r = m.mux(overflow, frac_shifted, frac_plain);
    let normal = m.or(hidden, overflow);
    let normal = m.named("normal", normal);
    let max_exp = m.lit((1u64 << e) - 1, xw);
    let too_big = m.ge(exp_r, max_exp);
    let exp_field = m.truncate(exp_r, e);
    let zero_e = m.zeros(e);
    let exp_out = m.mux(normal, exp_field, zero_e);
    let is_sub = m.not(normal);
    let flushed = if cfg.ftz { is_sub } else { zero };
    let result_zero = m.or(zero, flushed);
    // An exact cancellation is +0; otherwise a zero keeps the sign (−0 + −0 = −0).
    let cancel = m.and(zero, eff_sub);
    let keep_sign = m.not(cancel);
    let zero_sign = m.and(sign, keep_sign);
    let zero_frac = m.zeros(mb);
    let ones_e = m.ones(e);
    let finite = m.concat(&[sign, exp_out, frac_r]);
    let finite = m.named("finite", finite);
    let signed_zero = {
        let z = m.zeros(e + mb);
        let signed_zero = m.concat(&[zero_sign, z]);
        m.named("signed_zero", signed_zero)
    };
    let inf_out = m.concat(&[inf_sign, ones_e, zero_frac]);
    let ovf_out = m.concat(&[sign, ones_e, zero_frac]);
    let nan_out = m.lit(f.canonical_nan(), f.width());
    let y = m.select(
        &[
            (nan, nan_out),
            (inf, inf_out),
            (result_zero, signed_zero),
            (too_big, ovf_out),
        ],
        finite,
    );
    let y = m.named("result", y);
    let (valid, [y]) = pipe.cut(m, 7, valid, [("y", y)]);
    (y, valid)
}
