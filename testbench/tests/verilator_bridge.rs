//! Tests of the Verilator bridge itself, on small hand-written Verilog.
//!
//! These run only one engine (Verilator) on purpose: they test the bridge — port access at
//! every width class, clocking, caching, locking, errors, tracing — against expectations
//! computed here in plain Rust, not a design. Designs elsewhere come from the HDL and are
//! checked against the native simulator and golden models.
//!
//! Random values use a fixed seed, printed; set `WIRESPEED_SEED` to replay another.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use testbench::verilator::{BridgeError, BuildOptions, PortInfo, VerilatorDesign, VerilatorModel};

/// splitmix64: a tiny, dependency-free generator for test values.
struct Rng(u64);

impl Rng {
    fn from_env(test: &str) -> Self {
        let seed = std::env::var("WIRESPEED_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x5eed_0fb7_1d6e_0001_u64);
        println!("{test}: seed {seed} (set WIRESPEED_SEED to change)");
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn words(&mut self, n: usize) -> Vec<u64> {
        (0..n).map(|_| self.next()).collect()
    }
}

fn design(file: &str, text: &str, top: &str, ports: Vec<PortInfo>) -> VerilatorDesign {
    VerilatorDesign {
        sources: vec![(file.to_string(), text.to_string())],
        top: top.to_string(),
        ports,
    }
}

/// Builds `d`, failing the test with the bridge's (tool's) message.
fn build(d: &VerilatorDesign, options: &BuildOptions) -> VerilatorModel {
    match VerilatorModel::build(d, options) {
        Ok(m) => m,
        Err(e) => panic!("building `{}` failed: {e}", d.top),
    }
}

/// A string unique to this test run, to force cold builds.
fn nonce() -> String {
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{}-{t}", std::process::id())
}

/// A scratch directory for this test run.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wirespeed-vl-{name}-{}", nonce()));
    std::fs::create_dir_all(&dir).expect("creating a scratch directory");
    dir
}

/// Removes the cache entry of a model built for one test only.
fn forget_cache_entry(model: &VerilatorModel) {
    if let Some(entry) = model.report().library.parent() {
        let _ = std::fs::remove_dir_all(entry);
    }
}

/// `words` (little-endian u64 words) cut to `width` bits.
fn masked(words: &[u64], width: u32) -> Vec<u64> {
    let n = width.div_ceil(64) as usize;
    let mut v: Vec<u64> = words
        .iter()
        .copied()
        .chain(std::iter::repeat(0))
        .take(n)
        .collect();
    let top_bits = width - 64 * (n as u32 - 1);
    if top_bits < 64 {
        v[n - 1] &= (1u64 << top_bits) - 1;
    }
    v
}

/// A value with only bit `bit` set.
fn one_bit(width: u32, bit: u32) -> Vec<u64> {
    let mut v = vec![0u64; width.div_ceil(64) as usize];
    v[(bit / 64) as usize] = 1u64 << (bit % 64);
    v
}

const WIDE_V: &str = "\
module wide (
  input             clk,
  input  [1023:0]   a,
  output [1023:0]   y,
  output reg [1023:0] r
);
  assign y = ~a;
  always @(posedge clk) r <= a;
endmodule
";

#[test]
fn wide_1024_bit_ports_round_trip_exactly() {
    let d = design(
        "wide.v",
        WIDE_V,
        "wide",
        vec![
            PortInfo::input("clk", 1),
            PortInfo::input("a", 1024),
            PortInfo::output("y", 1024),
            PortInfo::output("r", 1024),
        ],
    );
    let mut m = build(&d, &BuildOptions::default());
    let (clk, a, y, r) = (
        m.port_index("clk").unwrap(),
        m.port_index("a").unwrap(),
        m.port_index("y").unwrap(),
        m.port_index("r").unwrap(),
    );

    // Top bit, 32- and 64-bit word boundaries, everything, alternating, then random.
    let mut values: Vec<Vec<u64>> = [0, 31, 32, 33, 63, 64, 65, 95, 96, 127, 128, 511, 512, 1023]
        .iter()
        .map(|&b| one_bit(1024, b))
        .collect();
    values.push(vec![u64::MAX; 16]);
    values.push(vec![0xaaaa_aaaa_5555_5555; 16]);
    values.push(
        (0..16)
            .map(|i| 0xffff_ffff_0000_0000_u64.rotate_left(i))
            .collect(),
    );
    let mut rng = Rng::from_env("wide_1024_bit_ports_round_trip_exactly");
    values.extend((0..32).map(|_| rng.words(16)));

    for v in &values {
        m.set(a, v).unwrap();
        m.eval();
        let not_v: Vec<u64> = v.iter().map(|w| !w).collect();
        assert_eq!(m.get(y).unwrap(), not_v, "y = ~a for a = {v:x?}");
        assert_eq!(m.get(a).unwrap(), *v, "a read back");
        m.step_clock(clk, 1).unwrap();
        assert_eq!(m.get(r).unwrap(), *v, "registered copy of a = {v:x?}");
    }

    // Fewer words than the port has: the rest is zero.
    m.set(a, &[0x1234]).unwrap();
    m.eval();
    assert_eq!(m.get(a).unwrap(), masked(&[0x1234], 1024));
    // More words than the port has: an error, not a panic.
    let err = m.set(a, &[0; 17]).unwrap_err();
    assert!(matches!(err, BridgeError::ValueTooLong { .. }), "{err}");
    // Driving an output: an error naming it.
    let err = m.set(y, &[0]).unwrap_err();
    assert!(err.to_string().contains("`y`"), "{err}");
}

