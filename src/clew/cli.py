"""The `clew` command: a thin adapter that parses arguments, calls Memory and prints.

Exit codes: 0 success, 1 a check that found a problem (`verify`), 2 bad input
or an unusable store (one line on stderr, never a traceback), 130 interrupted.
Every read command takes --json; ids may be any unambiguous prefix.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any, NoReturn

from clew import __version__
from clew.errors import ClewError, ValidationError

if TYPE_CHECKING:
    from clew.memory import Memory

Handler = Callable[[argparse.Namespace], int]


class UsageError(ClewError):
    """The command line itself is wrong."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the --help to read."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")


# -- helpers --------------------------------------------------------------------------------


def _open(args: argparse.Namespace) -> Memory:
    import clew

    return clew.open(args.db, space=args.space)


def _print_json(value: Any) -> None:
    from clew.models import to_jsonable

    print(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False))


def _show(args: argparse.Namespace, value: Any, text: str) -> int:
    """Print `value` as JSON under --json, else `text`; return the success exit code."""
    if args.json:
        _print_json(value)
    else:
        print(text)
    return 0


def _now() -> Any:
    from clew.clock import utcnow

    return utcnow()


def _meta(pairs: Sequence[str] | None) -> dict[str, Any] | None:
    """Parse repeated KEY=VALUE options; a VALUE that is valid JSON is taken as JSON."""
    if not pairs:
        return None
    result: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ValidationError(f"metadata {pair!r} is not KEY=VALUE")
        try:
            result[key.strip()] = json.loads(raw)
        except ValueError:
            result[key.strip()] = raw
    return result


