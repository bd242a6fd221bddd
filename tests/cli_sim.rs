//! The `wirespeed sim` command line, run as a program: VCDs from both engines on
//! the board's clock period (PANAMA and Lightning), `--pcap-in` reading classic
//! pcap and pcapng, and `--pcap-out`'s captures replayed.
//!
//! `cargo test --test cli_sim` (the first run builds the traced Verilator models of
//! the PANAMA core and the Lightning datapath, about 30 s; later runs load them from
//! the build cache).

use std::path::Path;
use std::process::{Command, Output};
use testbench::panama::pcap::{read_port_pcaps, write_pcapng, CaptureFormat};
use vcd::{Command as VcdCommand, IdCode, ScopeItem, Value};
use wirespeed::cmd::sim_panama::{PcapIn, PcapInError, PortSpec};

/// Runs `wirespeed sim panama <args>`.
fn panama(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["sim", "panama"])
        .args(args)
        .output()
        .expect("the wirespeed binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts the run succeeded and returns its standard output.
fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The number that follows the first `marker` in a report (`traffic: N frames`,
/// `simulated N cycles`, …).
fn count_after(stdout: &str, marker: &str) -> u64 {
    stdout
        .split(marker)
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count after `{marker}` in\n{stdout}"))
}

/// The number in `traffic: N frames` of a report.
fn traffic_frames(stdout: &str) -> usize {
    count_after(stdout, "traffic: ") as usize
}

/// The first variable named `name` anywhere in the scope tree.
fn find_code(items: &[ScopeItem], name: &str) -> Option<IdCode> {
    items.iter().find_map(|item| match item {
        ScopeItem::Var(v) if v.reference == name => Some(v.code),
        ScopeItem::Scope(s) => find_code(&s.items, name),
        _ => None,
    })
}

/// The times of the rising edges of `clock` in the VCD at `path`, in picoseconds.
fn rising_edges_ps(path: &Path, clock: &str) -> Vec<u64> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut parser = vcd::Parser::new(std::io::BufReader::new(file));
    let header = parser
        .parse_header()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (n, unit) = header
        .timescale
        .unwrap_or_else(|| panic!("{}: no $timescale", path.display()));
    let tick_ps = u64::from(n) * 1_000_000_000_000 / unit.divisor();
    assert!(tick_ps >= 1, "{}: timescale below 1 ps", path.display());
    let code = find_code(&header.items, clock)
        .unwrap_or_else(|| panic!("{}: no variable `{clock}`", path.display()));
    let (mut now, mut level, mut edges) = (0u64, None, Vec::new());
    for command in parser {
        let value = match command.unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
            VcdCommand::Timestamp(t) => {
                now = t * tick_ps;
                continue;
            }
            VcdCommand::ChangeScalar(c, v) if c == code => v,
            VcdCommand::ChangeVector(c, v) if c == code => v.iter().next().unwrap_or(Value::X),
            _ => continue,
        };
        if value == Value::V1 && level == Some(Value::V0) {
            edges.push(now);
        }
        level = Some(value);
    }
    edges
}

#[test]
fn panama_tensors_are_sent_in_whole_packets() {
    // A 64-byte payload holds 16 fp32 elements: 20 elements take 2 packets.
    let stdout = ok(&panama(&[
        "--elements",
        "20",
        "--payload",
        "64",
        "--jobs",
        "1",
        "--workers",
        "2",
    ]));
    let (per_packet, packets) = (64 / 4, 20usize.div_ceil(64 / 4));
    let tensors = format!(
        "tensors: {} elements in {packets} packets per worker (--elements 20), jobs × workers 1 × 2",
        packets * per_packet
    );
    assert!(stdout.contains(&tensors), "{tensors} in\n{stdout}");
    // One job of two workers, each sending its packets: the frames agree.
    let frames = format!("traffic: {} frames", 2 * packets);
    assert!(stdout.contains(&frames), "{frames} in\n{stdout}");
    assert!(stdout.contains("result frames identical"), "{stdout}");
}