/// Widths covering every Verilated type class: CData, SData, IData, QData, VlWide<N>.
const WIDTHS: [u32; 16] = [
    1, 7, 8, 9, 16, 17, 32, 33, 63, 64, 65, 96, 97, 128, 1000, 4096,
];

fn classes_design() -> VerilatorDesign {
    let mut text = String::from("module classes (\n");
    let mut ports = Vec::new();
    for (i, w) in WIDTHS.iter().enumerate() {
        let sep = if i + 1 == WIDTHS.len() { "" } else { "," };
        text.push_str(&format!(
            "  input  [{}:0] a{w},\n  output [{}:0] y{w}{sep}\n",
            w - 1,
            w - 1
        ));
        ports.push(PortInfo::input(format!("a{w}"), *w));
        ports.push(PortInfo::output(format!("y{w}"), *w));
    }
    text.push_str(");\n");
    for w in WIDTHS {
        text.push_str(&format!("  assign y{w} = ~a{w};\n"));
    }
    text.push_str("endmodule\n");
    design("classes.v", &text, "classes", ports)
}

#[test]
fn every_port_type_class_round_trips_and_masks() {
    let mut m = build(&classes_design(), &BuildOptions::default());
    let mut rng = Rng::from_env("every_port_type_class_round_trips_and_masks");
    for round in 0..20 {
        for w in WIDTHS {
            let a = m.port_index(&format!("a{w}")).unwrap();
            let y = m.port_index(&format!("y{w}")).unwrap();
            // Random words over the whole u64 words, so bits above the width are set too.
            let v = match round {
                0 => vec![u64::MAX; w.div_ceil(64) as usize],
                1 => one_bit(w, w - 1),
                _ => rng.words(w.div_ceil(64) as usize),
            };
            m.set(a, &v).unwrap();
            m.eval();
            let expect_a = masked(&v, w);
            let not_a: Vec<u64> = expect_a.iter().map(|x| !x).collect();
            assert_eq!(
                m.get(a).unwrap(),
                expect_a,
                "a{w} read back (masked), round {round}"
            );
            assert_eq!(
                m.get(y).unwrap(),
                masked(&not_a, w),
                "y{w} = ~a{w}, round {round}"
            );
            assert_eq!(m.get_u64(y).unwrap(), masked(&not_a, w)[0], "y{w} low word");
        }
    }
}

const COUNTER_V: &str = "\
module counter (
  input             clk,
  input             rst,
  input             en,
  output reg [15:0] count
);
  always @(posedge clk) begin
    if (rst) count <= 16'd0;
    else if (en) count <= count + 16'd1;
  end
endmodule
";

fn counter_design() -> VerilatorDesign {
    design(
        "counter.v",
        COUNTER_V,
        "counter",
        vec![
            PortInfo::input("clk", 1),
            PortInfo::input("rst", 1),
            PortInfo::input("en", 1),
            PortInfo::output("count", 16),
        ],
    )
}

