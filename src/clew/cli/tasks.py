"""`clew task ...`: the task tracker and its layer-1 records."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from clew.cli.common import (
    Commands,
    OrderedOps,
    Parser,
    current_time,
    decimal,
    duration,
    folder_task,
    input_limit,
    json_arg,
    meta,
    open_memory,
    position,
    print_json,
    read_output,
    read_text,
    show,
    show_lines,
    step_ref,
    tags,
    whole,
)
from clew.cli.options import task_id, tool_option
from clew.core.text import counted
from clew.errors import ValidationError

if TYPE_CHECKING:
    from clew.models import Task


def cmd_task_new(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        task = mem.create_task(
            args.name,
            args.plan or (),
            goal=args.goal,
            workspace=args.workspace,
            metadata=meta(args.meta),
            domain=args.domain,
            priority=args.priority,
            estimate=args.estimate,
            plan_source=args.plan_source,
        )
    return show(args, task, task.id)


def cmd_task_list(args: argparse.Namespace) -> int:
    from clew.tools.views import task_line

    if args.month and not args.archived:
        raise ValidationError("--month goes with --archived")
    if args.archived or (args.all and not args.json):
        return _archived_list(args)
    with open_memory(args) as mem:
        tasks = mem.list_tasks(args.status or None, include_archived=args.all)
    now = current_time()
    return show_lines(
        args,
        tasks,
        lambda t: task_line(t, now),
        "no tasks; create one with `clew task new NAME --plan STEP ...`",
    )


def _archived_list(args: argparse.Namespace) -> int:
    """Archived tasks grouped by the month they were archived in, newest month first."""
    from clew.tools.views import task_line

    with open_memory(args) as mem:
        found = mem.archived_tasks(args.month)
        current = [] if args.archived else mem.list_tasks(args.status or None)
    now = current_time()
    for task in current:  # --all: the tasks not archived first, as `task list` shows them
        print(task_line(task, now))
    wanted = set(args.status or ())
    found = [a for a in found if not wanted or a.task.status.value in wanted]
    months: dict[str, list[Any]] = {}
    for item in found:
        months.setdefault(item.month, []).append(item.task)
    if args.json:
        print_json([{"month": m, "tasks": tasks} for m, tasks in months.items()])
        return 0
    if not months and args.archived:
        print("no archived tasks")
    elif not months and not current:
        print("no tasks; create one with `clew task new NAME --plan STEP ...`")
    for month, tasks in months.items():
        print(f"{month} ({len(tasks)} archived; `clew export --month {month}`)")
        for task in tasks:
            print(f"  {task_line(task, now)}")
    return 0


def cmd_task_show(args: argparse.Namespace) -> int:
    from clew.tools.views import task_view

    limit = None if args.all else 10
    with open_memory(args) as mem:
        task = mem.get_task(args.id)
        actions = mem.list_actions(task.id, limit=None if limit is None else limit + 1)
        messages = mem.list_messages(task.id, limit=None if limit is None else limit + 1)
        entries = mem.list_entries(task.id, limit=limit)
        files = mem.file_changes(task.id, newest=limit)
        removed = mem.removed_steps(task.id)
        record = mem.task_record(task.id)
    if args.json:
        print_json(
            {
                "task": task,
                "record": record,
                "removed_steps": removed,
                "actions": actions[:limit],
                "messages": messages[:limit],
                "entries": entries,
                "files": files,
            }
        )
        return 0
    more_actions = limit is not None and len(actions) > limit
    more_messages = limit is not None and len(messages) > limit
    print(
        task_view(
            task,
            actions[:limit],
            messages[:limit],
            current_time(),
            entries=entries,
            files=files,
            more_actions=more_actions,
            more_messages=more_messages,
            record=record,
        )
    )
    return 0


def cmd_task_update(args: argparse.Namespace) -> int:
    step_record = (args.agent, args.artifact, args.depends_on)
    if args.step is not None and args.outcome is not None:
        # With --step, --outcome is the step's; without, the task's.
        step_outcome, outcome = args.outcome, None
    else:
        step_outcome, outcome = None, args.outcome
    if any(v is not None for v in step_record) and args.step is None:
        raise ValidationError("--agent, --artifact and --depends-on need --step (which step)")
    with open_memory(args) as mem:
        task = mem.update_task(
            args.id,
            message=args.message,
            role=args.role,
            message_type=args.type,
            step=step_ref(args.step),
            step_status=args.step_status,
            step_summary=args.summary,
            active_issue=args.issue,
            status=args.status,
            name=args.name,
            goal=args.goal,
            workspace=args.workspace,
            next_objective=args.next,
            summary=args.progress,
            metadata=meta(args.meta),
            answer=read_text(args.answer_file, "answer", input_limit(args))
            if args.answer_file
            else args.answer,
            outcome=outcome,
            confidence=args.confidence,
            domain=args.domain,
            priority=args.priority,
            estimate=args.estimate,
            error=args.error_summary,
            error_step=step_ref(args.failed_step),
            step_agent=args.agent,
            step_outcome=step_outcome,
            step_artifacts=args.artifact,
            depends_on=[step_ref(d) or d for d in args.depends_on]
            if args.depends_on is not None
            else None,
        )
    if args.json:
        print_json(task)
    else:
        done = sum(1 for s in task.plan if s.status.value == "completed")
        print(f"{task.id} {task.status.value}: {done}/{len(task.plan)} steps completed")
        if args.message:
            for n in _completed_by_message(task, args.step):
                print(
                    f"step {n} completed: your message says it is done (if not: clew task"
                    f" update {task.id} --step {n} --step-status pending)"
                )
    return 0


def _completed_by_message(task: Task, step: str | None) -> list[int]:
    """The steps this update's message completed: finished in this write (every event of
    it stamps the task's time), and not the step the call named itself."""
    return [
        n
        for n, s in enumerate(task.plan, 1)
        if s.status.value == "completed"
        and s.completed_at == task.updated_at
        and step not in (str(n), s.id)
        and not (step and len(step) >= 4 and s.id.startswith(step))
    ]


