//! The weights file of a Lightning network (`weights.json`, written by
//! `scripts/train_lightning_mlp.py`): the generator's input, read with errors that
//! name the file, the place in it and the reason; and the datapath configuration
//! it makes ([`NetworkWeights::datapath_config`]).
//!
//! Layout: `{"format": "wirespeed-lightning-mlp-v1", "acc_width": 16,
//! "layers": [{"inputs": N, "outputs": M, "shift": k, "weights": [[w; N]; M]}]}`
//! with weights in −255..=255, shifts in 0..=31 (the last layer's is unused), an
//! accumulator width in 13..=48 and layer sizes that chain (each layer's `inputs`
//! = the previous layer's `outputs`).

use std::path::{Path, PathBuf};

use serde_json::Value;
use thiserror::Error;

use super::config::{Arith, DatapathConfig, WeightSource, SHIFT_MAX, WEIGHT_MAX};
use super::decode::{ACC_WIDTH_MAX, ACC_WIDTH_MIN};

/// The `format` string of the workload's JSON files.
pub const FORMAT: &str = "wirespeed-lightning-mlp-v1";

/// A weights file that cannot be used.
#[derive(Debug, Error)]
pub enum WeightsFileError {
    /// The file cannot be read.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The file is not valid JSON.
    #[error("{}: not valid JSON: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's reason.
        source: serde_json::Error,
    },
    /// The content does not have the documented layout, sizes or ranges.
    #[error("{}: {reason}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        reason: String,
    },
}

/// One fully connected layer as the file gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerWeights {
    /// Inputs of the layer.
    pub inputs: usize,
    /// Output neurons.
    pub outputs: usize,
    /// Normalization shift after ReLU (unused on the last layer).
    pub shift: u32,
    /// `weights[output][input]`, each in −255..=255.
    pub weights: Vec<Vec<i32>>,
}

/// A network read from a weights file, checked: at least one layer, sizes that
/// chain, weights and shifts in range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkWeights {
    /// The layers, input side first.
    pub layers: Vec<LayerWeights>,
    /// Accumulator width (bits) the file's reference results were computed for.
    pub acc_width: u32,
}

impl NetworkWeights {
    /// The datapath generator's configuration for this network with an
    /// `acc_width`-bit accumulator on `cores` photonic cores, weights in on-chip
    /// memory. [`DatapathConfig::validate`] checks `acc_width` and `cores`.
    pub fn datapath_config(&self, acc_width: u32, cores: u32) -> DatapathConfig {
        let mut layers = vec![self.layers.first().map_or(0, |l| l.inputs) as u32];
        layers.extend(self.layers.iter().map(|l| l.outputs as u32));
        DatapathConfig {
            layers,
            acc_width,
            shifts: self.layers.iter().map(|l| l.shift).collect(),
            weights: self
                .layers
                .iter()
                .map(|l| l.weights.iter().flatten().copied().collect())
                .collect(),
            cores,
            weight_source: WeightSource::Memory,
            arith: Arith::Wirespeed,
        }
    }
}

fn malformed(path: &Path, reason: impl Into<String>) -> WeightsFileError {
    WeightsFileError::Malformed {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// Reads a JSON file.
pub fn read_json(path: &Path) -> Result<Value, WeightsFileError> {
    let bytes = std::fs::read(path).map_err(|source| WeightsFileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|source| WeightsFileError::Json {
        path: path.to_path_buf(),
        source,
    })
}

/// The field `key` of `obj`; `ctx` says where `obj` is in the file.
pub fn field<'a>(
    path: &Path,
    obj: &'a Value,
    key: &str,
    ctx: &str,
) -> Result<&'a Value, WeightsFileError> {
    obj.get(key)
        .ok_or_else(|| malformed(path, format!("{ctx}: missing field `{key}`")))
}

/// `v` as a non-negative integer.
pub fn as_u64(path: &Path, v: &Value, ctx: &str) -> Result<u64, WeightsFileError> {
    v.as_u64().ok_or_else(|| {
        malformed(
            path,
            format!("{ctx}: expected a non-negative integer, found {v}"),
        )
    })
}

