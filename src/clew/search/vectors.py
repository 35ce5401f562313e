"""The vector index (layer 3): embeddings of what was recorded, and the nearest records to a text.

Invariants:
- Vectors are a derived cache, never the truth: rows of `embeddings` keyed by (record, model)
  with the content hash of the text they embed, written outside the journal, rebuilt from
  the records at any time (`rebuild_index`). Nothing on the write path waits for them: they
  are made by `update_index` (`clew index update`), or a few at a time by `_catch_up`.
- A record is pending when it has no vector of the current model or changed since (its
  updated_at moved); a changed record whose text is the same (a status change) keeps its
  vector, only marked current.
- `nearest` searches an in-process matrix per (store, space, model), loaded once and then
  only the rows written since (a seq cursor); a record embedded again replaces its slot, and
  rows that vanished (a rebuild elsewhere) make it load again. Filters are masks applied
  before the top-k, so a narrow filter still gets its best `limit`.
- On a PostgreSQL store whose server has pgvector (`store.vector_search_native()`), `nearest`
  asks the store instead (`nearest_vectors`: the same filters, in SQL; store/postgres/vectors.py)
  and no matrix is loaded.

numpy and the model are imported only here, and only when a method needs them: clew without
the `vectors` extra never loads them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from clew.core import checks
from clew.errors import ValidationError
from clew.kernel import Service
from clew.models import VECTOR_KINDS, IndexStatus, NewVector, PendingText, StoredVector
from clew.store.portable.vectors import dropped

if TYPE_CHECKING:
    import numpy as np

    from clew.search.ann import AnnIndex, AnnStatus
    from clew.search.embedding import Embedder

BATCH = 512  # records embedded and written per transaction
_LOAD_PAGE = 20_000  # stored vectors read per query when the cache loads
# A filter keeping fewer rows than this share scores only those rows (copying them costs
# about as much as scoring every row when a fifth of them are kept).
_GATHER_BELOW = 0.05
# With the approximate index: a filter keeping at most this many rows is searched exactly
# (scoring so few costs less than asking the index for enough to survive the filter).
EXACT_BELOW = 20_000
OVERFETCH = 2  # candidates asked of the index per result wanted, before the filters
_FETCH_MAX = 20_000  # candidates asked at most; a filter dropping more is searched exactly


def unavailable() -> str:
    """Say what a command says when the extra is missing (as VectorsUnavailable does)."""
    from clew.core.installation import install_command

    return f"vectors need the optional extra: {install_command('vectors')}"


def load_embedder() -> Embedder:
    """The default embedding model; VectorsUnavailable without the `vectors` extra. A module
    function, so a benchmark or test can put another model in its place."""
    from clew.search import embedding

    return embedding.load()


def embedder_available() -> bool:
    """Whether the default embedding model can be loaded (the extra and its table)."""
    from clew.search import embedding

    return embedding.available()


def content_hash(model: str, text: str) -> str:
    """The short hash a vector is keyed by: of the model and the text it embedded."""
    import hashlib  # here, not at the top: the hook path imports this module, never hashes

    return hashlib.sha256(f"{model}\n{text}".encode()).hexdigest()[:16]


def _micros(stamps: Sequence[str]) -> np.ndarray:
    """Store timestamps as int64 microseconds (no 'Z': numpy warns on a zone)."""
    import numpy as np

    return np.array([s.rstrip("Z") for s in stamps], dtype="datetime64[us]").astype(np.int64)


class _Matrix:
    """The vectors of one (store, space, model) in memory, with what the filters need.

    Rows are slots that grow by doubling; a record embedded again takes a new slot and its
    old one is marked dead. `seen` is the highest seq loaded."""

    def __init__(self) -> None:
        import numpy as np

        self.lock = threading.Lock()
        self.seen = 0
        self.generation = 0  # how many times the store's vectors of the model were dropped
        self.n = 0
        self.dim = 0
        self.vectors = np.zeros((0, 0), dtype=np.float32)
        self.alive = np.zeros(0, dtype=bool)
        self.kind = np.zeros(0, dtype=np.int8)
        self.task = np.zeros(0, dtype=np.int32)
        self.step = np.zeros(0, dtype=np.int32)
        self.session = np.zeros(0, dtype=np.int32)
        self.at = np.zeros(0, dtype=np.int64)
        self.seqs = np.zeros(0, dtype=np.int64)  # ascending: rows load in seq order
        self.ann: AnnIndex | None = None  # the approximate index over these rows, once used
        self.keys: list[tuple[str, str]] = []
        self.slot: dict[tuple[str, str], int] = {}
        self.codes: dict[str, int] = {}  # task, step and session ids -> small ints

    @property
    def live(self) -> int:
        return len(self.slot)

    def code(self, ident: str | None) -> int:
        if ident is None:
            return -1
        return self.codes.setdefault(ident, len(self.codes))

    def _grow(self, need: int, dim: int) -> None:
        import numpy as np

        if self.dim and dim != self.dim:
            raise ValidationError(f"vectors of {dim} values among vectors of {self.dim}")
        self.dim = dim
        if need <= len(self.alive) and self.vectors.shape[1] == dim:
            return
        size = max(need, 2 * len(self.alive), 1024)

        def grown(old: np.ndarray, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
            new = np.zeros(shape, dtype=dtype)
            if self.n:
                new[: self.n] = old[: self.n]
            return new

        self.vectors = grown(self.vectors, (size, dim), np.float32)
        self.alive = grown(self.alive, (size,), bool)
        self.kind = grown(self.kind, (size,), np.int8)
        self.task = grown(self.task, (size,), np.int32)
        self.step = grown(self.step, (size,), np.int32)
        self.session = grown(self.session, (size,), np.int32)
        self.at = grown(self.at, (size,), np.int64)
        self.seqs = grown(self.seqs, (size,), np.int64)

    def add(self, rows: Sequence[StoredVector]) -> None:
        """Take rows loaded in seq order; a record's newer row replaces its older one."""
        import numpy as np

        if not rows:
            return
        self._grow(self.n + len(rows), rows[0].dim)
        start, end = self.n, self.n + len(rows)
        raw = np.frombuffer(b"".join(r.vector for r in rows), dtype="<f2")
        block = raw.reshape(len(rows), self.dim).astype(np.float32)
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        np.divide(block, norms, out=block, where=norms > 0)  # float16 rounding, undone
        self.vectors[start:end] = block
        self.kind[start:end] = [VECTOR_KINDS.index(r.kind) for r in rows]
        self.task[start:end] = [self.code(r.task_id) for r in rows]
        self.step[start:end] = [self.code(r.step_id) for r in rows]
        self.session[start:end] = [self.code(r.session_id) for r in rows]
        self.at[start:end] = _micros([r.created_at for r in rows])
        self.seqs[start:end] = [r.seq for r in rows]
        self.alive[start:end] = True
        for i, r in enumerate(rows, start):
            key = (r.kind, r.ref_id)
            old = self.slot.get(key)
            if old is not None:
                self.alive[old] = False
            self.slot[key] = i
            self.keys.append(key)
        self.n = end
        self.seen = rows[-1].seq


