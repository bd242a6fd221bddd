//! Loading the shipped workload (`testbench/data/lightning/`, written by
//! `scripts/train_lightning_mlp.py`), with errors that name the file and the reason.
//!
//! Files:
//! - `weights.json`: `{"format": "wirespeed-lightning-mlp-v1", "acc_width": 16,
//!   "layers": [{"inputs": N, "outputs": M, "shift": k, "weights": [[w; N]; M]}]}`
//!   with weights in −255..=255 (the last layer's `shift` is unused);
//! - `test_images.bin`: magic `LTNGIMG1`, u32 LE count, u32 LE features, then
//!   `count × features` bytes (8-bit activations, image-major);
//! - `test_labels.bin`: magic `LTNGLBL1`, u32 LE count, u32 LE classes, then
//!   `count` bytes, each `< classes`;
//! - `reference.json`: the Python integer model's `predictions[count]` and
//!   `logits[count][classes]`, and `quantized_accuracy_correct`.

use std::path::{Path, PathBuf};

use hdl::lightning::weights::{
    as_array, as_usize, check_format, field, load_weights, read_json, WeightsFileError,
};
use thiserror::Error;

use super::arith::AccWidth;
use super::golden::{GoldenError, Layer, Network};

/// The `format` string of the JSON files (defined with the weights file's reader,
/// [`hdl::lightning::weights`]).
pub use hdl::lightning::weights::FORMAT;
/// Magic of `test_images.bin`.
pub const IMAGES_MAGIC: &[u8; 8] = b"LTNGIMG1";
/// Magic of `test_labels.bin`.
pub const LABELS_MAGIC: &[u8; 8] = b"LTNGLBL1";

/// A workload file that cannot be used.
#[derive(Debug, Error)]
pub enum ModelFileError {
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
    /// The file's content does not have the documented layout or sizes.
    #[error("{}: {reason}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        reason: String,
    },
    /// The weights do not form a valid network.
    #[error("{}: {source}", path.display())]
    Network {
        /// The file.
        path: PathBuf,
        /// Why the network is invalid.
        source: GoldenError,
    },
}

impl From<WeightsFileError> for ModelFileError {
    fn from(e: WeightsFileError) -> Self {
        match e {
            WeightsFileError::Io { path, source } => ModelFileError::Io { path, source },
            WeightsFileError::Json { path, source } => ModelFileError::Json { path, source },
            WeightsFileError::Malformed { path, reason } => {
                ModelFileError::Malformed { path, reason }
            }
        }
    }
}

fn malformed(path: &Path, reason: impl Into<String>) -> ModelFileError {
    ModelFileError::Malformed {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, ModelFileError> {
    std::fs::read(path).map_err(|source| ModelFileError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The directory of the shipped workload: `testbench/data/lightning`.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/lightning")
}

/// A network read from `weights.json`, with the accumulator width its reference
/// results were computed for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelFile {
    /// The quantized network.
    pub network: Network,
    /// Accumulator width of the reference computation.
    pub acc_width: AccWidth,
}

/// A labelled test set read from `test_images.bin` and `test_labels.bin`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestSet {
    /// Images as 8-bit activations, one vector per image.
    pub images: Vec<Vec<u8>>,
    /// One class per image.
    pub labels: Vec<u8>,
}

/// The Python integer model's results (`reference.json`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// Predicted class per test image.
    pub predictions: Vec<usize>,
    /// Logits per test image.
    pub logits: Vec<Vec<i64>>,
    /// Number of correct predictions the script reported.
    pub correct: usize,
}

/// The whole shipped workload, cross-checked for consistent sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// The network.
    pub model: ModelFile,
    /// The test subset.
    pub test: TestSet,
    /// The Python reference results on the test subset.
    pub reference: Reference,
}

/// Reads `weights.json` ([`load_weights`]) as a golden-model network.
pub fn load_model(path: &Path) -> Result<ModelFile, ModelFileError> {
    let weights = load_weights(path)?;
    let acc_width = AccWidth::new(weights.acc_width).map_err(|e| malformed(path, e.to_string()))?;
    let network = |source| ModelFileError::Network {
        path: path.to_path_buf(),
        source,
    };
    let layers = weights
        .layers
        .iter()
        .map(|l| Layer::from_signed(&l.weights, l.shift))
        .collect::<Result<Vec<Layer>, GoldenError>>()
        .map_err(network)?;
    let network = Network::new(layers).map_err(network)?;
    Ok(ModelFile { network, acc_width })
}

