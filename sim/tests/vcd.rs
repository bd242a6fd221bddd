//! VCD traces: written, parsed back with the `vcd` crate, and checked for signal
//! names, scopes, clock toggles and value changes at the expected times.

use hdl::{Bits, Module, ModuleBuilder, ResetPolarity};
use sim::{SimError, Simulator, TraceSelection};
use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use vcd::{Command, IdCode, Value};

fn child() -> Module {
    let mut m = ModuleBuilder::new("leaf");
    let d = m.domain("clk", "clk", None, ResetPolarity::ActiveHigh);
    let x = m.input("x", 2);
    let r = m.register(d, "held", x);
    m.output("y", r);
    m.finish().unwrap()
}

fn traced() -> Module {
    let leaf = child();
    let mut m = ModuleBuilder::new("top");
    let clk = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
    let count = m.reg(clk, "count", 2);
    let n = m.add_const_wrap(count, 1);
    m.set_next(count, n);
    let din = m.input("din", 100);
    let wide = m.register(clk, "wide", din);
    let u = m.instance("u0", &leaf);
    m.bind_domain(u, "clk", clk);
    m.connect(u, "x", count);
    let y = m.instance_output(u, "y");
    m.output("q", count);
    m.output("wide_q", wide);
    m.output("leaf_y", y);
    m.finish().unwrap()
}

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// Every value change as (time, bits MSB first), per id code.
fn changes(file: &PathBuf) -> (vcd::Header, HashMap<IdCode, Vec<(u64, String)>>) {
    let mut p = vcd::Parser::new(BufReader::new(File::open(file).unwrap()));
    let header = p.parse_header().unwrap();
    let mut t = 0;
    let mut out: HashMap<IdCode, Vec<(u64, String)>> = HashMap::new();
    let bit = |v: Value| match v {
        Value::V0 => '0',
        Value::V1 => '1',
        Value::X => 'x',
        Value::Z => 'z',
    };
    for cmd in p {
        match cmd.unwrap() {
            Command::Timestamp(ts) => t = ts,
            Command::ChangeScalar(id, v) => out.entry(id).or_default().push((t, bit(v).into())),
            Command::ChangeVector(id, v) => out
                .entry(id)
                .or_default()
                .push((t, v.iter().map(bit).collect())),
            _ => {}
        }
    }
    (header, out)
}

fn code(h: &vcd::Header, path: &[&str]) -> IdCode {
    h.find_var(path)
        .unwrap_or_else(|| panic!("no var {path:?}"))
        .code
}

fn bin(v: u128, w: usize) -> String {
    (0..w)
        .rev()
        .map(|i| if (v >> i) & 1 == 1 { '1' } else { '0' })
        .collect()
}

#[test]
fn trace_has_names_scopes_clock_toggles_and_changes() {
    let file = path("trace_all.vcd");
    let mut s = Simulator::new(&traced()).unwrap();
    s.trace_vcd(File::create(&file).unwrap(), TraceSelection::All)
        .unwrap();
    let din = (1u128 << 64) | 1;
    s.set("din", &Bits::from_u128(din, 100).unwrap()).unwrap();
    s.step();
    s.step();
    s.step_n(2);
    s.finish_trace().unwrap();

    let (h, ch) = changes(&file);
    assert!(h.find_scope(&["top", "u0"]).is_some(), "instance scope");
    let clk = code(&h, &["top", "clk"]);
    assert_eq!(
        code(&h, &["top", "u0", "clk"]),
        clk,
        "child clock aliases the top clock"
    );
    let clocks: Vec<(u64, &str)> = ch[&clk].iter().map(|(t, v)| (*t, v.as_str())).collect();
    assert_eq!(
        clocks,
        vec![
            (0, "0"),
            (1000, "1"),
            (1500, "0"),
            (2000, "1"),
            (2500, "0"),
            (3000, "1"),
            (3500, "0"),
            (4000, "1")
        ]
    );
    let count = code(&h, &["top", "count"]);
    let expect: Vec<(u64, String)> = [(0, 0), (1000, 1), (2000, 2), (3000, 3), (4000, 0)]
        .iter()
        .map(|(t, v)| (*t, bin(*v, 2)))
        .collect();
    assert_eq!(ch[&count], expect);
    assert_eq!(
        code(&h, &["top", "q"]),
        count,
        "output aliases share a code"
    );

    let din_changes = &ch[&code(&h, &["top", "din"])];
    assert_eq!(
        din_changes.last().unwrap(),
        &(0, bin(din, 100)),
        "input set at t=0"
    );
    let wide = &ch[&code(&h, &["top", "wide"])];
    assert_eq!(wide, &vec![(0, bin(0, 100)), (1000, bin(din, 100))]);

    // The leaf registers count one edge late.
    let held = &ch[&code(&h, &["top", "u0", "held"])];
    let expect: Vec<(u64, String)> = [(0, 0), (2000, 1), (3000, 2), (4000, 3)]
        .iter()
        .map(|(t, v)| (*t, bin(*v, 2)))
        .collect();
    assert_eq!(held, &expect);
}

#[test]
fn selected_trace_records_only_named_nets_and_clocks() {
    let file = path("trace_some.vcd");
    let mut s = Simulator::new(&traced()).unwrap();
    s.set_clock_period("clk", 10).unwrap();
    s.reset(1);
    let sel = TraceSelection::Names(vec!["u0.held".into()]);
    s.trace_vcd(File::create(&file).unwrap(), sel).unwrap();
    s.step_n(3);
    s.finish_trace().unwrap();
    let (h, ch) = changes(&file);
    assert!(h.find_var(&["top", "count"]).is_none());
    let clk = code(&h, &["top", "clk"]);
    let times: Vec<u64> = ch[&clk].iter().map(|(t, _)| *t).collect();
    assert_eq!(
        times,
        vec![10, 15, 20, 25, 30, 35, 40],
        "trace starts at the current time"
    );
    assert_eq!(ch.len(), 2);

    let err = s
        .trace_vcd(std::io::sink(), TraceSelection::Names(vec!["nope".into()]))
        .unwrap_err();
    assert!(
        matches!(err, SimError::UnknownNet(ref n) if n == "nope"),
        "{err}"
    );
}

#[test]
fn write_errors_are_reported_not_panicked() {
    struct Broken;
    impl std::io::Write for Broken {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Err(std::io::Error::other("disk full"))
        }
    }
    let mut s = Simulator::new(&traced()).unwrap();
    // The header fits the internal buffer; the failure shows up at a flush.
    match s.trace_vcd(Broken, TraceSelection::All) {
        Ok(()) => {
            s.step_n(2000);
            assert!(matches!(s.finish_trace(), Err(SimError::Io(_))));
        }
        Err(e) => assert!(matches!(e, SimError::Io(_))),
    }
    assert_eq!(s.get_u64("q").unwrap(), 2000 % 4);
}
