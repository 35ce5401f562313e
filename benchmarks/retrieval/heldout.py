# ruff: noqa: E501  (the look-alikes: one a line)
"""The held-out conversations (heldout_data.py), scored like LoCoMo: per category
(knowledge-update, single-hop, temporal, multi-hop, open-domain), keyword and hybrid.

    python benchmarks/retrieval/heldout.py [--modes keyword,hybrid] [--json]

Each sitting's labelled turns are padded with everyday look-alike turns (FILLER, mixed in
by a seeded random.Random): the same speakers on the same topics, answering nothing, so
each conversation is long (about 400 turns) and the labelled turns have company. Written
before the ranking changes of issue 25 and not looked at while tuning them (heldout.md).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.retrieval.conversations import (
    Asked,
    Conversation,
    Said,
    Sitting,
    printed,
    run,
    table,
)
from benchmarks.retrieval.heldout_data import SETS

CATEGORIES = ("knowledge-update", "single-hop", "temporal", "multi-hop", "open-domain")
PER_SITTING = 34  # look-alike turns mixed into each sitting

# Look-alikes by conversation and speaker: on the conversation's topics, answering nothing.
FILLER: dict[str, dict[str, list[str]]] = {
    "noor": {
        "Noor": [
            "what should I cook tonight, something with chickpeas",
            "can you recommend a novel for the book club",
            "I'm so tired today, work was a lot",
            "remind me what the weather is supposed to be this weekend",
            "how do I get wine stains out of a rug",
            "do you think I should paint the hallway",
            "I watched a documentary about octopuses, wild",
            "give me a quick stretching routine for after sitting all day",
            "how do I say good morning in Portuguese again",
            "what's a good gift for a coworker leaving",
            "my neighbour's dog barks all night",
            "the cat knocked a plant off the shelf again lol",
            "is it normal to feel nervous before a presentation",
            "help me write a text to my landlord about the radiator",
            "what's the difference between a roth and a regular savings account",
            "any tips for falling asleep faster",
            "I want to try baking bread this weekend",
            "how long should I steep green tea",
            "the tram was late again this morning",
            "ok I'm going to bed",
            "can you summarize the news about the transit strike",
            "I need a playlist for running",
            "how do I politely decline a meeting",
            "what are some easy Portuguese podcasts for beginners",
            "lol ok",
        ],
        "assistant": [
            "Here's a simple chickpea curry: onion, garlic, tomatoes, coconut milk and spices.",
            "You could try a short literary novel that sparks discussion, something under 300 pages.",
            "That sounds draining. Be kind to yourself tonight.",
            "A mix of baking soda and cold water works on many stains.",
            "A light warm grey would brighten a narrow hallway.",
            "Try a five-minute routine: neck rolls, hip flexor stretch, forward fold.",
            "Bom dia! Literally 'good day', used until about noon.",
            "A nice notebook or a plant is a safe, thoughtful gift.",
            "Nerves before presenting are very common; rehearsing out loud helps.",
            "Here's a short, polite message about the radiator.",
            "Keep a consistent bedtime and avoid screens for the last half hour.",
            "For a first loaf, a simple no-knead recipe is forgiving.",
            "About two to three minutes at around 80 degrees.",
            "Sleep well!",
            "Here's an upbeat playlist at around 160 beats per minute.",
            "You could say you can't make it but would love the notes afterwards.",
            "Happy to help any time.",
            "Good luck with it!",
        ],
    },
    "platform": {
        "Tomás": [
            "reminder to fill in the on-call survey",
            "anyone seen the grafana dashboard for queue lag?",
            "lunch order going in at 12",
            "PR for the terraform module is up, reviews welcome",
            "the staging cluster is slow again, looking",
            "I'm on call this week",
            "retro notes are in the doc",
            "who broke the CI cache lol",
            "merging the dependabot bumps",
            "going to be 10 min late",
            "let's not deploy on Friday afternoon please",
            "the VPN is flaky today",
            "new laptop arrived finally",
        ],
        "Ingrid": [
            "vacuum finished on the analytics replica",
            "RDS maintenance window is Sunday 3am as usual",
            "reviewing the terraform PR now",
            "pg_stat_statements shows the same slow report query as last month",
            "backups verified for the week",
            "can someone review my runbook edits",
            "I'll be in the office Wednesday",
            "ledger db CPU fine this week",
            "replication lag was 2s during the batch, normal",
            "coffee machine on 3 is broken again",
        ],
        "Kofi": [
            "rotating the staging certs, ignore alerts",
            "looking at the flaky e2e test",
            "DNS TTLs lowered for the weekend test",
            "anyone want to pair on the helm linting?",
            "load balancer health checks look fine",
            "I'll update the network diagram",
            "k9s is so much nicer than kubectl for this",
            "cloudflare had a blip, not us",
            "out for a dentist appointment at 3",
            "ok",
            "+1",
            "thanks",
            "will do",
        ],
    },
    "reno": {
        "Beatriz": [
            "did you get my text about parking?",
            "the neighbours asked who our contractor is",
            "sorry we'll be 15 min late",
            "is the dumpster staying over the weekend?",
            "Eitan asked about paint colours for the living room",
            "thanks for sweeping up",
            "can the crew use the side door instead",
            "what time tomorrow?",
            "the dog is at my mum's this week so no barking",
            "I saw a nice light fixture online, sending a link",
            "how do we clean the floors after all the dust",
            "ok sounds good",
        ],
        "Sam": [
            "parking is fine on the street, we'll use one spot",
            "dumpster gets swapped Monday",
            "crew starts at 8 tomorrow",
            "that light fixture would work, it's a standard box",
            "side door is fine",
            "I'll be there around 9",
            "dust will settle for a few days, a HEPA vacuum helps",
            "materials drop-off is Thursday morning",
            "the weather might slow the exterior stuff but not the kitchen",
            "sending photos at end of day",
            "sure thing",
            "no problem",
        ],
    },
}


def _when(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=UTC)


def build(name: str) -> Conversation:
    """One held-out conversation with its look-alikes mixed in."""
    sessions, rows, roles = SETS[name]
    rng = random.Random(f"heldout-{name}")
    filler = FILLER[name]
    speakers = tuple(dict.fromkeys(t[0] for _, turns in sessions for t in turns))
    sittings = []
    for s, (at, turns) in enumerate(sessions, 1):
        said = [Said(t[2] if len(t) > 2 and t[2] else f"s{s}.{i}", t[0], t[1])
                for i, t in enumerate(turns, 1)]  # fmt: skip
        for n in range(PER_SITTING):
            who = rng.choice([w for w in speakers if w in filler])
            said.insert(
                rng.randrange(len(said) + 1), Said(f"s{s}.f{n}", who, rng.choice(filler[who]))
            )
        sittings.append(Sitting(_when(at), tuple(said)))
    asked = tuple(Asked(q, c, keys, _when(at) if at else None) for c, q, keys, at in rows)
    return Conversation(f"heldout-{name}", speakers, tuple(sittings), asked, roles=dict(roles))


def load() -> list[Conversation]:
    return [build(name) for name in SETS]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="keyword,hybrid")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    rows = run(load(), modes)
    lines = table(rows, CATEGORIES)
    print(json.dumps({"rows": rows, "table": lines}, indent=1) if args.json else printed(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
