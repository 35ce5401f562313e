"""`clew tools`, `clew prompt` and `clew mcp`: the agent tool surface."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from clew.cli.common import (
    Commands,
    input_limit,
    open_memory,
    print_json,
    read_text,
    whole,
)
from clew.errors import ValidationError


def cmd_tools(args: argparse.Namespace) -> int:
    from clew.tools import registry as tools

    if args.call is None:
        print(json.dumps(tools.schemas(args.format), indent=2, ensure_ascii=False))
        return 0
    arguments = (
        read_text("-", "--arguments", input_limit(args))
        if args.arguments == "-"
        else args.arguments
    )
    with open_memory(args) as mem:
        result = tools.call(mem, args.call, arguments, _context(args))
    if args.json:
        print_json(result)
    else:
        print(result.text)
    return 1 if result.is_error else 0


def cmd_prompt(args: argparse.Namespace) -> int:
    from clew.tools.registry import guidance

    sys.stdout.write(guidance())
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    try:
        import anyio

        import clew.server.mcp_server as mcp_server
    except ImportError:
        from clew.core.installation import install_command

        raise ValidationError(
            f"the MCP server needs the mcp extra: {install_command('mcp')}"
        ) from None
    from clew.cli.server import server_options
    from clew.core.origin import HostRules

    options: Any = None
    if args.port is None and bool(args.allow_wait_path) | bool(args.allow_wait_url):
        raise ValidationError(
            "--allow-wait-path and --allow-wait-url are for --port: over stdio the client is"
            " this user, whose file and URL waits read what this user may read"
        )
    if args.port is not None:
        _check_port(args.port)
        options = server_options(args)
    mem = open_memory(args)
    if mem.settings.worker == "process":  # a server lives long: a thread does queued jobs
        mem.settings = mem.settings._replace(worker="thread")
    context = _context(args)
    try:
        if args.port is None:
            # The model behind the client chooses the calls: a command wait runs only when
            # the user who configured the server said so, as on a server.
            local = HostRules(bool(args.allow_commands), None, None)
            anyio.run(mcp_server.serve_stdio, mem, context._replace(host=local))
        else:
            from clew.cli.server import opener
            from clew.server.app import serve

            print(f"clew: MCP at http://127.0.0.1:{args.port}/mcp", file=sys.stderr)
            serve(
                mem,
                host="127.0.0.1",
                port=args.port,
                opener=opener(args),
                context=context,
                options=options,
            )
    except KeyboardInterrupt:
        pass
    finally:
        mem.close()
    return 0


def _check_port(port: int) -> None:
    """Refuse a port that is not one, or that is taken, before the server starts."""
    import socket

    if not 1 <= port <= 65535:
        raise ValidationError(f"port {port} is not a TCP port (1-65535)")
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise ValidationError(
                f"cannot serve on 127.0.0.1:{port} ({exc.strerror}); choose another --port"
            ) from None


def _context(args: argparse.Namespace) -> Any:
    from clew.tools.registry import Context

    return Context(session=args.session, workspace=args.workspace or os.getcwd())


def register(commands: Any, command: Commands) -> None:
    """Add `clew tools`, `clew prompt` and `clew mcp`."""
    p = command(
        commands,
        "tools",
        cmd_tools,
        "print the tools' schemas for function calling, or call one",
        "Print clew's agent tools as JSON schemas for a function-calling API (--format openai,"
        " anthropic or mcp), or call one tool (--call NAME --arguments JSON) and print what"
        " the model would read; exit 1 when the call is an error.",
    )
    p.add_argument(
        "--format",
        choices=("openai", "anthropic", "mcp"),
        default="openai",
        help="the schema format (default openai)",
    )
    p.add_argument("--call", metavar="NAME", help="call this tool instead")
    p.add_argument("--arguments", metavar="JSON", default="{}", help="its arguments ('-': stdin)")
    _server_options(p)

    command(
        commands,
        "prompt",
        cmd_prompt,
        "print the system-prompt text that tells a model when to call which tool",
    )

    p = command(
        commands,
        "mcp",
        cmd_mcp,
        "run the MCP server (stdio; --port for streamable HTTP on 127.0.0.1)",
        "Serve clew's tools, the task and session states (as resources) and a resume_work"
        " prompt to any MCP client: over stdio by default (what an assistant's config starts),"
        " or over streamable HTTP at http://127.0.0.1:PORT/mcp with --port.",
    )
    p.add_argument("--port", type=whole, help="serve streamable HTTP on 127.0.0.1:PORT instead")
    _server_options(p)
    from clew.cli.server import add_server_options

    add_server_options(p.add_argument_group("with --port (as clew serve)"))


def _server_options(p: Any) -> None:
    p.add_argument("--session", help="the default session of conversation_recall (id or key)")
    p.add_argument("--workspace", metavar="DIR", help="the default workspace (this folder)")
