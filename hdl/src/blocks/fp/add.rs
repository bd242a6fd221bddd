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
    /// `values` (and `valid`) through cut `at`: registers named `{name}_s{at}` (and
    /// `valid_s{at}`) if the depth puts a register there, the values themselves if not.
    fn cut(
        &self,
        m: &mut ModuleBuilder,
        at: u32,
        valid: Signal,
        values: &[(&str, Signal)],
    ) -> (Signal, Vec<Signal>) {
        match self.domain {
            Some(d) if self.cuts.contains(&at) => {
                let v = m.register(d, &format!("valid_s{at}"), valid);
                let regs = values
                    .iter()
                    .map(|&(name, s)| {
                        let r = m.reg_no_reset(d, &format!("{name}_s{at}"), s.width());
                        m.set_next(r, s);
                        r
                    })
                    .collect();
                (v, regs)
            }
            _ => (valid, values.iter().map(|&(_, s)| s).collect()),
        }
    }
}

/// What every step carries to the next: the result's sign, whether the magnitudes are
/// subtracted, and the special results.
#[derive(Clone, Copy)]
struct Carried {
    sign: Signal,
    eff_sub: Signal,
    /// The result is the canonical NaN.
    nan: Signal,
    /// The result is an infinity, of sign `inf_sign`.
    inf: Signal,
    inf_sign: Signal,
}

