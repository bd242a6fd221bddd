//! The output folder of one generated design: [`write_folder`] keeps one design per
//! folder and writes all of its files or none.
//!
//! - A folder whose `manifest.json` describes another design (another top module or
//!   other generator parameters) is refused, naming that design, unless
//!   [`FolderOptions::force`] is set: then exactly the files that manifest lists are
//!   replaced and nothing else is touched.
//! - Regenerating the same design (same top and parameters) replaces the files of the
//!   earlier run.
//! - A folder without a manifest takes the design beside its files only if none of
//!   them has the name of one of ours; otherwise the first such file is named.
//! - The whole file set is first written into a temporary folder beside the target
//!   (`.wirespeed-gen-*` in the target's parent) and moved into place only when all of
//!   it is written; an error or a raised cancel flag leaves no partial output, and
//!   the temporary folder is removed.

use crate::manifest::{bad_file_name, output_files, MANIFEST};
use crate::verilog::Design;
use crate::{GenError, Manifest};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Prefix of the temporary folder [`write_folder`] stages a design in, beside the target.
pub const STAGING_PREFIX: &str = ".wirespeed-gen-";

/// How [`write_folder`] treats a folder that already holds files.
#[derive(Clone, Copy, Debug, Default)]
pub struct FolderOptions<'a> {
    /// Replace the files of another design that the folder's `manifest.json` lists
    /// (and only those).
    pub force: bool,
    /// Checked between steps: once raised, the write stops with
    /// [`GenError::Interrupted`] and leaves nothing behind.
    pub cancel: Option<&'a AtomicBool>,
}

/// Writes the Verilog files of `design`, `manifest.json` (listing every file written
/// in its `outputs`) and the `(file name, text)` pairs of `extra` into `dir`, all or
/// nothing, and returns the paths written: Verilog, manifest, then `extra` in order.
/// See the [module documentation](self) for the folder rules; errors name the folder,
/// the other design or the file in the way, and the remedy.
pub fn write_folder(
    dir: &Path,
    design: &Design,
    manifest: &Manifest,
    extra: &[(String, String)],
    options: FolderOptions<'_>,
) -> Result<Vec<PathBuf>, GenError> {
    let outputs = output_files(design, manifest, extra)?;
    let names: Vec<&str> = outputs.iter().map(|(n, _)| n.as_str()).collect();
    let earlier = check_folder(dir, manifest, &names, options.force)?;
    let cancelled = || options.cancel.is_some_and(|c| c.load(Ordering::SeqCst));
    let io = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| GenError::Io {
            action,
            path,
            source,
        }
    };

    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).map_err(io("create directory", &parent))?;
    let staging = tempfile::Builder::new()
        .prefix(STAGING_PREFIX)
        .tempdir_in(&parent)
        .map_err(io("create a temporary folder in", &parent))?;
    for (name, text) in &outputs {
        if cancelled() {
            return Err(GenError::Interrupted);
        }
        let path = staging.path().join(name);
        fs::write(&path, text).map_err(io("write", &path))?;
    }
    if cancelled() {
        return Err(GenError::Interrupted);
    }

    if !dir.exists() {
        fs::rename(staging.path(), dir).map_err(io("move the staged output to", dir))?;
        // The folder is now `dir`; nothing is left to clean up.
        let _ = staging.keep();
    } else {
        move_into(dir, staging.path(), &names, &earlier)?;
        // Dropping `staging` removes it with the replaced files it now holds.
    }
    Ok(names.iter().map(|n| dir.join(n)).collect())
}

/// Moves the files `names` from `staging` into the existing folder `dir`. Files of
/// `dir` they replace, and the files of `earlier` (an earlier run's list) that are
/// not rewritten, are first moved into `staging/.replaced`; on any error every move
/// is undone.
fn move_into(
    dir: &Path,
    staging: &Path,
    names: &[&str],
    earlier: &[String],
) -> Result<(), GenError> {
    let replaced = staging.join(".replaced");
    fs::create_dir(&replaced).map_err(|source| GenError::Io {
        action: "create directory",
        path: replaced.clone(),
        source,
    })?;
    // (from, to) of every rename done, to undo them in reverse on an error.
    let mut done: Vec<(PathBuf, PathBuf)> = Vec::new();
    let stale = earlier.iter().filter(|n| !names.contains(&n.as_str()));
    let mut steps: Vec<(PathBuf, PathBuf)> = Vec::new();
    for name in names.iter().copied().chain(stale.map(String::as_str)) {
        let target = dir.join(name);
        if fs::symlink_metadata(&target).is_ok() {
            steps.push((target, replaced.join(name)));
        }
    }
    for name in names {
        steps.push((staging.join(name), dir.join(name)));
    }
    for (from, to) in steps {
        if let Err(source) = fs::rename(&from, &to) {
            for (f, t) in done.iter().rev() {
                let _ = fs::rename(t, f);
            }
            return Err(GenError::Io {
                action: "move into place",
                path: to,
                source,
            });
        }
        done.push((from, to));
    }
    Ok(())
}