#[test]
fn counter_step_clock_matches_manual_toggling() {
    let d = counter_design();
    let mut stepped = build(&d, &BuildOptions::default());
    let mut manual = stepped.new_instance().unwrap();
    let clk = stepped.port_index("clk").unwrap();
    let rst = stepped.port_index("rst").unwrap();
    let en = stepped.port_index("en").unwrap();
    let count = stepped.port_index("count").unwrap();

    for m in [&mut stepped, &mut manual] {
        m.set_u64(rst, 1).unwrap();
        m.set_u64(en, 1).unwrap();
        m.step_clock(clk, 1).unwrap();
        m.set_u64(rst, 0).unwrap();
        m.eval();
        assert_eq!(m.get_u64(count).unwrap(), 0);
    }

    let mut expected: u64 = 0;
    for n in [1u64, 2, 10, 1000, 70_000] {
        stepped.step_clock(clk, n).unwrap();
        for _ in 0..n {
            manual.set_u64(clk, 1).unwrap();
            manual.eval();
            manual.set_u64(clk, 0).unwrap();
            manual.eval();
        }
        expected = (expected + n) % (1 << 16);
        assert_eq!(
            stepped.get_u64(count).unwrap(),
            expected,
            "step_clock after +{n}"
        );
        assert_eq!(
            manual.get_u64(count).unwrap(),
            expected,
            "manual after +{n}"
        );
    }

    // en low holds the count.
    stepped.set_u64(en, 0).unwrap();
    stepped.step_clock(clk, 5).unwrap();
    assert_eq!(stepped.get_u64(count).unwrap(), expected);

    // Only 1-bit inputs are clocks.
    let err = stepped.step_clock(count, 1).unwrap_err();
    assert!(err.to_string().contains("`count`"), "{err}");
    let err = stepped.port_index("nope").unwrap_err();
    assert!(err.to_string().contains("`nope`"), "{err}");
}

const TWO_CLOCKS_V: &str = "\
module two_clocks (
  input             clk_a,
  input             clk_b,
  input             rst,
  output reg [31:0] count_a,
  output reg [31:0] count_b,
  output reg [31:0] snap_b
);
  always @(posedge clk_a) count_a <= rst ? 32'd0 : count_a + 32'd1;
  always @(posedge clk_b) begin
    count_b <= rst ? 32'd0 : count_b + 32'd1;
    snap_b  <= rst ? 32'd0 : count_a;
  end
endmodule
";

#[test]
fn two_clocks_driven_from_rust() {
    let d = design(
        "two_clocks.v",
        TWO_CLOCKS_V,
        "two_clocks",
        vec![
            PortInfo::input("clk_a", 1),
            PortInfo::input("clk_b", 1),
            PortInfo::input("rst", 1),
            PortInfo::output("count_a", 32),
            PortInfo::output("count_b", 32),
            PortInfo::output("snap_b", 32),
        ],
    );
    let mut m = build(&d, &BuildOptions::default());
    let clk_a = m.port_index("clk_a").unwrap();
    let clk_b = m.port_index("clk_b").unwrap();
    let rst = m.port_index("rst").unwrap();
    let [count_a, count_b, snap_b] =
        ["count_a", "count_b", "snap_b"].map(|n| m.port_index(n).unwrap());

    m.set_u64(rst, 1).unwrap();
    m.step_clock(clk_a, 1).unwrap();
    m.step_clock(clk_b, 1).unwrap();
    m.set_u64(rst, 0).unwrap();
    m.eval();

    // Random interleaving of edges of the two clocks, modelled in Rust.
    let mut rng = Rng::from_env("two_clocks_driven_from_rust");
    let (mut a, mut b, mut snap) = (0u64, 0u64, 0u64);
    let (mut level_a, mut level_b) = (0u64, 0u64);
    for _ in 0..2000 {
        if rng.next() % 3 == 1 {
            level_b ^= 1;
            m.set_u64(clk_b, level_b).unwrap();
            if level_b == 1 {
                snap = a;
                b += 1;
            }
        } else {
            level_a ^= 1;
            m.set_u64(clk_a, level_a).unwrap();
            if level_a == 1 {
                a += 1;
            }
        }
        m.eval();
        assert_eq!(m.get_u64(count_a).unwrap(), a);
        assert_eq!(m.get_u64(count_b).unwrap(), b);
        assert_eq!(m.get_u64(snap_b).unwrap(), snap);
    }
}