impl Carried {
    /// The carried values and a step's own `values` through cut `at` of `pipe`
    /// (registered in the order sign, eff_sub, `values`, nan, inf, inf_sign).
    fn cut<const N: usize>(
        self,
        pipe: &Pipe,
        m: &mut ModuleBuilder,
        at: u32,
        valid: Signal,
        values: [(&str, Signal); N],
    ) -> (Signal, Carried, [Signal; N]) {
        let mut all = vec![("sign", self.sign), ("eff_sub", self.eff_sub)];
        all.extend(values);
        all.extend([
            ("nan", self.nan),
            ("inf", self.inf),
            ("inf_sign", self.inf_sign),
        ]);
        let (valid, out) = pipe.cut(m, at, valid, &all);
        let carried = Carried {
            sign: out[0],
            eff_sub: out[1],
            nan: out[N + 2],
            inf: out[N + 3],
            inf_sign: out[N + 4],
        };
        let own = std::array::from_fn(|i| out[i + 2]);
        (valid, carried, own)
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

/// The adder's seven steps with a cut after each (see [`cuts_for_depth`]): `a + b` and
/// its valid bit.
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
    let xw = e.max(bits_for(ext)) + 2;

    let (carried, [exp_big, sig_big, sig_small, dist]) = order(m, cfg, a, b);
    let (valid, carried, [exp_big, sig_big, sig_small, dist]) = carried.cut(
        pipe,
        m,
        1,
        valid,
        [
            ("exp_big", exp_big),
            ("sig_big", sig_big),
            ("sig_small", sig_small),
            ("dist", dist),
        ],
    );
    let (big_ext, small_al) = align(m, f, sig_big, sig_small, dist);
    let (valid, carried, [exp_big, big_ext, small_al]) = carried.cut(
        pipe,
        m,
        2,
        valid,
        [
            ("exp_big", exp_big),
            ("big_ext", big_ext),
            ("small_al", small_al),
        ],
    );

    // 3. Add or subtract (the big operand is never smaller: no negative result).
    let sum = m.add(big_ext, small_al);
    let diff = m.sub(big_ext, small_al);
    let total = m.mux(carried.eff_sub, diff, sum);
    let total = m.named("total", total);
    let (valid, carried, [exp_big, total]) =
        carried.cut(pipe, m, 3, valid, [("exp_big", exp_big), ("total", total)]);

    let shift = normalizing_shift(m, f, xw, total, exp_big);
    let (valid, carried, [total, carry, exp_x, left, zero]) = carried.cut(
        pipe,
        m,
        4,
        valid,
        [
            ("total", total),
            ("carry", shift.carry),
            ("exp_x", shift.exp_x),
            ("left", shift.left),
            ("zero", shift.zero),
        ],
    );
    let (norm, exp_n) = normalize(m, f, xw, total, [carry, exp_x, left]);
    let (valid, carried, [norm, exp_n, zero]) = carried.cut(
        pipe,
        m,
        5,
        valid,
        [("norm", norm), ("exp_n", exp_n), ("zero", zero)],
    );
    let (rounded, exp_r) = round(m, f, xw, norm, exp_n);
    let (valid, carried, [rounded, exp_r, zero]) = carried.cut(
        pipe,
        m,
        6,
        valid,
        [("rounded", rounded), ("exp_r", exp_r), ("zero", zero)],
    );
    let y = pack(m, cfg, xw, carried, [rounded, exp_r, zero]);
    let (valid, y) = pipe.cut(m, 7, valid, &[("y", y)]);
    (y[0], valid)
}

/// Step 1, unpack, order by magnitude, specials: the carried values and the big operand's
/// exponent, both significands and the exponent distance.
fn order(m: &mut ModuleBuilder, cfg: &FpAddConfig, a: Signal, b: Signal) -> (Carried, [Signal; 4]) {
    let f = cfg.format;
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
    let carried = Carried {
        sign,
        eff_sub,
        nan,
        inf,
        inf_sign,
    };
    (carried, [exp_big, sig_big, sig_small, dist])
}

/// Step 2, align: shift the smaller significand right by the exponent distance, keeping the
/// bits shifted out as a sticky bit. Distances ≥ ext leave only the sticky bit.
/// Returns both significands with guard, round and sticky bits: (big, aligned small).
fn align(
    m: &mut ModuleBuilder,
    f: FpFormat,
    sig_big: Signal,
    sig_small: Signal,
    dist: Signal,
) -> (Signal, Signal) {
    let ext = f.frac_bits() + 4;
    let sw = bits_for(ext);
    let dist_w = f.exp_bits().max(sw);
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
    (big_ext, small_al)
}

/// The normalizing shift of step 4 (`xw`-bit exponents).
struct Shift {
    /// The sum carried out: shift right by one.
    carry: Signal,
    /// The big exponent, `xw` bits.
    exp_x: Signal,
    /// The left shift: the leading zeros, but not below exponent 1.
    left: Signal,
    /// The sum is zero.
    zero: Signal,
}

/// Step 4, count leading zeros and choose the normalizing shift: left by the count, but not
/// below exponent 1 (subnormal results); right by one on a carry.
fn normalizing_shift(
    m: &mut ModuleBuilder,
    f: FpFormat,
    xw: u32,
    total: Signal,
    exp_big: Signal,
) -> Shift {
    let ext = f.frac_bits() + 4;
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
    Shift {
        carry,
        exp_x,
        left,
        zero,
    }
}

/// Step 5, normalize to a leading one at bit ext-1: (significand, exponent).
fn normalize(
    m: &mut ModuleBuilder,
    f: FpFormat,
    xw: u32,
    total: Signal,
    [carry, exp_x, left]: [Signal; 3],
) -> (Signal, Signal) {
    let ext = f.frac_bits() + 4;
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
    (norm, exp_n)
}

/// Step 6, round to nearest, ties to even: (significand with its carry bit, exponent).
fn round(
    m: &mut ModuleBuilder,
    f: FpFormat,
    xw: u32,
    norm: Signal,
    exp_n: Signal,
) -> (Signal, Signal) {
    let mb = f.frac_bits();
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
    (rounded, exp_r)
}

/// Step 7, pack, with the special results.
fn pack(
    m: &mut ModuleBuilder,
    cfg: &FpAddConfig,
    xw: u32,
    c: Carried,
    [rounded, exp_r, zero]: [Signal; 3],
) -> Signal {
    let f = cfg.format;
    let (e, mb) = (f.exp_bits(), f.frac_bits());
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
    let result_zero = if cfg.ftz { m.or(zero, is_sub) } else { zero };
    // An exact cancellation is +0; otherwise a zero keeps the sign (−0 + −0 = −0).
    let cancel = m.and(zero, c.eff_sub);
    let keep_sign = m.not(cancel);
    let zero_sign = m.and(c.sign, keep_sign);
    let zero_frac = m.zeros(mb);
    let ones_e = m.ones(e);
    let finite = m.concat(&[c.sign, exp_out, frac_r]);
    let finite = m.named("finite", finite);
    let signed_zero = {
        let z = m.zeros(e + mb);
        let signed_zero = m.concat(&[zero_sign, z]);
        m.named("signed_zero", signed_zero)
    };
    let inf_out = m.concat(&[c.inf_sign, ones_e, zero_frac]);
    let ovf_out = m.concat(&[c.sign, ones_e, zero_frac]);
    let nan_out = m.lit(f.canonical_nan(), f.width());
    let y = m.select(
        &[
            (c.nan, nan_out),
            (c.inf, inf_out),
            (result_zero, signed_zero),
            (too_big, ovf_out),
        ],
        finite,
    );
    m.named("result", y)
}