/// What `dir` holds that concerns us: the output names of the earlier run of the same
/// design (or, with `force`, of another design) that may be replaced; an error if the
/// folder holds another design, or a file in the way of one of `names`.
fn check_folder(
    dir: &Path,
    manifest: &Manifest,
    names: &[&str],
    force: bool,
) -> Result<Vec<String>, GenError> {
    let folder_error = |reason: String| GenError::Folder {
        dir: dir.to_path_buf(),
        reason,
    };
    match fs::metadata(dir) {
        Err(_) => return Ok(Vec::new()),
        Ok(m) if !m.is_dir() => {
            return Err(folder_error(
                "it exists and is not a folder; choose another output folder".into(),
            ))
        }
        Ok(_) => {}
    }
    let manifest_path = dir.join(MANIFEST);
    let earlier = if manifest_path.exists() {
        let old = Earlier::read(&manifest_path).map_err(|reason| {
            folder_error(format!(
                "its {MANIFEST} cannot be read ({reason}), so the files in it cannot be told \
                 apart; remove it or choose another output folder"
            ))
        })?;
        if !old.same_design(manifest) && !force {
            return Err(GenError::OtherDesign {
                dir: dir.to_path_buf(),
                design: old.describe(manifest),
            });
        }
        old.outputs
    } else {
        Vec::new()
    };
    for name in names {
        let path = dir.join(name);
        if fs::symlink_metadata(&path).is_ok() && !earlier.iter().any(|e| e == name) {
            return Err(GenError::InTheWay {
                path,
                reason: if manifest_path.exists() {
                    format!("the folder's {MANIFEST} does not list it")
                } else {
                    format!("the folder has no {MANIFEST}, so it is not ours to replace")
                },
            });
        }
    }
    Ok(earlier)
}

/// What an earlier run's `manifest.json` says.
struct Earlier {
    top: String,
    parameters: BTreeMap<String, String>,
    /// The files it wrote (plain names in the folder).
    outputs: Vec<String>,
}

impl Earlier {
    /// Reads `path`; the error is the reason, for the caller to put in context.
    fn read(path: &Path) -> Result<Self, String> {
        let text = fs::read_to_string(path).map_err(|e| e.to_string())?;
        let json: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let top = json["top"]
            .as_str()
            .ok_or("no `top` module name")?
            .to_string();
        let parameters = json["parameters"]
            .as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let strings = |v: &Value| -> Option<Vec<String>> {
            v.as_array()?
                .iter()
                .map(|s| s.as_str().map(str::to_string))
                .collect()
        };
        // Manifests written before `outputs` existed list only the Verilog files.
        let outputs = match strings(&json["outputs"]) {
            Some(o) => o,
            None => {
                let mut o = strings(&json["files"]).ok_or("no `outputs` or `files` list")?;
                o.push(MANIFEST.to_string());
                o
            }
        };
        if let Some((name, reason)) = outputs
            .iter()
            .find_map(|n| bad_file_name(n).map(|r| (n, r)))
        {
            return Err(format!("it lists `{name}`, which {reason}"));
        }
        Ok(Earlier {
            top,
            parameters,
            outputs,
        })
    }

    fn same_design(&self, new: &Manifest) -> bool {
        self.top == new.top && self.parameters == new.parameters
    }

    /// The earlier design for a message: top, block and board, and, if those are the
    /// same as `new`'s, how its other parameters differ.
    fn describe(&self, new: &Manifest) -> String {
        let mut s = format!("top `{}`", self.top);
        for key in ["block", "board"] {
            if let Some(v) = self.parameters.get(key) {
                s.push_str(&format!(", {key} `{v}`"));
            }
        }
        let differ: Vec<String> = self
            .parameters
            .iter()
            .filter(|(k, v)| {
                !matches!(k.as_str(), "block" | "board") && new.parameters.get(*k) != Some(*v)
            })
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let key_same = |k: &str| self.parameters.get(k) == new.parameters.get(k);
        if !differ.is_empty() && key_same("block") && key_same("board") {
            s.push_str(&format!(", with {}", differ.join(" ")));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verilog::emit;
    use hdl::{Module, ModuleBuilder, ResetPolarity};

    fn top(name: &str) -> Module {
        let mut m = ModuleBuilder::new(name);
        let d = m.domain("clk", "clk", Some("rst"), ResetPolarity::ActiveHigh);
        let x = m.input("x", 4);
        let r = m.register(d, "r", x);
        m.output("y", r);
        m.finish().unwrap()
    }

    fn write(dir: &Path, name: &str, options: FolderOptions<'_>) -> Result<Vec<PathBuf>, GenError> {
        let m = top(name);
        let design = emit(&m).unwrap();
        let manifest = Manifest::new(&m, &design);
        let extra = [("notes.md".to_string(), "x".to_string())];
        write_folder(dir, &design, &manifest, &extra, options)
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_raised_cancel_flag_writes_nothing_and_leaves_no_temporary_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let flag = AtomicBool::new(true);
        let options = FolderOptions {
            force: false,
            cancel: Some(&flag),
        };
        let err = write(&tmp.path().join("out"), "a", options).unwrap_err();
        assert!(matches!(err, GenError::Interrupted), "{err}");
        assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
    }

    #[test]
    fn force_moves_the_other_designs_files_out_and_keeps_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        write(&dir, "a", FolderOptions::default()).unwrap();
        fs::write(dir.join("keep.txt"), "k").unwrap();
        let err = write(&dir, "b", FolderOptions::default()).unwrap_err();
        assert!(
            matches!(&err, GenError::OtherDesign { design, .. } if design.contains("`a`")),
            "{err}"
        );
        let force = FolderOptions {
            force: true,
            cancel: None,
        };
        let written = write(&dir, "b", force).unwrap();
        assert_eq!(written.len(), 3);
        assert_eq!(
            entries(&dir),
            ["b.v", "keep.txt", "manifest.json", "notes.md"]
        );
        assert_eq!(entries(tmp.path()), ["out"]);
    }

    #[test]
    fn a_manifest_listing_a_path_outside_the_folder_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        fs::create_dir(&dir).unwrap();
        fs::write(
            dir.join(MANIFEST),
            r#"{"top": "a", "parameters": {}, "outputs": ["../x"]}"#,
        )
        .unwrap();
        let force = FolderOptions {
            force: true,
            cancel: None,
        };
        let err = write(&dir, "b", force).unwrap_err();
        assert!(err.to_string().contains("../x"), "{err}");
    }
}