/// `v` as a non-negative integer that fits `usize`.
pub fn as_usize(path: &Path, v: &Value, ctx: &str) -> Result<usize, WeightsFileError> {
    let n = as_u64(path, v, ctx)?;
    usize::try_from(n).map_err(|_| malformed(path, format!("{ctx}: {n} is too large")))
}

/// `v` as an array.
pub fn as_array<'a>(
    path: &Path,
    v: &'a Value,
    ctx: &str,
) -> Result<&'a Vec<Value>, WeightsFileError> {
    v.as_array()
        .ok_or_else(|| malformed(path, format!("{ctx}: expected an array")))
}

/// Checks the top-level `format` field.
pub fn check_format(path: &Path, root: &Value) -> Result<(), WeightsFileError> {
    let format = field(path, root, "format", "top level")?;
    if format.as_str() != Some(FORMAT) {
        return Err(malformed(
            path,
            format!("format is {format}, expected \"{FORMAT}\""),
        ));
    }
    Ok(())
}

/// Reads and checks a weights file.
pub fn load_weights(path: &Path) -> Result<NetworkWeights, WeightsFileError> {
    let root = read_json(path)?;
    check_format(path, &root)?;
    let bits = as_u64(
        path,
        field(path, &root, "acc_width", "top level")?,
        "acc_width",
    )?;
    let acc_width = u32::try_from(bits)
        .ok()
        .filter(|b| (ACC_WIDTH_MIN..=ACC_WIDTH_MAX).contains(b))
        .ok_or_else(|| {
            malformed(
                path,
                format!(
                    "acc_width {bits} is not a valid accumulator width \
                     ({ACC_WIDTH_MIN}..={ACC_WIDTH_MAX})"
                ),
            )
        })?;
    let list = as_array(path, field(path, &root, "layers", "top level")?, "layers")?;
    if list.is_empty() {
        return Err(malformed(path, "layers: the network has no layers"));
    }
    let mut layers: Vec<LayerWeights> = Vec::with_capacity(list.len());
    for (li, layer) in list.iter().enumerate() {
        let layer = read_layer(path, layer, &format!("layers[{li}]"))?;
        if let Some(prev) = layers.last() {
            if layer.inputs != prev.outputs {
                return Err(malformed(
                    path,
                    format!(
                        "layers[{li}]: layer {li} has {} inputs, but layer {} has {} outputs",
                        layer.inputs,
                        li - 1,
                        prev.outputs
                    ),
                ));
            }
        }
        layers.push(layer);
    }
    Ok(NetworkWeights { layers, acc_width })
}

