"""Look-alike records that answer no question: routine commands and their output, agent
chatter, other decisions, everyday conversation about the same people and topics, other
group chats. They make ranking matter: most share words with some question. Deterministic:
a `random.Random` with a fixed start; never labelled."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from benchmarks.retrieval.corpus import Book, when

MODULES = ("billing", "auth", "reports", "search", "notifications", "export", "api", "payouts",
           "ingest", "webhooks", "checkout", "accounts", "tenants", "audit")  # fmt: skip
PACKAGES = (("httpx", "0.27.2"), ("pydantic", "2.7.4"), ("celery", "5.4.0"), ("boto3", "1.34.131"),
            ("sqlalchemy", "2.0.31"), ("redis", "5.0.7"), ("structlog", "24.2.0"),
            ("psycopg", "3.1.19"), ("gunicorn", "22.0.0"), ("sentry-sdk", "2.7.1"),
            ("orjson", "3.10.5"), ("uvicorn", "0.30.1"), ("weasyprint", "61.2"),
            ("django-filter", "23.5"), ("requests", "2.32.3"))  # fmt: skip
OTHER_DECISIONS = (
    ("Use ruff instead of flake8 and isort", "one tool, ten times faster in pre-commit"),
    ("Keep Celery for background jobs rather than moving to RQ", "we rely on chords and ETA"),
    ("Store invoice PDFs in S3 with a 7 year lifecycle rule", "the retention law needs 7 years"),
    ("Use structlog JSON logs in every service", "Loki parses them without regexes"),
    ("Pin Python to 3.11 in all images", "3.12 breaks two C extensions we use"),
    ("Run migrations in a pre-deploy job, not at container start", "parallel pods raced"),
    ("Use Renovate for dependency updates, grouped weekly", "Dependabot opened 40 PRs a week"),
    ("Serve the admin only on the VPN hostname", "security review asked for it"),
    ("Adopt OpenTelemetry traces for the API", "Jaeger was only in staging"),
    ("Use Vite for the checkout build instead of webpack", "builds went from 90 s to 11 s"),
    ("Keep feature flags in LaunchDarkly, not env vars", "product wants to flip them"),
    ("Write the CSV exporter with the csv module, no pandas", "pandas doubled the image"),
    ("Move cron jobs to the scheduler service", "cron on one VM was a single point of failure"),
    ("Use Playwright instead of Cypress for e2e", "WebKit coverage for Safari"),
    ("Retry webhooks up to 12 times", "partners asked for a day of retries"),
    ("Cache tenant settings in process for 60 seconds", "the settings query was 30% of load"),
)  # fmt: skip
CHATTER = (
    "Running the {m} tests again to be sure.",
    "The {m} suite is green now; moving on to the next step.",
    "I'll look at the {m} module's imports before changing anything.",
    "That warning in {m} is harmless; it comes from a deprecated argument in a dependency.",
    "Pushed the {m} changes to the branch; CI is running.",
    "I reformatted the {m} files with ruff format, no logic changes.",
    "The {m} migration applies cleanly on a copy of staging.",
    "Checking the {m} logs on staging for the last hour.",
)
PEOPLE_SMALLTALK = (
    "Lena called after a night shift, she sounded exhausted but happy.",
    "Sam is marking year 9 essays all weekend, so I'm on my own.",
    "Jonah came over to borrow boxes for the move.",
    "Mum's garden is full of tulips this week.",
    "Biscuit stole a whole baguette off the counter.",
    "Had lunch with Helen and the team, a new ramen place.",
    "Lena sent photos of the quinta, it's beautiful.",
    "Sam wants to repaint the hallway, maybe sage green.",
    "Called mum, she's bored and wants to go out more.",
    "Biscuit loved the beach walk, he ran for an hour.",
)
EVERYDAY = (
    ("It's been raining all week, I haven't cycled once.", "Rainy weeks are hard on routines;"
     " maybe an indoor session on the trainer?"),
    ("Made a lentil curry tonight, too much chilli.", "A spoon of yogurt or some coconut milk"
     " calms the heat next time."),
    ("Watching Slow Horses, two episodes left.", "It's a good one. Want similar spy series?"),
    ("Went to the gym, 30 minutes on the rower and some squats.", "Nice, steady effort."),
    ("Can't sleep, too much coffee after 4pm probably.", "Caffeine lasts hours; try a cut-off"
     " at 2pm for a week."),
    ("Bought new bedding, the linen one, it was on sale.", "Linen gets softer with each wash."),
    ("Thinking of a weekend in the Lake District.", "Keswick or Ambleside make good bases."),
    ("Read 50 pages of Piranesi, strange and lovely.", "It rewards patience."),
    ("Salmon with miso glaze for dinner, turned out great.", "Miso and fish work so well."),
    ("Need to renew my passport before September.", "Allow around three weeks for renewal."),
    ("Did a 6k easy run along the canal.", "Easy runs build the base; keep them easy."),
    ("Work was all meetings today, no time to code.", "Maybe block two focus hours tomorrow."),
    ("The boiler made a weird noise again.", "If it keeps happening, book a service."),
    ("Booked a haircut for Friday.", "Enjoy it."),
    ("Trying to learn ten Portuguese words a day.", "Spaced repetition helps with that."),
)  # fmt: skip
CHATS = (
    ("book club", ("Mira", "Tom", "Keisha", "Olu"),
     ("I vote for Klara and the Sun next month.", "I finished the last one in two nights.",
      "Can we meet at the café on Thursday instead?", "I'll bring snacks this time.",
      "The ending felt rushed to me.", "Who has a copy to lend?")),
    ("five-a-side", ("Dev", "Callum", "Rosa", "Ben"),
     ("Pitch is booked for 7pm Tuesday.", "I'll be ten minutes late.", "Who has the bibs?",
      "We need a keeper this week.", "Great game, same time next week?",
      "Pitch fee is 6 each, send it to Callum.")),
    ("flat share", ("Nadia", "Luis", "Femi"),
     ("Bins go out Monday night.", "Someone left the heating on all day.",
      "I'll order more dish soap.", "The landlord's plumber comes Wednesday morning.",
      "Can we split the internet bill three ways?", "Quiet please after 11, I have exams.")),
)  # fmt: skip


def write(b: Book, *, size: int = 1) -> None:
    """Add the look-alike records (`size` scales them)."""
    rng = random.Random(2718)
    _coding(b, rng, size)
    _everyday(b, rng, size)
    _chats(b, rng, size)


def _hash(rng: random.Random) -> str:
    return f"{rng.getrandbits(28):07x}"


def _coding(b: Book, rng: random.Random, size: int) -> None:
    tasks = [c for c in b.containers if c.kind == "task"]
    sessions = {
        c.args["task"]: c.key for c in b.containers if c.kind == "session" and c.args["task"]
    }
    n = 0
    for task in tasks:
        session = sessions.get(task.key) or b.session(
            f"fill.s.{task.key}", task.at.strftime("%Y-%m-%d %H:%M"), f"{task.key} work",
            task=task.key,
        )  # fmt: skip
        moment = task.at + timedelta(minutes=30)
        for _ in range(450 * size):
            n += 1
            moment += timedelta(minutes=rng.randrange(3, 90))
            at = moment.strftime("%Y-%m-%d %H:%M")
            m = rng.choice(MODULES)
            pick = rng.random()
            key = f"fill.c{n}"
            if pick < 0.22:
                count = rng.randrange(8, 120)
                b.command(key, task.key, at, f"pytest tests/{m} -q",
                          stdout=f"{'.' * min(count, 60)}\n{count} passed in"
                          f" {rng.uniform(0.5, 40):.2f}s", labelled=False)  # fmt: skip
            elif pick < 0.32:
                pkg, ver = rng.choice(PACKAGES)
                b.command(key, task.key, at, f"pip install {pkg}=={ver}",
                          stdout=f"Collecting {pkg}=={ver}\nSuccessfully installed {pkg}-{ver}",
                          labelled=False)  # fmt: skip
            elif pick < 0.42:
                files = rng.sample(MODULES, 3)
                diff = "\n".join(
                    f" ledgerly/{f}/{rng.choice(('models', 'views', 'tasks', 'api'))}.py |"
                    f" {rng.randrange(1, 80)} {'+' * rng.randrange(1, 9)}"
                    f"{'-' * rng.randrange(0, 5)}"
                    for f in files
                )
                b.command(key, task.key, at, "git diff --stat", stdout=diff, labelled=False)
            elif pick < 0.50:
                b.command(key, task.key, at, f"git commit -am 'Tidy {m} module'",
                          stdout=f"[{task.key} {_hash(rng)}] Tidy {m} module\n"
                          f" {rng.randrange(1, 6)} files changed", labelled=False)  # fmt: skip
            elif pick < 0.56:
                what, why = rng.choice(OTHER_DECISIONS)
                b.entry(key, task.key, at, rng.choice(("decision", "discovery", "context")),
                        f"{what} ({m})", detail=why)  # fmt: skip
            elif pick < 0.64:
                b.message(key, task.key, at, rng.choice(CHATTER).format(m=m), role="agent")
            elif pick < 0.80:
                b.turn(key, session, moment, "assistant", rng.choice(CHATTER).format(m=m),
                       labelled=False)  # fmt: skip
            else:
                count = rng.randrange(3, 40)
                call_id = f"call_fill{n}"
                cmd = f"grep -rn '{m}_' ledgerly/{m} | head"
                out = "\n".join(
                    f"ledgerly/{m}/{rng.choice(('models', 'views', 'tasks'))}.py:"
                    f"{rng.randrange(1, 400)}:"
                    f"    {m}_{rng.choice(('id', 'status', 'total', 'owner'))} = ..."
                    for _ in range(min(count, 8))
                )
                calls = [{"id": call_id, "type": "function",
                          "function": {"name": "bash", "arguments": {"command": cmd}}}]  # fmt: skip
                b.turn(key + ".call", session, moment, "assistant", None, tool_calls=calls,
                       labelled=False)  # fmt: skip
                b.turn(key, session, moment + timedelta(seconds=5), "tool", out,
                       tool_call_id=call_id, labelled=False)  # fmt: skip


def _everyday(b: Book, rng: random.Random, size: int) -> None:
    moment = when("2026-01-03 18:00")
    end = when("2026-06-29 22:00")
    n = 0
    step = timedelta(hours=max(1, 16 // size))
    while moment < end:
        n += 1
        moment += step + timedelta(minutes=rng.randrange(0, 600))
        session = b.session(f"fill.p{n}", moment.strftime("%Y-%m-%d %H:%M"), "chat")
        at = moment
        for m in range(rng.randrange(2, 6)):
            if rng.random() < 0.35:
                said = rng.choice(PEOPLE_SMALLTALK)
                reply = "Thanks for telling me. How are you feeling about it?"
            else:
                said, reply = rng.choice(EVERYDAY)
            b.turn(f"fill.p{n}.{m}u", session, at, "user", said, labelled=False)
            b.turn(f"fill.p{n}.{m}a", session, at + timedelta(seconds=30), "assistant", reply,
                   labelled=False)  # fmt: skip
            at += timedelta(minutes=rng.randrange(1, 8))


def _chats(b: Book, rng: random.Random, size: int) -> None:
    for c, (title, names, lines) in enumerate(CHATS):
        moment = datetime(2026, 2, 1, 19, 0, tzinfo=when("2026-01-01").tzinfo)
        moment += timedelta(days=c * 3)
        session = b.session(f"fill.chat{c}", moment.strftime("%Y-%m-%d %H:%M"), title)
        for n in range(60 * size):
            moment += timedelta(hours=rng.randrange(2, 60))
            name = rng.choice(names)
            b.turn(f"fill.chat{c}.{n}", session, moment, "user", f"{name}: {rng.choice(lines)}",
                   name=name, labelled=False)  # fmt: skip