/// A `verilator` wrapper that counts its invocations in `<dir>/calls`.
fn counting_verilator(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("verilator");
    let calls = dir.join("calls");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho x >> '{}'\nexec verilator \"$@\"\n",
            calls.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

fn calls(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("calls"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

#[test]
fn second_build_is_a_cache_hit_without_verilator() {
    let dir = scratch_dir("cache");
    let options = BuildOptions {
        verilator: counting_verilator(&dir),
        ..BuildOptions::default()
    };
    // A design no earlier run has built: the first build must be cold.
    let text = format!("// run {}\n{COUNTER_V}", nonce());
    let d = VerilatorDesign {
        sources: vec![("counter.v".into(), text)],
        ..counter_design()
    };

    let first = build(&d, &options);
    assert!(!first.report().cache_hit);
    let after_first = calls(&dir);
    assert!(after_first >= 1, "the cold build ran verilator");

    let mut second = build(&d, &options);
    assert!(second.report().cache_hit, "{:?}", second.report());
    assert_eq!(calls(&dir), after_first, "the cached build ran verilator");
    assert_eq!(second.report().library, first.report().library);
    println!(
        "time to first cycle: cold {:?} (build {:?}, load {:?}), cached {:?}",
        first.report().time_to_first_cycle(),
        first.report().build_time,
        first.report().load_time,
        second.report().time_to_first_cycle(),
    );

    // The cached library works, and is independent of the first instance.
    let [clk, rst, en, count] =
        ["clk", "rst", "en", "count"].map(|n| second.port_index(n).unwrap());
    second.set_u64(rst, 1).unwrap();
    second.step_clock(clk, 1).unwrap();
    second.set_u64(rst, 0).unwrap();
    second.set_u64(en, 1).unwrap();
    second.step_clock(clk, 42).unwrap();
    assert_eq!(second.get_u64(count).unwrap(), 42);

    forget_cache_entry(&first);
    drop((first, second));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn concurrent_builds_of_one_design_both_succeed() {
    let text = format!("// run {}\n{COUNTER_V}", nonce());
    let d = VerilatorDesign {
        sources: vec![("counter.v".into(), text)],
        ..counter_design()
    };
    let models: Vec<VerilatorModel> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| s.spawn(|| VerilatorModel::build(&d, &BuildOptions::default())))
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(Ok(m)) => m,
                Ok(Err(e)) => panic!("concurrent build failed: {e}"),
                Err(_) => panic!("a build thread panicked"),
            })
            .collect()
    });
    let misses = models.iter().filter(|m| !m.report().cache_hit).count();
    assert_eq!(
        misses, 1,
        "exactly one thread builds, the other waits and reuses it"
    );
    for mut m in models.into_iter().map(Some) {
        let m = m.as_mut().unwrap();
        let [clk, rst, en, count] = ["clk", "rst", "en", "count"].map(|n| m.port_index(n).unwrap());
        m.set_u64(rst, 1).unwrap();
        m.step_clock(clk, 1).unwrap();
        m.set_u64(rst, 0).unwrap();
        m.set_u64(en, 1).unwrap();
        m.step_clock(clk, 7).unwrap();
        assert_eq!(m.get_u64(count).unwrap(), 7);
        forget_cache_entry(m);
    }
}

#[test]
fn models_can_move_between_threads() {
    let mut m = build(&counter_design(), &BuildOptions::default());
    let handle = std::thread::spawn(move || {
        let [clk, rst, en, count] = ["clk", "rst", "en", "count"].map(|n| m.port_index(n).unwrap());
        m.set_u64(rst, 1).unwrap();
        m.step_clock(clk, 1).unwrap();
        m.set_u64(rst, 0).unwrap();
        m.set_u64(en, 1).unwrap();
        m.step_clock(clk, 3).unwrap();
        m.get_u64(count).unwrap()
    });
    assert_eq!(handle.join().unwrap(), 3);
}

#[test]
fn verilog_syntax_error_reports_verilators_message() {
    let d = design(
        "broken.v",
        "module broken(input a, output y);\n  assign y = a +;\nendmodule\n",
        "broken",
        vec![PortInfo::input("a", 1), PortInfo::output("y", 1)],
    );
    let err = VerilatorModel::build(&d, &BuildOptions::default()).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, BridgeError::BuildFailed { .. }), "{msg}");
    assert!(msg.contains("%Error"), "Verilator's own message: {msg}");
    assert!(msg.contains("broken.v:2"), "names the file and line: {msg}");
}

#[test]
fn port_list_that_does_not_match_the_verilog_is_an_error_naming_the_port() {
    let d = design(
        "inv.v",
        "module inv(input [7:0] a, output [7:0] y);\n  assign y = ~a;\nendmodule\n",
        "inv",
        vec![PortInfo::input("a", 9), PortInfo::output("y", 8)],
    );
    let err = VerilatorModel::build(&d, &BuildOptions::default()).unwrap_err();
    assert!(matches!(err, BridgeError::PortListMismatch { .. }), "{err}");
    assert!(err.to_string().contains("port `a`"), "{err}");

    // A port the module does not have, named.
    let mut d = d;
    d.ports = vec![PortInfo::input("a", 8), PortInfo::output("z", 8)];
    let msg = VerilatorModel::build(&d, &BuildOptions::default())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("`z`"), "{msg}");
}