class _Scope(NamedTuple):
    """What `nearest` keeps: its filters checked and resolved, and how many it returns."""

    wanted: int
    kinds: tuple[str, ...]
    task: str | None
    step: str | None
    sessions: list[str] | None
    start: str | None
    end: str | None


_CACHES: dict[tuple[str, str, str], _Matrix] = {}
_CACHES_LOCK = threading.Lock()
# Per (store, space, model): the (journal head, drops) at which nothing was pending, and the
# counts then (see `_catch_up`).
_CAUGHT_UP: dict[tuple[str, str, str], tuple[tuple[int, int], tuple[int, int]]] = {}


class Vectors(Service):
    """The vector index: its status, updates, rebuilds and `nearest` (a service of Memory)."""

    _vector_model: Embedder | None = None  # the embedding model, once loaded

    def _embedder(self) -> Embedder:
        if self._vector_model is None:
            self._vector_model = load_embedder()
        return self._vector_model

    def index_status(self) -> IndexStatus:
        """Say how far the vector index is: records with a current vector of all of them."""
        model = self._embedder().model_id if embedder_available() else None
        counts = self._store.vector_counts(model or "")
        if model is None:
            counts = {kind: (0, total) for kind, (_, total) in counts.items()}
        embedded = sum(done for done, _ in counts.values())
        total = sum(total for _, total in counts.values())
        return IndexStatus(model, embedded, total, counts)

    def update_index(self, *, limit: int | None = None) -> int:
        """Embed the records that have no current vector, `BATCH` per transaction (at most
        `limit` records); return how many were brought up to date. VectorsUnavailable
        without the `vectors` extra."""
        from clew.core import meter  # here: the hook path imports this module, not meter

        most = None if limit is None else checks.count(limit, "limit")
        embedder = self._embedder()
        done = 0
        for kind in VECTOR_KINDS:
            after = ""
            while most is None or done < most:
                page = BATCH if most is None else min(BATCH, most - done)
                pending = self._store.pending_vectors(
                    kind, embedder.model_id, after=after, limit=page
                )
                if not pending:
                    break
                self._embed(embedder, pending)
                done += len(pending)
                meter.report("embedding", done, most)
                after = pending[-1].ref_id
                if len(pending) < page:
                    break
        return done

    def rebuild_index(self) -> int:
        """Drop this space's vectors of the current model and embed every record again;
        return how many were embedded."""
        embedder = self._embedder()
        with self._store.transaction(write=True):
            self._store.drop_vectors(embedder.model_id)
            # Counted where every process's cache looks: a drop is the one change that does
            # not show as newer rows (bookkeeping beside the journal, like the poller's).
            self._store.mark_schedule(dropped(embedder.model_id), self._now())
        with _CACHES_LOCK:
            _CACHES.pop(self._cache_key(embedder.model_id), None)
        _CAUGHT_UP.pop(self._cache_key(embedder.model_id), None)
        return self.update_index()

    def _catch_up(self, max_records: int) -> tuple[int, int]:
        """Embed at most `max_records` pending records now (none on a read-only store, or
        without the extra); return (records with a current vector, all records). Once
        nothing is pending, later calls cost one lookup until the journal or the vectors'
        drops move: finding the pending records of a million is a scan."""
        if not embedder_available():
            status = self.index_status()
            return status.embedded, status.total
        model = self._embedder().model_id
        key = self._cache_key(model)
        drops = self._store.schedule(dropped(model))
        mark = (self._store.journal_head(), 0 if drops is None else drops[1])
        clean = _CAUGHT_UP.get(key)
        if clean is not None and clean[0] == mark:
            return clean[1]
        if not self.read_only:
            self.update_index(limit=max_records)
        status = self.index_status()
        if status.pending == 0:
            _CAUGHT_UP[key] = (mark, (status.embedded, status.total))
        return status.embedded, status.total

    def _embed(self, embedder: Embedder, pending: Sequence[PendingText]) -> None:
        """Embed the records whose text changed and write them, and mark the others
        current, in one write transaction."""
        model = embedder.model_id
        fresh: list[PendingText] = []
        same: dict[str, list[tuple[str, str]]] = {}
        for record in pending:
            digest = content_hash(model, record.text)
            if record.content_hash == digest:
                same.setdefault(record.kind, []).append((record.ref_id, record.source_at))
            else:
                fresh.append(record)
        rows: list[NewVector] = []
        if fresh:
            matrix = embedder.embed([r.text for r in fresh])
            half = matrix.astype("<f2")
            for record, vector in zip(fresh, half, strict=True):
                rows.append(
                    NewVector(
                        record.kind,
                        record.ref_id,
                        content_hash(model, record.text),
                        record.source_at,
                        record.task_id,
                        record.step_id,
                        record.session_id,
                        record.created_at,
                        int(vector.shape[0]),
                        vector.tobytes(),
                    )
                )
        with self._store.transaction(write=True):
            if rows:
                self._store.put_vectors(model, rows)
            for kind, marks in same.items():
                self._store.touch_vectors(model, kind, marks)

    # -- nearest --------------------------------------------------------------------------

    def nearest(
        self,
        text: str,
        *,
        kinds: Sequence[str] | None = None,
        task_id: str | None = None,
        step_id: str | None = None,
        session_ids: Sequence[str] | None = None,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        limit: int = 100,
    ) -> list[tuple[str, str, float]]:
        """The records nearest in meaning to `text`, as (kind, id, cosine), best first; of
        these kinds, task, step, sessions and time range (`since` inclusive, `until`
        exclusive), applied before the best `limit` are taken. Only records already
        embedded are found (see `update_index`)."""
        query = checks.text(text, "query")
        scope = self._scope(kinds, task_id, step_id, session_ids, since, until, limit)
        embedder = self._embedder()  # after the arguments: bad ones never load a model
        import numpy as np  # after the model: without the extra, its one-line error

        q = np.asarray(embedder.embed([query])[0], dtype=np.float32)
        return self._scan(q, scope)

    def _question_vector(self, question: str, words: Sequence[str]) -> np.ndarray:
        """A question's vector for search: the mean of its own and its content words' (the
        question without "what did we", "which"...), in one call to the model. Measured on
        the labelled set (benchmarks/retrieval/dense.py): answers among the 60 nearest 0.77
        -> 0.81 with the ONNX model and 0.65 -> 0.74 with the static table, against either
        form alone (the content words alone lose what the question's phrasing carries)."""
        import numpy as np

        embedder = self._embedder()
        short = " ".join(words)
        if not short or short.casefold() == " ".join(question.split()).casefold():
            return np.asarray(embedder.embed([question])[0], dtype=np.float32)
        both = embedder.embed([question, short])
        mean = np.asarray(both[0] + both[1], dtype=np.float32)
        norm = float(np.linalg.norm(mean))
        return mean / norm if norm > 0 else mean

    def _nearest_to(
        self,
        q: np.ndarray,
        *,
        kinds: Sequence[str] | None = None,
        task_id: str | None = None,
        step_id: str | None = None,
        session_ids: Sequence[str] | None = None,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        limit: int = 100,
    ) -> list[tuple[str, str, float]]:
        """`nearest` for a vector already made (a unit row of the current model)."""
        return self._scan(q, self._scope(kinds, task_id, step_id, session_ids, since, until, limit))

    def _scope(
        self,
        kinds: Sequence[str] | None,
        task_id: str | None,
        step_id: str | None,
        session_ids: Sequence[str] | None,
        since: str | datetime | None,
        until: str | datetime | None,
        limit: int,
    ) -> _Scope:
        """The filters of `nearest`, checked and resolved (no model needed)."""
        now = self._clock()
        return _Scope(
            checks.count(limit, "limit"),
            _vector_kinds(kinds),
            None if task_id is None else self._task_id(task_id),
            None if step_id is None else self._step_id(step_id),
            None if session_ids is None else self._session_ids(session_ids),
            None if since is None else checks.moment(since, "since", now),
            None if until is None else checks.moment(until, "until", now),
        )

    def _scan(self, q: np.ndarray, scope: _Scope) -> list[tuple[str, str, float]]:
        """The records nearest the unit vector `q` within `scope`, best first."""
        wanted, chosen, task, step, sessions, start, end = scope
        embedder = self._embedder()
        import numpy as np

        if not q.any():
            return []  # a text with no word the model knows is near nothing
        if self._store.vector_search_native():
            # pgvector: the database filters and ranks; no vector comes into the process.
            return self._store.nearest_vectors(
                embedder.model_id,
                q.tolist(),
                kinds=chosen,
                task_id=task,
                step_id=step,
                session_ids=sessions,
                since=start,
                until=end,
                limit=wanted,
            )
        cache = self._matrix(embedder.model_id)
        with cache.lock:
            n = cache.n
            mask = cache.alive[:n].copy()
            if len(chosen) < len(VECTOR_KINDS):
                mask &= np.isin(cache.kind[:n], [VECTOR_KINDS.index(k) for k in chosen])
            for column, ident in ((cache.task, task), (cache.step, step)):
                if ident is not None:
                    mask &= column[:n] == cache.codes.get(ident, -2)
            if sessions is not None:
                codes = [cache.codes[s] for s in sessions if s in cache.codes]
                mask &= np.isin(cache.session[:n], codes)
            if start is not None:
                mask &= cache.at[:n] >= _micros([start])[0]
            if end is not None:
                mask &= cache.at[:n] < _micros([end])[0]
            kept = int(np.count_nonzero(mask))
            if not kept:
                return []
            index = self._ann(cache, embedder.model_id) if kept > EXACT_BELOW else None
            found = None if index is None else _approximate(cache, index, mask, q, wanted)
            if found is not None:
                picked, scores = found
            else:
                picked = np.flatnonzero(mask)
                if len(picked) < _GATHER_BELOW * n:
                    scores = cache.vectors[picked] @ q
                else:
                    everything = cache.vectors[:n] @ q
                    scores = everything[picked]
            best = _top(scores, wanted)
            keys = cache.keys
            return [(*keys[picked[i]], float(scores[i])) for i in best if scores[i] > 0]

    def prepare_nearest(self) -> AnnStatus:
        """Load the vectors of the current model and build, top up or load the approximate
        index where the space needs one (`clew index update` does, so a search need not);
        return its status."""
        from clew.search import ann  # the approximate index's module only when used

        model = self._embedder().model_id
        native = self._store.vector_search_native()
        # Counted first: a space below the threshold need not load its matrix for this.
        if not native and ann.available() and self._store.vector_count(model) >= ann.THRESHOLD:
            cache = self._matrix(model)
            with cache.lock:
                if cache.live >= ann.THRESHOLD:
                    index = self._ann(cache, model)
                    if index is not None:
                        index.save()
        return self.ann_status()

    def ann_status(self) -> AnnStatus:
        """Say whether the approximate index is used here, what it covers and how far
        behind the vectors it is, without loading it."""
        from clew.search import ann  # the approximate index's module only when used

        model = self._embedder().model_id if embedder_available() else ""
        where = ann.folder(self._cache_key(model)[0], self.space)
        index = ann.AnnIndex(where, model)
        total = self._store.vector_count(model) if model else 0
        native = self._store.vector_search_native()
        state = index.described()
        lag = self._store.vector_count(model, after=state.covered) if state.count else total
        cached = _CACHES.get(self._cache_key(model))
        if where is None and cached is not None and cached.ann is not None:  # in memory
            state = cached.ann.state
            lag = self._store.vector_count(model, after=state.covered)
        return ann.AnnStatus(
            used=not native and total >= ann.THRESHOLD,
            installed=ann.available(),
            native=native,
            path=None if index.path is None else str(index.path),
            exists=state.count > 0,
            count=state.count,
            covered=state.covered,
            lag=lag,
            bytes=index.size(),
        )

    def _ann(self, cache: _Matrix, model: str) -> AnnIndex | None:
        """The approximate index over `cache` (whose lock is held), loaded, built or topped
        up as needed; None below the threshold or without the `ann` extra."""
        from clew.search import ann  # the approximate index's module only when used

        if cache.live < ann.THRESHOLD or not ann.available():
            return None
        import numpy as np

        index = cache.ann
        n = cache.n
        if index is None:
            index = ann.AnnIndex(ann.folder(self._cache_key(model)[0], self.space), model)
            if not index.load(cache.generation, cache.seen, cache.dim):
                index.build(*_rows_to_index(cache, 0), cache.generation)
                index.save()
            cache.ann = index
        covered = int(np.searchsorted(cache.seqs[:n], index.state.covered, side="right"))
        if index.too_dead(int(np.count_nonzero(cache.alive[:covered]))):
            index.build(*_rows_to_index(cache, 0), cache.generation)
            index.save()
        elif index.tail_too_long(n - covered):
            index.add(*_rows_to_index(cache, covered))
            index.save()
        return index

    def _matrix(self, model: str) -> _Matrix:
        """This store's vectors of `model` in memory, brought up to date."""
        key = self._cache_key(model)
        with _CACHES_LOCK:
            cache = _CACHES.get(key)
            if cache is None:
                cache = _CACHES[key] = _Matrix()
        with cache.lock:
            if not self._refresh(cache, model):
                fresh = _Matrix()
                self._refresh(fresh, model)
                with _CACHES_LOCK:
                    _CACHES[key] = fresh
                return fresh
        return cache

    def _refresh(self, cache: _Matrix, model: str) -> bool:
        """Load the rows written since the cache last looked; False when it must be loaded
        afresh: rows it holds were dropped (a rebuild, here or in another process), the
        store is not the one it loaded, or it is mostly replaced rows."""
        drops = self._store.schedule(dropped(model))
        generation = 0 if drops is None else drops[1]
        if cache.n and generation != cache.generation:
            return False
        cache.generation = generation
        while True:
            rows = self._store.vectors_after(model, cache.seen, limit=_LOAD_PAGE)
            cache.add(rows)
            if len(rows) < _LOAD_PAGE:
                break
        if cache.n > 2 * cache.live + 1024:
            return False
        # A store made again at the same place starts its seqs over.
        return self._store.newest_vector(model) >= cache.seen

    def _cache_key(self, model: str) -> tuple[str, str, str]:
        path = self._store.path
        if path == ":memory:":
            path = f":memory:{id(self._store)}"  # each in-memory store is its own
        return (path, self.space, model)

    def _step_id(self, ident: str) -> str:
        if not isinstance(ident, str):
            raise ValidationError(f"step id must be text, not {type(ident).__name__}")
        return self._store.resolve("step", ident, "see a task's steps with `clew task show TASK`")

    def _session_ids(self, idents: Sequence[str]) -> list[str]:
        if isinstance(idents, str):
            idents = [idents]
        found: list[str] = []
        for ident in checks.sequence(idents, "session_ids"):
            if not isinstance(ident, str) or not ident.strip():
                raise ValidationError("a session must be a session id or key, as text")
            session = self._store.find_session(ident)
            found.append(session.id if session is not None else self._resolve("session", ident))
        return found