#[test]
fn vcds_of_both_engines_run_at_the_board_clock() {
    let dir = tempfile::tempdir().expect("temp dir");
    let native = dir.path().join("p.vcd");
    let verilator = dir.path().join("p.verilator.vcd");
    let out = panama(&[
        "--engine",
        "both",
        "--elements",
        "512",
        "--repeat",
        "2",
        "--vcd",
        native.to_str().expect("utf-8 path"),
    ]);
    let stdout = ok(&out);
    // Same clock count on both engines (the run compares them), at 200 MHz.
    assert!(stdout.contains("200 MHz"), "{stdout}");
    assert!(stdout.contains("engines: identical results"), "{stdout}");
    assert_setting(&stdout, "--trace");
    assert_repeat_report(&stdout, 2, &["native", "verilator"]);
    assert_engine_only(&stdout, &["native", "verilator"]);
    let n = rising_edges_ps(&native, "axis_aclk");
    let v = rising_edges_ps(&verilator, "axis_aclk");
    assert!(n.len() > 100, "native VCD: only {} clock edges", n.len());
    assert_eq!(n.len(), v.len(), "rising edges: native vs Verilator");
    for (name, edges) in [("native", &n), ("verilator", &v)] {
        // NetFPGA SUME's datapath clock: 200 MHz = 5000 ps, every cycle.
        assert!(
            edges.windows(2).all(|w| w[1] - w[0] == 5000),
            "{name}: clock periods {:?}",
            edges
                .windows(2)
                .map(|w| w[1] - w[0])
                .take(10)
                .collect::<Vec<_>>()
        );
        assert_eq!(edges[0] % 5000, 0, "{name}: first edge at {} ps", edges[0]);
    }
    assert_eq!(
        n, v,
        "the two VCDs' clock edges are at the same picoseconds"
    );
    // The simulated cycles cover every edge: the report's count is in the trace.
    let cycles = count_after(&stdout, "simulated ");
    assert!(
        n.len() as u64 >= cycles,
        "{} edges < {cycles} cycles",
        n.len()
    );
}

/// Runs `sim panama <args> --pcap-out DIR/pcaps` in a new temporary DIR, which
/// must succeed: (DIR, the captures' folder, the report).
fn with_pcap_out(args: &[&str]) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let pcaps = dir.path().join("pcaps");
    let mut all = args.to_vec();
    all.extend(["--pcap-out", pcaps.to_str().expect("utf-8 path")]);
    let report = ok(&panama(&all));
    (dir, pcaps, report)
}

