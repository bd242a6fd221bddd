//! The manifest of a generated design (`manifest.json`): top module, its ports and
//! clock domains, the generator parameters and the Verilog files; and
//! [`write_design`], which puts a design and its manifest in a directory.

use crate::verilog::Design;
use crate::GenError;
use hdl::ir::{Direction, ParameterAccepts, PortKind, ResetPolarity};
use hdl::Module;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// One port of the top module.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PortInfo {
    /// Port name.
    pub name: String,
    /// `input` or `output`.
    pub direction: Direction,
    /// Width in bits.
    pub width: u32,
    /// `data`, `clock` or `reset`.
    pub kind: PortKind,
}

/// One clock domain of the top module (for timing constraints and test benches).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DomainInfo {
    /// Domain name.
    pub name: String,
    /// Clock port.
    pub clock: String,
    /// Reset port, if the domain has one.
    pub reset: Option<String>,
    /// Reset polarity (`active_high` / `active_low`).
    pub polarity: ResetPolarity,
}

/// One Verilog parameter of the top module (see [`hdl::ir::Parameter`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ParameterInfo {
    /// Parameter name.
    pub name: String,
    /// The value the design was generated for (the declared default).
    pub value: u64,
    /// Which values an instantiation may pass: `exactly` that one, or `aligned to N
    /// bytes` (a base address).
    pub accepts: String,
}

/// What `manifest.json` says about a generated design.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Manifest {
    /// Top module name.
    pub top: String,
    /// Ports of the top module, in declaration order.
    pub ports: Vec<PortInfo>,
    /// Clock domains of the top module.
    pub domains: Vec<DomainInfo>,
    /// Generator parameters, as text (sorted by name).
    pub parameters: BTreeMap<String, String>,
    /// Verilog parameters of the top module, in declaration order (omitted if none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub verilog_parameters: Vec<ParameterInfo>,
    /// Verilog files, in dependency order (top last).
    pub files: Vec<String>,
    /// Every file written into the output folder with this manifest (Verilog,
    /// `manifest.json`, board files), in writing order; filled in by the writers, so
    /// that a later run knows exactly which files are this design's.
    pub outputs: Vec<String>,
}

impl Manifest {
    /// The manifest of `design`, generated from `top`, with no parameters yet.
    pub fn new(top: &Module, design: &Design) -> Self {
        let port_name = |net| {
            top.ports
                .iter()
                .find(|p| p.net == net)
                .map(|p| p.name.clone())
                .unwrap_or_else(|| top.describe_net(net))
        };
        Manifest {
            top: design.top.clone(),
            ports: top
                .ports
                .iter()
                .map(|p| PortInfo {
                    name: p.name.clone(),
                    direction: p.direction,
                    width: top.net(p.net).width,
                    kind: p.kind,
                })
                .collect(),
            domains: top
                .domains
                .iter()
                .map(|d| DomainInfo {
                    name: d.name.clone(),
                    clock: port_name(d.clock),
                    reset: d.reset.map(port_name),
                    polarity: d.polarity,
                })
                .collect(),
            parameters: BTreeMap::new(),
            verilog_parameters: top
                .parameters
                .iter()
                .map(|p| ParameterInfo {
                    name: p.name.clone(),
                    value: p.value,
                    accepts: match p.accepts {
                        ParameterAccepts::Exactly => "exactly".to_string(),
                        ParameterAccepts::AlignedTo { bits } => {
                            format!("aligned to {} bytes", 1u128 << bits)
                        }
                    },
                })
                .collect(),
            files: design.files.iter().map(|(n, _)| n.clone()).collect(),
            outputs: Vec::new(),
        }
    }

    /// The same manifest with generator parameter `name` set to `value`.
    pub fn with_parameter(mut self, name: &str, value: impl ToString) -> Self {
        self.parameters.insert(name.to_string(), value.to_string());
        self
    }

    /// The manifest as pretty-printed JSON (ending in a newline).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self).map(|s| s + "\n")
    }
}

