//! Checking the port list against the ports Verilator declared in `Vdut.h`.
//!
//! Verilator declares each top-level port as `VL_IN8(&clk,0,0);`, `VL_OUTW(&y,1023,0,32);`
//! and so on (`VL_{IN,OUT,INOUT}{8,16,,64,W}(&name,msb,lsb[,words])`). Comparing those with
//! the port list before compiling the shim turns a mismatch into one clear message instead
//! of a page of C++ errors. Should a future Verilator write the header differently (nothing
//! parsed), the check is skipped and the shim's `static_assert`s remain as the backstop.

use super::shim::cpp_member_name;
use super::{BridgeError, PortDirection, PortInfo};

/// A port as declared in the Verilated header.
#[derive(Debug, PartialEq, Eq)]
struct DeclaredPort {
    /// C++ member name (Verilator-encoded).
    name: String,
    /// `None` for inout.
    direction: Option<PortDirection>,
    width: u32,
}

/// Parses one `VL_IN*(...)`/`VL_OUT*(...)`/`VL_INOUT*(...)` declaration line.
fn parse_line(line: &str) -> Option<DeclaredPort> {
    let rest = line.trim().strip_prefix("VL_")?;
    let (direction, rest) = if let Some(r) = rest.strip_prefix("INOUT") {
        (None, r)
    } else if let Some(r) = rest.strip_prefix("OUT") {
        (Some(PortDirection::Out), r)
    } else if let Some(r) = rest.strip_prefix("IN") {
        (Some(PortDirection::In), r)
    } else {
        return None;
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphanumeric());
    let args = rest.strip_prefix('(')?.split(')').next()?;
    let mut fields = args.split(',');
    let name = fields
        .next()?
        .trim_start_matches(['(', '&'])
        .trim()
        .to_string();
    let msb: i64 = fields.next()?.trim().parse().ok()?;
    let lsb: i64 = fields.next()?.trim().parse().ok()?;
    let width = u32::try_from(msb - lsb + 1).ok()?;
    Some(DeclaredPort {
        name,
        direction,
        width,
    })
}

fn describe(direction: Option<PortDirection>, width: u32) -> String {
    let dir = match direction {
        Some(PortDirection::In) => "input",
        Some(PortDirection::Out) => "output",
        None => "inout",
    };
    format!("{dir}, {width} bits")
}

/// Compares `ports` with the declarations in the text of `Vdut.h`.
pub(super) fn check_ports(header: &str, top: &str, ports: &[PortInfo]) -> Result<(), BridgeError> {
    let declared: Vec<DeclaredPort> = header.lines().filter_map(parse_line).collect();
    if declared.is_empty() && !ports.is_empty() {
        return Ok(()); // Unknown header format: leave it to the shim's static_asserts.
    }
    let mismatch = |detail: String| BridgeError::PortListMismatch {
        top: top.to_string(),
        detail,
    };
    for p in ports {
        let cpp = cpp_member_name(&p.name);
        let Some(d) = declared.iter().find(|d| d.name == cpp) else {
            return Err(mismatch(format!("the module has no port `{}`", p.name)));
        };
        if d.direction != Some(p.direction) || d.width != p.width {
            return Err(mismatch(format!(
                "port `{}` is ({}) in the Verilog but ({}) in the port list",
                p.name,
                describe(d.direction, d.width),
                describe(Some(p.direction), p.width)
            )));
        }
    }
    for d in &declared {
        if !ports.iter().any(|p| cpp_member_name(&p.name) == d.name) {
            return Err(mismatch(format!(
                "the port list lacks port `{}` ({})",
                d.name,
                describe(d.direction, d.width)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "  public:\n    VL_IN8(&clk,0,0);\n    VL_OUT16(&count,15,0);\n    \
                          VL_INW(&a,1023,0,32);\n    VL_OUT64(&q,40,0);\n    VL_INOUT8(&io,3,0);\n";

    #[test]
    fn parses_verilator_port_declarations() {
        let ports: Vec<_> = HEADER.lines().filter_map(parse_line).collect();
        assert_eq!(ports.len(), 5);
        assert_eq!(
            ports[2],
            DeclaredPort {
                name: "a".into(),
                direction: Some(PortDirection::In),
                width: 1024
            }
        );
        assert_eq!(ports[3].width, 41);
        assert_eq!(ports[4].direction, None);
    }

    #[test]
    fn reports_missing_extra_and_different_ports() {
        let header = "VL_IN8(&clk,0,0);\nVL_OUT8(&y,6,0);\n";
        let ok = [PortInfo::input("clk", 1), PortInfo::output("y", 7)];
        assert!(check_ports(header, "t", &ok).is_ok());
        let wide = [PortInfo::input("clk", 1), PortInfo::output("y", 8)];
        let e = check_ports(header, "t", &wide).unwrap_err().to_string();
        assert!(
            e.contains("`y`") && e.contains("7 bits") && e.contains("8 bits"),
            "{e}"
        );
        let e = check_ports(header, "t", &ok[..1]).unwrap_err().to_string();
        assert!(e.contains("lacks port `y`"), "{e}");
        let extra = [
            PortInfo::input("clk", 1),
            PortInfo::output("y", 7),
            PortInfo::input("z", 1),
        ];
        let e = check_ports(header, "t", &extra).unwrap_err().to_string();
        assert!(e.contains("no port `z`"), "{e}");
    }
}
