"""What one progress report changes (`update_task`), as the pure value objects the tracker
makes of its flat keyword arguments before it writes (tasks.py): no store."""

from __future__ import annotations

import pytest

from clew.errors import ValidationError
from clew.models import StepStatus, TaskStatus
from clew.tasks import rules as tasks


def test_a_step_alone_becomes_active() -> None:
    change = tasks.step_change(2, None, None, None, None, None)
    assert change == tasks.StepChange(2, StepStatus.ACTIVE, None, None, None, {})


def test_a_step_with_a_field_keeps_its_status_unset() -> None:
    change = tasks.step_change("ab12", None, "halfway", None, None, {"agent": "bot"})
    assert change == tasks.StepChange("ab12", None, "halfway", None, None, {"agent": "bot"})


def test_no_step_means_no_step_change_and_no_step_fields() -> None:
    assert tasks.step_change(None, None, None, None, None, None) is None
    with pytest.raises(ValidationError, match="say which step"):
        tasks.step_change(None, "completed", None, None, None, None)
    with pytest.raises(ValidationError, match="say which step"):
        tasks.step_change(None, None, None, None, None, {})  # a record field given, empty


def test_the_task_change_keeps_given_fields_checked_and_the_status_chosen() -> None:
    fields = {"name": "  Deploy  ", "goal": None, "summary": "so far so good"}
    change = tasks.task_change(fields, {"k": 1}, "paused")
    assert change.fields == {"name": "Deploy", "summary": "so far so good"}
    assert change.metadata == {"k": 1}
    assert change.status is TaskStatus.PAUSED
    assert tasks.task_change({}, None, None) == tasks.TaskChange({}, None, None)
    with pytest.raises(ValidationError):
        tasks.task_change({}, None, "sleeping")


def test_a_record_change_is_given_by_a_fact_or_a_failed_step() -> None:
    assert not tasks.RecordChange({}).given
    assert tasks.RecordChange({"answer": "42"}).given
    assert tasks.RecordChange({}, error_step=3).given