#[test]
fn pcap_out_feeds_back_as_pcap_in() {
    let (dir, _, first) = with_pcap_out(&["--jobs", "0", "--bypass-frames", "50"]);
    assert_eq!(traffic_frames(&first), 50, "{first}");
    // One classic pcap per port, as the report lists them.
    let written: Vec<(String, usize)> = first
        .lines()
        .filter_map(|l| l.trim().strip_prefix("wrote "))
        .filter(|l| !l.contains("input.pcapng"))
        .map(|l| {
            let (path, rest) = l.split_once(" (").expect("wrote PATH (N frames …)");
            let frames = rest.split_whitespace().next().and_then(|n| n.parse().ok());
            (path.to_string(), frames.expect("a frame count"))
        })
        .collect();
    assert!(written.len() >= 2, "{first}");
    let out_frames: usize = written.iter().map(|(_, n)| n).sum();
    assert_eq!(out_frames, 50, "every bypass frame leaves on one port");

    let mut args = vec![];
    for (i, (path, _)) in written.iter().enumerate() {
        assert!(path.ends_with(&format!("port{i}.pcap")), "{path}");
        args.push("--pcap-in".to_string());
        args.push(format!("{i}={path}"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let again = ok(&panama(&args));
    assert_eq!(traffic_frames(&again), 50, "{again}");
    assert!(again.contains("golden model: 50 bypass"), "{again}");

    // A classic pcap without a port: every frame enters on port 0.
    let (port0, n0) = &written[0];
    let single = ok(&panama(&["--pcap-in", port0]));
    assert_eq!(traffic_frames(&single), *n0, "{single}");
    // …and a one-hot code names the same port as its index.
    let by_code = ok(&panama(&["--pcap-in", &format!("0x01={port0}")]));
    assert_eq!(traffic_frames(&by_code), *n0, "{by_code}");

    // The same frames as one pcapng (interfaces = SUME's port codes): as `FILE`
    // the interfaces are the ports, as `PORT=FILE` every frame enters on PORT.
    let codes = [0x01, 0x04, 0x10, 0x40];
    let files: Vec<(u8, &Path)> = codes
        .iter()
        .zip(&written)
        .map(|(&c, (p, _))| (c, Path::new(p.as_str())))
        .collect();
    let frames = read_port_pcaps(&files).expect("read the written pcaps");
    let ng = dir.path().join("all.pcapng");
    write_pcapng(&ng, &codes, &frames).expect("write pcapng");
    let ng = ng.to_str().expect("utf-8 path");
    let from_ng = ok(&panama(&["--pcap-in", ng]));
    assert_eq!(traffic_frames(&from_ng), 50, "{from_ng}");
    assert!(from_ng.contains("golden model: 50 bypass"), "{from_ng}");
    let on_port1 = ok(&panama(&["--pcap-in", &format!("1={ng}")]));
    assert_eq!(traffic_frames(&on_port1), 50, "{on_port1}");
}

/// The number in `(N aggregation results expected` of a report.
fn results_expected(stdout: &str) -> u64 {
    count_after(stdout, "frames (")
}

/// `--pcap-out` also captures the offered traffic: `input.pcapng` replays an
/// aggregation run (not only its bypass frames) as the same frames in the same
/// order, and the golden model, built from the replayed frames alone, agrees.
#[test]
fn pcap_out_captures_the_offered_traffic_for_replay() {
    let (_dir, pcaps, first) = with_pcap_out(&[
        "--elements",
        "512",
        "--background",
        "0.5",
        "--back-pressure",
        "0.3",
    ]);
    let input = pcaps.join("input.pcapng");
    assert!(
        first.contains(&format!("wrote {}", input.display())),
        "{first}"
    );
    let offered = testbench::panama::pcap::read_pcapng(&input).expect("read input.pcapng");
    assert_eq!(offered.len(), traffic_frames(&first), "{first}");
    assert!(results_expected(&first) > 0, "{first}");

    let again = ok(&panama(&["--pcap-in", input.to_str().expect("utf-8 path")]));
    assert_eq!(traffic_frames(&again), traffic_frames(&first), "{again}");
    assert_eq!(
        results_expected(&again),
        results_expected(&first),
        "{again}"
    );
    let golden = format!(
        "golden model: {} bypass and {} result frames identical",
        traffic_frames(&first) as u64 - results_expected(&first),
        results_expected(&first)
    );
    assert!(again.contains(&golden), "{golden}\n{again}");
}

/// `--pcap-out` into a file is refused before the run; a folder an earlier run on
/// a board with more ports wrote into gets a note for each capture not rewritten.
#[test]
fn pcap_out_refuses_a_file_and_names_captures_an_earlier_run_left() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("afile");
    std::fs::write(&file, "").expect("write a file");
    let out = panama(&["--pcap-out", file.to_str().expect("utf-8 path")]);
    assert!(!out.status.success());
    assert_eq!(text(&out.stdout), "", "refused before the run");
    assert!(
        text(&out.stderr).contains("not a folder"),
        "{}",
        text(&out.stderr)
    );

    // SUME (4 ports), then NetFPGA-PLUS (2 ports) into the same folder.
    let pcaps = dir.path().join("pcaps");
    let pcaps_arg = pcaps.to_str().expect("utf-8 path");
    let run_into = |board: &str| {
        let bypass = ["--jobs", "0", "--bypass-frames", "8"];
        ok(&panama(
            &[&["--board", board, "--pcap-out", pcaps_arg][..], &bypass].concat(),
        ))
    };
    run_into("netfpga-sume");
    let plus = run_into("netfpga-plus-au250");
    let notes: Vec<&str> = plus.lines().filter(|l| l.contains("note:")).collect();
    assert_eq!(notes.len(), 2, "SUME's ports 2 and 3 are left:\n{plus}");
    assert!(
        notes[0].contains("port2.pcap") && notes[1].contains("port3.pcap"),
        "{plus}"
    );
}

#[test]
fn capture_formats_by_magic_number() {
    let f = CaptureFormat::from_magic;
    for magic in [
        [0xa1, 0xb2, 0xc3, 0xd4],
        [0xd4, 0xc3, 0xb2, 0xa1],
        [0xa1, 0xb2, 0x3c, 0x4d],
        [0x4d, 0x3c, 0xb2, 0xa1],
    ] {
        assert_eq!(f(&magic), Some(CaptureFormat::Pcap), "{magic:02x?}");
    }
    assert_eq!(f(&[0x0a, 0x0d, 0x0d, 0x0a, 0]), Some(CaptureFormat::PcapNg));
    assert_eq!(f(b"GIF8"), None);
    assert_eq!(f(&[0xa1, 0xb2]), None);
}

#[test]
fn pcap_in_garbage_is_one_line_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let garbage = dir.path().join("garbage.pcap");
    std::fs::write(&garbage, b"this is not a capture file\n").expect("write");
    let out = panama(&["--pcap-in", garbage.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&*garbage.to_string_lossy()), "{stderr}");
    assert!(stderr.contains("neither a pcap nor a pcapng"), "{stderr}");
    assert!(stderr.contains("starts with 74686973"), "{stderr}"); // "this"

    let out = panama(&["--pcap-in", "9=/nonexistent.pcap"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("port 9 does not exist"), "{stderr}");
}

#[test]
fn pcap_in_arguments_parse() {
    let p = |s: &str| s.parse::<PcapIn>();
    assert_eq!(
        p("in.pcapng"),
        Ok(PcapIn {
            port: None,
            path: "in.pcapng".into()
        })
    );
    assert_eq!(p("2=a.pcap").map(|x| x.port), Ok(Some(PortSpec::Index(2))));
    assert_eq!(
        p("0x04=a.pcap").map(|x| x.port),
        Ok(Some(PortSpec::Code(4)))
    );
    assert_eq!(p("0x04=a.pcap").map(|x| x.path), Ok("a.pcap".into()));
    // Not a port before the `=`: the whole text is the file name.
    assert_eq!(p("run=3.pcap").map(|x| x.port), Ok(None));
    assert_eq!(p("run=3.pcap").map(|x| x.path), Ok("run=3.pcap".into()));
    assert_eq!(p("0x03=a.pcap"), Err(PcapInError::BadCode("0x03".into())));
    assert_eq!(p("1="), Err(PcapInError::NoFile));
}

/// Asserts that `stdout`'s engine comparison names its setting: the Verilator
/// model's flags (among them `flag`) with the version `verilator --version` gives,
/// and the machine.
fn assert_setting(stdout: &str, flag: &str) {
    let version = Command::new("verilator")
        .arg("--version")
        .output()
        .expect("verilator runs");
    let version = text(&version.stdout);
    let version = version.lines().next().expect("a version line");
    let built = (stdout.lines())
        .find(|l| {
            l.trim_start()
                .starts_with("Verilator built with `verilator -O3")
        })
        .unwrap_or_else(|| panic!("no Verilator build line in\n{stdout}"));
    assert!(built.contains(flag) && built.contains(version), "{built}");
    let machine = (stdout.lines())
        .find(|l| l.trim_start().starts_with("measured on "))
        .unwrap_or_else(|| panic!("no machine line in\n{stdout}"));
    assert!(machine.contains(" logical CPU"), "{machine}");
}

/// Asserts that `stdout` sums up `rounds` rounds of `engines`: each engine's
/// median rate within its range, and with Verilator among them, every other
/// engine's median ratio within its range.
fn assert_repeat_report(stdout: &str, rounds: usize, engines: &[&str]) {
    let report = stdout
        .split(&format!("over {rounds} rounds"))
        .nth(1)
        .and_then(|r| r.split("engine only").next())
        .unwrap_or_else(|| panic!("no summary of {rounds} rounds in\n{stdout}"));
    // A line's three numbers: a median, then the least and the greatest.
    let spread_holds = |line: &str| {
        let numbers: Vec<f64> = line
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter_map(|t| t.parse().ok())
            .collect();
        matches!(numbers[..], [median, min, max] if 0.0 < min && min <= median && median <= max)
    };
    for engine in engines {
        let line = report
            .lines()
            .find(|l| l.trim_start().starts_with(engine) && l.contains("cycles/s median"))
            .unwrap_or_else(|| panic!("no rate of {engine} in\n{report}"));
        assert!(spread_holds(line), "median and range in `{line}`");
        let ratio = report
            .lines()
            .find(|l| l.trim_start().starts_with(engine) && l.contains("Verilator's speed"));
        let versus = engines.contains(&"verilator") && *engine != "verilator";
        assert_eq!(
            ratio.is_some(),
            versus,
            "{engine}'s ratio line in\n{report}"
        );
        if let Some(line) = ratio {
            assert!(spread_holds(line), "median and range in `{line}`");
        }
    }
}

/// Asserts that `stdout` has the engine-only comparison of `engines` (a positive
/// rate each, and beside Verilator a positive ratio to it).
fn assert_engine_only(stdout: &str, engines: &[&str]) {
    let report = stdout
        .split("engine only")
        .nth(1)
        .unwrap_or_else(|| panic!("no engine-only comparison in\n{stdout}"));
    for engine in engines {
        let line = report
            .lines()
            .find(|l| l.trim_start().starts_with(engine) && l.contains("cycles/s"))
            .unwrap_or_else(|| panic!("no engine-only rate of {engine} in\n{report}"));
        let numbers: Vec<f64> = line
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter_map(|t| t.parse().ok())
            .collect();
        let versus = *engine != "verilator";
        let expected = if versus { 2 } else { 1 };
        assert_eq!(numbers.len(), expected, "`{line}`");
        assert!(numbers.iter().all(|&n| n > 0.0), "`{line}`");
        assert_eq!(line.contains("Verilator's speed"), versus, "`{line}`");
    }
}

#[test]
fn lightning_repeats_report_the_spread_of_one_engine() {
    let out = lightning(&["--images", "2", "--repeat", "3"]);
    let stdout = ok(&out);
    assert_repeat_report(&stdout, 3, &["native"]);
    // The inference cycles: two images, a noise-free and a noisy pass, each image
    // taking the cycles the report gives per image.
    let per_image = count_after(&stdout, "cycles per image: ");
    assert_eq!(
        count_after(&stdout, "inference: "),
        2 * 2 * per_image,
        "{stdout}"
    );
    // An image's time at the ZCU111's DAC fabric clock: 4.05504 GS/s at 16
    // samples per cycle is 253.44 MHz.
    let image_us = per_image as f64 / 253.44;
    let at_clock = format!("({image_us:.2} µs at 253.44 MHz)");
    assert!(stdout.contains(&at_clock), "{at_clock} in\n{stdout}");
    assert!(stdout.contains(" on native: "), "{stdout}");
    assert!(!stdout.contains("identical results"), "{stdout}");
    assert!(!stdout.contains("engine only"), "{stdout}");
    let out = lightning(&["--images", "2", "--repeat", "0"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--repeat"),
        "{}",
        text(&out.stderr)
    );
    let out = lightning(&["--images", "2", "--repeat", "2", "--calibrate"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--calibrate"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn lightning_vcds_run_at_the_dac_clock() {
    let dir = tempfile::tempdir().expect("temp dir");
    let native = dir.path().join("l.vcd");
    let out = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args([
            "sim",
            "lightning",
            "--engine",
            "both",
            "--images",
            "1",
            "--repeat",
            "2",
            "--vcd",
        ])
        .arg(&native)
        .output()
        .expect("the wirespeed binary runs");
    let stdout = ok(&out);
    let n = rising_edges_ps(&native, "clk");
    let v = rising_edges_ps(&dir.path().join("l.verilator.vcd"), "clk");
    assert!(n.len() > 100, "native VCD: only {} clock edges", n.len());
    assert_eq!(
        n, v,
        "the two VCDs' clock edges are at the same picoseconds"
    );
    // ZCU111 DAC fabric clock, 253.44 MHz: 3945.8 ps, rounded to 3946.
    assert!(
        n.windows(2).all(|w| w[1] - w[0] == 3946),
        "clock periods {:?}",
        n.windows(2)
            .map(|w| w[1] - w[0])
            .take(10)
            .collect::<Vec<_>>()
    );
    assert!(stdout.contains("VCD of image 0"), "{stdout}");
    assert_repeat_report(&stdout, 2, &["native", "verilator"]);
    assert_engine_only(&stdout, &["native", "verilator"]);
}

#[test]
fn lightning_released_rtl_contract_runs_and_equals_its_golden_model() {
    let out = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args([
            "sim",
            "lightning",
            "--arith",
            "released-rtl",
            "--images",
            "2",
        ])
        .output()
        .expect("the wirespeed binary runs");
    let stdout = ok(&out);
    assert!(
        stdout.contains("arithmetic contract: released-rtl"),
        "{stdout}"
    );
    assert!(
        stdout.contains("logits equal the golden model's on 2/2 images"),
        "{stdout}"
    );
}

/// `--engine compiled` runs the native simulator waiting for its compiled engines:
/// the same golden checks pass, and the report names the engine.
#[test]
fn the_compiled_engine_choice_runs_and_is_named() {
    let stdout = ok(&lightning(&["--images", "2", "--engine", "compiled"]));
    assert!(stdout.contains(" on compiled: "), "{stdout}");
    assert!(
        stdout.contains("logits equal the golden model's on 2/2 images"),
        "{stdout}"
    );
    let stdout = ok(&panama(&["--elements", "512", "--engine", "compiled"]));
    assert!(stdout.contains(", engine compiled"), "{stdout}");
    assert!(stdout.contains(" result frames identical"), "{stdout}");
}

/// The perf map a run printed the path of (`perf map: PATH`), read and removed:
/// its lines as (address, size, name).
fn take_perf_map(stdout: &str) -> Vec<(u64, u64, String)> {
    let path = (stdout.lines())
        .find_map(|l| l.strip_prefix("perf map: "))
        .unwrap_or_else(|| panic!("no `perf map:` line in\n{stdout}"));
    let text = std::fs::read_to_string(path).expect("the perf map exists");
    std::fs::remove_file(path).expect("the perf map can be removed");
    (text.lines())
        .map(|line| {
            let mut fields = line.splitn(3, ' ');
            let mut hex = || {
                let field = fields.next().unwrap_or_default();
                u64::from_str_radix(field, 16).unwrap_or_else(|_| panic!("line {line:?}"))
            };
            let (address, size) = (hex(), hex());
            (address, size, fields.next().unwrap_or_default().to_string())
        })
        .collect()
}

/// The compiled engine's groups of functions, as the perf map names them.
const PERF_MAP_GROUPS: [&str; 5] = ["settle_outputs", "settle_rest", "commit", "sample", "write"];

#[test]
fn the_perf_map_names_every_function_of_the_compiled_engine_without_overlaps() {
    let runs = [
        ok(&lightning(&[
            "--images",
            "2",
            "--engine",
            "compiled",
            "--perf-map",
        ])),
        ok(&panama(&[
            "--elements",
            "512",
            "--engine",
            "compiled",
            "--perf-map",
        ])),
    ];
    for stdout in runs {
        let mut map = take_perf_map(&stdout);
        for group in PERF_MAP_GROUPS {
            let name = format!("wirespeed::profiling::{group}#0");
            assert!(map.iter().any(|(_, _, n)| *n == name), "{name} in {map:?}");
        }
        for (_, size, name) in &map {
            let (engine, rest) = (name.strip_prefix("wirespeed::"))
                .and_then(|n| n.split_once("::"))
                .unwrap_or_else(|| panic!("name {name:?}"));
            let (group, index) = rest.split_once('#').unwrap_or_else(|| panic!("{name:?}"));
            assert!(["profiling", "tuned"].contains(&engine), "{name:?}");
            assert!(PERF_MAP_GROUPS.contains(&group), "{name:?}");
            assert!(
                index.parse::<u32>().is_ok() && *size > 0,
                "{name:?} size {size}"
            );
        }
        map.sort();
        for pair in map.windows(2) {
            assert!(pair[0].0 + pair[0].1 <= pair[1].0, "overlap: {pair:?}");
        }
    }
}

/// Runs `wirespeed sim lightning <args>`.
fn lightning(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["sim", "lightning"])
        .args(args)
        .output()
        .expect("the wirespeed binary runs")
}

/// The golden model's correct count on the first `n` shipped test images
/// (perfect link, wirespeed's contract), computed here.
fn golden_correct(n: usize) -> usize {
    use testbench::lightning::arith::{argmax, OpticalLoss};
    use testbench::lightning::golden::{infer, DatapathConfig};
    use testbench::lightning::model_files::{data_dir, load_workload};
    let w = load_workload(&data_dir()).expect("the shipped workload");
    let cfg = DatapathConfig {
        acc_width: w.model.acc_width,
        optical_loss: OpticalLoss::UNITY,
    };
    (0..n)
        .filter(|&i| {
            let logits = infer(&w.model.network, &w.test.images[i], &cfg)
                .expect("golden inference")
                .logits;
            argmax(&logits) == Some(usize::from(w.test.labels[i]))
        })
        .count()
}

/// (hardware correct, golden correct) from the report's `accuracy:` line.
fn impaired_accuracy(stdout: &str) -> (usize, usize) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("accuracy: hardware"))
        .unwrap_or_else(|| panic!("no accuracy line in\n{stdout}"));
    let counts: Vec<usize> = line
        .split('(')
        .skip(1)
        .map(|part| {
            part.split('/')
                .next()
                .and_then(|k| k.parse().ok())
                .unwrap_or_else(|| panic!("bad accuracy line {line}"))
        })
        .collect();
    match counts[..] {
        [hw, golden] => (hw, golden),
        _ => panic!("bad accuracy line {line}"),
    }
}

#[test]
fn lightning_calibration_undoes_skew_and_loss_through_the_board_top() {
    let n = 24;
    let expected_golden = golden_correct(n);
    let images = n.to_string();
    let calibrated = ok(&lightning(&[
        "--skew",
        "3,5",
        "--loss",
        "0.6",
        "--calibrate",
        "--images",
        &images,
    ]));
    assert!(
        calibrated.contains("Lightning board top") && calibrated.contains("calibration: yes"),
        "{calibrated}"
    );
    assert!(
        calibrated.contains("calibration: succeeded"),
        "{calibrated}"
    );
    assert!(
        calibrated.contains("skew 53 samples (link: 53)"),
        "{calibrated}"
    );
    assert!(
        calibrated.contains(&format!(
            "logits equal the golden model's on {n}/{n} images"
        )),
        "{calibrated}"
    );
    assert_eq!(
        impaired_accuracy(&calibrated),
        (expected_golden, expected_golden),
        "{calibrated}"
    );

    // The same link without calibration: exit 0, no exact image, accuracy falls.
    let raw = ok(&lightning(&[
        "--skew", "3,5", "--loss", "0.6", "--images", &images,
    ]));
    assert!(raw.contains("calibration: no"), "{raw}");
    assert!(
        raw.contains(&format!("logits equal the golden model's on 0/{n} images")),
        "{raw}"
    );
    let (hw, golden) = impaired_accuracy(&raw);
    assert_eq!(golden, expected_golden, "{raw}");
    assert!(hw < golden, "{raw}");
}

#[test]
fn lightning_failed_calibration_exits_nonzero() {
    // 64 cycles = 1024 samples: beyond the calibrator's 1023-sample reach.
    let out = lightning(&["--skew", "64,0", "--calibrate", "--images", "1"]);
    assert!(!out.status.success(), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("calibration failed"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("skew beyond the calibrator's reach"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn lightning_bad_impairment_flags_are_errors_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["--skew", "3"], "--skew"),
        (&["--skew", "3,16"], "--skew"),
        (&["--skew", "x,1"], "--skew"),
        (&["--loss", "0"], "--loss"),
        (&["--loss", "1.5"], "--loss"),
        (&["--loss", "nan"], "--loss"),
        (&["--calibrate", "--cores", "5"], "--cores"),
        (&["--calibrate", "--vcd", "never.vcd"], "--vcd"),
    ];
    for (args, flag) in cases {
        let out = lightning(&[args, &["--images", "1"][..]].concat());
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out.stdout));
    }
    assert!(!Path::new("never.vcd").exists());
}
