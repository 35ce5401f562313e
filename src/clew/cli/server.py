"""`clew keys` and `clew serve`: the HTTP server's keys, and the server itself.

The server's packages (starlette, uvicorn, the MCP SDK) are imported inside `serve` only, so
the rest of the command line starts as fast as before.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from clew.cli.common import Commands, decimal, open_memory, print_json, show_lines, whole
from clew.errors import ValidationError


def cmd_keys_create(args: argparse.Namespace) -> int:
    space = args.space or os.environ.get("CLEW_SPACE")
    if not space:
        raise ValidationError("name the space the key opens: clew keys create --space SPACE")
    with open_memory(args) as mem:
        made = mem.create_key(space, args.scope, name=args.name)
    if args.json:
        print_json({"key": made.key, "token": made.token})
    else:
        print(made.token)
        print(
            f"key {made.key.prefix}: {made.key.scope} on space {made.key.space!r}. Keep the"
            " line above: it is shown only now (send it as 'Authorization: Bearer ...')",
            file=sys.stderr,
        )
    return 0


def _key_line(key: Any) -> str:
    state = f"revoked {key.revoked_at[:16]}" if key.revoked_at else "active"
    used = key.last_used_at[:16] if key.last_used_at else "never"
    name = f" '{key.name}'" if key.name else ""
    return (
        f"{key.prefix}  {key.scope:<5}  space {key.space!r}{name}  created"
        f" {key.created_at[:16]}  last used {used}  {state}"
    )


def cmd_keys_list(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        found = mem.list_keys(args.space)
    return show_lines(args, found, _key_line, "No keys. Make one with `clew keys create`.")


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        key = mem.revoke_key(args.prefix)
    if args.json:
        print_json(key)
    else:
        print(f"revoked {_key_line(key)}")
    return 0


def cmd_keys_log(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        found = mem.list_requests(args.space, limit=args.limit)

    def line(r: Any) -> str:
        who = r.key_prefix or "-"
        return (
            f"{r.created_at[:19]}  {r.status}  {r.method:<6} {r.route}  key {who}  space"
            f" {r.space!r}  {r.ms:.1f} ms"
        )

    return show_lines(args, found, line, "No requests logged.")


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from clew.server.app import serve
    except ImportError as exc:
        from clew.core.installation import install_command

        raise ValidationError(
            f"clew serve needs the server extra ({exc.name} is missing): {install_command('serve')}"
        ) from None
    if args.store is not None:
        args.db = args.store
    if not 0 <= args.port <= 65535:
        raise ValidationError(f"port {args.port} is not a TCP port (0-65535)")
    options = server_options(args)
    mem = open_memory(args)
    if mem.settings.worker == "process":  # a server lives long: a thread does queued jobs
        mem.settings = mem.settings._replace(worker="thread")
    try:
        serve(mem, host=args.host, port=args.port, opener=opener(args), options=options)
    except KeyboardInterrupt:
        pass
    finally:
        mem.close()
    return 0


def server_options(args: argparse.Namespace) -> Any:
    """The server's Options from the command line (`add_server_options`), checked."""
    from clew.server.app import Options
    from clew.server.edge import Proxies, check_allowed_host

    if args.rate <= 0:
        raise ValidationError(f"--rate must be above 0 requests a second, not {args.rate:g}")
    if args.burst < 1:
        raise ValidationError(f"--burst must be at least 1 request, not {args.burst}")
    if not 1 <= args.checkpoint_every <= 86_400:
        raise ValidationError(
            f"--checkpoint-every must be 1 to 86400 seconds, not {args.checkpoint_every:g}"
        )
    hosts = tuple(check_allowed_host(n) for n in args.allowed_host or ())
    proxies = tuple(args.forwarded_allow_ips or ())
    Proxies(proxies)  # each one an address or network, or a line saying what is wrong
    return Options(
        rate=args.rate,
        burst=args.burst,
        log_days=args.log_days,
        allowed_hosts=hosts,
        forwarded_allow_ips=proxies,
        log_folder=args.request_log,
        allow=host_rules(args),
        checkpoint_file=args.checkpoint_file,
        checkpoint_every=args.checkpoint_every,
    )


