#!/usr/bin/env python3
"""Train, quantize and export the Lightning golden-model workload.

The workload is a small bias-free ReLU MLP (64-H-10) on scikit-learn's bundled
8x8 handwritten digits (`sklearn.datasets.load_digits`, shipped inside the
scikit-learn package: nothing is downloaded). The trained float model is
quantized the way the Lightning datapath computes (see
`testbench/src/lightning/arith.rs`, the contract this script mirrors):

* activations are 8-bit (0..255); input pixels 0..16 are scaled to
  `(x * 255 + 8) // 16` (rounded half up, so 16 -> 255);
* a weight is an 8-bit magnitude (0..255) plus a sign bit, stored as a signed
  integer -255..255 (zero is positive); each layer's float weights are divided
  by `max|W| / 255` and rounded to nearest;
* the photonic product of one sample is `(a * |w|) >> 8`, negated when the
  weight is negative; the 16 lanes of a cycle are summed, and the lane sums of
  the `ceil(N / 16)` cycles (inputs zero-padded to a multiple of 16) are added
  one cycle at a time into a signed `ACC_WIDTH`-bit accumulator that saturates;
* hidden layers: ReLU, then `min(acc >> k, 255)` with a per-layer shift `k`,
  the smallest shift for which at most `SATURATION_BUDGET` of the training
  set's hidden activations clamp at 255;
* the last layer's accumulators are the logits; the prediction is the first
  index of the largest logit.

The bias-free network keeps the argmax of the float model under these
positive per-layer scalings, so no bias path is needed in the datapath.

Outputs (in `--out`, default `testbench/data/lightning/`): `weights.json`,
`test_images.bin`, `test_labels.bin`, `reference.json` (the integer model's
logits and predictions on the test subset, which the Rust golden model must
reproduce exactly) and `model_card.md`. Runs are deterministic (fixed seeds,
stable split); the float training goes through numpy's BLAS, so a different
BLAS build may round differently and give other weights, but the shipped files
are always self-consistent: the reference is computed from the exported
integers with integer arithmetic only.

Usage: `python3 scripts/train_lightning_mlp.py [--hidden 32] [--out DIR]`
(needs `pip install numpy scikit-learn`).
"""

from __future__ import annotations

import argparse
import json
import struct
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SEED = 20230910
TEST_COUNT = 300
SAMPLES_PER_CYCLE = 16
ACC_WIDTH = 16
MAX_SHIFT = 31
SATURATION_BUDGET = 0.002
TESTBED_SIGMA = 1.657
NOISE_SEEDS = 5

IMAGES_MAGIC = b"LTNGIMG1"
LABELS_MAGIC = b"LTNGLBL1"
FORMAT = "wirespeed-lightning-mlp-v1"


def scale_pixels(x: np.ndarray) -> np.ndarray:
    """Maps digits pixels 0..16 to 8-bit activations 0..255 (round half up)."""
    return (x.astype(np.int64) * 255 + 8) // 16


# ----------------------------------------------------------------- float model


