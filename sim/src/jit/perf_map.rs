//! A perf map of the compiled engines' code, so that a sampling profiler names
//! the time spent in it. Linux `perf` has no symbols for code made at run time and
//! looks its addresses up in `/tmp/perf-<pid>.map`, one line per function: start
//! address and size in hexadecimal, then a name. Once [`enable_perf_map`] has been
//! called, every compiled engine this process places in memory appends its
//! functions there, named `wirespeed::<engine>::<group>#<index>`: the engine is
//! `profiling` (the first one, which counts its partitions' runs) or `tuned`; the
//! group is `settle_outputs` or `settle_rest` (the settle of the steps the output
//! ports depend on and of the others, split into functions of bounded size),
//! `commit`, `sample` or `write` (the clock edge's, one function per clock
//! domain). `perf report` then shows, for example,
//! `wirespeed::tuned::settle_rest#2` where it would show a bare address.
//!
//! The map is only ever appended to, like other JITs' perf maps: an engine
//! dropped and its memory reused by a later one (a fresh model of the same run,
//! `--repeat`) leaves both entries, and samples in that range may be named after
//! either.

use super::image::GROUPS;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// The map file, once enabled.
static MAP: Mutex<Option<(PathBuf, File)>> = Mutex::new(None);

/// Why the perf map could not be written.
#[derive(Clone, Debug, thiserror::Error)]
#[error("perf map {}: {reason}", path.display())]
pub struct PerfMapError {
    /// The map file.
    pub path: PathBuf,
    /// What the operating system reported.
    pub reason: String,
}

/// Starts a perf map of this process's compiled engines at `/tmp/perf-<pid>.map`
/// (created, or truncated if a process of the same id left one) and returns its
/// path; every compiled engine placed in memory afterwards is added to it (see
/// the module's documentation). Calling it again keeps the open map.
pub fn enable_perf_map() -> Result<PathBuf, PerfMapError> {
    let mut map = MAP.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((path, _)) = &*map {
        return Ok(path.clone());
    }
    let path = PathBuf::from(format!("/tmp/perf-{}.map", std::process::id()));
    let file = File::create(&path).map_err(|e| PerfMapError {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    *map = Some((path.clone(), file));
    Ok(path)
}

/// The names of an image's groups of functions, in the image's order.
const GROUP_NAMES: [&str; GROUPS] = ["settle_outputs", "settle_rest", "commit", "sample", "write"];

/// One function of placed code: its address, its size in bytes, and its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Symbol {
    pub address: usize,
    pub size: usize,
    pub name: String,
}

/// The functions of code of `len` bytes placed at `base`, whose groups' functions
/// begin at the offsets `entries`, for the engine called `engine`. Each function
/// ends where the next one begins (alignment padding included) or at the code's
/// end.
pub(super) fn symbols(
    base: usize,
    len: usize,
    entries: &[Vec<u32>; GROUPS],
    engine: &str,
) -> Vec<Symbol> {
    let mut starts: Vec<(u32, usize, usize)> = (entries.iter().enumerate())
        .flat_map(|(g, group)| group.iter().enumerate().map(move |(i, &at)| (at, g, i)))
        .collect();
    starts.sort_unstable();
    let ends = starts.iter().skip(1).map(|s| s.0 as usize).chain([len]);
    (starts.iter().zip(ends))
        .map(|(&(at, g, i), end)| Symbol {
            address: base + at as usize,
            size: end - at as usize,
            name: format!("wirespeed::{engine}::{}#{i}", GROUP_NAMES[g]),
        })
        .collect()
}

/// Appends `symbols` to the perf map, if it is enabled.
pub(super) fn record(symbols: impl FnOnce() -> Vec<Symbol>) -> Result<(), PerfMapError> {
    let mut map = MAP.lock().unwrap_or_else(|e| e.into_inner());
    let Some((path, file)) = &mut *map else {
        return Ok(());
    };
    let lines: String = (symbols().iter())
        .map(|s| format!("{:x} {:x} {}\n", s.address, s.size, s.name))
        .collect();
    file.write_all(lines.as_bytes()).map_err(|e| PerfMapError {
        path: path.clone(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_function_ends_where_the_next_begins_whatever_its_group() {
        let entries = [vec![0, 128], vec![64], vec![192], vec![], vec![256]];
        let symbols = symbols(0x1000, 300, &entries, "tuned");
        let found: Vec<(usize, usize, &str)> = (symbols.iter())
            .map(|s| (s.address, s.size, s.name.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (0x1000, 64, "wirespeed::tuned::settle_outputs#0"),
                (0x1040, 64, "wirespeed::tuned::settle_rest#0"),
                (0x1080, 64, "wirespeed::tuned::settle_outputs#1"),
                (0x10c0, 64, "wirespeed::tuned::commit#0"),
                (0x1100, 44, "wirespeed::tuned::write#0"),
            ]
        );
    }
}
