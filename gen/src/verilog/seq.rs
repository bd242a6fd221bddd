//! Registers and memories: `always @(posedge clk)` blocks with synchronous reset and
//! enable, and block-RAM style memories (simple dual port, synchronous read-first
//! reads) in the form Vivado and Yosys infer as BRAM.

use super::expr::{literal, zeros, Refs};
use super::module::{range, Body};
use crate::GenError;
use hdl::ir::{addr_width, DomainId, Register, ResetPolarity};

/// `posedge <clock>` of `domain`, marking the clock read.
fn clock_edge(refs: &mut Refs<'_>, domain: DomainId, what: &str) -> Result<String, GenError> {
    let d = refs
        .m
        .domains
        .get(domain.0 as usize)
        .ok_or_else(|| GenError::Malformed {
            module: refs.m.name.clone(),
            signal: what.to_string(),
            reason: format!("clock domain #{} does not exist", domain.0),
        })?;
    Ok(format!("posedge {}", refs.all(d.clock)))
}

/// The `always` block of register `index`.
pub(crate) fn register(
    refs: &mut Refs<'_>,
    body: &mut Body,
    index: usize,
    r: &Register,
) -> Result<(), GenError> {
    let q = refs.names.net(r.q).to_string();
    let w = refs.width(r.q);
    if refs.width(r.next) != w {
        return Err(refs.malformed(r.q, format!("next value is {} bits", refs.width(r.next))));
    }
    if !matches!(refs.m.net(r.q).driver, hdl::ir::Driver::Reg(id) if id.0 as usize == index) {
        return Err(refs.malformed(r.q, "register output is driven by something else".into()));
    }
    let edge = clock_edge(refs, r.domain, &q)?;
    let domain = &refs.m.domains[r.domain.0 as usize];
    let reset = match (&r.reset_value, domain.reset) {
        (Some(value), Some(rst)) => {
            if value.width() != w {
                let reason = format!("reset value is {} bits", value.width());
                return Err(refs.malformed(r.q, reason));
            }
            let rst = refs.all(rst);
            let cond = match domain.polarity {
                ResetPolarity::ActiveHigh => rst,
                ResetPolarity::ActiveLow => format!("!{rst}"),
            };
            Some((cond, literal(value)))
        }
        _ => None,
    };
    let enable = match r.enable {
        Some(en) => {
            if refs.width(en) != 1 {
                return Err(refs.malformed(r.q, "enable is not 1 bit".into()));
            }
            Some(refs.all(en))
        }
        None => None,
    };
    let next = refs.all(r.next);
    let load = format!("{q} <= {next};");
    let s = &mut body.seq;
    // Without a reset, one line: `always @(posedge clk) [if (en)] q <= next;`.
    let Some((cond, value)) = reset else {
        let guarded = match enable {
            Some(en) => format!("if ({en}) {load}"),
            None => load,
        };
        s.push_str(&format!("    always @({edge}) {guarded}\n"));
        return Ok(());
    };
    s.push_str(&format!("    always @({edge}) begin\n"));
    s.push_str(&format!("        if ({cond}) {q} <= {value};\n"));
    match enable {
        Some(en) => s.push_str(&format!("        else if ({en}) {load}\n")),
        None => s.push_str(&format!("        else {load}\n")),
    }
    s.push_str("    end\n");
    Ok(())
}

