//! `wirespeed gen` and `synth` through the built binary: one design per output folder
//! (refusal naming the other design, regeneration, `--force`, files in the way) and
//! no partial output or temporary folder after Ctrl-C (SIGINT); `synth`'s table.
//!
//! `cargo test --test cli_gen_folders`

use std::collections::BTreeSet;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_wirespeed");

fn wirespeed(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run wirespeed")
}

fn gen_ok(args: &[&str]) {
    let out = wirespeed(args);
    assert!(
        out.status.success(),
        "wirespeed {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `(exit code, stderr)` of a run that must fail.
fn gen_err(args: &[&str]) -> (Option<i32>, String) {
    let out = wirespeed(args);
    assert!(!out.status.success(), "wirespeed {args:?} succeeded");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Names in `dir` (all of them, hidden ones included).
fn names(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// The `outputs` list of `dir/manifest.json`.
fn outputs(dir: &Path) -> BTreeSet<String> {
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    json["outputs"]
        .as_array()
        .expect("outputs list")
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// Every file with its bytes, to show a folder was left alone.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    names(dir)
        .into_iter()
        .map(|n| {
            let bytes = fs::read(dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

fn no_staging(parent: &Path) {
    let left: Vec<String> = names(parent)
        .into_iter()
        .filter(|n| n.starts_with(".wirespeed-gen-"))
        .collect();
    assert!(left.is_empty(), "temporary folders left: {left:?}");
}

#[test]
fn a_folder_of_another_design_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = out.to_str().unwrap();
    gen_ok(&["gen", "panama", "-o", o]);
    let before = snapshot(&out);
    // The sequence: another board, then another block, into the same folder.
    let (_, err) = gen_err(&["gen", "panama", "--board", "netfpga-plus-au250", "-o", o]);
    for needle in [
        "holds another generated design",
        "block `panama`",
        "board `netfpga-sume`",
        "--force",
    ] {
        assert!(err.contains(needle), "`{needle}` missing from: {err}");
    }
    let (_, err) = gen_err(&["gen", "lightning", "-o", o]);
    assert!(err.contains("top `panama`"), "{err}");
    // Same block, other parameters: the differing parameter is named.
    let f = tmp.path().join("f");
    gen_ok(&["gen", "fifo", "--set", "width=8", "-o", f.to_str().unwrap()]);
    let (_, err) = gen_err(&[
        "gen",
        "fifo",
        "--set",
        "width=16",
        "-o",
        f.to_str().unwrap(),
    ]);
    assert!(
        err.contains("top `fifo_w8_d512`") && err.contains("width=8"),
        "{err}"
    );
    assert_eq!(snapshot(&out), before, "a refused run changed the folder");
    no_staging(tmp.path());
}

#[test]
fn the_same_design_regenerates_into_its_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = out.to_str().unwrap();
    gen_ok(&["gen", "panama", "-o", o]);
    let first = snapshot(&out);
    gen_ok(&["gen", "panama", "-o", o]);
    assert_eq!(snapshot(&out), first);
    // The manifest lists every file written, board files included, and nothing else
    // is in the folder.
    let listed = outputs(&out);
    assert_eq!(listed, names(&out));
    for f in [
        "manifest.json",
        "build.tcl",
        "register_map.h",
        "register_map.json",
    ] {
        assert!(listed.contains(f), "{f} not in {listed:?}");
    }
    assert!(listed.iter().any(|n| n.ends_with(".xdc")), "{listed:?}");
    no_staging(tmp.path());
}

#[test]
fn force_replaces_exactly_the_earlier_manifests_files() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = out.to_str().unwrap();
    gen_ok(&["gen", "panama", "-o", o]);
    let panama = outputs(&out);
    fs::write(out.join("notes.txt"), "mine").unwrap();
    gen_ok(&["gen", "fifo", "--force", "-o", o]);
    let fifo = outputs(&out);
    let mut expected = fifo.clone();
    expected.insert("notes.txt".into());
    assert_eq!(names(&out), expected, "panama's files were {panama:?}");
    assert_eq!(fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
    assert!(fifo.contains("fifo_w32_d512.v"), "{fifo:?}");
    // A file in the way that no manifest lists is refused even with --force.
    fs::write(out.join("up_counter_w32.v"), "// mine").unwrap();
    let (_, err) = gen_err(&["gen", "counter", "--force", "-o", o]);
    assert!(
        err.contains("up_counter_w32.v") && err.contains("in the way"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(out.join("up_counter_w32.v")).unwrap(),
        "// mine"
    );
    assert!(out.join("fifo_w32_d512.v").is_file());
    no_staging(tmp.path());
}

#[test]
fn an_unrelated_file_of_the_same_name_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = out.to_str().unwrap();
    fs::create_dir(&out).unwrap();
    fs::write(out.join("fifo_w32_d512.v"), "// hand-written").unwrap();
    let (_, err) = gen_err(&["gen", "fifo", "-o", o]);
    assert!(
        err.contains("fifo_w32_d512.v")
            && err.contains("in the way")
            && err.contains("no manifest.json"),
        "{err}"
    );
    assert_eq!(names(&out), BTreeSet::from(["fifo_w32_d512.v".to_string()]));
    // Unrelated files with other names: the design is written beside them.
    gen_ok(&["gen", "counter", "-o", o]);
    assert!(out.join("up_counter_w32.v").is_file());
    assert_eq!(
        fs::read_to_string(out.join("fifo_w32_d512.v")).unwrap(),
        "// hand-written"
    );
    no_staging(tmp.path());
}

/// Spawns `wirespeed args` with `TMPDIR` set to `tmpdir`, waits for a stderr line
/// containing `started`, sends SIGINT and returns the exit code and all of stderr.
fn interrupt_after(args: &[&str], tmpdir: &Path, started: &str) -> (Option<i32>, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .env("TMPDIR", tmpdir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn wirespeed");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut text = String::new();
    while !text.contains(started) {
        let n = stderr.read_line(&mut text).unwrap();
        assert!(n > 0, "`{started}` never printed: {text}");
    }
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on the pid of our own child, which has not been waited for.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let start = Instant::now();
    let status = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    text.push_str(&rest);
    assert!(start.elapsed() < Duration::from_secs(5), "slow to stop");
    (status.code(), text)
}

/// `synth` off a terminal: the estimate is one Markdown table on stdout whose
/// last column is Yosys's time, and stderr has the start and end lines once each.
/// A block without a `board` parameter takes `--board` as its target part.
#[test]
fn synth_prints_one_table_with_its_time_and_the_progress_once() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["synth", "fifo", "--board", "netfpga-sume"])
        .env("TMPDIR", tmp.path())
        .output()
        .expect("run wirespeed");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "header, rule, one row:\n{stdout}");
    let cells = |line: &str| -> Vec<String> {
        line.trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let (header, row) = (cells(lines[0]), cells(lines[2]));
    assert_eq!(header.len(), row.len(), "{stdout}");
    assert_eq!(header.last().map(String::as_str), Some("Yosys time"));
    let secs = row.last().and_then(|t| t.strip_suffix(" s"));
    assert!(secs.is_some_and(|s| s.parse::<f64>().is_ok()), "{stdout}");
    // The default fifo (32 bits × 512) is 16 Kbit: one 18 Kbit block RAM.
    let bram18 = header.iter().position(|h| h == "BRAM18").unwrap();
    assert_eq!(row[bram18], "1", "{stdout}");
    assert_eq!(
        stdout.matches("yosys").count(),
        0,
        "time once, in the table"
    );
    // NetFPGA-SUME carries a Virtex-7 690T: Yosys's 7-series family.
    let target = header.iter().position(|h| h == "target").unwrap();
    assert!(
        row[target].starts_with("netfpga-sume (xc7vx690t"),
        "{stdout}"
    );
    assert!(stderr.contains("-family xc7,"), "{stderr}");
    assert_eq!(stderr.matches("yosys started").count(), 1, "{stderr}");
    assert_eq!(stderr.matches("yosys finished in").count(), 1, "{stderr}");
}

#[test]
fn sigint_during_synth_kills_yosys_and_leaves_no_temporary_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, err) = interrupt_after(&["synth", "fifo"], tmp.path(), "yosys started");
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(names(tmp.path()).is_empty(), "{:?}", names(tmp.path()));
}

#[test]
fn sigint_during_gen_leaves_no_partial_output() {
    // `gen panama` may finish before the signal lands: then the output is complete.
    // Either way no partial folder and no temporary folder remain.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let (code, err) = interrupt_after(
        &["gen", "panama", "-o", out.to_str().unwrap()],
        tmp.path(),
        "generating",
    );
    match code {
        Some(130) => {
            assert!(err.contains("interrupted"), "{err}");
            assert!(!out.exists(), "partial output {:?}", names(&out));
        }
        Some(0) => assert_eq!(outputs(&out), names(&out)),
        other => panic!("exit {other:?}: {err}"),
    }
    let left: BTreeSet<String> = names(tmp.path());
    assert!(
        left.is_empty() || left == BTreeSet::from(["out".to_string()]),
        "{left:?}"
    );
}
