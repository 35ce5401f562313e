"""The approximate nearest-neighbour index: a rebuildable cache above the vector matrix.

Invariants:
- Never the truth. The `embeddings` rows are; the in-process matrix (vectors.py) is loaded
  from them, and this index is built from the matrix. Deleting its file loses nothing: the
  next search or `clew index update` builds it again, and until then search is exact.
- Used only for a space and model holding at least `THRESHOLD` live vectors: below that, the
  brute-force matmul is as fast and exact (docs/benchmarks-log.md measures where it stops
  winning).
- It proposes candidates, never scores: each candidate's cosine is computed from the
  matrix, so a hit's score is the same as brute force gives it, and every filter is
  applied to the matrix's columns, exactly.
- Labels are `embeddings.seq`: stable across processes and loads. A record embedded again
  gets a new seq; the old label stays in the index and is dropped at query time (its seq no
  longer has a live slot); past `_DEAD_SHARE` of such labels the index is built again.
- `covered` is the highest seq the index holds. Vectors written since are searched by
  brute force on top, so results are never stale; past `_TAIL_MAX` of them they are added
  to the index and the file is saved again.
- Saved as a file (SQLite: `<store>.clew-ann/<space>/<model>.usearch` beside the .db;
  PostgreSQL without pgvector: under the user cache directory) with a JSON sidecar naming
  what it covers. A file that cannot be read, or whose sidecar does not match the store
  (another generation of vectors: a rebuild; seqs beyond the store's: a store made again),
  is built again, with a warning for one that cannot be read. An in-memory store keeps its
  index in memory.

usearch (the `ann` extra) is imported only here, and only when an index is needed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

_log = logging.getLogger(__name__)

# Live vectors of a space and model from which the index is used (tests lower it).
THRESHOLD = 200_000
FORMAT = 2  # the sidecar's format: another number means build again
CONNECTIVITY = 16  # HNSW's M: edges per node
EXPANSION_ADD = 64  # candidates kept while inserting (efConstruction)
# Candidates kept while searching, at least (ef). On the packaged model's real vectors (a
# narrow cone) ef 128 finds 0.76 of the exact top 60, 512 finds 0.91, 2048 finds 0.95
# (docs/benchmarks-log.md): about 9 ms a query at 50,000 vectors, against 106 ms of brute force
# at a million.
EXPANSION_SEARCH = 2048
# Threads that insert into the graph (0: every core). Inserting in parallel makes the graph
# differ from run to run; the tests use one, so theirs is the same on every run.
THREADS = 0
_DEAD_SHARE = 0.2  # labels of vectors since replaced, of all labels, that make a rebuild
_TAIL_MIN = 20_000  # vectors written since the index was saved, searched by brute force...
_TAIL_SHARE = 0.05  # ...up to this share of those it holds, then added and saved


def unavailable() -> str:
    """Say what is missing without the `ann` extra, and the command that adds it."""
    from clew.core.installation import install_command

    return f"the approximate index needs the optional extra: {install_command('ann')}"


def _onnxruntime_first() -> None:
    """Import onnxruntime before usearch wherever both are installed (the `ann` and
    `vectors-onnx` extras): onnxruntime 1.32 crashes the process (SIGSEGV, in its native
    module's import) once usearch 2.26 is loaded, while the other order works."""
    import importlib.util

    if "onnxruntime" not in sys.modules and importlib.util.find_spec("onnxruntime") is not None:
        import onnxruntime  # noqa: F401


def available() -> bool:
    """Whether usearch can be imported (the `ann` extra)."""
    try:
        _onnxruntime_first()
        import usearch.index  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass
class AnnState:
    """What an index covers: its labels, the highest seq among them, and the generation of
    the store's vectors it was built from (vectors.py counts the drops)."""

    count: int = 0
    covered: int = 0
    generation: int = 0
    dim: int = 0


@dataclass(frozen=True)
class AnnStatus:
    """The approximate index of a space and model, as `clew index status` shows it."""

    used: bool  # the space holds enough vectors for it (THRESHOLD), searched in process
    installed: bool  # usearch is importable
    native: bool  # the database searches (pgvector): no index here
    path: str | None  # its file, None for an in-memory store
    exists: bool
    count: int  # vectors it holds
    covered: int  # the highest seq it holds
    lag: int  # vectors written since, searched by brute force on top
    bytes: int  # its file's size

    def describe(self) -> str:
        """Say what the index is, e.g. "approximate index: 1,000,000 vectors, 0 behind"."""
        if self.native:
            return "approximate index: in the database (pgvector)"
        if not self.used:
            return f"approximate index: not needed below {THRESHOLD:,} vectors (exact search)"
        if not self.installed:
            return f"approximate index: none, exact search ({unavailable()})"
        if not self.exists:
            return "approximate index: not built yet (the next search or `clew index update`)"
        size = f", {self.bytes / 1e6:,.1f} MB" if self.bytes else ""
        return f"approximate index: {self.count:,} vectors, {self.lag:,} behind{size}"


def folder(store_path: str, space: str) -> Path | None:
    """Where a store's index files live: beside a SQLite file, under the user cache for a
    PostgreSQL store, None for an in-memory store (kept in memory)."""
    if store_path.startswith(":memory:"):
        return None
    if "://" in store_path:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
        digest = hashlib.sha256(store_path.encode()).hexdigest()[:16]
        return Path(base) / "clew" / "ann" / digest / _safe(space)
    return Path(f"{store_path}.clew-ann") / _safe(space)


def _safe(name: str) -> str:
    """A file name for a space or model: its readable part and a hash (names may hold '/')."""
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:40]
    return f"{readable}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


