"""The backend contract: what the facade needs of a store, one protocol per subject.

A backend provides a journal core (`Journal`: transactions, appending events, resolving ids,
the events themselves, verify) and the reads of each subject: tasks, the archive, the
ledger (actions, commands, the trace, semantic memory), conversations, jobs and model use,
the lifecycle (waits, schedules, archived tasks), the task record and the vector index
(its writes too: derived rows, outside the journal). `Store` is their union. Nothing here
names a SQL dialect or a driver type: search takes a structured `search.Query`, which each
backend compiles. Each subject's protocols are a module of this package; this module is
their union and the one to import them from.

Rules every method keeps unless its docstring says otherwise:

- Scope: a store is opened on one space and reads only that space's rows.
- Not found: a `get_*` of an id the space does not have raises `NotFoundError`; a `find_*`,
  `*_by_*` or `latest_*` returns None; a listing returns an empty list.
- Order: newest first is by `created_at`, ties broken by `seq` (the journal seq of the
  event that made the row), so rows written at one moment keep their write order;
  oldest first is the reverse. Every listing has a total order.
- Limits: `limit=None` is no limit; a limit keeps the first `limit` rows of that order.
- Reads inside `transaction()` see one snapshot; outside, each call is its own.
"""

from __future__ import annotations

from typing import Protocol

from clew.store.contract.admin import ImportLog, KeyStore, RoleAdmin
from clew.store.contract.archive import ArchiveReads
from clew.store.contract.conversations import ConversationReads
from clew.store.contract.graph import (
    CheckpointStore,
    GraphBlob,
    GraphCheckpoint,
    GraphMetadata,
    GraphWrite,
)
from clew.store.contract.jobs import JobReads, LifecycleReads
from clew.store.contract.journal import Journal
from clew.store.contract.search import TextSearch
from clew.store.contract.tasks import LedgerReads, RecordReads, TaskReads
from clew.store.contract.vectors import VectorIndex, VectorReads, VectorWrites


class Store(
    Journal,
    TaskReads,
    ArchiveReads,
    LedgerReads,
    ConversationReads,
    TextSearch,
    JobReads,
    LifecycleReads,
    RecordReads,
    VectorReads,
    VectorWrites,
    VectorIndex,
    KeyStore,
    RoleAdmin,
    ImportLog,
    Protocol,
):
    """Everything the facade needs of a backend: the journal core and every subject's reads."""


__all__ = [
    "ArchiveReads",
    "CheckpointStore",
    "ConversationReads",
    "GraphBlob",
    "GraphCheckpoint",
    "GraphMetadata",
    "GraphWrite",
    "ImportLog",
    "JobReads",
    "Journal",
    "KeyStore",
    "LedgerReads",
    "LifecycleReads",
    "RecordReads",
    "RoleAdmin",
    "Store",
    "TaskReads",
    "TextSearch",
    "VectorIndex",
    "VectorReads",
    "VectorWrites",
]
