# ruff: noqa: E501, RUF001  (a table of real output lines, kept whole: jest prints U+203A)
"""Write the errors judgement set (`data/errors.jsonl`): failure/retry histories, each with
the label "should clew have resolved error E?" and "should E carry evidence of a passing
run?". Pure and deterministic (`random.Random(SEED)`): run it again and the file is the same.

    python benchmarks/judgement/errors_cases.py   # rewrites data/errors.jsonl

Each history is a short list of operations driven through clew's public API by the scorer
(errors.py): `run` (a command, its exit code and output), `error` (the agent records an
error: add_error, with its command or not, kept open or not), `extract` (the step ends and
clew's extraction makes its own copy of a failed run: `key` names the copy of run `run`),
`keep_open` (the agent says it is leaving an error open), `message` (the agent says
something). The label follows the issue's rule, not clew's code: clew may resolve only its
own extracted copy of a failed command, only on a success of the same command (the same
program and arguments, numbers included; temporary paths aside) in the same task, and never
one the agent recorded or kept open; those get evidence when that same command passes.

Two vocabularies: `TUNE` (commands, outputs and phrasing used while writing the rules and
this script) and `HELD_OUT` (other programs, outputs and phrasing, written separately and
scored apart, never looked at while choosing the rules).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, NamedTuple

SEED = 25
HERE = Path(__file__).resolve().parent


class Family(NamedTuple):
    """Commands that differ in one numbered or named part: `template.format(x=...)`."""

    name: str  # what differs between a run and its neighbour
    template: str
    values: tuple[str, str]  # the failing run's part, and a neighbour's
    stderr: str
    said: str  # how the agent records it: {cmd}, {x}, {line}


# What the agent writes when it records an error, in the phrasing agents use (Claude Code,
# Codex and aider transcripts: a status line, a colon, the telling line).
TUNE = (
    Family("neighbouring shard", "pytest -n 4 --splits 40 --group {x}", ("22", "23"),
           "FAILED tests/test_checkout.py::test_total_with_coupon - AssertionError: assert 41 == 42",
           "Shard {x} failing: {line}"),
    Family("neighbouring shard", "pytest tests/ -k shard_{x} -q", ("3", "4"),
           "E       KeyError: 'currency'\nFAILED tests/test_prices.py::test_shard - KeyError",
           "`{cmd}` fails with KeyError: 'currency'"),
    Family("neighbouring shard", "go test ./... -run TestShard{x}", ("7", "8"),
           "--- FAIL: TestShard7 (0.02s)\n    orders_test.go:41: got 3 rows, want 4",
           "Go shard {x} fails: got 3 rows, want 4"),
    Family("neighbouring shard", "npx jest --shard={x}/8", ("2", "3"),
           "FAIL src/cart/cart.test.ts\n  ● cart › applies discount\n    expect(received).toBe(expected)",
           "Jest shard {x}/8 is red: cart › applies discount"),
    Family("partition", "python scripts/backfill.py --table orders_p{x}", ("004", "005"),
           "psycopg.errors.DeadlockDetected: deadlock detected\nDETAIL:  Process 4121 waits for ShareLock",
           "Backfill of orders_p{x} died with a deadlock; will retry after the vacuum"),
    Family("partition", "psql -v ON_ERROR_STOP=1 -f sql/backfill_events_2024_{x}.sql", ("03", "04"),
           "psql:sql/backfill_events_2024_03.sql:12: ERROR:  could not extend file: No space left on device",
           "events_2024_{x} backfill: could not extend file (disk full)"),
    Family("partition", "dbt run --select stg_orders_p{x}", ("011", "012"),
           "Database Error in model stg_orders_p011\n  column \"discount_cents\" does not exist",
           "dbt model stg_orders_p{x} fails: column \"discount_cents\" does not exist"),
    Family("version", "docker push ghcr.io/acme/search-gateway:v2.19.{x}", ("1", "2"),
           "denied: permission_denied: write_package",
           "Push of search-gateway v2.19.{x} denied by ghcr.io"),
    Family("version", "helm upgrade api charts/api --version 1.4.{x} --wait", ("6", "7"),
           "Error: UPGRADE FAILED: timed out waiting for the condition",
           "helm upgrade to 1.4.{x} timed out waiting for the condition"),
    Family("version", "pip install 'urllib3=={x}'", ("2.2.1", "2.2.2"),
           "ERROR: Cannot install urllib3==2.2.1 because these package versions have conflicting dependencies.",
           "urllib3 {x} conflicts with botocore's pin"),
    Family("selector", "pytest tests/test_orders.py::{x}", ("test_refund_partial", "test_refund_full"),
           "FAILED tests/test_orders.py::test_refund_partial - ZeroDivisionError: division by zero",
           "{x} fails: ZeroDivisionError: division by zero"),
    Family("selector", "go test ./pkg/auth -run {x}", ("TestTokenExpiry", "TestTokenRefresh"),
           "--- FAIL: TestTokenExpiry (0.00s)\n    token_test.go:88: token still valid after expiry",
           "auth: {x} fails, token still valid after expiry"),
    Family("selector", "npx jest src/api/users.test.ts -t '{x}'", ("creates a user", "deletes a user"),
           "● users › creates a user\n    TypeError: Cannot read properties of undefined (reading 'id')",
           "users test '{x}' throws TypeError reading 'id'"),
    Family("timeout", "./scripts/wait-for-db.sh --timeout={x}", ("30", "60"),
           "db not ready after 30s",
           "Database not ready within {x}s"),
    Family("temp path", "pytest --basetemp={x} tests/integration", ("/tmp/tmpa8x_q2lk", "/tmp/tmpzz91k0wd"),
           "FAILED tests/integration/test_upload.py::test_large_file - OSError: [Errno 28] No space left on device",
           "Integration upload test hits ENOSPC"),
    Family("temp path", "python tools/check_bundle.py {x}/bundle.tar.gz", ("/tmp/tmp3kd9s_01", "/tmp/tmpq0w8e7rt"),
           "bundle check failed: missing manifest.json",
           "Bundle check fails: missing manifest.json"),
    Family("temp path", "./run-e2e.sh --workdir {x}", ("/tmp/tmp.Xq3v9LmA2c", "/tmp/tmp.p0Lk8Hd1Zs"),
           "e2e: login flow failed at step 3 (timeout waiting for #dashboard)",
           "e2e login flow times out waiting for #dashboard"),
    Family("plain", "make test{x}", ("", ""),
           "make: *** [Makefile:23: test] Error 1\nFAILED tests/test_parse.py::test_dates - ValueError",
           "make test fails in test_dates (ValueError)"),
    Family("plain", "npm run build{x}", ("", ""),
           "src/index.ts(14,7): error TS2322: Type 'string' is not assignable to type 'number'.",
           "Build is broken: TS2322 in src/index.ts"),
    Family("plain", "terraform apply -auto-approve{x}", ("", ""),
           "Error: creating S3 Bucket (acme-logs): BucketAlreadyOwnedByYou",
           "terraform apply fails: BucketAlreadyOwnedByYou on acme-logs"),
    Family("plain", "cargo test --workspace{x}", ("", ""),
           "error[E0308]: mismatched types\n  --> src/lib.rs:42:9",
           "cargo test doesn't compile: E0308 mismatched types in src/lib.rs"),
)  # fmt: skip

HELD_OUT = (
    Family("neighbouring shard", "bazel test //services/billing:shard_{x}", ("1", "2"),
           "//services/billing:shard_1 FAILED in 12.3s",
           "billing shard_{x} FAILED under bazel"),
    Family("neighbouring shard", "cargo nextest run --partition count:{x}/6", ("2", "3"),
           "FAIL [   0.013s] api::tests::rate_limit_resets",
           "nextest partition {x}/6: api::tests::rate_limit_resets fails"),
    Family("partition", "./bin/reindex --partition shard-{x}", ("17", "18"),
           "reindex: shard-17: mapper_parsing_exception: failed to parse field [created_at]",
           "Reindex of shard-{x} chokes on created_at"),
    Family("partition", "python manage.py migrate_tenant tenant_{x}", ("0042", "0043"),
           "django.db.utils.IntegrityError: duplicate key value violates unique constraint",
           "tenant_{x} migration: duplicate key on unique constraint"),
    Family("version", "kubectl set image deploy/web web=registry.local/web:v3.2.{x}", ("9", "10"),
           "error: unable to find container named \"web\"",
           "Rollout of web v3.2.{x} can't find the container"),
    Family("version", "gh release create v0.9.{x} dist/*", ("3", "4"),
           "HTTP 422: Validation Failed (https://api.github.com/repos/acme/cli/releases)",
           "Release v0.9.{x}: GitHub says 422 Validation Failed"),
    Family("selector", "python -m pytest tests/test_sync.py::TestSync::{x}", ("test_conflict", "test_merge"),
           "FAILED tests/test_sync.py::TestSync::test_conflict - AssertionError: 2 != 1",
           "TestSync.{x} fails: 2 != 1"),
    Family("selector", "mvn -q test -Dtest={x}", ("InvoiceServiceTest", "LedgerServiceTest"),
           "[ERROR] Tests run: 12, Failures: 1, Errors: 0\n[ERROR]   InvoiceServiceTest.rounding:57 expected:<10.01> but was:<10.00>",
           "{x} rounding assertion fails (10.01 vs 10.00)"),
    Family("temp path", "tar -xzf {x}/artifact.tgz -C build", ("/tmp/tmpf4k2_9xa", "/tmp/tmp7hh3m2qp"),
           "gzip: stdin: unexpected end of file\ntar: Child returned status 1",
           "Artifact archive is truncated (unexpected end of file)"),
    Family("plain", "./gradlew check{x}", ("", ""),
           "> Task :app:lintDebug FAILED\nLint found 2 errors",
           "gradle check fails on lint (2 errors)"),
    Family("plain", "tox -e py311{x}", ("", ""),
           "ERROR: InvocationError for command pytest -q (exited with code 1)",
           "tox py311 env fails (pytest exit 1)"),
)  # fmt: skip

PASS_OUTPUT = "ok"
FIXED = ("Patched the fixture, rerunning.", "Fixed the off-by-one in the loop; running it again.",
         "Retrying after freeing disk space.", "Bumped the lock timeout, trying again.")  # fmt: skip
KEEP_SAID = ("Leaving this open: one green rerun of a flaky shard is not a fix.",
             "Not resolving yet, it passed once but it's flaky.")  # fmt: skip


def _cmd(family: Family, which: int) -> str:
    return family.template.format(x=family.values[which])


def _said(family: Family, which: int) -> str:
    line = family.stderr.splitlines()[-1].strip()
    return family.said.format(cmd=_cmd(family, which), x=family.values[which], line=line)


def _fail(family: Family, which: int = 0, task: int = 1) -> dict[str, Any]:
    return {"op": "run", "task": task, "command": _cmd(family, which), "exit": 1,
            "stderr": family.stderr}  # fmt: skip


def _pass(family: Family, which: int, task: int = 1, spaced: bool = False) -> dict[str, Any]:
    command = _cmd(family, which)
    if spaced:  # the same command typed with other spacing
        command = command.replace(" ", "  ", 1)
    return {"op": "run", "task": task, "command": command, "exit": 0, "stdout": PASS_OUTPUT}


def cases_of(family: Family, rng: random.Random) -> list[dict[str, Any]]:
    """Every history this family gives, with its labels."""
    out: list[dict[str, Any]] = []
    has_neighbour = family.values[0] != family.values[1]
    same_is_same = True  # a temp path differs between runs of one command: still the same
    neighbour = 1 if has_neighbour and family.name != "temp path" else None

    def case(variant: str, history: list[dict[str, Any]], resolve: bool, evidence: bool) -> None:
        out.append({"family": family.name, "variant": variant, "command": _cmd(family, 0),
                    "history": history, "error": "E", "resolve": resolve,
                    "evidence": evidence})  # fmt: skip

    # The same command: run 0 failed, then that run again (or with its temp path changed).
    again = 1 if family.name == "temp path" else 0
    extract = {"op": "extract", "key": "E", "run": 0}
    record = {"op": "error", "task": 1, "key": "E", "text": _said(family, 0)}
    with_command = {**record, "command": _cmd(family, 0)}
    fixed = {"op": "message", "task": 1, "text": rng.choice(FIXED)}
    # clew's own copy, then a pass of that same command: clew resolves it.
    case("copy, same command passes", [_fail(family), extract, _pass(family, again)],
         same_is_same, False)  # fmt: skip
    case("copy, fixed, same command passes",
         [_fail(family), extract, fixed, _pass(family, again)], True, False)  # fmt: skip
    case("copy, same command with other spacing passes",
         [_fail(family), extract, _pass(family, again, spaced=True)], True, False)  # fmt: skip
    # The pass came before the extraction: the copy is stored resolved.
    case("pass before the copy is made", [_fail(family), _pass(family, again), extract],
         True, False)  # fmt: skip
    # The agent recorded it: never resolved by clew; the same command passing is evidence.
    case("agent's error with its command, same command passes",
         [_fail(family), with_command, _pass(family, again)], False, True)  # fmt: skip
    case("agent's error quoting the output, same command passes",
         [_fail(family), {**record, "text": f"{_said(family, 0)}: {family.stderr.splitlines()[-1]}"},
          _pass(family, again)], False, True)  # fmt: skip
    case("agent's error after the copy, same command passes",
         [_fail(family), extract, with_command, _pass(family, again)], False, True)  # fmt: skip
    case("agent's error, fixed, same command passes",
         [_fail(family), with_command, fixed, _pass(family, again)], False, True)  # fmt: skip
    # Kept open: never resolved by clew.
    case("agent keeps clew's copy open, same command passes",
         [_fail(family), extract, {"op": "keep_open", "key": "E"},
          {"op": "message", "task": 1, "text": rng.choice(KEEP_SAID)}, _pass(family, again)],
         False, True)  # fmt: skip
    case("agent's error recorded kept open, same command passes",
         [_fail(family), {**with_command, "keep_open": True}, _pass(family, again)],
         False, True)  # fmt: skip
    # Another task's run of the same command: nothing.
    case("copy, same command passes in another task",
         [_fail(family), extract, _pass(family, again, task=2)], False, False)  # fmt: skip
    # A pass of the same command before the failure: nothing.
    case("same command passed before it failed",
         [_pass(family, again), _fail(family), {**extract, "run": 1}], False, False)  # fmt: skip
    if neighbour is not None:
        # A neighbour (another shard, partition, version, selector, timeout): nothing.
        case(f"copy, {family.name} passes", [_fail(family), extract, _pass(family, neighbour)],
             False, False)  # fmt: skip
        case(f"agent's error, {family.name} passes",
             [_fail(family), with_command, _pass(family, neighbour)], False, False)  # fmt: skip
        case(f"copy, {family.name} fails then passes",
             [_fail(family), extract, _fail(family, neighbour), _pass(family, neighbour)],
             False, False)  # fmt: skip
    return out


def build() -> list[dict[str, Any]]:
    """The whole set, tune cases first, each with an id and its split."""
    rng = random.Random(SEED)
    rows: list[dict[str, Any]] = []
    for split, families in (("tune", TUNE), ("held_out", HELD_OUT)):
        for family in families:
            for made in cases_of(family, rng):
                rows.append({"id": f"{split}-{len(rows) + 1:03d}", "split": split, **made})
    return rows


def main() -> None:
    path = HERE / "data" / "errors.jsonl"
    rows = build()
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"{len(rows)} cases -> {path}")


if __name__ == "__main__":
    main()
