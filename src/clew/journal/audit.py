"""The journal read back and checked, a service of the Memory facade: its events (of the
space or one task, a page or the newest tail), where redaction took secrets out, its head,
and `verify` (the chain walked and the rows rebuilt, optionally against checkpoints).

Nothing here writes: the journal is written by every other service through the kernel's
`_emit`; this is how a reader, the dashboard or an auditor sees it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from clew.conversations.sessions import Sessions
from clew.core import checks
from clew.errors import ValidationError
from clew.journal.checkpoints import Checkpoints
from clew.kernel import Kernel, Service
from clew.models import Event, Redaction, VerifyReport


class Audit(Service):
    """The journal's events, redactions, head and verification (a service of Memory; takes
    the sessions, which name a session by key, and the checkpoints, which verify checks)."""

    def __init__(self, kernel: Kernel, sessions: Sessions, checkpoints: Checkpoints) -> None:
        super().__init__(kernel)
        self._sessions = sessions
        self._checkpoints = checkpoints

    def journal(
        self,
        *,
        task_id: str | None = None,
        after: int = 0,
        limit: int | None = None,
        types: Sequence[str] = (),
        newest: bool = False,
    ) -> list[Event]:
        """Return journal events in commit order, for the space or one task, of some types
        or all; with `newest`, the newest `limit` of them (a tail read: cheap on a long
        journal), still oldest first."""
        after = checks.integer(after, "after")
        limit = checks.optional_count(limit, "limit")
        if isinstance(types, str) or not all(isinstance(t, str) for t in types):
            raise ValidationError("types is a list of event types, e.g. ['plan.revised']")
        tid = self._task_id(task_id) if task_id is not None else None
        return self._store.list_events(
            task_id=tid, after=after, limit=limit, types=tuple(types), newest=bool(newest)
        )

    def redactions(
        self,
        *,
        task_id: str | None = None,
        session: str | None = None,
        kind: str | None = None,
        limit: int | None = None,
    ) -> list[Redaction]:
        """Where redaction took secrets out of what was stored, the newest first: each
        event's field, the kind and how many (never the value); of one task, one session
        (its id, a prefix or its key) or one kind when given."""
        limit = checks.optional_count(limit, "limit")
        tid = None if task_id is None else self._task_id(task_id)
        sid = None if session is None else self._sessions.get_session(session).id
        if kind is not None:
            kind = checks.name(kind, "kind")
        return self._store.list_redactions(task_id=tid, session_id=sid, kind=kind, limit=limit)

    def journal_head(self) -> int:
        """Return the space's newest event seq, or 0 (cheap: a follower polls it)."""
        return self._store.journal_head()

    def verify(
        self,
        *,
        all_spaces: bool = False,
        checkpoint: str | os.PathLike[str] | Iterable[str] | None = None,
    ) -> VerifyReport:
        """Check the space's journal chain, rebuild its rows from its journal and report any
        difference (every space in the file with `all_spaces`); with `checkpoint` (a file
        of checkpoint lines, or the lines), also whether the store is behind or diverges
        from any of them (`check_checkpoints`): the report is then ok only if neither."""
        checked = None
        if checkpoint is not None:  # first: a missing file or key is said before the long part
            checked = self._checkpoints.check_checkpoints(checkpoint, all_spaces=all_spaces)
        report = self._store.verify(all_spaces=all_spaces)
        return report if checked is None else report._replace(checkpoints=checked)