def train_float(x: np.ndarray, y: np.ndarray, hidden: int, epochs: int) -> list[np.ndarray]:
    """Trains a bias-free 64-hidden-10 ReLU MLP with Adam; returns [W1, W2]."""
    rng = np.random.default_rng(SEED)
    sizes = [x.shape[1], hidden, 10]
    weights = [
        rng.normal(0.0, np.sqrt(2.0 / fan_in), size=(fan_out, fan_in))
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:])
    ]
    m = [np.zeros_like(w) for w in weights]
    v = [np.zeros_like(w) for w in weights]
    lr, beta1, beta2, eps, decay, batch = 3e-3, 0.9, 0.999, 1e-8, 1e-4, 32
    onehot = np.eye(10)[y]
    step = 0
    for _ in range(epochs):
        order = rng.permutation(len(x))
        for start in range(0, len(x), batch):
            idx = order[start : start + batch]
            xb, tb = x[idx], onehot[idx]
            h_pre = xb @ weights[0].T
            h = np.maximum(h_pre, 0.0)
            logits = h @ weights[1].T
            logits -= logits.max(axis=1, keepdims=True)
            prob = np.exp(logits)
            prob /= prob.sum(axis=1, keepdims=True)
            d_logits = (prob - tb) / len(idx)
            grads = [None, d_logits.T @ h]
            d_h = (d_logits @ weights[1]) * (h_pre > 0)
            grads[0] = d_h.T @ xb
            step += 1
            for i, w in enumerate(weights):
                g = grads[i] + decay * w
                m[i] = beta1 * m[i] + (1 - beta1) * g
                v[i] = beta2 * v[i] + (1 - beta2) * g * g
                m_hat = m[i] / (1 - beta1**step)
                v_hat = v[i] / (1 - beta2**step)
                w -= lr * m_hat / (np.sqrt(v_hat) + eps)
    return weights