def _vector_kinds(kinds: str | Sequence[str] | None) -> tuple[str, ...]:
    """The kinds asked for: None is all; a text may list several, comma-separated."""
    return checks.kinds(kinds, VECTOR_KINDS)


def _rows_to_index(cache: _Matrix, start: int) -> tuple[np.ndarray, np.ndarray]:
    """The live rows of `cache` from slot `start` on, as (labels, unit vectors)."""
    import numpy as np

    slots = start + np.flatnonzero(cache.alive[start : cache.n])
    return cache.seqs[slots], cache.vectors[slots]


def _approximate(
    cache: _Matrix, index: AnnIndex, mask: np.ndarray, q: np.ndarray, wanted: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """Candidates for the best `wanted` rows `mask` keeps, and their exact scores: those
    the index proposes that pass the filters, and every kept row written since it was built
    (by brute force). It asks for more in proportion to what the filters drop, and again
    (four times as many) while too few pass; None when even `_FETCH_MAX` are not enough
    (the caller searches exactly)."""
    import numpy as np

    n = cache.n
    seqs = cache.seqs[:n]
    start = int(np.searchsorted(seqs, index.state.covered, side="right"))
    tail = start + np.flatnonzero(mask[start:n])
    kept = int(np.count_nonzero(mask[:start]))
    need = min(wanted, kept)
    count = int(OVERFETCH * wanted * min(start / max(kept, 1), 1_000)) + 16
    while True:
        labels = index.search(q, count).astype(np.int64)
        slots = np.searchsorted(seqs, labels)
        inside = slots < n
        slots, labels = slots[inside], labels[inside]
        slots = slots[seqs[slots] == labels]  # a label whose vector is gone has no slot
        slots = slots[mask[slots]]
        if len(slots) >= need or count >= index.state.count:
            break
        if count >= _FETCH_MAX:
            return None
        count = min(count * 4, _FETCH_MAX)
    picked = np.unique(np.concatenate([slots, tail]))  # sorted: ties go to the earlier row
    return picked, cache.vectors[picked] @ q


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the `k` highest scores, highest first (ties: the earlier row first)."""
    import numpy as np

    part = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    order = np.lexsort((part, -scores[part]))
    return np.asarray(part[order])