/// Reads a binary file with the 16-byte header: returns (count, width, payload).
fn read_bin(path: &Path, magic: &[u8; 8]) -> Result<(usize, usize, Vec<u8>), ModelFileError> {
    let bytes = read(path)?;
    if bytes.len() < 16 {
        return Err(malformed(
            path,
            format!("{} bytes, shorter than the 16-byte header", bytes.len()),
        ));
    }
    if &bytes[..8] != magic {
        return Err(malformed(
            path,
            format!(
                "bad magic {:?}, expected {:?}",
                String::from_utf8_lossy(&bytes[..8]),
                String::from_utf8_lossy(magic)
            ),
        ));
    }
    let word =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let (count, width) = (word(8) as usize, word(12) as usize);
    Ok((count, width, bytes[16..].to_vec()))
}

/// Reads `test_images.bin` and `test_labels.bin` and checks that they agree.
pub fn load_test_set(images_path: &Path, labels_path: &Path) -> Result<TestSet, ModelFileError> {
    let (count, features, data) = read_bin(images_path, IMAGES_MAGIC)?;
    if features == 0 || count.checked_mul(features) != Some(data.len()) {
        return Err(malformed(
            images_path,
            format!(
                "header says {count} images of {features} features, but the payload has {} bytes",
                data.len()
            ),
        ));
    }
    let images = data.chunks(features).map(<[u8]>::to_vec).collect();
    let (label_count, classes, labels) = read_bin(labels_path, LABELS_MAGIC)?;
    if label_count != labels.len() {
        return Err(malformed(
            labels_path,
            format!(
                "header says {label_count} labels, but the payload has {} bytes",
                labels.len()
            ),
        ));
    }
    if label_count != count {
        return Err(malformed(
            labels_path,
            format!(
                "{label_count} labels, but {} has {count} images",
                images_path.display()
            ),
        ));
    }
    if let Some((i, &l)) = labels
        .iter()
        .enumerate()
        .find(|(_, &l)| usize::from(l) >= classes)
    {
        return Err(malformed(
            labels_path,
            format!("label {i} is {l}, not below the {classes} classes"),
        ));
    }
    Ok(TestSet { images, labels })
}

/// Reads `reference.json`.
pub fn load_reference(path: &Path) -> Result<Reference, ModelFileError> {
    let root = read_json(path)?;
    check_format(path, &root)?;
    let correct = as_usize(
        path,
        field(path, &root, "quantized_accuracy_correct", "top level")?,
        "quantized_accuracy_correct",
    )?;
    let predictions = as_array(
        path,
        field(path, &root, "predictions", "top level")?,
        "predictions",
    )?
    .iter()
    .enumerate()
    .map(|(i, p)| as_usize(path, p, &format!("predictions[{i}]")))
    .collect::<Result<Vec<usize>, _>>()?;
    let logits = as_array(path, field(path, &root, "logits", "top level")?, "logits")?
        .iter()
        .enumerate()
        .map(|(i, row)| {
            as_array(path, row, &format!("logits[{i}]"))?
                .iter()
                .enumerate()
                .map(|(c, v)| {
                    v.as_i64().ok_or_else(|| {
                        malformed(
                            path,
                            format!("logits[{i}][{c}]: expected an integer, found {v}"),
                        )
                    })
                })
                .collect::<Result<Vec<i64>, _>>()
        })
        .collect::<Result<Vec<Vec<i64>>, _>>()?;
    if logits.len() != predictions.len() {
        return Err(malformed(
            path,
            format!(
                "{} logit rows but {} predictions",
                logits.len(),
                predictions.len()
            ),
        ));
    }
    Ok(Reference {
        predictions,
        logits,
        correct,
    })
}

/// Reads the whole workload from `dir` and checks the files against each other
/// (image size = network inputs, one reference row of `outputs` logits per image).
pub fn load_workload(dir: &Path) -> Result<Workload, ModelFileError> {
    let weights_path = dir.join("weights.json");
    let model = load_model(&weights_path)?;
    let images_path = dir.join("test_images.bin");
    let test = load_test_set(&images_path, &dir.join("test_labels.bin"))?;
    if let Some(img) = test.images.first() {
        if img.len() != model.network.inputs() {
            return Err(malformed(
                &images_path,
                format!(
                    "images have {} features, but {} takes {} inputs",
                    img.len(),
                    weights_path.display(),
                    model.network.inputs()
                ),
            ));
        }
    }
    let reference_path = dir.join("reference.json");
    let reference = load_reference(&reference_path)?;
    if reference.predictions.len() != test.images.len() {
        return Err(malformed(
            &reference_path,
            format!(
                "{} predictions, but the test set has {} images",
                reference.predictions.len(),
                test.images.len()
            ),
        ));
    }
    let classes = model.network.outputs();
    if let Some((i, row)) = reference
        .logits
        .iter()
        .enumerate()
        .find(|(_, r)| r.len() != classes)
    {
        return Err(malformed(
            &reference_path,
            format!(
                "logits[{i}] has {} values, but the network has {classes} outputs",
                row.len()
            ),
        ));
    }
    Ok(Workload {
        model,
        test,
        reference,
    })
}
