"""Scripts of long agent tasks and their ground truth. Pure: no clew import.

`generate(seed, index)` writes one task as a list of `Op`s, the way an agent would work
it: steps started (sometimes two at once) and completed, commands that succeed or fail
(a failure recorded by the agent or not, then retried until it works, resolved by the
agent, or left open; an error the agent recorded is resolved by the agent, after a passing
rerun too), a step that fails and is replanned, steps removed and added,
decisions and their reversals (explicitly with `supersedes`, implicitly by a later
decision on the same topic, or a "Going with X" message later overruled), constraints
(some added late, some replaced), questions asked and answered, waits started and ended
(some open for a long time). At scripted points an `interrupt` op carries what the agent
must get back (`Expect`), as the script knows it, never as clew computes it.

Everything comes from `random.Random(f"{seed}:{index}")`: the same seed, the same script.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from typing import Any, NamedTuple

KINDS = ("deploy", "migration", "debugging", "flaky-tests", "pipeline", "research", "refactor")
INTERRUPTIONS = ("compaction", "restart", "sigkill")
MAX_OPEN_FAILURES = 2
MAX_OPEN_QUESTIONS = 2
MAX_OPEN_WAITS = 3


class Op(NamedTuple):
    """One thing the agent does (or one interruption)."""

    kind: str
    args: dict[str, Any]


class Expect(NamedTuple):
    """What brief + state must say at an interruption (step numbers are 1-based)."""

    completed: tuple[int, ...]
    current: tuple[int, ...]  # the active steps, else the first pending one
    next: int | None  # the first pending step after the first current one
    open_errors: tuple[str, ...]  # each failure by its unique reference
    resolved_errors: tuple[str, ...]
    constraints: tuple[str, ...]  # live ones, verbatim
    decisions: tuple[tuple[str, str, tuple[str, ...]], ...]  # (subject, latest, earlier)
    questions: tuple[str, ...]  # pending, verbatim
    waits: tuple[str, ...]  # pending, verbatim


class Script(NamedTuple):
    seed: int
    index: int
    kind: str
    name: str
    steps: int  # at the start
    ops: tuple[Op, ...]

    @property
    def interruptions(self) -> int:
        return sum(1 for op in self.ops if op.kind == "interrupt")


# -- the domains --------------------------------------------------------------------------

_UNITS = {
    "deploy": ["api", "web", "worker", "billing", "search", "auth", "mailer", "gateway"],
    "migration": ["users", "orders", "invoices", "events", "sessions", "products", "audit"],
    "debugging": ["login", "checkout", "upload", "export", "webhook", "scheduler"],
    "flaky-tests": ["test_sync", "test_cache", "test_retry", "test_timeout", "test_lock"],
    "pipeline": ["ingest", "clean", "enrich", "aggregate", "publish", "backfill"],
    "research": ["tokenizers", "retrievers", "rerankers", "embeddings", "chunking"],
    "refactor": ["storage", "handlers", "config", "models", "views", "serializers"],
}
_STEPS = {
    "deploy": ["Build image for {u}", "Run unit tests for {u}", "Push image for {u}",
               "Roll out {u} to staging", "Smoke test {u} on staging",
               "Roll out {u} to production"],
    "migration": ["Back up table {u}", "Convert schema of {u}", "Copy rows of {u}",
                  "Verify row counts of {u}", "Switch reads of {u} to the new database"],
    "debugging": ["Reproduce the {u} bug", "Collect logs around {u}", "Bisect commits for {u}",
                  "Write a failing test for {u}", "Fix the {u} handler"],
    "flaky-tests": ["Run {u} in a loop", "Capture a failing run of {u}",
                    "Find the race in {u}", "Stabilise {u}"],
    "pipeline": ["Configure stage {u}", "Run stage {u} on a sample", "Run stage {u} in full",
                 "Check the output of {u}"],
    "research": ["Survey papers on {u}", "Benchmark {u} baselines", "Summarise {u} results",
                 "Compare {u} options"],
    "refactor": ["Map callers of {u}", "Extract interface of {u}", "Move {u} behind it",
                 "Delete dead code in {u}"],
}  # fmt: skip
_COMMANDS = {
    "deploy": ["docker build -t {r} .", "pytest tests/{r}", "docker push ghcr.io/acme/{r}",
               "kubectl rollout status deploy/{r}", "curl -fsS https://stg.acme.dev/{r}/ok"],
    "migration": ["pg_dump -t {r} prod", "pgloader --table {r} mysql://db pg://db",
                  "psql -c 'select count(*) from {r}'"],
    "debugging": ["pytest -x tests/test_{r}.py", "git bisect run ./check-{r}.sh",
                  "grep -rn {r} logs/"],
    "flaky-tests": ["pytest tests/{r}.py --count 50", "pytest tests/{r}.py -p no:randomly"],
    "pipeline": ["make stage-{r}", "python -m pipeline run {r} --sample",
                 "python -m pipeline check {r}"],
    "research": ["python bench.py --suite {r}", "jupyter nbconvert --execute {r}.ipynb"],
    "refactor": ["ruff check src/{r}", "mypy src/{r}", "pytest tests/{r}"],
}  # fmt: skip
_FAILURES = [
    "error: connection reset by peer while talking to {r}",
    "FAILED tests/{r} - AssertionError: expected 200, got 503",
    "Error: timed out waiting for {r} after 300s",
    "fatal: permission denied for {r}",
    "RuntimeError: {r} exited with status 137 (out of memory)",
    "ModuleNotFoundError: No module named '{r}'",
]
_TOPICS = {
    "deploy": [("image registry", ["ghcr.io", "Amazon ECR", "Docker Hub"]),
               ("rollout strategy", ["blue-green", "canary releases", "rolling updates"]),
               ("base image", ["python:3.12-slim", "distroless", "alpine"])],
    "migration": [("bulk data transfer", ["pgloader", "COPY batches", "logical replication"]),
                  ("enum columns", ["VARCHAR with CHECK", "native enum types", "lookup tables"]),
                  ("cutover window", ["Sunday night", "Tuesday morning", "a rolling cutover"])],
    "debugging": [("reproduction harness", ["docker compose", "a unit fixture", "prod replay"]),
                  ("fix approach", ["a retry with backoff", "a lock", "idempotent writes"])],
    "flaky-tests": [("quarantine policy", ["skip markers", "a flaky lane", "reruns"]),
                    ("time source", ["freezegun", "an injected clock", "time-machine"])],
    "pipeline": [("orchestrator", ["Airflow", "Dagster", "cron jobs"]),
                 ("storage format", ["Parquet", "Avro", "CSV"])],
    "research": [("evaluation metric", ["nDCG@10", "MRR", "recall@100"]),
                 ("baseline model", ["BM25", "e5-small", "ColBERT"])],
    "refactor": [("dependency injection", ["constructor arguments", "a registry", "globals"]),
                 ("naming scheme", ["snake_case modules", "domain packages", "flat modules"])],
}  # fmt: skip
_PINS = [("numpy", ["1.26.4", "2.0.2", "2.1.3"]), ("django", ["4.2.16", "5.0.9", "5.1.3"]),
         ("psycopg", ["3.1.19", "3.2.3"]), ("pydantic", ["1.10.18", "2.9.2"])]  # fmt: skip
_CONSTRAINTS = [
    "Do not restart the primary database during business hours",
    "Keep the public API backwards compatible",
    "Every change needs a rollback plan before it ships",
    "Stay within the 4 GB memory limit of the runners",
    "No new third-party dependencies without review",
    "Keep customer data inside the EU region",
    "Do not force-push to the main branch",
    "Run the full test suite before every release",
]
_QUESTIONS = [
    ("Which region should the read replica live in?", "eu-west-1"),
    ("Can the nightly export be paused during the cutover?", "Yes, for two hours"),
    ("Who signs off on the production rollout?", "The on-call lead"),
    ("Should old rows be archived or deleted?", "Archived to cold storage"),
    ("Is a maintenance page needed for the switch?", "No, the switch is invisible"),
    ("Which Python version do the runners use?", "3.12"),
]
_WAITS = [
    "CI pipeline on branch {r} to go green",
    "code review of the {r} change",
    "DNS change for {r} to propagate",
    "backfill job {r} to finish",
    "approval from the security team for {r}",
    "staging deploy of {r} to settle",
]


def _ref(rng: random.Random) -> str:
    """A unique reference made of letters only (numbers would make two commands alike)."""
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(5))


class _Gen:
    """Writes one script while keeping the ground truth it implies."""

    def __init__(self, seed: int, index: int) -> None:
        self.rng = random.Random(f"{seed}:{index}")
        self.seed, self.index = seed, index
        self.kind = KINDS[index % len(KINDS)]
        self.ops: list[Op] = []
        self.plan: list[list[str]] = []  # [title, status]
        self.failures: dict[str, dict[str, Any]] = {}  # key -> ref, command, open, record
        self.topics: dict[str, dict[str, Any]] = {}  # subject -> history, record key
        self.constraints: dict[str, list[Any]] = {}  # key -> [text, live]
        self.questions: dict[str, list[Any]] = {}  # key -> [text, answer, open]
        self.waits: dict[str, list[Any]] = {}  # key -> [text, open, since op]
        self.keys = 0
        self.refs: set[str] = set()

    # -- helpers ------------------------------------------------------------------------

    def key(self, prefix: str) -> str:
        self.keys += 1
        return f"{prefix}{self.keys}"

    def ref(self) -> str:
        while True:
            found = _ref(self.rng)
            if found not in self.refs:
                self.refs.add(found)
                return found

    def op(self, op_kind: str, /, **args: Any) -> None:
        self.ops.append(Op(op_kind, args))

    def number(self, status: str) -> list[int]:
        return [n for n, (_, s) in enumerate(self.plan, 1) if s == status]

    def expect(self) -> Expect:
        active = self.number("active")
        pending = self.number("pending")
        current = tuple(active) if active else tuple(pending[:1])
        after = current[0] if current else 0
        nxt = next((n for n in pending if n > after), None)
        decisions = []
        for subject, topic in self.topics.items():
            said = topic["history"]
            if topic["recorded"]:
                earlier = tuple(o for o in said[:-1] if o != said[-1])
                decisions.append((subject, said[-1], earlier))
        return Expect(
            completed=tuple(self.number("completed")),
            current=current,
            next=nxt,
            open_errors=tuple(f["ref"] for f in self.failures.values() if f["open"]),
            resolved_errors=tuple(f["ref"] for f in self.failures.values() if not f["open"]),
            constraints=tuple(t for t, live in self.constraints.values() if live),
            decisions=tuple(decisions),
            questions=tuple(q for q, _, is_open in self.questions.values() if is_open),
            waits=tuple(w for w, is_open, _ in self.waits.values() if is_open),
        )

    # -- the task -----------------------------------------------------------------------

    def write(self, steps: int | None = None) -> Script:
        rng = self.rng
        drawn = rng.randint(20, 200)  # drawn either way: a given length keeps the rest
        steps = drawn if steps is None else steps
        units = _UNITS[self.kind]
        titles = []
        for n in range(steps):
            unit = units[(n // len(_STEPS[self.kind])) % len(units)]
            cycle = n // (len(_STEPS[self.kind]) * len(units))
            template = _STEPS[self.kind][n % len(_STEPS[self.kind])]
            title = template.format(u=unit if cycle == 0 else f"{unit} (batch {cycle + 1})")
            titles.append(title)
        name = f"{self.kind} #{self.index}: {units[0]} and {len(titles)} steps"
        self.plan = [[t, "pending"] for t in titles]
        self.op("create", name=name, goal=f"Carry the {self.kind} through", plan=titles)
        interrupt_every = max(3, steps // 10)
        kinds = list(INTERRUPTIONS)
        rng.shuffle(kinds)
        done_steps = 0
        interruptions = 0
        while True:
            pending = self.number("pending")
            active = self.number("active")
            if not pending and not active:
                break
            done_steps += 1
            due = done_steps % interrupt_every == 0
            mid = due and rng.random() < 0.5  # in the middle of a step, or between steps
            kind = kinds[interruptions % len(kinds)]
            interruptions += due

            def interrupt(kind: str = kind) -> None:
                self.op("interrupt", kind=kind, expect=self.expect())

            self.work_step(interrupt if mid else None)
            if due and not mid:
                interrupt()
        # Whatever is left open stays open; the last interruption checks the end state.
        self.op("interrupt", kind=kinds[interruptions % len(kinds)], expect=self.expect())
        return Script(self.seed, self.index, self.kind, name, steps, tuple(self.ops))

    def work_step(self, interrupt: Callable[[], None] | None = None) -> None:
        """Work the current step; `interrupt` (if given) is called before it finishes."""
        rng = self.rng
        active = self.number("active")
        if active:
            n = active[0]
        else:
            n = self.number("pending")[0]
            self.start(n)
        pending = self.number("pending")
        if len(self.number("active")) == 1 and pending and rng.random() < 0.2:
            self.start(pending[0])  # two steps at once
        self.extras(n)
        for _ in range(rng.randint(1, 3)):
            self.command(n)
        if interrupt is not None:
            interrupt()
        if not self.plan[n - 1][0].startswith("Retry ") and rng.random() < 0.04:
            self.fail_and_replan(n)
            return
        if rng.random() < 0.05:
            self.drop_a_step(n)
        self.finish(n)

    def start(self, n: int) -> None:
        self.op("start", step=n)
        self.plan[n - 1][1] = "active"

    def finish(self, n: int) -> None:
        rng = self.rng
        if rng.random() < 0.4:
            self.op("message", text=f"Step {n} done — {self.plan[n - 1][0].lower()} is through.")
        self.op("complete", step=n, summary=f"{self.plan[n - 1][0]}: done")
        self.plan[n - 1][1] = "completed"

    def command(self, n: int) -> None:
        """Run one command; a failure is retried, resolved, or left open for later."""
        rng = self.rng
        unit = self.plan[n - 1][0].split()[-1]
        ref = f"{unit.strip('()').replace(' ', '-')}-{self.ref()}"
        command = rng.choice(_COMMANDS[self.kind]).format(r=ref)
        # A failure left open earlier is retried now and then, and succeeds.
        still = [k for k, f in self.failures.items() if f["open"] and f["later"]]
        if still and rng.random() < 0.3:
            key = still[0]
            self.op("run", step=n, command=self.failures[key]["command"], exit=0, out="ok")
            self.close_by_command(self.failures[key]["command"])
            return
        open_now = sum(1 for f in self.failures.values() if f["open"])
        if open_now >= MAX_OPEN_FAILURES or rng.random() > 0.18:
            self.op("run", step=n, command=command, exit=0, out=f"ok: {ref}")
            return
        error = rng.choice(_FAILURES).format(r=ref)
        key = self.key("f")
        self.failures[key] = {"ref": ref, "command": command, "open": True, "later": False}
        self.op("run", step=n, command=command, exit=1, err=f"running {ref}\n{error}")
        recorded = None
        how = rng.random()
        if how < 0.35:
            recorded = self.key("e")
            self.op("error", key=recorded, step=n, text=f"{command} failed for {ref}",
                    command=command)  # fmt: skip
        elif how < 0.65:
            recorded = self.key("e")
            self.op("error", key=recorded, step=n, text=f"Hit this on {ref}: {error}")
        self.failures[key]["record"] = recorded
        fate = rng.random()
        if rng.random() < 0.15:
            self.op("run", step=n, command=command, exit=1, err=f"running {ref}\n{error}")
        if fate < 0.45:
            self.op("run", step=n, command=command, exit=0, out=f"ok: {ref}")
            self.close_by_command(command)
        elif fate < 0.7 and recorded is not None:
            self.op("resolve", key=recorded, text=f"Fixed {ref} by hand and re-checked it")
            self.failures[key]["open"] = False
        else:
            self.failures[key]["later"] = True  # open for now; retried in a later step

    def close_by_command(self, command: str) -> None:
        """A run of `command` passed: its failures are over. clew resolves only its own
        copy of a failure; one the agent recorded, the agent resolves, as it is shown the
        passing run beside the error (issue 25)."""
        for failure in self.failures.values():
            if failure["open"] and failure["command"] == command:
                failure["open"] = False
                if failure.get("record") is not None:
                    self.op("resolve", key=failure["record"],
                            text=f"Re-ran `{command}` and it passes now")  # fmt: skip

    def fail_and_replan(self, n: int) -> None:
        title = self.plan[n - 1][0]
        self.op("fail", step=n, issue=f"{title} keeps breaking")
        self.plan[n - 1][1] = "failed"
        retry = f"Retry {title.lower()}"
        self.op("replan", add=retry, position=n + 1, reason=f"step {n} failed")
        self.plan.insert(n, [retry, "pending"])

    def drop_a_step(self, n: int) -> None:
        later = [m for m in self.number("pending") if m > n + 1]
        if not later:
            return
        gone = self.rng.choice(later)
        added = f"Double-check {self.plan[gone - 1][0].lower()}"
        self.op("replan", remove=gone, add=added, reason="scope changed")
        del self.plan[gone - 1]
        self.plan.append([added, "pending"])

    # -- what happens between commands ----------------------------------------------------

    def extras(self, n: int) -> None:
        rng = self.rng
        roll = rng.random()
        if roll < 0.12:
            self.decide(n)
        elif roll < 0.16:
            self.constraint()
        elif roll < 0.21:
            self.question()
        elif roll < 0.27:
            self.wait(n)
        elif roll < 0.45:
            unit = self.plan[n - 1][0]
            self.op("message", text=f"Looking into {unit.lower()}; nothing surprising so far.")
        self.settle()

    def settle(self) -> None:
        """Answer questions and end waits now and then (some waits stay open long)."""
        rng = self.rng
        for key, question in self.questions.items():
            if question[2] and rng.random() < 0.15:
                self.op("answer", key=key, text=question[1])
                question[2] = False
        for key, wait in self.waits.items():
            if wait[1] and rng.random() < 0.08:
                self.op("unwait", key=key)
                wait[1] = False

    def decide(self, n: int) -> None:
        rng = self.rng
        choices = [*_TOPICS[self.kind], *_PINS[:2]]
        subject, options = choices[rng.randrange(len(choices))]
        pin = (subject, options) in _PINS
        topic = self.topics.setdefault(subject, {"history": [], "record": None, "recorded": False})
        fresh = [o for o in options if not topic["history"] or o != topic["history"][-1]]
        option = rng.choice(fresh)

        def text(o: str) -> str:
            if pin:
                return f"Pin {subject} to {o}"
            return rng.choice([f"Use {o} for the {subject}", f"{subject.capitalize()}: {o}"])

        if not topic["history"] and not pin and rng.random() < 0.35:
            # Said in a progress message only; the extraction makes it a decision later.
            self.op("message", text=f"Going with {option} for the {subject}.")
            topic["history"].append(option)
            return
        key = self.key("d")
        explicit = topic["record"] if topic["record"] and rng.random() < 0.5 else None
        self.op("decide", key=key, step=n, text=text(option), supersedes=explicit)
        topic["history"].append(option)
        topic["record"], topic["recorded"] = key, True

    def constraint(self) -> None:
        rng = self.rng
        used = {t for t, _ in self.constraints.values()}
        live = [k for k, (_, is_live) in self.constraints.items() if is_live]
        if live and rng.random() < 0.25:
            old = rng.choice(live)
            text = f"{self.constraints[old][0]}, now also on weekends"
            if text not in used:
                key = self.key("c")
                self.op("constrain", key=key, text=text, supersedes=old)
                self.constraints[old][1] = False
                self.constraints[key] = [text, True]
                return
        left = [c for c in _CONSTRAINTS if c not in used]
        if left and len(live) < 6:
            key = self.key("c")
            text = rng.choice(left)
            self.op("constrain", key=key, text=text, supersedes=None)
            self.constraints[key] = [text, True]

    def question(self) -> None:
        rng = self.rng
        asked = {q for q, _, _ in self.questions.values()}
        pending = sum(1 for _, _, is_open in self.questions.values() if is_open)
        left = [q for q in _QUESTIONS if q[0] not in asked]
        if not left or pending >= MAX_OPEN_QUESTIONS:
            return
        text, answer = rng.choice(left)
        key = self.key("q")
        self.op("ask", key=key, text=text)
        self.questions[key] = [text, answer, True]

    def wait(self, n: int) -> None:
        if sum(1 for _, is_open, _ in self.waits.values() if is_open) >= MAX_OPEN_WAITS:
            return
        unit = self.plan[n - 1][0].split()[-1].strip("()")
        text = self.rng.choice(_WAITS).format(r=f"{unit}-{self.ref()}")
        key = self.key("w")
        self.op("wait", key=key, step=n, text=text)
        self.waits[key] = [text, True, len(self.ops)]


def generate(seed: int, index: int, *, steps: int | None = None) -> Script:
    """Write task `index` of the suite seeded `seed` (of 20-200 steps, or `steps`)."""
    return _Gen(seed, index).write(steps)