/// Memory `index`: the array, its initial contents, its write port and read ports.
/// A memory nothing reads is left out (its write port's inputs then count as unused).
pub(crate) fn memory(refs: &mut Refs<'_>, body: &mut Body, index: usize) -> Result<(), GenError> {
    let mem = &refs.m.mems[index];
    let name = refs.names.mems[index].clone();
    let (w, depth) = (mem.width, mem.depth);
    let aw = addr_width(depth);
    let bad = |reason: String| GenError::Malformed {
        module: refs.m.name.clone(),
        signal: mem.name.clone(),
        reason,
    };
    if w == 0 || depth < 2 {
        return Err(bad(format!("{depth} words of {w} bits")));
    }
    if mem.reads.is_empty() {
        body.seq.push_str(&format!(
            "    // memory `{name}` has no read port and is left out\n"
        ));
        return Ok(());
    }
    let s = format!(
        "    // memory `{name}`: {depth} x {w} bits, simple dual port, synchronous read-first reads\n"
    );
    body.decls.push_str(&s);
    let at = body.locator(&mem.location);
    body.decls.push_str(&format!(
        "    reg {}{name} [0:{}];{at}\n",
        range(w),
        depth - 1
    ));

    // Initial contents: zeros, then every non-zero word of `init`. Each memory has its
    // own loop variable, so that no two `initial` blocks share a variable.
    let var = refs.space.fresh(&format!("{name}_init_i"));
    body.decls.push_str(&format!("    integer {var};\n"));
    let mut init = String::from("    initial begin\n");
    init.push_str(&format!(
        "        for ({var} = 0; {var} < {depth}; {var} = {var} + 1) {name}[{var}] = {};\n",
        zeros(w)
    ));
    if let Some(words) = &mem.init {
        if words.len() != depth as usize {
            return Err(bad(format!("{} initial words for {depth}", words.len())));
        }
        for (i, word) in words.iter().enumerate() {
            if word.width() != w {
                return Err(bad(format!("initial word {i} is {} bits", word.width())));
            }
            if !word.is_zero() {
                init.push_str(&format!("        {name}[{i}] = {};\n", literal(word)));
            }
        }
    }
    init.push_str("    end\n");
    body.seq.push_str(&init);

    let check = |refs: &Refs<'_>, net: hdl::ir::NetId, want: u32, what: &str| {
        let got = refs.width(net);
        if got == want {
            Ok(())
        } else {
            Err(GenError::Malformed {
                module: refs.m.name.clone(),
                signal: mem.name.clone(),
                reason: format!("{what} is {got} bits, expected {want}"),
            })
        }
    };
    if let Some(wp) = &mem.write {
        check(refs, wp.addr, aw, "write address")?;
        check(refs, wp.data, w, "write data")?;
        check(refs, wp.enable, 1, "write enable")?;
        let edge = clock_edge(refs, wp.domain, &mem.name)?;
        let (en, addr, data) = (refs.all(wp.enable), refs.all(wp.addr), refs.all(wp.data));
        body.seq.push_str(&format!(
            "    always @({edge}) begin\n        if ({en}) {name}[{addr}] <= {data};\n    end\n"
        ));
    }
    for (p, rp) in mem.reads.iter().enumerate() {
        check(refs, rp.addr, aw, "read address")?;
        check(refs, rp.data, w, "read data")?;
        let driven_here = matches!(refs.m.net(rp.data).driver,
            hdl::ir::Driver::MemRead { mem: m, port } if m.0 as usize == index && port as usize == p);
        if !driven_here {
            return Err(bad(format!(
                "read port {p}'s data net is driven by something else"
            )));
        }
        let edge = clock_edge(refs, rp.domain, &mem.name)?;
        let data = refs.names.net(rp.data).to_string();
        let addr = refs.all(rp.addr);
        // Addresses past the end read zero; with a power-of-two depth there are none.
        // An address Verilator may fold to a constant is compared as the unsigned
        // compares of `expr` are: folded to all ones, `addr < depth` would be reported
        // as CMPCONST (fatal) and the model would not build.
        let word = if depth.is_power_of_two() {
            format!("{name}[{addr}]")
        } else if refs.folds.value(rp.addr).varies() {
            format!("({addr} < {aw}'d{depth}) ? {name}[{addr}] : {}", zeros(w))
        } else {
            format!(
                "($signed({{1'b0, {addr}}}) < $signed({}'d{depth})) ? {name}[{addr}] : {}",
                aw + 1,
                zeros(w)
            )
        };
        let load = match rp.enable {
            Some(en) => {
                check(refs, en, 1, "read enable")?;
                format!("if ({}) {data} <= {word};", refs.all(en))
            }
            None => format!("{data} <= {word};"),
        };
        body.seq.push_str(&format!(
            "    always @({edge}) begin\n        {load}\n    end\n"
        ));
    }
    Ok(())
}
