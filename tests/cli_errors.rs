//! The command line's error messages for values a user can get wrong: one line
//! that names the option and the reason, a non-zero exit code.

use std::process::{Command, Output};
use wirespeed::hdl::lightning::config::MAX_CORES;

/// Runs the CLI with `args`.
fn output(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(args)
        .output()
        .expect("the wirespeed binary runs")
}

/// Runs the CLI with `args`; (success, stderr).
fn wirespeed(args: &[&str]) -> (bool, String) {
    let out = output(args);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the CLI with `args`, which must fail with an error naming each of `names`.
fn assert_refused(args: &[&str], names: &[&str]) {
    let (ok, err) = wirespeed(args);
    assert!(!ok, "{args:?} was accepted");
    for name in names {
        assert!(
            err.contains(name),
            "{args:?}: the error lacks {name:?}: {err}"
        );
    }
}

#[test]
fn more_lightning_images_than_the_workload_has_is_an_error() {
    assert_refused(
        &["sim", "lightning", "--images", "100000"],
        &["--images 100000", "has 300 test images"],
    );
}

#[test]
fn a_photonic_latency_past_what_the_link_holds_is_refused() {
    // 2^32 cycles once asked for 128 GiB of samples and aborted the process.
    for latency in ["1000001", "4294967296", "18446744073709551615"] {
        assert_refused(
            &["sim", "lightning", "--latency", latency],
            &[&format!("--latency {latency}"), "at most 1000000 cycles"],
        );
    }
    assert_refused(
        &["sim", "lightning", "--images", "1", "--latency", "1000000"],
        &["no lock"],
    );
}

#[test]
fn a_failed_lightning_run_says_why() {
    // A photonic latency far past the detector's timeout: no preamble, no lock.
    assert_refused(
        &["sim", "lightning", "--images", "1", "--latency", "100000"],
        &["no lock"],
    );
}

#[test]
fn a_chaos_run_refuses_options_it_does_not_take() {
    assert_refused(
        &["sim", "panama", "--chaos", "--vcd", "x.vcd"],
        &["--vcd is not available with --chaos"],
    );
}

#[test]
fn chaos_options_without_chaos_are_refused_not_ignored() {
    for option in ["--frames", "--full-wait", "--slot-timeout"] {
        assert_refused(&["sim", "panama", option, "100"], &["--chaos", option]);
    }
}

#[test]
fn generated_traffic_options_are_refused_where_they_would_be_ignored() {
    // `--pcap-in` and `--chaos` bring their own traffic; the file need not exist,
    // the conflict is found first.
    let sources: [&[&str]; 2] = [&["--pcap-in", "0=/nonexistent.pcap"], &["--chaos"]];
    let shaping: [&[&str]; 8] = [
        &["--jobs", "1"],
        &["--bypass-frames", "5"],
        &["--workers", "2"],
        &["--elements", "64"],
        &["--payload", "128"],
        &["--background", "0.5"],
        &["--faults", "0.1"],
        &["--random-interleave"],
    ];
    for source in sources {
        for option in shaping {
            let args = [&["sim", "panama"], source, option].concat();
            assert_refused(&args, &[source[0], option[0]]);
        }
    }
    assert_refused(
        &["sim", "panama", "--bypass-frames", "5"],
        &["--bypass-frames 5", "--jobs 0"],
    );
}

#[test]
fn a_noise_seed_is_refused_on_the_noise_free_board_top() {
    for impaired in [&["--skew", "1,0"][..], &["--loss", "0.6"], &["--calibrate"]] {
        let args = [&["sim", "lightning", "--seed", "7"], impaired].concat();
        assert_refused(&args, &["--seed", impaired[0]]);
    }
}

#[test]
fn a_perf_map_without_a_compiled_engine_is_refused() {
    for (design, engine) in [("panama", "verilator"), ("lightning", "interpreted")] {
        let args = ["sim", design, "--engine", engine, "--perf-map"];
        let named = format!("--engine {engine} runs none");
        assert_refused(&args, &["--perf-map", &named]);
    }
}

#[test]
fn aggregation_sizes_outside_the_instance_are_errors_giving_the_range() {
    // NetFPGA SUME's instance has four ports.
    for workers in ["0", "5"] {
        let named = format!("--workers {workers}");
        assert_refused(&["sim", "panama", "--workers", workers], &[&named, "1..=4"]);
    }
    assert_refused(
        &["sim", "panama", "--elements", "0"],
        &["--elements 0", "at least one"],
    );
}

/// A tensor whose traffic is past what a run builds in memory (4 GiB).
const TOO_MANY_ELEMENTS: &[&str] = &["sim", "panama", "--elements", "1000000000"];

/// Bypass frames past what a run builds in memory.
const TOO_MANY_BYPASS_FRAMES: &[&str] = &[
    "sim",
    "panama",
    "--jobs",
    "0",
    "--bypass-frames",
    "100000000000",
];

#[test]
fn traffic_too_large_to_build_is_refused_before_the_run() {
    // `inf` and `1e9` once panicked (capacity overflow), `nan` ran as if 0, and
    // the tensor and bypass frames below would have exhausted the memory.
    for background in ["inf", "nan", "1e9", "1000.5"] {
        assert_refused(
            &["sim", "panama", "--background", background],
            &["--background", "0..=1000"],
        );
    }
    assert_refused(
        TOO_MANY_ELEMENTS,
        &["--elements 1000000000", "2 jobs × 4 workers", "4 GiB"],
    );
    assert_refused(
        TOO_MANY_BYPASS_FRAMES,
        &["--bypass-frames 100000000000", "4 GiB"],
    );
}

#[test]
fn a_parameter_given_twice_is_an_error() {
    assert_refused(
        &[
            "sim",
            "panama",
            "--board",
            "netfpga-sume",
            "--set",
            "board=netfpga-plus-au250",
        ],
        &["`board` is given twice"],
    );
}

#[test]
fn a_repeated_parameter_blames_board_only_for_board() {
    let args = [
        "gen",
        "fifo",
        "--set",
        "width=8",
        "--set",
        "width=16",
        "-o",
        "/nonexistent/x",
    ];
    let (ok, err) = wirespeed(&args);
    assert!(!ok);
    assert!(err.contains("`width` is given twice"), "{err}");
    assert!(!err.contains("--board"), "{err}");
}

#[test]
fn a_number_too_large_for_its_parameter_says_out_of_range() {
    assert_refused(
        &[
            "gen",
            "panama",
            "--set",
            "full_wait=4294967296",
            "-o",
            "/nonexistent/x",
        ],
        &["`full_wait`", "out of range"],
    );
    assert_refused(
        &["sim", "panama", "--chaos", "--full-wait", "0x1_0000_0000"],
        &["--full-wait", "out of range"],
    );
    assert_refused(
        &[
            "gen",
            "fifo",
            "--set",
            "width=eight",
            "-o",
            "/nonexistent/x",
        ],
        &["`width`", "non-negative integer"],
    );
}

#[test]
fn a_board_with_room_for_one_core_says_so() {
    assert_refused(
        &[
            "gen",
            "lightning",
            "--board",
            "rfsoc4x2",
            "--set",
            "cores=2",
            "-o",
            "/nonexistent/x",
        ],
        &["`cores`", "rfsoc4x2", "one core only"],
    );
}

#[test]
fn an_os_error_is_printed_once() {
    let (ok, err) = wirespeed(&["gen", "counter", "-o", "/proc/no-such-dir/out"]);
    assert!(!ok);
    assert_eq!(err.matches("os error").count(), 1, "{err}");
}

#[test]
fn too_many_or_no_lightning_cores_name_the_flag_and_the_range() {
    for cores in [0, MAX_CORES + 1] {
        let named = format!("--cores {cores}");
        let range = format!("1..={MAX_CORES}");
        assert_refused(
            &["sim", "lightning", "--cores", &cores.to_string()],
            &[&named, &range],
        );
    }
}

#[test]
fn a_refused_command_announces_nothing_before_its_error() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let out_dir = dir.path().join("out");
    let out_arg = out_dir.to_str().expect("a UTF-8 path");
    let refused: [&[&str]; 6] = [
        &["gen", "nosuch", "-o", out_arg],
        &["gen", "fifo", "--set", "depth=abc", "-o", out_arg],
        &["sim", "panama", "--elements", "0"],
        &["sim", "panama", "--workers", "9"],
        TOO_MANY_ELEMENTS,
        TOO_MANY_BYPASS_FRAMES,
    ];
    for args in refused {
        let out = output(args);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(!out.status.success(), "{args:?} was accepted");
        assert_eq!(stdout, "", "{args:?} printed before refusing");
        assert!(
            stderr.starts_with("error: ") && stderr.lines().count() == 1,
            "{args:?}: {stderr}"
        );
    }
    assert!(!out_dir.exists(), "a refused `gen` created its folder");
}