def add_server_options(p: Any) -> None:
    """The options `clew serve` and `clew mcp --port` share: the rate limit, the request
    log, the Host names served and the proxies believed, what admin keys' waits may make
    this host do, and the checkpoint file."""
    p.add_argument(
        "--rate",
        type=float,
        default=20.0,
        help="each key's sustained requests a second (default 20)",
    )
    p.add_argument(
        "--burst",
        type=whole,
        default=60,
        help="requests a key may make at once above the rate (default 60)",
    )
    p.add_argument(
        "--log-days",
        type=whole,
        default=30,
        help="keep the request log this many days (default 30)",
    )
    p.add_argument(
        "--allowed-host",
        action="append",
        metavar="NAME",
        help="also serve requests whose Host is NAME (any port; .example.com: it and every"
        " name under it); repeat for more. Without it only the bound address and port are"
        " served (and localhost on loopback; any IP address on 0.0.0.0 or ::)",
    )
    p.add_argument(
        "--forwarded-allow-ips",
        action="append",
        metavar="ADDRESSES",
        help="believe X-Forwarded-For and X-Forwarded-Proto from these proxy addresses or"
        " networks (comma-separated, repeatable, e.g. 127.0.0.1); default none: the"
        " socket's address is the client's",
    )
    p.add_argument(
        "--request-log",
        metavar="DIR",
        help="the folder of the request log's spill files (default: beside a SQLite store,"
        " STORE-requests; for PostgreSQL under $XDG_STATE_HOME/clew/requests/)",
    )
    host_options(p)
    p.add_argument(
        "--checkpoint-file",
        metavar="FILE",
        help="append a sealed checkpoint of every space whose journal moved to FILE (at"
        " start, every --checkpoint-every seconds, at shutdown); keep it where the store's"
        " writers cannot reach; `clew verify --checkpoint FILE` checks the store against it",
    )
    p.add_argument(
        "--checkpoint-every",
        type=decimal,
        default=60.0,
        metavar="SECONDS",
        help="write checkpoints at most this often (default 60)",
    )


def host_rules(args: argparse.Namespace) -> Any:
    """What the operator lets admin keys' waits make this host do (--allow-commands,
    --allow-wait-path, --allow-wait-url): nothing unless named; each checked now."""
    from clew.core.origin import HostRules, folder_rule, url_rule

    return HostRules(
        bool(args.allow_commands),
        tuple(dict.fromkeys(folder_rule(p) for p in args.allow_wait_path or ())),
        tuple(dict.fromkeys(url_rule(u) for u in args.allow_wait_url or ())),
    )


def host_options(p: Any) -> None:
    """Add the options that let a server's admin keys add waits that make the host act."""
    p.add_argument(
        "--allow-commands",
        action="store_true",
        help="let admin keys add waits that run shell commands as this user (off by default)",
    )
    p.add_argument(
        "--allow-wait-path",
        action="append",
        metavar="DIR",
        help="let admin keys add file waits inside DIR (its real path; repeatable)",
    )
    p.add_argument(
        "--allow-wait-url",
        action="append",
        metavar="URL",
        help="let admin keys add URL waits under URL, a prefix on this host's loopback such as"
        " http://127.0.0.1:9000/health (scheme, host, port and path; repeatable)",
    )


def opener(args: argparse.Namespace) -> Any:
    """What opens the store the command line names on another space (a key's)."""
    import clew
    from clew.cli.common import store_path

    path, _ = store_path(args)
    return lambda space: clew.open(path, space=space, busy_timeout=args.busy_timeout)


def register(commands: Any, command: Commands) -> None:
    """Add `clew keys` and `clew serve`."""
    from clew.cli.common import Parser

    keys_parser = commands.add_parser(
        "keys",
        help="keys of the HTTP server (clew serve): create, list, revoke, see the request log",
        description="Keys of the HTTP server: each opens one space with one scope (read,"
        " write or admin). A key is printed once when made; the store keeps its prefix and a"
        " hash of its secret.",
    )
    keys = keys_parser.add_subparsers(
        dest="keys_command", metavar="KEYS_COMMAND", parser_class=Parser
    )
    keys.required = True
    p = command(
        keys,
        "create",
        cmd_keys_create,
        "make a key for a space (--space) and print it once",
        "Make a key that opens --space SPACE with --scope read (read tools and exports),"
        " write (every tool, imports) or admin (also the request log). Prints the key once.",
    )
    p.add_argument(
        "--scope", choices=("read", "write", "admin"), required=True, help="what the key may do"
    )
    p.add_argument("--name", help="a label, e.g. who or what uses the key")
    p = command(
        keys,
        "list",
        cmd_keys_list,
        "list keys (every space's, or --space's): prefix, scope, use, revoked",
    )
    p = command(keys, "revoke", cmd_keys_revoke, "revoke a key by its prefix")
    p.add_argument("prefix", help="the key's prefix (as `clew keys list` shows it)")
    p = command(
        keys,
        "log",
        cmd_keys_log,
        "the server's request log, newest first (every space's, or --space's)",
    )
    p.add_argument("--limit", type=whole, default=50, help="at most this many (default 50)")

    p = command(
        commands,
        "serve",
        cmd_serve,
        "run the HTTP server: the JSON API, MCP over HTTP and a dashboard",
        "Serve the store over HTTP: the JSON API at /api/v1 (its OpenAPI document at"
        " /api/v1/openapi.json), MCP at /mcp and a dashboard at /. Each request"
        " sends 'Authorization: Bearer KEY' (clew keys create); its space is the key's. Bound"
        " to anything but loopback it refuses to start until a key exists; on loopback with no"
        " key at all it serves the --space (default) space to any local user.",
    )
    p.add_argument("--host", default="127.0.0.1", help="the address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=whole, default=8080, help="the port (default 8080)")
    p.add_argument("--store", metavar="URL", help="the store: a file or postgresql:// URL (--db)")
    add_server_options(p)
