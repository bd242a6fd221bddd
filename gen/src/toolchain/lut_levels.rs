//! LUT levels of a synthesised Xilinx netlist: the largest number of LUTs on any
//! combinational path between flip-flops, RAMs, DSPs and ports. Carry chains, wide
//! multiplexers (MUXF7/8/9) and inverters count 0 — they sit inside a slice beside
//! their LUT — which makes this the usual first-order predictor of the clock a path
//! can meet, unlike a raw cell count.

use serde_json::Value;
use std::collections::HashMap;

/// A cell type's role on a timing path.
fn weight(cell_type: &str) -> Option<u64> {
    if cell_type.starts_with("LUT") {
        Some(1)
    } else if cell_type.starts_with("CARRY")
        || cell_type.starts_with("MUXF")
        || cell_type == "INV"
        || cell_type.starts_with("BUF")
    {
        Some(0)
    } else {
        // Flip-flops, shift registers, RAMs, DSPs: paths start and end here.
        None
    }
}

/// Longest LUT-weighted combinational path in module `top` of Yosys `write_json`
/// output.
pub fn lut_levels(netlist_json: &str, top: &str) -> Result<u64, String> {
    let v: Value = serde_json::from_str(netlist_json).map_err(|e| format!("netlist: {e}"))?;
    let cells = v
        .pointer(&format!("/modules/{top}/cells"))
        .and_then(Value::as_object)
        .ok_or_else(|| format!("netlist has no module `{top}`"))?;
    // For every net bit driven by a combinational cell: (weight, input bits).
    let mut driver: HashMap<u64, (u64, Vec<u64>)> = HashMap::new();
    for cell in cells.values() {
        let ty = cell.get("type").and_then(Value::as_str).unwrap_or("");
        let Some(w) = weight(ty) else { continue };
        let dirs = cell.get("port_directions").and_then(Value::as_object);
        let conns = cell.get("connections").and_then(Value::as_object);
        let (Some(dirs), Some(conns)) = (dirs, conns) else {
            continue;
        };
        let bits = |dir: &str| -> Vec<u64> {
            conns
                .iter()
                .filter(|(port, _)| dirs.get(*port).and_then(Value::as_str) == Some(dir))
                .flat_map(|(_, bits)| bits.as_array().into_iter().flatten())
                .filter_map(Value::as_u64)
                .collect()
        };
        let inputs = bits("input");
        for out in bits("output") {
            driver.insert(out, (w, inputs.clone()));
        }
    }
    let mut memo: HashMap<u64, u64> = HashMap::new();
    let mut best = 0;
    let outs: Vec<u64> = driver.keys().copied().collect();
    for bit in outs {
        best = best.max(level(bit, &driver, &mut memo, 0)?);
    }
    Ok(best)
}

fn level(
    bit: u64,
    driver: &HashMap<u64, (u64, Vec<u64>)>,
    memo: &mut HashMap<u64, u64>,
    depth: usize,
) -> Result<u64, String> {
    if let Some(l) = memo.get(&bit) {
        return Ok(*l);
    }
    if depth > 10_000 {
        return Err("combinational loop in the netlist".into());
    }
    let l = match driver.get(&bit) {
        None => 0,
        Some((w, inputs)) => {
            let mut m = 0;
            for i in inputs {
                m = m.max(level(*i, driver, memo, depth + 1)?);
            }
            w + m
        }
    };
    memo.insert(bit, l);
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_luts_but_not_carries_on_the_longest_path() {
        // in(2) -> LUT -> 3 -> CARRY -> 4 -> LUT -> 5 -> FD ; 2 -> LUT -> 6
        let json = r#"{"modules": {"t": {"cells": {
            "a": {"type": "LUT2", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [2], "O": [3]}},
            "b": {"type": "CARRY8", "port_directions": {"DI": "input", "O": "output"}, "connections": {"DI": [3], "O": [4]}},
            "c": {"type": "LUT6", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [4], "O": [5]}},
            "d": {"type": "FDRE", "port_directions": {"D": "input", "Q": "output"}, "connections": {"D": [5], "Q": [2]}},
            "e": {"type": "LUT1", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [2], "O": [6]}}
        }}}}"#;
        assert_eq!(lut_levels(json, "t"), Ok(2));
    }
}
