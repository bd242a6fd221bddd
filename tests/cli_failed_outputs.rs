//! What a `wirespeed sim panama` run that fails leaves behind. A VCD trace whose
//! writes fail (here a file size limit, as a full disk would) ends the run with an
//! error naming the file, and the incomplete file is removed, on either engine and
//! on both; a `--pcap-out` folder the run made is removed as well when the run fails
//! before writing into it, and one that was there before is left as it was; a
//! capture whose writes fail is removed, the complete ones are kept.
//!
//! `cargo test --test cli_failed_outputs` (the first run builds the traced
//! Verilator model of the PANAMA core, as `cli_sim` does; later runs load it).

#![cfg(target_os = "linux")]

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

/// The largest file a limited run may write: below a PANAMA trace of `ELEMENTS`
/// elements (the native engine's, of the ports, about 160 KB; Verilator's, of
/// every signal, about 5 MB).
const FILE_LIMIT_BYTES: u64 = 64 * 1024;

/// Elements a worker: a short run.
const ELEMENTS: &str = "64";

/// Runs `wirespeed sim panama <args>` (with `--elements ELEMENTS` unless `args`
/// give it), with `limited` under a file size limit of [`FILE_LIMIT_BYTES`].
fn sim_panama(args: &[&str], limited: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wirespeed"));
    cmd.args(["sim", "panama"]).args(args);
    if !args.contains(&"--elements") {
        cmd.args(["--elements", ELEMENTS]);
    }
    if limited {
        // SAFETY: the closure runs in the child between fork and exec, and calls
        // only `setrlimit` and `signal`, which are async-signal-safe and change the
        // child alone.
        unsafe {
            cmd.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: FILE_LIMIT_BYTES,
                    rlim_max: FILE_LIMIT_BYTES,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // A write past the limit then fails with EFBIG instead of ending
                // the process by SIGXFSZ.
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                Ok(())
            });
        }
    }
    cmd.output().expect("the wirespeed binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temporary path")
}

/// Asserts `out` failed on the trace `vcd`'s writes and removed it.
fn assert_trace_failed(out: &Output, vcd: &Path) {
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "succeeded under the limit: {stderr}");
    let expected = format!("trace `{}`: File too large", vcd.display());
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(
        stderr.contains("the incomplete file was removed"),
        "{stderr}"
    );
    assert!(!vcd.exists(), "{} left behind", vcd.display());
}

#[test]
fn a_trace_that_cannot_be_written_is_removed_with_the_folder_the_run_made() {
    let dir = tempfile::tempdir().expect("temp dir");
    let vcd = dir.path().join("t.vcd");
    let caps = dir.path().join("caps");
    let args = ["--vcd", path_str(&vcd), "--pcap-out", path_str(&caps)];

    // Without the limit the same run writes both.
    let out = sim_panama(&args, false);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = std::fs::metadata(&vcd).expect("the trace").len();
    assert!(written > FILE_LIMIT_BYTES, "a trace of {written} bytes");
    assert!(caps.join("input.pcapng").is_file());
    std::fs::remove_file(&vcd).expect("remove the trace");
    std::fs::remove_dir_all(&caps).expect("remove the captures");

    let out = sim_panama(&args, true);
    assert_trace_failed(&out, &vcd);
    assert!(
        !caps.exists(),
        "the run's empty --pcap-out folder left behind"
    );

    // A folder that was there before the run stays.
    std::fs::create_dir(&caps).expect("make the folder");
    let out = sim_panama(&args, true);
    assert_trace_failed(&out, &vcd);
    assert!(caps.is_dir(), "a folder made before the run was removed");
}

#[test]
fn a_capture_that_cannot_be_written_is_removed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let caps = dir.path().join("caps");
    let input = caps.join("input.pcapng");
    // 2,048 elements a worker: the offered traffic's capture is past the limit,
    // each port's capture of the results is not.
    let args = ["--elements", "2048", "--pcap-out", path_str(&caps)];
    let out = sim_panama(&args, false);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = std::fs::metadata(&input).expect("the capture").len();
    assert!(written > FILE_LIMIT_BYTES, "a capture of {written} bytes");
    std::fs::remove_dir_all(&caps).expect("remove the captures");

    let out = sim_panama(&args, true);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "succeeded under the limit: {stderr}");
    let expected = format!("{}: File too large", input.display());
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(!input.exists(), "{} left behind", input.display());
    assert!(caps.join("port0.pcap").is_file(), "a complete capture kept");
}

#[test]
fn both_engines_traces_that_cannot_be_written_are_removed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let vcd = dir.path().join("b.vcd");
    let beside = dir.path().join("b.verilator.vcd");
    let args = ["--engine", "both", "--vcd", path_str(&vcd)];

    // Without the limit (which builds the traced Verilator model if the cache
    // lacks it) both traces are written.
    let out = sim_panama(&args, false);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for file in [&vcd, &beside] {
        let len = std::fs::metadata(file).expect("a trace").len();
        assert!(len > FILE_LIMIT_BYTES, "{}: {len} bytes", file.display());
        std::fs::remove_file(file).expect("remove the trace");
    }

    let out = sim_panama(&args, true);
    assert_trace_failed(&out, &vcd);
    assert!(!beside.exists(), "{} left behind", beside.display());
}

#[test]
fn verilator_alone_reports_and_removes_its_trace() {
    let dir = tempfile::tempdir().expect("temp dir");
    let vcd = dir.path().join("v.vcd");
    let args = ["--engine", "verilator", "--vcd", path_str(&vcd)];
    let out = sim_panama(&args, false);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::remove_file(&vcd).expect("remove the trace");

    let out = sim_panama(&args, true);
    assert_trace_failed(&out, &vcd);
}
