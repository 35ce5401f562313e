"""Text embeddings for the vector index: the Embedder protocol and clew's packaged models.

Two models ship inside clew, chosen by name (`load(name)`; without one, `CLEW_EMBED_MODEL`,
else `DEFAULT_MODEL`):

- `minilm-static-256` (the `vectors` extra: numpy, tokenizers), the default: a static
  embedding table distilled from all-MiniLM-L6-v2 (tools/build_static_embeddings.py builds
  it; models_data/manifest.json records its source and the sha256 of each file). A text's
  vector is the mean of its WordPiece tokens' rows, L2-normalised; the rows carry their
  token's weight already, so there is no model to run.
- `minilm-onnx-int8` (the `vectors-onnx` extra: numpy, tokenizers, onnxruntime): the whole
  all-MiniLM-L6-v2 transformer with its pooling, weights in int8, run by onnxruntime
  (tools/build_onnx_minilm.py builds it; models_data/minilm-onnx-int8/manifest.json records
  its source and sha256s, and the model file's sha256 is checked when it loads). Better by
  far at meaning, and some hundreds of times slower per text than the table.

Nothing is downloaded: models and tokenizer ship inside the clew package.

Invariants:
- numpy, tokenizers and onnxruntime are imported only when a model loads, never when clew is
  imported, so the CLI starts as fast without the `vectors` extra as before it.
- `embed` returns float32 rows of unit length, or zero rows for texts with no words (empty,
  blank, or punctuation only); the same text always gives the same row, whatever other
  texts share its call (the ONNX model runs texts in padded batches; the padding is masked
  and its arithmetic is float32, so a text's row alone and in any batch agree to ~1e-6).
- A model's `model_id` changes whenever its table or graph does, so vectors stored under another id
  are stale and can be found and rebuilt.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from clew.errors import ValidationError, VectorsUnavailable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT_MODEL",
    "ONNX_MODEL",
    "Embedder",
    "OnnxEmbedder",
    "StaticEmbedder",
    "available",
    "chosen",
    "load",
    "models",
]

DEFAULT_MODEL = "minilm-static-256"
ONNX_MODEL = "minilm-onnx-int8"
# Whether the ONNX model is the default wherever onnxruntime is installed (CLEW_EMBED_MODEL
# still names either). Off: the choice of default is the project's, on the figures in
# docs/benchmarks-log.md; switching it re-embeds every store once (vectors are keyed by model).
ONNX_WHEN_INSTALLED = False
ENV = "CLEW_EMBED_MODEL"
DATA = Path(__file__).resolve().parents[1] / "models_data"  # packaged beside clew/__init__
ONNX_DATA = DATA / ONNX_MODEL
MAX_TOKENS = 512
# Texts are cut before tokenising so that a megabyte of command output costs no more than its
# first 512 tokens do; WordPiece rarely makes a token of more than 16 characters.
MAX_CHARS = MAX_TOKENS * 16
# Texts per onnxruntime call: sorted by length first, so a batch pads little; measured
# (benchmarks/bench_embed.py) about as fast per CPU-second as 64 or 128, in a tenth of the memory
ONNX_BATCH = 32
# onnxruntime's threads for one call: a few, never more than the machine has; they sleep
# when idle (no spinning), so an embedding job does not burn a core between batches
ONNX_THREADS = min(4, os.cpu_count() or 1)


class Embedder(Protocol):
    """What the vector index needs of a model: an id, a width, and a batch call."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed each text as a unit-length float32 row (a zero row for a word-less text)."""
        ...