def cmd_task_action(args: argparse.Namespace) -> int:
    stdin_used: list[bool] = []
    stdout = (
        args.stdout
        if args.stdout is not None
        else read_output(args.stdout_file, "stdout", stdin_used, input_limit(args))
    )
    stderr = (
        args.stderr
        if args.stderr is not None
        else read_output(args.stderr_file, "stderr", stdin_used, input_limit(args))
    )
    with open_memory(args) as mem:
        action = mem.record_action(
            args.id,
            type=args.type,
            summary=args.summary,
            command=args.command,
            cwd=args.cwd,
            exit_code=args.exit_code,
            duration_seconds=args.duration,
            stdout=stdout,
            stderr=stderr,
            input=json_arg(args.input, "--input"),
            output=json_arg(args.output, "--output"),
            status=args.status,
            step=step_ref(args.step),
            tool=args.tool,
            decision=args.decision,
            started_at=args.started_at,
            ended_at=args.ended_at,
            cpu_seconds=args.cpu_seconds,
            memory_mb=args.memory_mb,
        )
    return show(args, action, action.id)


def cmd_task_finish(args: argparse.Namespace) -> int:
    stdin_used: list[bool] = []
    with open_memory(args) as mem:
        action = mem.finish_action(
            args.action,
            status=args.status,
            exit_code=args.exit_code,
            duration_seconds=args.duration,
            stdout=read_output(args.stdout_file, "stdout", stdin_used, input_limit(args)),
            stderr=read_output(args.stderr_file, "stderr", stdin_used, input_limit(args)),
            output=json_arg(args.output, "--output"),
            summary=args.summary,
        )
    return show(args, action, f"{action.id} {action.status.value}")