#[test]
fn missing_verilator_says_how_to_install_it() {
    let options = BuildOptions {
        verilator: "/nonexistent/bin/verilator".into(),
        ..BuildOptions::default()
    };
    let msg = VerilatorModel::build(&counter_design(), &options)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("apt-get install -y verilator"), "{msg}");
}

#[test]
fn invalid_designs_are_errors() {
    let mut d = counter_design();
    d.ports[1].name = "bad name".into();
    let msg = VerilatorModel::build(&d, &BuildOptions::default())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("bad name"), "{msg}");

    let mut d = counter_design();
    d.sources[0].0 = "../escape.v".into();
    let msg = VerilatorModel::build(&d, &BuildOptions::default())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("../escape.v"), "{msg}");
}

#[test]
fn vcd_trace_is_written_with_port_names() {
    let mut m = build(&counter_design(), &BuildOptions::with_trace());
    let [clk, rst, en, count] = ["clk", "rst", "en", "count"].map(|n| m.port_index(n).unwrap());
    let dir = scratch_dir("vcd");
    let vcd = dir.join("counter.vcd");
    m.trace_open(&vcd).unwrap();
    m.set_u64(rst, 1).unwrap();
    m.set_u64(en, 1).unwrap();
    let mut t = 0;
    for cycle in 0..10 {
        if cycle == 2 {
            m.set_u64(rst, 0).unwrap();
        }
        for level in [1, 0] {
            m.set_u64(clk, level).unwrap();
            m.eval();
            m.trace_dump(t);
            t += 5_000;
        }
    }
    m.trace_close().expect("the trace was written");
    assert_eq!(m.get_u64(count).unwrap(), 8);

    let text = std::fs::read_to_string(&vcd).unwrap();
    assert!(text.contains("$timescale"), "{text}");
    for name in ["clk", "rst", "en", "count"] {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with("$var")
                    && l.split_whitespace().any(|w| w == name)),
            "port {name} in the VCD header:\n{text}"
        );
    }
    assert!(text.contains("#45000"), "dump times: {text}");

    // Reopening after a close starts a new, complete file.
    let vcd2 = dir.join("again.vcd");
    m.trace_open(&vcd2).unwrap();
    m.step_clock(clk, 1).unwrap();
    m.trace_dump(t);
    m.trace_close().expect("the trace was written");
    let text2 = std::fs::read_to_string(&vcd2).unwrap();
    assert!(
        text2.contains("$enddefinitions") && text2.contains(&format!("#{t}")),
        "{text2}"
    );

    // A model built without tracing says so.
    let mut plain = build(&counter_design(), &BuildOptions::default());
    assert!(matches!(
        plain.trace_open(&vcd),
        Err(BridgeError::TracingDisabled)
    ));
    // An unwritable path is an error, not a crash.
    let err = m.trace_open(&dir.join("no/such/dir/x.vcd")).unwrap_err();
    assert!(matches!(err, BridgeError::TraceOpen(_)), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A trace whose writes fail (here every one: `/dev/full`, a full disk) neither
/// stops nor hangs the simulation (Verilator's own file handling stops the process,
/// and in 5.006 hangs in its fatal path): the model runs on, and closing the trace
/// reports the first error.
#[cfg(target_os = "linux")]
#[test]
fn a_trace_that_cannot_be_written_reports_its_error_at_close() {
    let mut m = build(&counter_design(), &BuildOptions::with_trace());
    let [clk, rst, en, count] = ["clk", "rst", "en", "count"].map(|n| m.port_index(n).unwrap());
    m.trace_open(Path::new("/dev/full"))
        .expect("/dev/full opens; its writes fail");
    m.set_u64(rst, 1).unwrap();
    m.set_u64(en, 1).unwrap();
    m.step_clock(clk, 2).unwrap();
    m.set_u64(rst, 0).unwrap();
    // Enough cycles for the writer's buffer to be flushed several times.
    for cycle in 0..20_000u64 {
        m.step_clock(clk, 1).unwrap();
        m.trace_dump(cycle * 10_000);
    }
    assert_eq!(m.get_u64(count).unwrap(), 20_000);
    let err = m.trace_close().expect_err("writes to /dev/full fail");
    assert_eq!(err.kind(), std::io::ErrorKind::StorageFull, "{err}");
    // The next trace starts afresh.
    let dir = scratch_dir("vcd-after-full");
    let vcd = dir.join("after.vcd");
    m.trace_open(&vcd).unwrap();
    m.step_clock(clk, 1).unwrap();
    m.trace_dump(1);
    m.trace_close().expect("a trace into a writable file");
    let _ = std::fs::remove_dir_all(dir);
}