def _json_arg(text: str | None, field: str) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValidationError(f"{field} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValidationError(f"{field} must be a JSON object like '{{\"key\": 1}}'")
    return value


def _read_output(source: str | None, field: str, stdin_used: list[bool]) -> bytes | None:
    """Read a command's output from a file, or from stdin for '-', as exact bytes."""
    if source is None:
        return None
    if source == "-":
        if stdin_used:
            raise ValidationError("only one of --stdout-file and --stderr-file can read stdin")
        stdin_used.append(True)
        return sys.stdin.buffer.read()
    try:
        with open(source, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise ValidationError(f"cannot read {field} from {source}: {exc.strerror}") from None


def _step_ref(text: str | None) -> int | str | None:
    if text is None:
        return None
    return int(text) if text.strip().isdigit() else text


# -- commands -------------------------------------------------------------------------------


def cmd_init(args: argparse.Namespace) -> int:
    from clew.location import STORE_DIR, STORE_FILE

    path = os.path.join(os.getcwd(), STORE_DIR, STORE_FILE)
    existed = os.path.exists(path)
    import clew

    with clew.open(path, space=args.space):
        pass
    if args.json:
        _print_json({"path": path, "created": not existed})
    else:
        verb = "already has" if existed else "created"
        print(f"{verb} a clew store at {path}; clew commands run below this folder use it")
    return 0


def cmd_task_new(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        task = mem.create_task(
            args.name,
            args.plan or (),
            goal=args.goal,
            workspace=args.workspace,
            metadata=_meta(args.meta),
        )
    return _show(args, task, task.id)


def cmd_task_list(args: argparse.Namespace) -> int:
    from clew.views import task_line

    with _open(args) as mem:
        tasks = mem.list_tasks(args.status or None, include_archived=args.all)
    if args.json:
        _print_json(tasks)
    elif not tasks:
        print("no tasks; create one with `clew task new NAME --plan STEP ...`")
    else:
        now = _now()
        for task in tasks:
            print(task_line(task, now))
    return 0


def cmd_task_show(args: argparse.Namespace) -> int:
    from clew.views import task_view

    limit = None if args.all else 10
    with _open(args) as mem:
        task = mem.get_task(args.id)
        actions = mem.list_actions(task.id, limit=None if limit is None else limit + 1)
        messages = mem.list_messages(task.id, limit=None if limit is None else limit + 1)
        entries = mem.list_entries(task.id, limit=limit)
        files = mem.file_changes(task.id, newest=limit)
        removed = mem.removed_steps(task.id)
    if args.json:
        _print_json(
            {
                "task": task,
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
            _now(),
            entries=entries,
            files=files,
            more_actions=more_actions,
            more_messages=more_messages,
        )
    )
    return 0


def cmd_task_update(args: argparse.Namespace) -> int:
    if args.step_status is None and args.summary is None and args.issue is None and args.step:
        args.step_status = "active"  # `--step N` alone means: I am now working on step N
    with _open(args) as mem:
        task = mem.update_task(
            args.id,
            message=args.message,
            role=args.role,
            message_type=args.type,
            step=_step_ref(args.step),
            step_status=args.step_status,
            step_summary=args.summary,
            active_issue=args.issue,
            status=args.status,
            name=args.name,
            goal=args.goal,
            workspace=args.workspace,
            next_objective=args.next,
            summary=args.progress,
            metadata=_meta(args.meta),
        )
    if args.json:
        _print_json(task)
    else:
        done = sum(1 for s in task.plan if s.status.value == "completed")
        print(f"{task.id} {task.status.value}: {done}/{len(task.plan)} steps completed")
    return 0


def cmd_task_action(args: argparse.Namespace) -> int:
    stdin_used: list[bool] = []
    stdout = (
        args.stdout
        if args.stdout is not None
        else _read_output(args.stdout_file, "stdout", stdin_used)
    )
    stderr = (
        args.stderr
        if args.stderr is not None
        else _read_output(args.stderr_file, "stderr", stdin_used)
    )
    with _open(args) as mem:
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
            input=_json_arg(args.input, "--input"),
            output=_json_arg(args.output, "--output"),
            status=args.status,
            step=_step_ref(args.step),
        )
    return _show(args, action, action.id)


def cmd_task_finish(args: argparse.Namespace) -> int:
    stdin_used: list[bool] = []
    with _open(args) as mem:
        action = mem.finish_action(
            args.action,
            status=args.status,
            exit_code=args.exit_code,
            duration_seconds=args.duration,
            stdout=_read_output(args.stdout_file, "stdout", stdin_used),
            stderr=_read_output(args.stderr_file, "stderr", stdin_used),
            output=_json_arg(args.output, "--output"),
            summary=args.summary,
        )
    return _show(args, action, f"{action.id} {action.status.value}")


def cmd_task_output(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        action = mem.get_action(args.action)
        logs = mem.list_action_logs(action.id)
    if args.json:
        _print_json({"action": action, "logs": logs})
        return 0
    if args.info:
        from clew.views import action_view

        print(action_view(action, logs, _now()))
        return 0
    value = action.stderr if args.stderr else action.stdout
    data = value.encode("utf-8") if isinstance(value, str) else (value or b"")
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return 0


def cmd_task_log(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        log = mem.log_action(args.action, args.text, type=args.type)
    return _show(args, log, log.id)


def cmd_task_replan(args: argparse.Namespace) -> int:
    from clew.models import AddStep, MoveStep, RemoveStep, RenameStep

    ops: list[Any] = []
    for kind, values in getattr(args, "ops", None) or []:
        if kind == "add":
            ops.append(AddStep(values[0]))
        elif kind == "insert":
            ops.append(AddStep(values[1], position=_position(values[0])))
        elif kind == "remove":
            ops.append(RemoveStep(_step_ref(values[0]) or values[0]))
        elif kind == "move":
            ops.append(MoveStep(_step_ref(values[0]) or values[0], _position(values[1])))
        else:
            ops.append(RenameStep(_step_ref(values[0]) or values[0], values[1]))
    with _open(args) as mem:
        task = mem.replan(args.id, ops, reason=args.reason)
    if args.json:
        _print_json(task)
    else:
        print(f"{task.id} plan v{task.plan_version}:")
        for number, step in enumerate(task.plan, 1):
            print(f"  {number}. {step.title} [{step.status.value}]")
    return 0


def _position(text: str) -> int:
    if not text.strip().isdigit():
        raise ValidationError(f"position {text!r} must be a step number like 2")
    return int(text)


def cmd_task_where(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        brief = mem.where(args.id)
    return _show(args, brief, brief.text)


def cmd_task_archive(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        task = mem.archive_task(args.id, archived=not args.undo)
    return _show(args, task, f"{task.id} {'archived' if task.archived else 'unarchived'}")


def _duration(text: str) -> float | None:
    """Parse '90s', '30m', '24h', '7d' (or 'never') into seconds."""
    if text == "never":
        return None
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    number, unit = text[:-1], text[-1:]
    try:
        if unit not in units:
            raise ValueError(text)
        return float(number) * units[unit]
    except ValueError:
        raise ValidationError(f"duration {text!r} is not like 90s, 30m, 24h, 7d or never") from None


def cmd_task_tidy(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        done = mem.tidy(
            pause_idle_after=_duration(args.pause_after),
            archive_closed_after=_duration(args.archive_after),
            dry_run=args.dry_run,
        )
    if args.json:
        _print_json([{"task_id": task_id, "action": what} for task_id, what in done])
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
    detail = args.detail
    if args.detail_file is not None:
        detail = _read_text(args.detail_file, "detail")
    with _open(args) as mem:
        entry = mem.add_entry(
            "discovery" if kind == "finding" else kind,
            getattr(args, kind),
            task_id=args.id,
            detail=detail,
            step=_step_ref(args.step),
            tags=_tags(args.tags),
            resolution=args.resolution,
        )
    return _show(args, entry, entry.id)


def cmd_task_resolve(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        entry = mem.resolve(args.entry, args.resolution, task_id=args.id)
    return _show(args, entry, f"{entry.id} resolved")


def cmd_task_files(args: argparse.Namespace) -> int:
    from clew.views import files_view

    with _open(args) as mem:
        if args.created or args.modified:
            changes = mem.record_files(
                args.id, created=args.created or (), modified=args.modified or ()
            )
        else:
            changes = mem.file_changes(args.id, newest=None)
    return _show(args, changes, files_view(changes))


def cmd_entries(args: argparse.Namespace) -> int:
    from clew.views import entry_line

    with _open(args) as mem:
        entries = mem.list_entries(
            args.task,
            type=args.type or None,
            status=args.status,
            step=_step_ref(args.step),
            limit=args.limit,
        )
        numbers = {}
        if args.task is not None:
            task = mem.get_task(args.task)
            numbers = {s.id: n for n, s in enumerate(task.plan, 1)}
    if args.json:
        _print_json(entries)
    elif not entries:
        print("no entries match; record some with `clew task record TASK --decision TEXT`")
    else:
        now = _now()
        for entry in entries:
            print(entry_line(entry, now, numbers))
    return 0


def cmd_state(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        state = mem.state(args.id, budget=args.budget)
    if args.json:
        _print_json(state)
    else:
        sys.stdout.write(state.text)
    return 0


def cmd_prime(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        primer = mem.prime(args.workspace, budget=args.budget, limit=args.limit)
    if args.json:
        _print_json(primer)
    else:
        sys.stdout.write(primer.text)
    return 0


def _tags(text: str | None) -> list[str]:
    return [] if not text else [t.strip() for t in text.split(",") if t.strip()]


def _read_text(source: str, field: str) -> str:
    data = _read_output(source, field, [])
    assert data is not None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError(f"{field} from {source} is not UTF-8 text") from None


def cmd_journal(args: argparse.Namespace) -> int:
    from clew.views import event_line

    with _open(args) as mem:
        events = mem.journal(task_id=args.task, after=args.after, limit=args.limit)
    if args.json:
        _print_json(events)
    else:
        for event in events:
            print(event_line(event))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from clew.views import verify_view

    with _open(args) as mem:
        report = mem.verify()
    if args.json:
        _print_json({"ok": report.ok, **_as_dict(report)})
    else:
        print(verify_view(report))
    return 0 if report.ok else 1


def _as_dict(value: Any) -> dict[str, Any]:
    from clew.models import to_jsonable

    result: dict[str, Any] = to_jsonable(value)
    return result


def cmd_demo(args: argparse.Namespace) -> int:
    from clew.demo import run_demo

    return run_demo(keep=args.keep)


# -- the parser -----------------------------------------------------------------------------


class _Op(argparse.Action):
    """Collect replanning options in the order they were given."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        ops = list(getattr(namespace, "ops", None) or [])
        ops.append((self.dest, list(values) if isinstance(values, list) else [values]))
        namespace.ops = ops


def _common() -> argparse.ArgumentParser:
    # SUPPRESS lets these options appear before or after the command without clobbering.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db",
        default=argparse.SUPPRESS,
        metavar="PATH",
        help="store file (default: $CLEW_DB, else the nearest .clew/ upward, else a user store)",
    )
    common.add_argument(
        "--space",
        default=argparse.SUPPRESS,
        help="namespace to work in (default: $CLEW_SPACE, else 'default')",
    )
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON for programs"
    )
    return common


def build_parser() -> Parser:
    """Build the whole `clew` argument parser."""
    common = _common()
    root = Parser(
        prog="clew",
        description="clew: a task memory for LLM agents that never loses the thread.",
        parents=[common],
    )
    root.add_argument("--version", action="version", version=f"clew {__version__}")
    commands = root.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True

    def command(
        group: Any, name: str, handler: Handler, help: str, description: str = ""
    ) -> Parser:
        sub: Parser = group.add_parser(
            name, help=help, description=description or help, parents=[common]
        )
        sub.set_defaults(handler=handler)
        return sub

    command(commands, "init", cmd_init, "create a project store (.clew/) in this folder")

    task_parser = commands.add_parser(
        "task",
        help="track tasks: plans, steps, actions, messages",
        description="Track tasks: plans, steps, actions, messages.",
    )
    tasks = task_parser.add_subparsers(
        dest="task_command", metavar="TASK_COMMAND", parser_class=Parser
    )
    tasks.required = True

    p = command(tasks, "new", cmd_task_new, "register a task with a plan; prints its id")
    p.add_argument("name", help="the task's name")
    p.add_argument("--plan", nargs="+", metavar="STEP", help="plan step titles, in order")
    p.add_argument("--goal", help="what done looks like")
    p.add_argument("--workspace", help="folder or project the task works in")
    p.add_argument("--meta", action="append", metavar="KEY=VALUE", help="metadata (repeatable)")

    p = command(tasks, "list", cmd_task_list, "list tasks, most recently updated first")
    p.add_argument(
        "--status",
        action="append",
        choices=["active", "paused", "completed", "failed", "cancelled"],
        help="only tasks with this status (repeatable)",
    )
    p.add_argument("--all", action="store_true", help="include archived tasks")

    p = command(tasks, "show", cmd_task_show, "show a task: plan, newest actions and messages")
    p.add_argument("id", help="task id or unambiguous prefix")
    p.add_argument("--all", action="store_true", help="show every action and message")

    p = command(
        tasks,
        "update",
        cmd_task_update,
        "report progress: a message, a step's status, the task's status",
        "Report progress in one atomic call. `--step N` alone marks step N active.",
    )
    p.add_argument("id", help="task id or unambiguous prefix")
    p.add_argument("--message", "-m", help="a progress message to record")
    p.add_argument("--role", default="agent", help="message role: agent, system or user")
    p.add_argument("--type", help="message type: text, lifecycle, progress, wait, stuck or plan")
    p.add_argument("--step", help="step number (1-based) or step id")
    p.add_argument(
        "--step-status", help="new step status: pending, active, completed, failed or skipped"
    )
    p.add_argument("--summary", help="the step's summary (what was done, where results are)")
    p.add_argument("--issue", help="the step's active issue ('' clears it)")
    p.add_argument(
        "--status", help="new task status: active, paused, completed, failed or cancelled"
    )
    p.add_argument("--name", help="rename the task")
    p.add_argument("--goal", help="change the goal")
    p.add_argument("--workspace", help="change the workspace")
    p.add_argument("--next", metavar="TEXT", help="the next objective (shown in the state)")
    p.add_argument("--progress", metavar="TEXT", help="a summary of progress so far")
    p.add_argument("--meta", action="append", metavar="KEY=VALUE", help="set metadata (repeatable)")

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
    p.add_argument("--exit-code", type=int, help="the command's exit code (non-zero = failed)")
    p.add_argument("--cwd", help="the directory the command ran in")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="how long it took")
    p.add_argument("--stdout", help="standard output, given inline")
    p.add_argument("--stderr", help="standard error, given inline")
    p.add_argument(
        "--stdout-file", metavar="FILE", help="read standard output from FILE ('-': stdin)"
    )
    p.add_argument(
        "--stderr-file", metavar="FILE", help="read standard error from FILE ('-': stdin)"
    )
    p.add_argument("--step", help="the plan step it belongs to (number or id)")
    p.add_argument(
        "--type", default="cli", help="action type: cli, gui, wait, vision, reasoning or other"
    )
    p.add_argument("--status", help="started, completed or failed (default: from the exit code)")
    p.add_argument("--input", metavar="JSON", help="structured input, a JSON object")
    p.add_argument("--output", metavar="JSON", help="structured output, a JSON object")

    p = command(tasks, "finish", cmd_task_finish, "finish an action that was recorded as started")
    p.add_argument("action", help="action id or unambiguous prefix")
    p.add_argument("--status", help="completed or failed (default: from the exit code)")
    p.add_argument("--exit-code", type=int, help="the command's exit code")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="how long it took")
    p.add_argument(
        "--stdout-file", metavar="FILE", help="read standard output from FILE ('-': stdin)"
    )
    p.add_argument(
        "--stderr-file", metavar="FILE", help="read standard error from FILE ('-': stdin)"
    )
    p.add_argument("--output", metavar="JSON", help="structured output, a JSON object")
    p.add_argument("--summary", help="a new summary")

    p = command(
        tasks, "output", cmd_task_output, "print an action's stdout (or stderr) exactly as stored"
    )
    p.add_argument("action", help="action id or unambiguous prefix")
    p.add_argument("--stderr", action="store_true", help="print standard error instead")
    p.add_argument("--info", action="store_true", help="describe the action instead")

    p = command(tasks, "log", cmd_task_log, "add a log line to an action")
    p.add_argument("action", help="action id or unambiguous prefix")
    p.add_argument("text", help="the log line")
    p.add_argument("--type", default="info", help="log type (default: info)")

    p = command(
        tasks,
        "replan",
        cmd_task_replan,
        "change the plan: add, insert, remove, move, rename steps (one new version)",
        "Change the plan. Operations apply in the order given and make one new plan version;"
        " the old plan stays in the journal and removed steps keep their actions."
        " Step numbers refer to the plan as it stands when each operation applies.",
    )
    p.add_argument("id", help="task id or unambiguous prefix")
    p.add_argument("--add", action=_Op, dest="add", metavar="TITLE", help="append a step")
    p.add_argument(
        "--insert",
        action=_Op,
        dest="insert",
        nargs=2,
        metavar=("POS", "TITLE"),
        help="insert a step at position POS",
    )
    p.add_argument("--remove", action=_Op, dest="remove", metavar="STEP", help="remove a step")
    p.add_argument(
        "--move",
        action=_Op,
        dest="move",
        nargs=2,
        metavar=("STEP", "POS"),
        help="move a step to position POS",
    )
    p.add_argument(
        "--rename",
        action=_Op,
        dest="rename",
        nargs=2,
        metavar=("STEP", "TITLE"),
        help="rename a step",
    )
    p.add_argument("--reason", help="why the plan changed")

    p = command(tasks, "where", cmd_task_where, 'answer "where was I?" for a task')
    p.add_argument("id", help="task id or unambiguous prefix")

    p = command(
        tasks,
        "record",
        cmd_task_record,
        "record a decision, error, finding, constraint or question; prints its id",
        "Record one fact about a task, stored once as a typed entry and shown in its state."
        " Exactly one of --decision, --error, --finding, --constraint, --question.",
    )
    p.add_argument("id", help="task id or unambiguous prefix")
    kinds = p.add_mutually_exclusive_group(required=True)
    kinds.add_argument("--decision", metavar="TEXT", help="a decision made")
    kinds.add_argument("--error", metavar="TEXT", help="an error met")
    kinds.add_argument("--finding", metavar="TEXT", help="something learned (a discovery)")
    kinds.add_argument("--constraint", metavar="TEXT", help="a constraint the work must respect")
    kinds.add_argument("--question", metavar="TEXT", help="a question that needs an answer")
    p.add_argument("--resolution", metavar="TEXT", help="with --error: how it was resolved")
    p.add_argument("--step", help="the plan step it belongs to (number or id)")
    p.add_argument("--detail", metavar="TEXT", help="the full detail, verbatim")
    p.add_argument("--detail-file", metavar="FILE", help="read the detail from FILE ('-': stdin)")
    p.add_argument("--tags", metavar="A,B", help="comma-separated tags")

    p = command(
        tasks,
        "resolve",
        cmd_task_resolve,
        "resolve an open error (or answer a question)",
    )
    p.add_argument("id", help="task id or unambiguous prefix")
    p.add_argument("entry", metavar="ERROR_ID", help="the error's (or question's) entry id")
    p.add_argument("--resolution", required=True, metavar="TEXT", help="how it was resolved")

    p = command(
        tasks,
        "files",
        cmd_task_files,
        "record files the task created or modified; without options, list them",
    )
    p.add_argument("id", help="task id or unambiguous prefix")
    p.add_argument("--created", nargs="+", metavar="PATH", help="files the task created")
    p.add_argument("--modified", nargs="+", metavar="PATH", help="files the task modified")

    p = command(tasks, "archive", cmd_task_archive, "hide a task from `task list` (kept in full)")
    p.add_argument("id", help="task id or unambiguous prefix")
    p.add_argument("--undo", action="store_true", help="unarchive instead")

    p = command(
        tasks,
        "tidy",
        cmd_task_tidy,
        "pause idle tasks and archive long-closed ones",
        "Pause active tasks not updated for a while and archive tasks closed long ago."
        " Run it from cron or a session-start hook; nothing is deleted.",
    )
    p.add_argument("--pause-after", default="24h", help="idle time before pausing (default 24h)")
    p.add_argument(
        "--archive-after", default="7d", help="time closed before archiving (default 7d)"
    )
    p.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")

    p = command(
        commands,
        "state",
        cmd_state,
        "print a task's state: YAML for the prompt, within a token budget",
        "Print the task state an agent keeps in its prompt: goal, plan, current and next"
        " steps, constraints, decisions, errors, findings, questions, workspace changes."
        " It always fits the budget; whatever it leaves out is listed under `hidden` with"
        " the command that recalls it.",
    )
    p.add_argument("id", help="task id or unambiguous prefix")
    p.add_argument(
        "--budget", type=int, help="token budget (default: $CLEW_STATE_BUDGET, config, 1500)"
    )

    p = command(
        commands,
        "prime",
        cmd_prime,
        "print the state and brief of this workspace's active tasks (for agent hooks)",
        "Print what an assistant should know at session start or after compaction: the"
        " state and the where-was-I brief of each active task of this workspace (tasks whose"
        " workspace holds the current folder or lies within it).",
    )
    p.add_argument("--workspace", metavar="DIR", help="the workspace (default: this folder)")
    p.add_argument("--budget", type=int, help="token budget of each task's state")
    p.add_argument("--limit", type=int, default=3, help="at most this many tasks (default 3)")

    p = command(
        commands,
        "entries",
        cmd_entries,
        "list archive entries by task, type, status and step, newest first",
    )
    p.add_argument("--task", help="only this task's entries")
    p.add_argument(
        "--type",
        action="append",
        help="decision, error, tool_result, user_instruction, discovery, artifact, context,"
        " constraint or question (repeatable)",
    )
    p.add_argument("--status", help="active, superseded or resolved")
    p.add_argument("--step", help="only entries of this step (needs --task)")
    p.add_argument("--limit", type=int, help="at most this many entries")

    p = command(commands, "journal", cmd_journal, "print journal events in commit order")
    p.add_argument("--task", help="only this task's events")
    p.add_argument("--after", type=int, default=0, metavar="SEQ", help="only events after SEQ")
    p.add_argument("--limit", type=int, help="at most this many events")

    command(
        commands,
        "verify",
        cmd_verify,
        "rebuild every table from the journal and report differences (exit 1 if any)",
    )

    p = command(commands, "demo", cmd_demo, "a scripted walkthrough on a temporary store")
    p.add_argument("--keep", action="store_true", help="keep the demo store and print its path")
    return root


def _fill_defaults(args: argparse.Namespace) -> None:
    for name, default in (("db", None), ("space", None), ("json", False)):
        if not hasattr(args, name):
            setattr(args, name, default)


def main(argv: Sequence[str] | None = None, stderr: IO[str] | None = None) -> int:
    """Run the clew command line; return its exit code."""
    err = stderr or sys.stderr
    try:
        args = build_parser().parse_args(argv)
        _fill_defaults(args)
        handler: Handler = args.handler
        return handler(args)
    except ClewError as exc:
        # One line, always: a path or value with a newline in it is shown escaped.
        message = str(exc).replace("\r", "\\r").replace("\n", "\\n")
        print(f"clew: error: {message}", file=err)
        return 2
    except KeyboardInterrupt:
        print("clew: interrupted", file=err)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); silence the flush at exit too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
