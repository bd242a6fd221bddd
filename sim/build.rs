//! Gives the crate a fingerprint of its own sources and of the IR it reads (`hdl`'s
//! netlist types and values: `WS_SIM_SOURCE`), part of the key of every compiled
//! engine and compiled program in a code cache: what another version of the
//! compiler or the emitter made is never loaded.

use std::hash::{DefaultHasher, Hasher};
use std::path::Path;

fn main() {
    let mut files = Vec::new();
    for dir in ["src", "../hdl/src/ir"] {
        println!("cargo:rerun-if-changed={dir}");
        collect(Path::new(dir), &mut files);
    }
    for file in ["Cargo.toml", "../hdl/src/bits.rs"] {
        println!("cargo:rerun-if-changed={file}");
        files.push(Path::new(file).to_path_buf());
    }
    files.sort();
    let mut h = DefaultHasher::new();
    for file in &files {
        let text =
            std::fs::read(file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        h.write(file.to_string_lossy().as_bytes());
        h.write_usize(text.len());
        h.write(&text);
    }
    println!("cargo:rustc-env=WS_SIM_SOURCE={:016x}", h.finish());
    host_vector_forms();
}

/// Tells the tests which explicit vector forms the CPU building them runs
/// (`ws_host_avx2`, `ws_host_avx512`): a test of forms the CPU lacks is marked
/// ignored, so that it is reported as not run instead of passing on the
/// portable loop that stands in for them.
fn host_vector_forms() {
    println!("cargo:rustc-check-cfg=cfg(ws_host_avx2, ws_host_avx512)");
    #[cfg(target_arch = "x86_64")]
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64") {
        if std::arch::is_x86_feature_detected!("avx2") {
            println!("cargo:rustc-cfg=ws_host_avx2");
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            println!("cargo:rustc-cfg=ws_host_avx512");
        }
    }
}

/// Every file under `dir`, recursively.
fn collect(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}