def float_predict(weights: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    """Argmax of the float model."""
    h = x
    for i, w in enumerate(weights):
        h = h @ w.T
        if i + 1 < len(weights):
            h = np.maximum(h, 0.0)
    return h.argmax(axis=1)


# ------------------------------------------------------------- integer model


def quantize_weights(w: np.ndarray) -> np.ndarray:
    """Signed 8-bit magnitude + sign: round(W / (max|W| / 255)), in -255..255."""
    scale = np.abs(w).max() / 255.0
    return np.clip(np.rint(w / scale), -255, 255).astype(np.int64)


def layer_accumulators(
    acts: np.ndarray, wq: np.ndarray, acc_width: int = ACC_WIDTH, sigma: float = 0.0, rng=None
) -> np.ndarray:
    """Accumulators of one layer, exactly as the datapath computes them.

    `acts` is (images, inputs) in 0..255, `wq` is (outputs, inputs) in
    -255..255. With `sigma > 0`, Gaussian noise is added to every product
    (padding lanes included), rounded and clamped to 0..255, as in the Rust
    noise model (a different random stream, so only statistics compare).
    """
    n, n_in = acts.shape
    n_out = wq.shape[0]
    cycles = -(-n_in // SAMPLES_PER_CYCLE)
    pad = cycles * SAMPLES_PER_CYCLE - n_in
    a = np.pad(acts, ((0, 0), (0, pad)))
    w = np.pad(wq, ((0, 0), (0, pad)))
    prod = (a[:, None, :] * np.abs(w)[None, :, :]) >> 8
    if sigma > 0.0:
        prod = np.clip(np.rint(prod + rng.normal(0.0, sigma, size=prod.shape)), 0, 255)
        prod = prod.astype(np.int64)
    term = np.where(w[None, :, :] < 0, -prod, prod)
    lanes = term.reshape(n, n_out, cycles, SAMPLES_PER_CYCLE).sum(axis=3)
    lo, hi = -(1 << (acc_width - 1)), (1 << (acc_width - 1)) - 1
    acc = np.zeros((n, n_out), dtype=np.int64)
    for c in range(cycles):
        acc = np.clip(acc + lanes[:, :, c], lo, hi)
    return acc


def normalize(acc: np.ndarray, shift: int) -> np.ndarray:
    """ReLU, arithmetic right shift by `shift`, clamp to 0..255."""
    return np.clip(np.maximum(acc, 0) >> shift, 0, 255)


def choose_shift(acc: np.ndarray) -> int:
    """Smallest shift whose clamped fraction is within SATURATION_BUDGET."""
    positive = np.maximum(acc, 0)
    for shift in range(MAX_SHIFT + 1):
        if np.mean((positive >> shift) > 255) <= SATURATION_BUDGET:
            return shift
    return MAX_SHIFT


def int_forward(layers, images, sigma: float = 0.0, rng=None):
    """Integer inference: (logits, hidden activations) for (images, 64) inputs."""
    acts = images
    hidden = []
    for i, (wq, shift) in enumerate(layers):
        acc = layer_accumulators(acts, wq, sigma=sigma, rng=rng)
        if i + 1 == len(layers):
            return acc, hidden
        acts = normalize(acc, shift)
        hidden.append(acts)
    raise ValueError("empty network")


# ---------------------------------------------------------------------- output


def write_weights(path: Path, layers) -> None:
    """weights.json: one row (one output neuron) per line."""
    lines = ["{", f'  "format": "{FORMAT}",', f'  "acc_width": {ACC_WIDTH},']
    lines.append(f'  "input_scaling": "(pixel * 255 + 8) // 16, pixel 0..16",')
    lines.append('  "layers": [')
    for li, (wq, shift) in enumerate(layers):
        lines.append("    {")
        lines.append(f'      "inputs": {wq.shape[1]},')
        lines.append(f'      "outputs": {wq.shape[0]},')
        lines.append(f'      "shift": {shift},')
        lines.append('      "weights": [')
        rows = [
            "        [" + ",".join(str(int(v)) for v in row) + "]" for row in wq
        ]
        lines.append(",\n".join(rows))
        lines.append("      ]")
        lines.append("    }" + ("," if li + 1 < len(layers) else ""))
    lines.append("  ]")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n")


def write_bin(path: Path, magic: bytes, rows: np.ndarray, width: int) -> None:
    """Header (8-byte magic, u32 LE count, u32 LE width) then count*width bytes."""
    data = rows.astype(np.uint8).reshape(-1).tobytes()
    path.write_bytes(magic + struct.pack("<II", rows.shape[0], width) + data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=32, help="hidden layer width")
    parser.add_argument("--epochs", type=int, default=150)
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent.parent / "testbench" / "data" / "lightning",
    )
    args = parser.parse_args()

    digits = load_digits()
    pixels, labels = digits.data, digits.target.astype(np.int64)
    train_px, test_px, train_y, test_y = train_test_split(
        pixels, labels, test_size=TEST_COUNT, stratify=labels, random_state=SEED
    )
    train_q, test_q = scale_pixels(train_px), scale_pixels(test_px)

    weights = train_float(train_q / 255.0, train_y, args.hidden, args.epochs)
    float_train = np.mean(float_predict(weights, train_q / 255.0) == train_y)
    float_test = np.mean(float_predict(weights, test_q / 255.0) == test_y)

    # Quantize, choosing each hidden layer's shift on the training set.
    layers = []
    acts = train_q
    saturation = []
    for i, w in enumerate(weights):
        wq = quantize_weights(w)
        acc = layer_accumulators(acts, wq)
        if i + 1 < len(weights):
            shift = choose_shift(acc)
            saturation.append(float(np.mean((np.maximum(acc, 0) >> shift) > 255)))
            acts = normalize(acc, shift)
        else:
            shift = 0  # unused: the last layer emits its accumulators as logits
        layers.append((wq, shift))

    train_logits, _ = int_forward(layers, train_q)
    test_logits, _ = int_forward(layers, test_q)
    quant_train = np.mean(train_logits.argmax(axis=1) == train_y)
    test_pred = test_logits.argmax(axis=1)
    quant_test = np.mean(test_pred == test_y)
    acc_bound = (1 << (ACC_WIDTH - 1)) - 1
    acc_saturated = int(np.sum(np.abs(test_logits) >= acc_bound))

    noisy = []
    for s in range(NOISE_SEEDS):
        rng = np.random.default_rng(SEED + 1 + s)
        logits, _ = int_forward(layers, test_q, sigma=TESTBED_SIGMA, rng=rng)
        noisy.append(np.mean(logits.argmax(axis=1) == test_y))

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    write_weights(out / "weights.json", layers)
    write_bin(out / "test_images.bin", IMAGES_MAGIC, test_q, test_q.shape[1])
    write_bin(out / "test_labels.bin", LABELS_MAGIC, test_y[:, None], 10)
    reference = {
        "format": FORMAT,
        "quantized_accuracy_correct": int(np.sum(test_pred == test_y)),
        "predictions": [int(p) for p in test_pred],
        "logits": [[int(v) for v in row] for row in test_logits],
    }
    (out / "reference.json").write_text(
        "{\n"
        f'  "format": "{FORMAT}",\n'
        f'  "quantized_accuracy_correct": {reference["quantized_accuracy_correct"]},\n'
        f'  "predictions": {json.dumps(reference["predictions"], separators=(",", ":"))},\n'
        '  "logits": [\n'
        + ",\n".join("    " + json.dumps(r, separators=(",", ":")) for r in reference["logits"])
        + "\n  ]\n}\n"
    )

    shape = "-".join(str(n) for n in [layers[0][0].shape[1]] + [wq.shape[0] for wq, _ in layers])
    files = ["weights.json", "test_images.bin", "test_labels.bin", "reference.json"]
    sizes = {f: (out / f).stat().st_size for f in files}
    card = f"""# Lightning golden workload: digits MLP {shape}

Generated by `scripts/train_lightning_mlp.py` (seed {SEED}); do not edit by hand.

- Data: scikit-learn's bundled 8x8 handwritten digits (1797 images), stratified
  split: {len(train_y)} training images, {len(test_y)} test images (shipped here).
- Network: {shape}, no biases, ReLU on the hidden layer, trained in float
  (Adam, {args.epochs} epochs, weight decay 1e-4) on inputs `q / 255`.
- Quantization (the datapath's arithmetic, `testbench/src/lightning/arith.rs`):
  inputs `q = (pixel * 255 + 8) // 16`; weights `round(W / (max|W| / 255))` as
  8-bit magnitude + sign; product `(a * |w|) >> 8`; {ACC_WIDTH}-bit saturating
  accumulator; hidden shifts {[s for _, s in layers[:-1]]} (smallest shift with
  <= {SATURATION_BUDGET:.1%} of training activations clamped at 255; measured
  {", ".join(f"{s:.2%}" for s in saturation)}); logits = last accumulators.

| model | training set | test set ({len(test_y)}) |
|---|---|---|
| float | {float_train:.2%} | {float_test:.2%} |
| quantized integer (exact datapath) | {quant_train:.2%} | {quant_test:.2%} ({int(np.sum(test_pred == test_y))}/{len(test_y)}) |
| quantized + photonic noise σ = {TESTBED_SIGMA} (numpy, mean of {NOISE_SEEDS} seeds) | | {np.mean(noisy):.2%} (min {np.min(noisy):.2%}, max {np.max(noisy):.2%}) |

Test logits at the {ACC_WIDTH}-bit accumulator bound: {acc_saturated}.

The Rust golden model (`testbench::lightning::golden`) reproduces every test
logit in `reference.json` exactly; its own noisy accuracy (ChaCha8 stream, a
different random stream from numpy's) is printed by
`cargo test -p testbench --test lightning_golden -- --nocapture`.

## Files

| file | bytes | layout |
|---|---|---|
| `weights.json` | {sizes["weights.json"]} | `format`, `acc_width`, `layers[]`: `inputs`, `outputs`, `shift` (unused on the last layer), `weights[outputs][inputs]` in -255..255 |
| `test_images.bin` | {sizes["test_images.bin"]} | magic `LTNGIMG1`, u32 LE count, u32 LE features (64), then count x features bytes 0..255 |
| `test_labels.bin` | {sizes["test_labels.bin"]} | magic `LTNGLBL1`, u32 LE count, u32 LE classes (10), then count bytes 0..9 |
| `reference.json` | {sizes["reference.json"]} | the integer model's `predictions[count]` and `logits[count][10]` (Python) |
"""
    (out / "model_card.md").write_text(card)
    print(card)


if __name__ == "__main__":
    main()
