"""Search's values: what search finds (its kinds, hits and why each ranked where it
did) and the vector index's records, from a text waiting for its vector to the index's
progress.

Like every module of clew.models, this one does without `from __future__ import
annotations`: NamedTuple compiles each field's annotation that is a string, and the hook
path imports every record (see the package's docstring).
"""

from typing import NamedTuple

from clew.models.archive import Entry


class SearchHit(NamedTuple):
    """An entry found by full-text search, with its bm25 score (lower is better) and a
    snippet with the matched words in [brackets]."""

    entry: Entry
    score: float
    snippet: str


# What search over everything finds: archive entries, task messages, commands with their
# output, conversation turns, and the decisions of the episodic trace.
RECORD_KINDS = ("entry", "message", "action", "turn", "decision")
# What search also finds beyond those indexes (outline.py): a task's name, its goal and its
# final answer, a plan step's title with its issue, and semantic memory's patterns and
# guardrails.
OUTLINE_KINDS = ("task", "goal", "step", "answer", "pattern", "guardrail")
SEARCH_KINDS = RECORD_KINDS + OUTLINE_KINDS


class Explain(NamedTuple):
    """Why a hit ranked where it did: its place and score in each ranking, the boosts it
    got, and the fused score."""

    keyword_rank: int | None  # 1-based among the keyword matches; None if no word matched
    keyword: float  # its bm25 score against the best keyword match's (0-1)
    coverage: float  # the share of the question's words it holds (0-1)
    dense_rank: int | None  # 1-based among the nearest by meaning; None without vectors
    cosine: float | None  # its similarity to the question, by meaning
    boosts: tuple[str, ...]  # why, and how much: "identifier as written +0.30", "said by Ann x1.20"
    score: float  # the fused score the hits are ordered by


class RecordHit(NamedTuple):
    """Anything recorded that a search found: an archive entry, a task message, a command
    (with its output), a conversation turn or a decision of the trace; `open` is the clew
    command that shows it."""

    kind: str  # entry, message, action, turn or decision; task, goal, step, answer,
    # pattern or guardrail (OUTLINE_KINDS)
    id: str
    task_id: str | None
    session_id: str | None  # for a turn
    turn: int | None  # for a turn: its number in the session
    created_at: str
    # entry type, message role, action status (and exit code), turn role, "decision" and
    # its outcome; ", superseded", ", resolved", ", deprecated" or ", disabled" at its end
    # for a record of history (search ranks it below the current ones)
    label: str
    title: str  # entry summary, command, a decision's action, or the text's first line
    snippet: str  # where it matched, matched words in [brackets]
    # Relevance, higher is better (search_all's fused score); a store's own reads give
    # the raw bm25 here, lower is better, before the ranking replaces it.
    score: float
    # where it matched: summary, content, command, stdout, stderr; a decision's action or
    # outcome (how it turned out: its outcome, error, state, agent, context, artifacts)
    field: str
    open: str = ""  # the clew command that shows it in full
    confident: bool = False  # the search believes this hit answers the question
    explain: Explain | None = None  # why it ranked here (asked for with explain=True)
    step_id: str | None = None  # the plan step an entry, a command or a decision belongs to
    # For a superseded entry: the current entry that replaced it (search ranks that first).
    superseded_by: str | None = None


# -- the vector index (search/vectors.py, store/portable_vectors.py) -------------------------

# The kinds of record the vector index embeds, in the order an update goes through them.
VECTOR_KINDS: tuple[str, ...] = ("entry", "message", "action", "turn", "decision")


class PendingText(NamedTuple):
    """A record whose vector for a model is missing or may be stale: its text as embedded,
    where it belongs, and the `content_hash` of the vector it has (None if it has none)."""

    kind: str
    ref_id: str
    text: str
    source_at: str  # the record's updated_at (created_at if its text never changes)
    content_hash: str | None
    task_id: str | None
    step_id: str | None
    session_id: str | None
    created_at: str


class NewVector(NamedTuple):
    """A vector to store for a record (float16 bytes, little-endian, `dim` values)."""

    kind: str
    ref_id: str
    content_hash: str
    source_at: str
    task_id: str | None
    step_id: str | None
    session_id: str | None
    created_at: str
    dim: int
    vector: bytes


class StoredVector(NamedTuple):
    """A stored vector as the in-process index loads it, `seq` its place in write order."""

    seq: int
    kind: str
    ref_id: str
    task_id: str | None
    step_id: str | None
    session_id: str | None
    created_at: str
    dim: int
    vector: bytes


class IndexStatus(NamedTuple):
    """How far the vector index is: records with a current vector of `model` of all of
    them (`model` None when no embedding model is installed: nothing can be embedded)."""

    model: str | None
    embedded: int
    total: int
    kinds: dict[str, tuple[int, int]] | None = None  # kind -> (embedded, total)

    @property
    def pending(self) -> int:
        return self.total - self.embedded

    def lag(self) -> str:
        """Say how far the index is, e.g. "embedded 9,812 of 9,820"."""
        return f"embedded {self.embedded:,} of {self.total:,}"