def cmd_task_output(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        action = mem.get_action(args.action)
        logs = mem.list_action_logs(action.id)
    if args.json:
        print_json({"action": action, "logs": logs})
        return 0
    if args.info:
        from clew.tools.views import action_view

        print(action_view(action, logs, current_time()))
        return 0
    value = action.stderr if args.stderr else action.stdout
    data = value.encode("utf-8") if isinstance(value, str) else (value or b"")
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return 0


def cmd_task_message(args: argparse.Namespace) -> int:
    from clew.tools.views import message_view

    with open_memory(args) as mem:
        message = mem.get_message(args.message)
    return show(args, message, message_view(message, current_time()))


def cmd_task_log(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        log = mem.log_action(args.action, args.text, type=args.type)
    return show(args, log, log.id)


def cmd_task_replan(args: argparse.Namespace) -> int:
    from clew.models import AddStep, MoveStep, RemoveStep, RenameStep

    ops: list[Any] = []
    for kind, values in getattr(args, "ops", None) or []:
        if kind == "add":
            ops.append(AddStep(values[0]))
        elif kind == "insert":
            ops.append(AddStep(values[1], position=position(values[0])))
        elif kind == "remove":
            ops.append(RemoveStep(step_ref(values[0]) or values[0]))
        elif kind == "move":
            ops.append(MoveStep(step_ref(values[0]) or values[0], position(values[1])))
        else:
            ops.append(RenameStep(step_ref(values[0]) or values[0], values[1]))
    with open_memory(args) as mem:
        task = mem.replan(args.id, ops, reason=args.reason)
    if args.json:
        print_json(task)
    else:
        print(f"{task.id} plan v{task.plan_version}:")
        for number, step in enumerate(task.plan, 1):
            print(f"  {number}. {step.title} [{step.status.value}]")
    return 0


def cmd_task_where(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        brief = mem.where(args.id)
    return show(args, brief, brief.text)


def cmd_where(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        task_id, others = folder_task(mem, args.id)
        brief = mem.where(task_id)
    more = f"\n({counted(others, 'more active task')} here: `clew task list`)" if others else ""
    return show(args, brief, brief.text + more)


def cmd_task_archive(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        task = mem.archive_task(args.id, archived=not args.undo)
    return show(args, task, f"{task.id} {'archived' if task.archived else 'unarchived'}")


def cmd_task_tidy(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        done = mem.tidy(
            pause_idle_after=duration(args.pause_after),
            archive_closed_after=duration(args.archive_after),
            dry_run=args.dry_run,
        )
    if args.json:
        print_json([{"task_id": task_id, "action": what} for task_id, what in done])
    elif not done:
        print("nothing to tidy")
    else:
        verb = "would be " if args.dry_run else ""
        for task_id, what in done:
            print(f"{task_id} {verb}{what}")
    return 0


_RECORD_KINDS = ("decision", "error", "finding", "constraint", "question")


def cmd_task_record(args: argparse.Namespace) -> int:
    kind = next(k for k in _RECORD_KINDS if getattr(args, k) is not None)
    if args.resolution is not None and kind != "error":
        raise ValidationError(
            "--resolution goes with --error (resolve questions with `task resolve`)"
        )
    if (args.keep_open or args.command is not None) and kind != "error":
        raise ValidationError("--keep-open and --command go with --error")
    detail = args.detail
    if args.detail_file is not None:
        detail = read_text(args.detail_file, "detail", input_limit(args))
    with open_memory(args) as mem:
        entry = mem.add_entry(
            "discovery" if kind == "finding" else kind,
            getattr(args, kind),
            task_id=args.id,
            detail=detail,
            step=step_ref(args.step),
            tags=tags(args.tags),
            resolution=args.resolution,
            keep_open=args.keep_open,
            command=args.command,
            supersedes=args.supersedes,
        )
    return show(args, entry, entry.id)


def cmd_task_keep_open(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        entry = mem.keep_open(args.entry, keep=not args.release, task_id=args.id)
    said = "kept open" if entry.keep_open else "no longer kept open"
    return show(args, entry, f"{entry.id} {said}")


def cmd_task_resolve(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        entry = mem.resolve(args.entry, args.resolution, task_id=args.id)
    return show(args, entry, f"{entry.id} resolved")


def cmd_task_files(args: argparse.Namespace) -> int:
    from clew.tools.views import files_view

    with open_memory(args) as mem:
        if args.created or args.modified:
            changes = mem.record_files(
                args.id, created=args.created or (), modified=args.modified or ()
            )
        else:
            changes = mem.file_changes(args.id, newest=None)
    return show(args, changes, files_view(changes))


def cmd_history(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        items = mem.history(args.id)
    if args.json:
        print_json(items)
    else:
        for item in items:
            by = f"  ({item.by})" if item.by else ""
            print(f"#{item.seq:<6} {item.at[:19]}  {item.text}{by}")
    return 0


def cmd_task_summary(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        summary = mem.running_summary(args.id)
    how = f"by {summary.model}" if summary.model else "from the records"
    return show(args, summary, f"{summary.text}\n({how}, after {summary.message_count} messages)")


def _record_options(p: argparse.ArgumentParser, tool: str) -> None:
    """Options of the task record that `task new` and `task update` share."""
    tool_option(p, tool, "domain", "--domain")
    tool_option(p, tool, "priority", "--priority")
    tool_option(p, tool, "estimate", "--estimate", metavar="DURATION")


def register(commands: Any, command: Commands) -> None:
    """Add `clew task` and its subcommands."""
    task_parser = commands.add_parser(
        "task",
        help="track tasks: plans, steps, actions, messages",
        description="Track tasks: plans, steps, actions, messages.",
    )
    tasks = task_parser.add_subparsers(
        dest="task_command", metavar="TASK_COMMAND", parser_class=Parser
    )
    tasks.required = True
    _register_plans(tasks, command)
    _register_update(tasks, command)
    _register_actions(tasks, command)
    _register_where(tasks, commands, command)
    _register_records(tasks, command)
    _register_upkeep(tasks, command)


def _register_plans(tasks: Any, command: Commands) -> None:
    """`task new`, `list`, `show` and `replan`."""
    p = command(tasks, "new", cmd_task_new, "register a task with a plan; prints its id")
    tool_option(p, "task_register", "name", "name")
    tool_option(p, "task_register", "plan", "--plan", nargs="+", metavar="STEP")
    tool_option(p, "task_register", "goal", "--goal")
    tool_option(p, "task_register", "workspace", "--workspace")
    p.add_argument("--meta", action="append", metavar="KEY=VALUE", help="metadata (repeatable)")
    _record_options(p, "task_register")
    tool_option(p, "task_register", "plan_source", "--plan-source", note="(when a plan is given)")

    p = command(tasks, "list", cmd_task_list, "list tasks, most recently updated first")
    tool_option(p, "task_list", "status", "--status", action="append", note="(repeatable)")
    p.add_argument("--all", action="store_true", help="include archived tasks")
    p.add_argument(
        "--archived", action="store_true", help="only archived tasks, grouped by month archived"
    )
    p.add_argument("--month", metavar="YYYY-MM", help="with --archived: only this month")

    p = command(tasks, "show", cmd_task_show, "show a task: plan, newest actions and messages")
    p.add_argument("id", help="task id or unambiguous prefix")
    p.add_argument("--all", action="store_true", help="show every action and message")

    p = command(
        tasks,
        "replan",
        cmd_task_replan,
        "change the plan: add, insert, remove, move, rename steps (one new version)",
        "Change the plan. Operations apply in the order given and make one new plan version;"
        " the old plan stays in the journal and removed steps keep their actions."
        " Step numbers refer to the plan as it stands when each operation applies.",
    )
    task_id(p, "task_plan")
    _replan_operations(p)
    tool_option(p, "task_plan", "reason", "--reason")


def _replan_operations(p: Any) -> None:
    """`task replan`'s operations, applied in the order given (OrderedOps)."""
    p.add_argument("--add", action=OrderedOps, dest="add", metavar="TITLE", help="append a step")
    p.add_argument(
        "--insert",
        action=OrderedOps,
        dest="insert",
        nargs=2,
        metavar=("POS", "TITLE"),
        help="insert a step at position POS",
    )
    p.add_argument(
        "--remove", action=OrderedOps, dest="remove", metavar="STEP", help="remove a step"
    )
    p.add_argument(
        "--move",
        action=OrderedOps,
        dest="move",
        nargs=2,
        metavar=("STEP", "POS"),
        help="move a step to position POS",
    )
    p.add_argument(
        "--rename",
        action=OrderedOps,
        dest="rename",
        nargs=2,
        metavar=("STEP", "TITLE"),
        help="rename a step",
    )


def _register_update(tasks: Any, command: Commands) -> None:
    """`task update`: what task_update does, and the task's own fields."""
    p = command(
        tasks,
        "update",
        cmd_task_update,
        "report progress: a message, a step's status, the task's status",
        "Report progress in one atomic call. `--step N` alone marks step N active.",
    )
    task_id(p, "task_update")
    tool_option(p, "task_update", "message", "--message", "-m")
    p.add_argument("--role", default="agent", help="message role: agent, system or user")
    p.add_argument("--type", help="message type: text, lifecycle, progress, wait, stuck or plan")
    tool_option(p, "task_update", "step", "--step")
    tool_option(p, "task_update", "step_status", "--step-status")
    tool_option(p, "task_update", "step_summary", "--summary")
    tool_option(p, "task_update", "active_issue", "--issue", note="('' clears it)")
    tool_option(p, "task_update", "status", "--status")
    p.add_argument("--name", help="rename the task")
    p.add_argument("--goal", help="change the goal")
    p.add_argument("--workspace", help="change the workspace")
    tool_option(p, "task_update", "next_objective", "--next", metavar="TEXT")
    tool_option(p, "task_update", "summary", "--progress", metavar="TEXT")
    p.add_argument("--meta", action="append", metavar="KEY=VALUE", help="set metadata (repeatable)")
    _record_options(p, "task_update")
    _update_record_options(p)


def _update_record_options(p: Any) -> None:
    """`task update`'s options of the task record and of the step's."""
    p.add_argument(
        "--outcome",
        metavar="TEXT",
        help="the outcome: of the step with --step, else of the task (e.g. success)",
    )
    tool_option(p, "task_update", "answer", "--answer", metavar="TEXT")
    p.add_argument("--answer-file", metavar="FILE", help="read the final answer from FILE")
    tool_option(p, "task_update", "confidence", "--confidence")
    tool_option(p, "task_update", "error_summary", "--error-summary", metavar="TEXT")
    tool_option(p, "task_update", "failed_step", "--failed-step", metavar="STEP")
    tool_option(p, "task_update", "step_agent", "--agent")
    tool_option(
        p,
        "task_update",
        "step_artifacts",
        "--artifact",
        action="append",
        metavar="REF",
        note="(repeatable; replaces the list)",
    )
    tool_option(
        p,
        "task_update",
        "depends_on",
        "--depends-on",
        nargs="+",
        metavar="STEP",
        note="(replaces the list)",
    )


def _register_actions(tasks: Any, command: Commands) -> None:
    """`task action`, `finish`, `output`, `message` and `log`."""
    p = command(
        tasks,
        "action",
        cmd_task_action,
        "record an action, e.g. a command with its exit code and output",
        "Record an action. Output is stored verbatim, bytes included; read it from a file"
        " or from stdin with '-', e.g. `make test 2>&1 | clew task action T --command 'make"
        " test' --exit-code 1 --stdout-file -`.",
    )
    p.add_argument("id", help="task id or unambiguous prefix")
    p.add_argument("--command", "-c", help="the command line that ran")
    p.add_argument("--summary", help="what the action did (default: the command)")
    p.add_argument("--exit-code", type=whole, help="the command's exit code (non-zero = failed)")
    p.add_argument("--cwd", help="the directory the command ran in")
    _action_result_options(p, inline=True)
    p.add_argument("--step", help="the plan step it belongs to (number or id)")
    p.add_argument(
        "--type",
        default="cli",
        help="action type: cli, gui, wait, vision, reasoning, tool or other",
    )
    p.add_argument("--status", help="started, completed or failed (default: from the exit code)")
    p.add_argument("--input", metavar="JSON", help="structured input, a JSON object")
    p.add_argument("--output", metavar="JSON", help="structured output, a JSON object")
    p.add_argument("--tool", help="for a tool call of the trace: the tool's name")
    p.add_argument("--decision", metavar="DECISION_ID", help="the trace decision that made it")
    p.add_argument("--started-at", metavar="TIME", help="when it started (ISO time)")
    p.add_argument("--ended-at", metavar="TIME", help="when it ended (ISO time)")
    p.add_argument("--cpu-seconds", type=decimal, help="CPU time it used")
    p.add_argument("--memory-mb", type=decimal, help="its peak memory, in MB")

    p = command(tasks, "finish", cmd_task_finish, "finish an action that was recorded as started")
    p.add_argument("action", help="action id or unambiguous prefix")
    p.add_argument("--status", help="completed or failed (default: from the exit code)")
    p.add_argument("--exit-code", type=whole, help="the command's exit code")
    _action_result_options(p, inline=False)
    p.add_argument("--output", metavar="JSON", help="structured output, a JSON object")
    p.add_argument("--summary", help="a new summary")
    _register_action_reads(tasks, command)


def _action_result_options(p: Any, *, inline: bool) -> None:
    """How long an action took and its output: inline (`task action` only) or from files."""
    p.add_argument("--duration", type=decimal, metavar="SECONDS", help="how long it took")
    if inline:
        p.add_argument("--stdout", help="standard output, given inline")
        p.add_argument("--stderr", help="standard error, given inline")
    p.add_argument(
        "--stdout-file", metavar="FILE", help="read standard output from FILE ('-': stdin)"
    )
    p.add_argument(
        "--stderr-file", metavar="FILE", help="read standard error from FILE ('-': stdin)"
    )


def _register_action_reads(tasks: Any, command: Commands) -> None:
    """`task output`, `message` and `log`."""
    p = command(
        tasks, "output", cmd_task_output, "print an action's stdout (or stderr) exactly as stored"
    )
    p.add_argument("action", help="action id or unambiguous prefix")
    p.add_argument("--stderr", action="store_true", help="print standard error instead")
    p.add_argument("--info", action="store_true", help="describe the action instead")

    p = command(tasks, "message", cmd_task_message, "print one task message in full")
    p.add_argument("message", metavar="MESSAGE_ID", help="message id or unambiguous prefix")

    p = command(tasks, "log", cmd_task_log, "add a log line to an action")
    p.add_argument("action", help="action id or unambiguous prefix")
    p.add_argument("text", help="the log line")
    p.add_argument("--type", default="info", help="log type (default: info)")


def _register_where(tasks: Any, commands: Any, command: Commands) -> None:
    """`task where`, and `clew where` for this folder's task."""
    p = command(tasks, "where", cmd_task_where, 'answer "where was I?" for a task')
    p.add_argument("id", help="task id or unambiguous prefix")

    p = command(
        commands,
        "where",
        cmd_where,
        '"where was I?" for this folder\'s active task, or for the task given',
        'Answer "where was I?": for the task given, else for the most recently updated'
        " active task whose workspace is this folder (or holds it, or lies in it).",
    )
    p.add_argument("id", nargs="?", help="task id or unambiguous prefix (default: this folder's)")


def _register_records(tasks: Any, command: Commands) -> None:
    """`task record`, `resolve` and `keep-open`: what task_record does."""
    p = command(
        tasks,
        "record",
        cmd_task_record,
        "record a decision, error, finding, constraint or question; prints its id",
        "Record one fact about a task, stored once as a typed entry and shown in its state."
        " Exactly one of --decision, --error, --finding, --constraint, --question.",
    )
    task_id(p, "task_record")
    kinds = p.add_mutually_exclusive_group(required=True)
    for kind in _RECORD_KINDS:
        tool_option(kinds, "task_record", kind, f"--{kind}", metavar="TEXT")
    tool_option(p, "task_record", "resolution", "--resolution", metavar="TEXT")
    tool_option(p, "task_record", "command", "--command", metavar="CMD")
    tool_option(p, "task_record", "keep_open", "--keep-open")
    p.add_argument(
        "--supersedes",
        metavar="ENTRY",
        help="an earlier entry this one replaces (a decision reversed); search and the state"
        " then show the new one as current",
    )
    tool_option(p, "task_record", "step", "--step")
    p.add_argument("--detail", metavar="TEXT", help="the full detail, verbatim")
    p.add_argument("--detail-file", metavar="FILE", help="read the detail from FILE ('-': stdin)")
    p.add_argument("--tags", metavar="A,B", help="comma-separated tags")

    p = command(
        tasks,
        "resolve",
        cmd_task_resolve,
        "resolve an open error (or answer a question)",
    )
    task_id(p, "task_record")
    tool_option(p, "task_record", "resolves", "entry", metavar="ERROR_ID")
    tool_option(p, "task_record", "resolution", "--resolution", required=True, metavar="TEXT")

    p = command(
        tasks,
        "keep-open",
        cmd_task_keep_open,
        "keep an open error open until you resolve it",
        "clew never resolves an error you recorded; it resolves its own copy of a failed"
        " command when that same command passes. Keep-open makes any open error yours to"
        " resolve: later passing runs of its command are shown beside it as evidence.",
    )
    task_id(p, "task_record")
    tool_option(p, "task_record", "keeps_open", "entry", metavar="ERROR_ID")
    p.add_argument(
        "--release", action="store_true", help="no longer kept open (clew's copy resolves again)"
    )


def _register_upkeep(tasks: Any, command: Commands) -> None:
    """`task files`, `summary`, `history`, `archive` and `tidy`."""
    p = command(
        tasks,
        "files",
        cmd_task_files,
        "record files the task created or modified; without options, list them",
    )
    p.add_argument("id", help="task id or unambiguous prefix")
    p.add_argument("--created", nargs="+", metavar="PATH", help="files the task created")
    p.add_argument("--modified", nargs="+", metavar="PATH", help="files the task modified")

    p = command(
        tasks,
        "summary",
        cmd_task_summary,
        "the task's running summary (the model's newest, else one from the records)",
    )
    p.add_argument("id", help="task id or unambiguous prefix")

    p = command(tasks, "history", cmd_history, "a task's whole history, in order")
    p.add_argument("id", help="task id or unambiguous prefix")

    p = command(tasks, "archive", cmd_task_archive, "hide a task from `task list` (kept in full)")
    p.add_argument("id", help="task id or unambiguous prefix")
    p.add_argument("--undo", action="store_true", help="unarchive instead")

    p = command(
        tasks,
        "tidy",
        cmd_task_tidy,
        "pause idle tasks and archive long-closed ones",
        "Pause active tasks not updated for a while (not those waiting on a wait) and archive"
        " tasks closed long ago; nothing is deleted. Maintenance does this by itself once an"
        " interval (see `clew maintain`); this is the manual form, with its own thresholds.",
    )
    p.add_argument("--pause-after", default="24h", help="idle time before pausing (default 24h)")
    p.add_argument(
        "--archive-after", default="7d", help="time closed before archiving (default 7d)"
    )
    p.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")