class StaticEmbedder:
    """A static table of token vectors: a text's vector is the mean of its tokens' rows."""

    def __init__(self, directory: Path = DATA) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        rows = np.load(directory / manifest["rows"], allow_pickle=False)
        scales = np.load(directory / manifest["scales"], allow_pickle=False)
        self.model_id: str = manifest["id"]
        self.dim: int = int(manifest["dim"])
        # float32 in memory (30 MB): one gather and a sum per batch, no per-token scaling
        self._table = rows.astype(np.float32)
        self._table *= scales[:, None]
        tokenizer = Tokenizer.from_file(str(directory / manifest["tokenizer"]))
        tokenizer.no_padding()
        tokenizer.enable_truncation(int(manifest.get("max_tokens", MAX_TOKENS)))
        self._tokenizer = tokenizer

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed each text as a unit-length float32 row (a zero row for a word-less text)."""
        import numpy as np

        checked = _checked(texts)
        out = np.zeros((len(checked), self.dim), dtype=np.float32)
        if not checked:
            return out
        clipped = [text[:MAX_CHARS] for text in checked]
        # encode_batch_fast (tokenizers >= 0.21) skips the character offsets nobody reads here
        encode = getattr(self._tokenizer, "encode_batch_fast", self._tokenizer.encode_batch)
        ids = [encoding.ids for encoding in encode(clipped, add_special_tokens=False)]
        lengths = [len(row) for row in ids]
        flat = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.intp, count=sum(lengths))
        # np.take then one small sum per text: measured faster than fancy indexing and than
        # np.add.reduceat, which walks a tall 2-D array column by column
        rows = np.take(self._table, flat, axis=0)
        start = 0
        for i, length in enumerate(lengths):
            # a sum, not a mean: the row is normalised next, and the length cancels out
            rows[start : start + length].sum(axis=0, out=out[i])
            start += length
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


class OnnxEmbedder:
    """The all-MiniLM-L6-v2 transformer (int8 weights) run by onnxruntime, pooled in-graph."""

    def __init__(self, directory: Path = ONNX_DATA) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        path = directory / manifest["model"]
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest != manifest["files"][manifest["model"]]:
            raise VectorsUnavailable(
                f"the packaged model {path} does not match its manifest (sha256 {digest[:12]}"
                f"..., expected {manifest['files'][manifest['model']][:12]}...); reinstall clew"
            )
        self.model_id: str = manifest["id"]
        self.dim: int = int(manifest["dim"])
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = ONNX_THREADS
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # warnings about unused initialisers are not the user's
        self._session = onnxruntime.InferenceSession(
            data, options, providers=["CPUExecutionProvider"]
        )
        self._output = str(manifest["output"])
        tokenizer = Tokenizer.from_file(str(directory / manifest["tokenizer"]))
        tokenizer.no_padding()
        self.max_tokens = int(manifest["max_tokens"])
        tokenizer.enable_truncation(self.max_tokens)
        self._tokenizer = tokenizer

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed each text as a unit-length float32 row (a zero row for a word-less text)."""
        import numpy as np

        checked = _checked(texts)
        out = np.zeros((len(checked), self.dim), dtype=np.float32)
        # a text with no letter or digit has no words: the zero row, as the static model gives
        worded = [i for i, text in enumerate(checked) if any(c.isalnum() for c in text)]
        if not worded:
            return out
        clip = self.max_tokens * 16
        encode = getattr(self._tokenizer, "encode_batch_fast", self._tokenizer.encode_batch)
        ids = [e.ids for e in encode([checked[i][:clip] for i in worded])]
        # shortest first: each batch pads to its longest text, which is then barely longer
        order = sorted(range(len(worded)), key=lambda k: len(ids[k]))
        for start in range(0, len(order), ONNX_BATCH):
            batch = order[start : start + ONNX_BATCH]
            width = len(ids[batch[-1]])
            tokens = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, k in enumerate(batch):
                tokens[row, : len(ids[k])] = ids[k]
                mask[row, : len(ids[k])] = 1
            (vectors,) = self._session.run(
                [self._output], {"input_ids": tokens, "attention_mask": mask}
            )
            out[[worded[k] for k in batch]] = vectors
        return out


def _checked(texts: Any) -> list[str]:
    """The texts as a list, or a ValidationError naming the first item that is not a str."""
    if isinstance(texts, str | bytes):
        raise ValidationError("embed takes a list of texts, not one text: wrap it in a list")
    try:
        items = list(texts)
    except TypeError:
        raise ValidationError(f"embed takes a list of texts, not {type(texts).__name__}") from None
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise ValidationError(f"embed takes texts (str); item {i} is {type(item).__name__}")
    return items


def models() -> tuple[str, ...]:
    """The names `load` accepts."""
    return (DEFAULT_MODEL, ONNX_MODEL)


# What each model needs installed, where its files are, and the extra that installs it.
_NEEDS = {
    DEFAULT_MODEL: (("numpy", "tokenizers"), DATA, "vectors"),
    ONNX_MODEL: (("numpy", "tokenizers", "onnxruntime"), ONNX_DATA, "vectors-onnx"),
}


def _have_packages(names: Sequence[str] = ("numpy", "tokenizers")) -> bool:
    """Whether these packages are installed (found, not imported)."""
    try:
        return all(importlib.util.find_spec(name) for name in names)
    except (ImportError, ValueError):
        return False


def chosen(name: str | None = None) -> str:
    """The model a name asks for: the name, else CLEW_EMBED_MODEL, else the default (the
    ONNX model where it is installed, if ONNX_WHEN_INSTALLED); a ValidationError for a name
    that is none of `models()`. A stored model id ("minilm-static-256@<hash>") names its
    model too."""
    key = name if name is not None else os.environ.get(ENV, "").strip()
    if name is None and not key:
        onnx = ONNX_WHEN_INSTALLED and _have_packages(_NEEDS[ONNX_MODEL][0])
        return ONNX_MODEL if onnx else DEFAULT_MODEL
    base = key.partition("@")[0]
    if base not in models():
        where = "" if name is not None else f" ({ENV})"
        raise ValidationError(
            f"no embedding model named {key!r}{where}; the models are: {', '.join(models())}"
        )
    return base


def available(name: str | None = None) -> bool:
    """Whether the chosen model can be used here: its packages installed, its files present
    (a ValidationError when CLEW_EMBED_MODEL names no model: a typo should not silently
    turn meaning off)."""
    packages, directory, _ = _NEEDS[chosen(name)]
    return _have_packages(packages) and (directory / "manifest.json").is_file()


def _missing(base: str, extra: str) -> str:
    from clew.core.installation import install_command

    what = "vectors need" if base == DEFAULT_MODEL else f"the {base} model needs"
    return f"{what} the optional extra: {install_command(extra)}"


_loaded: dict[str, Embedder] = {}
_lock = threading.Lock()


def load(name: str | None = None) -> Embedder:
    """Load a model by name (default: `chosen()`), once per process."""
    base = chosen(name)
    packages, directory, extra = _NEEDS[base]
    with _lock:
        model = _loaded.get(base)
        if model is None:
            if not _have_packages(packages):
                raise VectorsUnavailable(_missing(base, extra))
            if not (directory / "manifest.json").is_file():
                raise VectorsUnavailable(
                    f"the packaged embedding model is missing from {directory}; reinstall clew"
                )
            model = _loaded[base] = (
                OnnxEmbedder(directory) if base == ONNX_MODEL else StaticEmbedder(directory)
            )
    return model