/// Writes every Verilog file of `design` and `manifest.json` into `dir` (created if
/// needed) and returns the paths written, manifest last.
///
/// Each file is first written in full under a temporary name in `dir`, and only when all
/// are written are they renamed into place: an error leaves no partial files behind
/// (the temporaries are removed). Errors name the path concerned.
pub fn write_design(
    dir: &Path,
    design: &Design,
    manifest: &Manifest,
) -> Result<Vec<PathBuf>, GenError> {
    write_design_and(dir, design, manifest, &[])
}

/// [`write_design`] plus the `(file name, text)` pairs of `extra`, written beside the
/// design by the same all-or-nothing mechanism (their paths come last). Extra names
/// must be plain file names, not start with `.` (the temporaries do), and not repeat
/// another output's name.
pub(crate) fn write_design_and(
    dir: &Path,
    design: &Design,
    manifest: &Manifest,
    extra: &[(String, String)],
) -> Result<Vec<PathBuf>, GenError> {
    let outputs: Vec<(PathBuf, String)> = output_files(design, manifest, extra)?
        .into_iter()
        .map(|(name, text)| (dir.join(name), text))
        .collect();
    let refs: Vec<(PathBuf, &str)> = outputs
        .iter()
        .map(|(p, t)| (p.clone(), t.as_str()))
        .collect();
    write_all(dir, &refs)?;
    Ok(outputs.into_iter().map(|(p, _)| p).collect())
}

/// Every output file of `design` as `(file name, text)`: the Verilog files, then
/// `manifest.json` (with its `outputs` listing every name), then `extra`. Refuses a
/// manifest that does not describe `design` and extra names that are not plain file
/// names, start with `.` or repeat another output's name.
pub(crate) fn output_files(
    design: &Design,
    manifest: &Manifest,
    extra: &[(String, String)],
) -> Result<Vec<(String, String)>, GenError> {
    let names: Vec<&String> = design.files.iter().map(|(n, _)| n).collect();
    if manifest.files.iter().collect::<Vec<_>>() != names || manifest.top != design.top {
        return Err(GenError::ManifestMismatch(format!(
            "manifest lists top `{}` and files {:?}, the design has top `{}` and files {:?}",
            manifest.top, manifest.files, design.top, names
        )));
    }
    for (i, (name, _)) in extra.iter().enumerate() {
        let taken =
            names.contains(&name) || name == MANIFEST || extra[..i].iter().any(|(n, _)| n == name);
        if let Some(reason) =
            bad_file_name(name).or(taken.then_some("repeats another output's name"))
        {
            return Err(GenError::BadOutputName {
                name: name.clone(),
                reason: reason.to_string(),
            });
        }
    }
    let mut manifest = manifest.clone();
    manifest.outputs = names
        .iter()
        .map(|n| n.to_string())
        .chain(std::iter::once(MANIFEST.to_string()))
        .chain(extra.iter().map(|(n, _)| n.clone()))
        .collect();
    let json = manifest.to_json().map_err(|source| GenError::Json {
        path: PathBuf::from(MANIFEST),
        source,
    })?;
    let mut outputs: Vec<(String, String)> = design.files.clone();
    outputs.push((MANIFEST.to_string(), json));
    outputs.extend(extra.iter().cloned());
    Ok(outputs)
}

/// The manifest's file name.
pub(crate) const MANIFEST: &str = "manifest.json";

/// Why `name` cannot be an output file name beside the design, if it cannot.
pub(crate) fn bad_file_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("the name is empty")
    } else if name.contains(['/', '\\', '\0']) {
        Some("not a plain file name (contains a path separator or NUL)")
    } else if name.starts_with('.') {
        Some("starts with `.` (reserved for temporaries)")
    } else {
        None
    }
}

