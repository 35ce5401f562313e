"""Which records are one fact: the decisions of one topic, the error entries of one failure.

Pure, deterministic and conservative: a false link hides a live fact from the state, a
missed link only shows one fact twice (or an outdated decision beside its successor), so
every rule here needs clear evidence.

Decisions share a topic when (any of):
- both carry the same `topic:NAME` tag (the agent says so);
- both name a subject (`Deploy strategy: canary`, `Use COPY for bulk data transfer`,
  `Keep ENUM as VARCHAR`...) and at least half of the words of both subjects together
  are shared (`base image` is not `image registry`); when both name a subject, nothing
  else is asked (`Decision 10: ...` is not `Decision 11: ...`);
- their words, numbers and versions left aside, are the same (`Use Python 3.11` and
  `Use Python 3.12`);
- they share at least 60% of their words (an extracted copy of the agent's own record).

A failure is one open error however many entries name it: entries linked to the same
failed command (action), or to runs of the same command with the same fingerprint, are the
same failure. Runs of the same command have the same program and arguments, numbers
included: `pytest --group 23` is a neighbouring shard of `pytest --group 22`, not a rerun,
and `backfill orders_p005` another partition than `orders_p004`. Only the parts an operator
lists as volatile (temporary paths by default) may differ.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from clew.core.pattern import lazy
from clew.models import VOLATILE_PARTS

TOPIC_TAG = "topic:"
_WORD = lazy(r"[a-z0-9][a-z0-9_.+#-]*[a-z0-9+#]|[a-z0-9]")
_VALUE = lazy(r"v?\d+(?:[._-]\d+)*[a-z]?")
# Words that say a decision is being made, not what about.
_VERBS = frozenset(
    """
    use uses using used go going goes with decided decide decision chose choose choosing chosen
    opted opt pick picked switch switched switching keep keeping stay staying stick sticking prefer
    adopt adopted we will we'll i i'll let's now instead after all rather than then back revert
    reverted don't do not no never stop drop dropped
    """.split()
)
_STOP = frozenset(
    """
    the a an to and or of in on for by at is are be it its this that as from into our my so but
    """.split()
)
_SUBJECT_SPLIT = (": ", " for ", " as ")


def words(text: str) -> list[str]:
    """The lowercase words of a text (versions, dotted names and numbers kept whole)."""
    return _WORD.findall(text.casefold())


def content(text: str) -> frozenset[str]:
    """The words that carry a decision's meaning: no stop words, no decision verbs."""
    return frozenset(w for w in words(text) if w not in _STOP and w not in _VERBS)


def subject(text: str) -> frozenset[str]:
    """What a decision is about, when its text says so: the part before `: `, or after the
    last ` for ` / ` as `; empty when it names none."""
    flat = " ".join(text.split())
    lower = flat.casefold()
    head, sep, _ = lower.partition(": ")
    if sep and 0 < len(head) <= 60 and "://" not in head:
        return content(head)
    for marker in _SUBJECT_SPLIT[1:]:
        at = lower.rfind(marker)
        if at > 0:
            return content(lower[at + len(marker) :])
    return frozenset()


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def topic_tags(tags: Sequence[str]) -> frozenset[str]:
    """The `topic:NAME` tags of a record, folded."""
    folded = (t.casefold().strip() for t in tags)
    return frozenset(t for t in folded if t.startswith(TOPIC_TAG) and t[len(TOPIC_TAG) :].strip())


def same_topic(
    new: str, old: str, new_tags: Sequence[str] = (), old_tags: Sequence[str] = ()
) -> bool:
    """Whether decision `new` is about what decision `old` was about (see the module)."""
    mine, theirs = topic_tags(new_tags), topic_tags(old_tags)
    if mine and theirs:
        return bool(mine & theirs)  # the agent named topics: they alone decide
    a, b = subject(new), subject(old)
    if a and b:  # both say what they are about: that alone decides
        return _jaccard(a, b) >= 0.5
    words_a, words_b = content(new), content(old)
    named_a = frozenset(w for w in words_a if not _VALUE.fullmatch(w))
    named_b = frozenset(w for w in words_b if not _VALUE.fullmatch(w))
    if named_a and named_a == named_b and words_a != words_b:
        return True  # the same thing at another value: Python 3.11 -> 3.12
    return _jaccard(words_a, words_b) >= 0.6


def same_decision(a: str, b: str) -> bool:
    """Whether two decision texts say the same thing (the same words, values included),
    such as the agent's record and the copy extracted from its progress message."""
    words_a, words_b = content(a), content(b)
    return bool(words_a) and _jaccard(words_a, words_b) >= 0.75


def same_command(a: str | None, b: str | None, volatile: Sequence[str] = VOLATILE_PARTS) -> bool:
    """Whether two command lines are runs of the same command: the same program and
    arguments, numbers included (`pytest --group 22` is not `pytest --group 23`, nor
    `deploy v2.19.1` `deploy v2.19.2`); only runs of white space and the `volatile` parts
    (temporary paths by default) may differ."""
    key = command_key(a, volatile)
    return key is not None and key == command_key(b, volatile)


def command_key(command: str | None, volatile: Sequence[str] = VOLATILE_PARTS) -> str | None:
    """What `same_command` compares: two commands are runs of one when their keys are equal
    and not None. A caller comparing many pairs computes each key once."""
    if not command:
        return None
    flat = " ".join(command.split())
    for pattern in volatile:
        flat = _volatile(pattern).sub("\x00", flat)
    return flat or None


_COMPILED: dict[str, re.Pattern[str]] = {}


def _volatile(pattern: str) -> re.Pattern[str]:
    found = _COMPILED.get(pattern)
    if found is None:
        found = _COMPILED[pattern] = re.compile(pattern)
    return found
