"""The utility model's routing and its cost governor, a service of Memory: which model
answers, whether the caps allow another call, and the record of every call and its cost.
A call refused or failed is recorded too; the deterministic rules answer instead."""

from __future__ import annotations

import time
from datetime import UTC, timedelta
from typing import NamedTuple

from clew.core import checks
from clew.core.ids import new_id
from clew.errors import ModelError
from clew.kernel import Service
from clew.models import (
    ModelCall,
)
from clew.providers import Completion, Message, Provider

MAX_DAYS = 36_500  # a usage report reaches back at most 100 years


class Usage(NamedTuple):
    """What the utility model cost: per day and per task, against the caps."""

    calls: int
    tokens: int
    by_day: tuple[tuple[str, int, int], ...]  # (YYYY-MM-DD, calls, tokens)
    by_task: tuple[tuple[str | None, int, int], ...]
    failed_calls: int
    limits: dict[str, int]


class Governor(Service):
    """Model routing, caps and usage (a service of Memory). Its private calls (`_model_for`,
    `_refusal`, `_call`) are for what calls a model (jobs.py, utility.py), not for users."""

    # -- models and the cost governor ------------------------------------------------------

    def _model_for(self, purpose: str, question: str = "") -> tuple[str, Provider] | None:
        """Route: the small model first (local); a complex question to the
        large one when it is configured. None when no model is configured."""
        small, large = self.settings.small, self.settings.large
        complex_ = False
        if purpose == "ask":
            from clew.state import summaries  # lazily: not on the hook path

            complex_ = summaries.is_complex(question)
        if large is not None and (small is None or complex_):
            return "large", large
        if small is not None:
            return "small", small
        return ("large", large) if large is not None else None

    def _refusal(self, task_id: str | None) -> str | None:
        """Why the cost governor refuses another call now, or None."""
        caps = self.settings.limits or {}
        day = self._clock().astimezone(UTC).strftime("%Y-%m-%dT00:00:00.000000Z")
        checks_ = []
        if task_id is not None:
            calls, tokens = self._store.usage_totals(task_id=task_id)
            checks_ += [("calls_per_task", calls), ("tokens_per_task", tokens)]
        calls, tokens = self._store.usage_totals(since=day)
        checks_ += [("calls_per_day", calls), ("tokens_per_day", tokens)]
        for key, used in checks_:
            cap = caps.get(key)
            if cap is not None and used >= cap:
                return f"the {key.replace('_', ' ')} cap ({cap:,}) is reached; rules answered"
        return None

    def _call(
        self, model: tuple[str, Provider], purpose: str, task_id: str | None, prompt: list[Message]
    ) -> Completion:
        """Call a model and record the call (and its cost), whether it answers or not."""
        role, provider = model
        started = time.perf_counter()
        try:
            answer = provider.complete(prompt, max_tokens=1500 if purpose == "extract" else 600)
        except ModelError as exc:
            self._record_call(role, provider, purpose, task_id, started, None, str(exc))
            raise
        self._record_call(role, provider, purpose, task_id, started, answer, None)
        return answer

    def _record_call(
        self,
        role: str,
        provider: Provider,
        purpose: str,
        task_id: str | None,
        started: float,
        answer: Completion | None,
        error: str | None,
    ) -> None:
        call = {
            "id": new_id(),
            "purpose": purpose,
            "role": role,
            "provider": provider.name,
            "model": answer.model if answer else provider.model,
            "prompt_tokens": answer.prompt_tokens if answer else 0,
            "completion_tokens": answer.completion_tokens if answer else 0,
            "seconds": round(time.perf_counter() - started, 3),
            "ok": answer is not None,
            "error": error,
        }
        with self._write() as at:
            self._emit("model.called", task_id, {"call": call}, at)

    def usage(self, task_id: str | None = None, *, days: int = 7) -> Usage:
        """What the utility model cost over the last `days` days (for one task or all)."""
        tid = None if task_id is None else self._task_id(task_id)
        since = (
            self._clock() - timedelta(days=checks.count(days, "days", most=MAX_DAYS))
        ).astimezone(UTC)
        calls: list[ModelCall] = self._store.model_calls(
            task_id=tid, since=since.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        )
        by_day: dict[str, list[int]] = {}
        by_task: dict[str | None, list[int]] = {}
        for call in calls:
            tokens = call.prompt_tokens + call.completion_tokens
            for key, table in ((call.created_at[:10], by_day), (call.task_id, by_task)):
                row = table.setdefault(key, [0, 0])  # type: ignore[arg-type]
                row[0] += 1
                row[1] += tokens
        return Usage(
            calls=len(calls),
            tokens=sum(c.prompt_tokens + c.completion_tokens for c in calls),
            by_day=tuple((d, v[0], v[1]) for d, v in sorted(by_day.items())),
            by_task=tuple(
                (t, v[0], v[1]) for t, v in sorted(by_task.items(), key=lambda x: -x[1][1])
            ),
            failed_calls=sum(1 for c in calls if not c.ok),
            limits=dict(self.settings.limits or {}),
        )