/// Reads one entry of `layers` (`ctx` = `layers[i]`).
fn read_layer(path: &Path, layer: &Value, ctx: &str) -> Result<LayerWeights, WeightsFileError> {
    let inputs = as_usize(path, field(path, layer, "inputs", ctx)?, ctx)?;
    let outputs = as_usize(path, field(path, layer, "outputs", ctx)?, ctx)?;
    if inputs == 0 || outputs == 0 {
        return Err(malformed(
            path,
            format!(
                "{ctx}: {inputs} inputs and {outputs} outputs: a layer needs at least one of each"
            ),
        ));
    }
    let shift = as_u64(path, field(path, layer, "shift", ctx)?, ctx)?;
    let shift = u32::try_from(shift)
        .ok()
        .filter(|&s| s <= SHIFT_MAX)
        .ok_or_else(|| {
            malformed(
                path,
                format!(
                    "{ctx}: normalization shift {shift} is out of range: must be 0..={SHIFT_MAX}"
                ),
            )
        })?;
    let rows = as_array(path, field(path, layer, "weights", ctx)?, ctx)?;
    if rows.len() != outputs {
        return Err(malformed(
            path,
            format!(
                "{ctx}: {} weight rows, but outputs is {outputs}",
                rows.len()
            ),
        ));
    }
    let mut weights = Vec::with_capacity(outputs);
    for (r, row) in rows.iter().enumerate() {
        let rctx = format!("{ctx}.weights[{r}]");
        let row = as_array(path, row, &rctx)?;
        if row.len() != inputs {
            return Err(malformed(
                path,
                format!("{rctx}: {} weights, but inputs is {inputs}", row.len()),
            ));
        }
        let row = row
            .iter()
            .enumerate()
            .map(|(c, w)| {
                let w = w
                    .as_i64()
                    .and_then(|w| i32::try_from(w).ok())
                    .ok_or_else(|| {
                        malformed(path, format!("{rctx}[{c}]: expected an integer, found {w}"))
                    })?;
                if w.abs() > WEIGHT_MAX {
                    return Err(malformed(
                        path,
                        format!(
                            "{rctx}[{c}]: weight {w} is out of range: must be \
                             -{WEIGHT_MAX}..={WEIGHT_MAX} (8-bit magnitude and a sign bit)"
                        ),
                    ));
                }
                Ok(w)
            })
            .collect::<Result<Vec<i32>, _>>()?;
        weights.push(row);
    }
    Ok(LayerWeights {
        inputs,
        outputs,
        shift,
        weights,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("weights.json");
        std::fs::write(&path, text).expect("write weights.json");
        (dir, path)
    }

    fn file(layers: &str) -> String {
        format!(r#"{{"format": "{FORMAT}", "acc_width": 20, "layers": [{layers}]}}"#)
    }

    #[test]
    fn a_network_becomes_the_datapath_config() {
        let (_dir, path) = write(&file(
            r#"{"inputs": 2, "outputs": 2, "shift": 3, "weights": [[1, -2], [3, 255]]},
               {"inputs": 2, "outputs": 1, "shift": 0, "weights": [[-255, 0]]}"#,
        ));
        let net = load_weights(&path).expect("valid file");
        assert_eq!(net.acc_width, 20);
        let cfg = net.datapath_config(net.acc_width, 1);
        assert_eq!(cfg.layers, vec![2, 2, 1]);
        assert_eq!(cfg.shifts, vec![3, 0]);
        assert_eq!(cfg.weights, vec![vec![1, -2, 3, 255], vec![-255, 0]]);
        assert_eq!(cfg.weight_source, WeightSource::Memory);
        cfg.validate().expect("a valid datapath");
    }

    #[test]
    fn bad_files_name_the_place_and_the_reason() {
        let cases = [
            (
                file(r#"{"inputs": 2, "outputs": 1, "shift": 0, "weights": [[1, 256]]}"#),
                "layers[0].weights[0][1]: weight 256 is out of range",
            ),
            (
                file(r#"{"inputs": 2, "outputs": 1, "shift": 32, "weights": [[1, 2]]}"#),
                "layers[0]: normalization shift 32 is out of range",
            ),
            (
                file(
                    r#"{"inputs": 1, "outputs": 2, "shift": 0, "weights": [[1], [2]]},
                       {"inputs": 3, "outputs": 1, "shift": 0, "weights": [[1, 2, 3]]}"#,
                ),
                "layer 1 has 3 inputs, but layer 0 has 2 outputs",
            ),
            (file(""), "the network has no layers"),
            (
                file(r#"{"inputs": 2, "outputs": 1, "shift": 0, "weights": [[1]]}"#),
                "layers[0].weights[0]: 1 weights, but inputs is 2",
            ),
            (
                file("").replace("\"acc_width\": 20", "\"acc_width\": 12"),
                "acc_width 12 is not a valid accumulator width",
            ),
            (file("").replace(FORMAT, "other"), "format is \"other\""),
        ];
        for (text, want) in cases {
            let (_dir, path) = write(&text);
            let e = load_weights(&path).expect_err(want).to_string();
            assert!(e.starts_with(&path.display().to_string()), "{e}");
            assert!(e.contains(want), "{want}: {e}");
        }
        let e = load_weights(Path::new("/nonexistent/weights.json")).expect_err("no file");
        assert!(
            e.to_string()
                .contains("/nonexistent/weights.json: cannot read"),
            "{e}"
        );
    }
}