/// Writes every `(path, text)` of `outputs` (all in `dir`, which is created if needed):
/// each in full under a temporary name, then all renamed into place; on an error the
/// temporaries and the files already renamed into place are removed, and the error
/// names the path concerned.
fn write_all(dir: &Path, outputs: &[(PathBuf, &str)]) -> Result<(), GenError> {
    fs::create_dir_all(dir).map_err(|source| GenError::Io {
        action: "create directory",
        path: dir.to_path_buf(),
        source,
    })?;
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::with_capacity(outputs.len());
    for (path, text) in outputs {
        let tmp = temp_path(path);
        if let Err(source) = fs::write(&tmp, text) {
            let _ = fs::remove_file(&tmp);
            cleanup(&staged);
            return Err(GenError::Io {
                action: "write",
                path: tmp,
                source,
            });
        }
        staged.push((tmp, path.clone()));
    }
    for (i, (tmp, path)) in staged.iter().enumerate() {
        if let Err(source) = fs::rename(tmp, path) {
            // Take back the files already renamed into place, so that no partial
            // design remains (best effort, like `cleanup`).
            for (_, done) in &staged[..i] {
                let _ = fs::remove_file(done);
            }
            cleanup(&staged[i..]);
            return Err(GenError::Io {
                action: "rename into place",
                path: path.clone(),
                source,
            });
        }
    }
    Ok(())
}

/// `dir/.name.tmp<pid>` for `dir/name`.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp{}", std::process::id()))
}

/// Removes staged temporaries after a failure (best effort: the error being reported
/// matters more than a failure to clean up).
fn cleanup(staged: &[(PathBuf, PathBuf)]) {
    for (tmp, _) in staged {
        let _ = fs::remove_file(tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verilog::emit;
    use hdl::{ModuleBuilder, ResetPolarity};

    fn top() -> Module {
        let mut m = ModuleBuilder::new("mtop");
        let d = m.domain(
            "axis",
            "axis_aclk",
            Some("axis_resetn"),
            ResetPolarity::ActiveLow,
        );
        let x = m.input("x", 12);
        let r = m.register(d, "r", x);
        m.output("y", r);
        m.finish().unwrap()
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp"))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn writes_every_file_and_a_manifest() {
        let m = top();
        let design = emit(&m).unwrap();
        let manifest = Manifest::new(&m, &design).with_parameter("width", 12);
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out/nested");
        let written = write_design(&dir, &design, &manifest).unwrap();
        assert_eq!(written, vec![dir.join("mtop.v"), dir.join("manifest.json")]);
        assert_eq!(
            fs::read_to_string(dir.join("mtop.v")).unwrap(),
            design.files[0].1
        );
        let json: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(json["top"], "mtop");
        assert_eq!(json["files"][0], "mtop.v");
        assert_eq!(json["parameters"]["width"], "12");
        assert_eq!(json["ports"][0]["name"], "axis_aclk");
        assert_eq!(json["ports"][0]["kind"], "clock");
        assert_eq!(json["ports"][1]["kind"], "reset");
        assert_eq!(json["ports"][2]["direction"], "input");
        assert_eq!(json["ports"][2]["width"], 12);
        assert_eq!(json["ports"][3]["direction"], "output");
        assert_eq!(json["domains"][0]["reset"], "axis_resetn");
        assert_eq!(json["domains"][0]["polarity"], "active_low");
        assert!(leftovers(&dir).is_empty());
    }

    #[test]
    fn errors_name_the_path_and_leave_no_temporaries() {
        let m = top();
        let design = emit(&m).unwrap();
        let manifest = Manifest::new(&m, &design);
        let tmp = tempfile::tempdir().unwrap();

        let file = tmp.path().join("a_file");
        fs::write(&file, "x").unwrap();
        let err = write_design(&file.join("sub"), &design, &manifest).unwrap_err();
        assert!(err.to_string().contains("a_file"), "{err}");

        // A directory where manifest.json should go: the rename fails.
        let dir = tmp.path().join("out");
        fs::create_dir_all(dir.join("manifest.json")).unwrap();
        let err = write_design(&dir, &design, &manifest).unwrap_err();
        assert!(
            matches!(&err, GenError::Io { path, .. } if path.ends_with("manifest.json")),
            "{err}"
        );
        assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
    }

    #[test]
    fn a_manifest_of_another_design_is_refused() {
        let m = top();
        let design = emit(&m).unwrap();
        let mut manifest = Manifest::new(&m, &design);
        manifest.files.push("extra.v".into());
        let tmp = tempfile::tempdir().unwrap();
        let err = write_design(tmp.path(), &design, &manifest).unwrap_err();
        assert!(matches!(err, GenError::ManifestMismatch(_)), "{err}");
    }
}
