"""Text embeddings for the vector index: the Embedder protocol and clew's packaged model.

The default model is a static embedding table distilled from all-MiniLM-L6-v2
(tools/build_static_embeddings.py builds it; models_data/manifest.json records its source and
the sha256 of each file). A text's vector is the mean of its WordPiece tokens' rows,
L2-normalised; the rows carry their token's weight already, so there is no model to run and
nothing is downloaded: the table and the tokenizer ship inside the clew package.

Invariants:
- numpy and tokenizers are imported only when a model loads, never when clew is imported, so
  the CLI starts as fast without the `vectors` extra as before it.
- `embed` returns float32 rows of unit length, or zero rows for texts with no words (empty,
  blank, or punctuation only); the same text always gives the same row.
- A model's `model_id` changes whenever its table does, so vectors stored under another id
  are stale and can be found and rebuilt.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from clew.errors import ValidationError, VectorsUnavailable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["DEFAULT_MODEL", "Embedder", "StaticEmbedder", "available", "load", "models"]

DEFAULT_MODEL = "minilm-static-256"
DATA = Path(__file__).resolve().parent / "models_data"
MAX_TOKENS = 512
# Texts are cut before tokenising so that a megabyte of command output costs no more than its
# first 512 tokens do; WordPiece rarely makes a token of more than 16 characters.
MAX_CHARS = MAX_TOKENS * 16
_EXTRA_HINT = "vectors need the optional extra: pip install 'clew[vectors]'"


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
    return (DEFAULT_MODEL,)


def _have_packages() -> bool:
    """Whether numpy and tokenizers are installed (found, not imported)."""
    try:
        return all(importlib.util.find_spec(name) for name in ("numpy", "tokenizers"))
    except (ImportError, ValueError):
        return False


def available() -> bool:
    """Whether vectors can be used here: numpy and tokenizers installed, the table present."""
    return _have_packages() and (DATA / "manifest.json").is_file()


_loaded: dict[str, Embedder] = {}
_lock = threading.Lock()


def load(name: str | None = None) -> Embedder:
    """Load a model by name (default: the packaged static MiniLM), once per process."""
    key = DEFAULT_MODEL if name is None else name
    # a stored model id ("minilm-static-256@<hash>") names its model too
    base = key.partition("@")[0]
    if base not in models():
        raise ValidationError(
            f"no embedding model named {key!r}; the models are: {', '.join(models())}"
        )
    with _lock:
        model = _loaded.get(base)
        if model is None:
            if not _have_packages():
                raise VectorsUnavailable(_EXTRA_HINT)
            if not (DATA / "manifest.json").is_file():
                raise VectorsUnavailable(
                    f"the packaged embedding table is missing from {DATA}; reinstall clew"
                )
            model = _loaded[base] = StaticEmbedder()
    return model
