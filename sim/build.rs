//! Gives the crate a fingerprint of its own sources (`WS_SIM_SOURCE`), part of the
//! key of every compiled engine in a code cache: code emitted by another version of
//! the emitter is never loaded.

use std::hash::{DefaultHasher, Hasher};
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    let mut files = Vec::new();
    collect(Path::new("src"), &mut files);
    files.push(Path::new("Cargo.toml").to_path_buf());
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