class AnnIndex:
    """One space's and model's HNSW index, in memory, and its file."""

    def __init__(self, where: Path | None, model: str) -> None:
        self.path = None if where is None else where / f"{_safe(model)}.usearch"
        self.state = AnnState()
        self.index: Any = None
        # The mean of the vectors it was built from, subtracted from every vector it holds:
        # the model's vectors crowd into a narrow cone (mean cosine to their centroid 0.74),
        # where HNSW's graph finds the true nearest poorly; q.(x - c) = q.x - q.c ranks as
        # q.x does for every query, so the query is left as it is.
        self.center: Any = None
        self.dirty = False  # changed since the file was written
        self.viewed = False  # `index` maps the file (read-only) rather than holding a copy

    @property
    def meta_path(self) -> Path | None:
        return None if self.path is None else self.path.with_suffix(".json")

    def described(self) -> AnnState:
        """What the file's sidecar says it covers (nothing without one), without loading it."""
        if self.meta_path is None:
            return AnnState()
        try:
            meta = json.loads(self.meta_path.read_text())
            return AnnState(
                int(meta["count"]), int(meta["covered"]), int(meta["generation"]), int(meta["dim"])
            )
        except (OSError, ValueError, KeyError, TypeError):
            return AnnState()

    def load(self, generation: int, newest: int, dim: int) -> bool:
        """Read the file if it matches these vectors (their generation, dimensions, and no
        seq above `newest`); False when there is none or it does not match (to be built)."""
        if self.path is None or self.meta_path is None or not self.path.exists():
            return False
        _onnxruntime_first()
        from usearch.index import Index

        try:
            meta = json.loads(self.meta_path.read_text())
            state = AnnState(
                int(meta["count"]), int(meta["covered"]), int(meta["generation"]), int(meta["dim"])
            )
            if meta.get("format") != FORMAT:
                return False
            if state.generation != generation or state.dim != dim or state.covered > newest:
                return False  # made from vectors since dropped, or by a store made again
            # Mapped, not read: a million vectors' file opens in a blink; copied into memory
            # only when vectors are added (`add`).
            center = [float(x) for x in meta["center"]]
            if len(center) != dim:
                raise ValueError("its center has the wrong length")
            index: Any = Index.restore(str(self.path), view=True)
            if index is None or len(index) != state.count or index.ndim != dim:
                raise ValueError("its vectors do not match its description")
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
            _log.warning(
                "the approximate index %s cannot be read (%s); building it again", self.path, exc
            )
            return False
        index.expansion_search = EXPANSION_SEARCH
        import numpy as np

        self.index, self.state, self.dirty, self.viewed = index, state, False, True
        self.center = np.asarray(center, dtype=np.float32)
        return True

    def build(self, seqs: np.ndarray, vectors: np.ndarray, generation: int) -> None:
        """Make the index afresh from these (label, unit vector) rows."""
        _onnxruntime_first()
        from usearch.index import Index

        dim = int(vectors.shape[1]) if len(vectors.shape) == 2 else 0
        self.index = Index(
            ndim=dim,
            metric="ip",  # rows are unit vectors: inner product is the cosine
            dtype="f16",
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )
        self.state = AnnState(0, 0, generation, dim)
        self.center = vectors.mean(axis=0).astype("float32") if len(vectors) else None
        self.viewed = False
        self.add(seqs, vectors)

    def add(self, seqs: np.ndarray, vectors: np.ndarray) -> None:
        """Add rows whose labels are above every label held."""
        import numpy as np

        if len(seqs) and self.viewed and self.path is not None:
            _onnxruntime_first()
            from usearch.index import Index

            self.index = Index.restore(str(self.path))
            self.index.expansion_search = EXPANSION_SEARCH
            self.viewed = False
        if len(seqs):
            centered = vectors if self.center is None else vectors - self.center
            self.index.add(np.asarray(seqs, dtype=np.uint64), centered, threads=THREADS)
            self.state.count += len(seqs)
            self.state.covered = int(seqs[-1])
        self.dirty = True

    def tail_too_long(self, tail: int) -> bool:
        """Whether `tail` vectors beyond the index are more than brute force should carry."""
        return tail > max(_TAIL_MIN, _TAIL_SHARE * self.state.count)

    def too_dead(self, live_covered: int) -> bool:
        """Whether too many of its labels are of vectors since replaced or deleted."""
        return self.state.count - live_covered > _DEAD_SHARE * max(self.state.count, 1)

    def save(self) -> None:
        """Write the file and its sidecar, each atomically (temp file, rename); a failure to
        write (a read-only folder) is logged, not raised: the index is only a cache."""
        if self.path is None or self.meta_path is None or not self.dirty:
            return
        import tempfile

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            os.close(fd)
            try:
                self.index.save(tmp)
                os.replace(tmp, self.path)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
            center = [] if self.center is None else [float(x) for x in self.center]
            meta = {"format": FORMAT, **self.state.__dict__, "center": center}
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            with os.fdopen(fd, "w") as out:
                json.dump(meta, out)
            os.replace(tmp, self.meta_path)
        except OSError as exc:
            _log.warning("could not save the approximate index %s: %s", self.path, exc)
            return
        self.dirty = False

    def search(self, query: np.ndarray, count: int) -> np.ndarray:
        """The labels of about the `count` nearest rows (approximate), as uint64."""
        import numpy as np

        count = min(count, self.state.count)
        if count <= 0:
            return np.zeros(0, dtype=np.uint64)
        self.index.expansion_search = max(EXPANSION_SEARCH, count)
        found = self.index.search(query, count)
        return np.asarray(found.keys, dtype=np.uint64)

    def size(self) -> int:
        """The file's size in bytes, 0 without one."""
        try:
            return 0 if self.path is None else self.path.stat().st_size
        except OSError:
            return 0
