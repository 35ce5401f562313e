"""What a message plainly claims, by deterministic rules: a decision the agent made, a finding
it established, a constraint the user set (or the agent relays). Pure: text in, claims out.

These rules stand in for a model, so they say less rather than guess: a sentence is a claim
only when its own words make it one ("Decided to...", "Going with...", "Turns out...",
"Never force-push..."). A word alone never is: "using" in "Build image: running it using the
standard script" or "Now using pytest -x", "must" in "This must be the cache", "found" in
"Found 3 matches". A question, a hedge ("might", "I suspect", "probably") or a plan ("let me
find the root cause") is no claim. Each sentence makes at most one claim; markdown around
it (a bullet, a heading, bold) is read past, and a claim that only announces the next
sentence ("Found the issue!") takes that sentence with it. A user's choice said as one
("Let's go with Postgres") is a decision too.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from clew.core.pattern import lazy

# A sentence ends at `.`, `!` or `?` followed by white space (or the end), or at a line
# break: a dot inside a token (ghcr.io, v1.2.3, 3.11, src/app.py, ./run.sh, a URL) is
# followed by more of the token, so it never ends a sentence.
_END = lazy(r"[.!?]+(?=\s|$)|\n")
# Words whose final dot is not a sentence's end.
_ABBREVIATIONS = frozenset(
    """
    e.g i.e etc vs cf approx incl esp viz resp no fig al mr mrs ms dr st jr sr inc ltd co
    """.split()
)


def sentences(text: str) -> list[str]:
    """Split text into sentences, never at a dot inside a host name, version, path or URL."""
    found: list[str] = []
    start = 0
    for end in _END.finditer(text):
        if end.group() == "." or end.group().endswith("."):
            word = text[start : end.start()].rsplit(None, 1)[-1:] or [""]
            if word[0].lstrip("([{\"'").casefold() in _ABBREVIATIONS:
                continue
        piece = text[start : end.end()].strip()
        if piece:
            found.append(piece)
        start = end.end()
    rest = text[start:].strip()
    return [*found, rest] if rest else found


_I = r"(?:i|we)(?:'ve| have)?(?:\s+(?:just|finally|now|already|went ahead and))?"
_WILL = r"(?:i'm|i am|we're|we are|i'll|we'll|i will|we will|let's|let us)"
_LEAD = (
    r"(?:(?:so|ok|okay|alright|right|then|earlier|previously|after \w+ing[^,]{0,40}"
    r"|to \w+[^,]{0,40}),?\s+)?"
)
# "decided nothing", "picked up where it left off": the verb without a choice.
_CHOICE = r"(?:decided(?!\s+(?:nothing|yet)\b)|chose|opted|picked(?!\s+up\b)|settled on|went with)"

# An agent's decision: a choice it made in the first person, or a sentence that opens with
# the choice ("Going with Postgres 16: ...", "Decision: ...").
_DECISION = lazy(
    rf"^{_LEAD}(?:{_I}\s+{_CHOICE}\b"
    rf"|{_WILL}\s+go(?:ing)?\s+with\b"
    rf"|(?:final |the )?decision(?: made)?\s*:"
    rf"|picking\b.{{1,60}}\bover\b"
    rf"|(?:{_CHOICE}|going with|sticking with)\b"
    rf"|going forward,?\s+(?:i|we)(?:'ll| will)\b)",
    re.I,
)
# A weaker sign: acting on one thing "instead of / rather than" another. A choice of tool
# for the next look ("I'll use rg instead of grep") is how the agent works, not a decision
# about the work, so a sentence about looking, searching or a tool is none.
_ALTERNATIVE = lazy(
    rf"\b{_WILL}\s+(?:switch|use|keep|stick|go(?:ing)? to \w+|switching|using|keeping"
    rf"|sticking)\b.*\b(?:instead of|rather than)\b"
    rf"|^{_LEAD}(?:instead of|rather than)\b[^,]{{0,80}},\s*{_WILL}\s+"
    rf"|^switch(?:ing|ed)\b[^.]{{0,60}}?\bto\b.*\b(?:instead of|rather than|because)\b"
    rf"|\b(?:use|keep|switch to|stick with)\b.*\bgoing forward\b",
    re.I,
)
_LOOKING = lazy(
    r"\b(?:tool|grep|rg|ripgrep|sed|cat|find|ls|glob|search(?:ing)?|look(?:ing)?|read(?:ing)?"
    r"|list(?:ing)?|view(?:ing)?|inspect(?:ing)?|check(?:ing)?)\b",
    re.I,
)
# A finding: established in so many words, not guessed.
_FINDING = lazy(
    r"^(?:(?:so|ok|okay|interesting|aha|ah|right)\W*\s+)?(?:it\s+)?turns out\b"
    r"|^(?:(?:so|ok|okay|aha|ah)\W*\s+)?(?:i've |i have |i |we've |we )?"
    r"(?:found|tracked down|identified|pinned down)\s+(?:it\s*:"
    r"|that\b(?!\s+(?:file|one|function|test|class|module|line|method|page|commit)\b)"
    r"|the (?:root |real )?(?:cause|culprit|bug|leak|problem|issue|race)\b"
    r"(?!\s+(?:report|tracker|ticket|list|page|docs?|template)\b))"
    r"|^(?:i've |i have |i |we've |we )?(?:discovered|confirmed)\s*(?::|that\b|why\b"
    r"|the (?:root |real )?(?:cause|culprit|bug|leak|problem|issue|race|deadlock)\b)"
    r"|^(?:i've |i have |i |we've |we )?discovered the\b"
    r"(?=.*\b(?:is|was|are|were|does|doesn't|ignores|has|had|never|only)\b)"
    r"|^(?:so\s+)?(?:the\s+)?(?:root|real|actual) cause(?: found)?\s*(?:is|was|:)"
    r"|^(?:root cause found|found the root cause)\s*:"
    r"|^(?:root cause found|found (?:it|the (?:issue|problem|bug|culprit|cause)))\s*[.!:]?$"
    r"|^(?:so\s+)?the (?:culprit|issue|problem|bug|error)\s+(?:is|was)\s+(?:that|in|an?|the"
    r"|caused|because|with)\b"
    r"|\b(?:is|was|are|were) caused by\b|\b(?:is|was|are|were)\s+(?:\w+\s+)?because\b"
    r"|\b(?:comes?|came) from\b|,\s*hence\b|^(?:i |we )?tracked down\b.*\bto\b"
    r"|\bconfirms? my (?:suspicion|hypothesis|theory)\b"
    r"|^the reason\b.{0,80}\bis that\b",
    re.I,
)
# A user's rule for the work: an imperative that forbids, requires or bounds.
_USER_RULE = lazy(
    r"^(?:(?:please|and|also|oh and|ok|okay)[,\s]+)?"
    r"(?:never|don'?t|do not|always|avoid|must(?:n't| not)?|stick to|make sure|ensure"
    r"|only (?:touch|change|modify|edit|use|work)|keep (?:all|the|everything|changes|this)"
    r"|no new)\b"
    r"|\b(?:you|we|it|this|the [\w-]+(?: [\w-]+)?) must(?:n't| not)?\b(?! (?:have|be)\b)"
    r"|\b(?:you|we) (?:should never|shouldn't ever|can't|cannot|may not|are not allowed to)\b"
    r"|^i (?:don'?t|do not) want\b|\bleave (?:the|it|them|that|those|\w+) alone\b"
    r"|^(?:can|could|would) you (?:please )?(?:make sure|ensure)\b",
    re.I,
)
# What a user says with those words that is no rule: "never mind", "don't worry", and what
# happened ("never had this problem", "always worked before").
_NOT_A_RULE = lazy(
    r"^(?:please\s+)?(?:never mind|nevermind|don'?t (?:worry|know|bother|need|think|see)"
    r"|always (?:get|forget|seem|worked|works|been|was|had|happens|the|a|an|same)"
    r"|never (?:had|seen|saw|did|knew|noticed|thought|been|got|used|happened|worked))\b"
    r"|\bmust(?:'ve| have)\b",
    re.I,
)
# A rule the agent relays: the user said it, or the agent acknowledges one.
_RELAYED = lazy(
    r"\b(?:the user|you|user)\s+(?:said|asked|mentioned|told me|wants|instructed|requested)\b"
    r"(?:(?!\s+(?:whether|if|why|what|how|which|for|about)\b)\s+\S+){0,6}?"
    r"\s+(?:not|never|must|always|only|keep|no)\b"
    r"|^(?:per|as per|as) (?:your|the user's|the)\s+(?:instructions?|request|rules?)\b"
    r"|\bas you (?:asked|requested|said)\b|^as requested\b"
    r"|\byou said\b.*\boff[- ]limits\b"
    r"|^(?:important|note|reminder|rule|remember)\s*:\s*(?:never|don't|do not|always|must)\b"
    r"|^(?:noted|understood)\b\W*\s*(?:i won't|i will not|we won't|never|don't|do not|no)\b"
    r"|^constraint(?: from the user)?\s*:",
    re.I,
)
# A user's rule asked as a question ("Can you make sure the migration is reversible?").
_ASKED_RULE = lazy(r"^(?:can|could|would) you (?:please )?(?:make sure|ensure)\b", re.I)
# Doubt, a plan or a question: what is not yet known or not yet chosen.
_DOUBT = lazy(
    r"\b(?:might|maybe|may be|possibly|probably|perhaps|suspect|i think|i guess|seems?"
    r"|could be|not sure|unsure|whether|let me|let's see|need to|if you|unclear|unknown"
    r"|not yet|still haven't|haven't found|wonder)\b|\?\s*$",
    re.I,
)


# What a sentence holds, lower-cased, whenever the rules above find a decision in it
# (`DECISION_WORDS`) or a user's rule (`RULE_WORDS`): a caller on a hot path (the session
# state, folded on every turn) reads a message only when one is in it, with `str.find`.
# Phrases are matched with one space between their words, as agents write them.
DECISION_WORDS = (
    "decided",
    "chose",
    "opted",
    "picked",
    "settled on",
    "went with",
    "go with",
    "going with",
    "decision",
    "picking",
    "sticking with",
    "forward",
    "instead of",
    "rather than",
    "switch",
)
RULE_WORDS = (
    "never",
    "don't",
    "dont",
    "do not",
    "always",
    "avoid",
    "must",
    "stick to",
    "make sure",
    "ensure",
    "only touch",
    "only change",
    "only modify",
    "only edit",
    "only use",
    "only work",
    "keep all",
    "keep the",
    "keep everything",
    "keep changes",
    "keep this",
    "no new",
    "shouldn't ever",
    "can't",
    "cannot",
    "may not",
    "are not allowed",
    "alone",
)


class Claim(NamedTuple):
    """One claim a message makes: its kind (an entry type) and the sentence that makes it."""

    kind: str  # "decision", "discovery", "constraint" or "user_instruction"
    sentence: str  # the sentence (with the next one when it only announces it)


# A list's bullet or number, a heading's hashes, emphasis: markdown around the words.
_MARKUP = lazy(r"^\s*(?:#{1,6}\s+|>\s*)?(?:[-*+\u2022]\s+|\d{1,2}[.)]\s+)?|\*\*|__")
# A claim that only announces what follows ("Found the issue!", "Root cause found."): its
# summary takes the next sentence too.
_ANNOUNCES = 4  # words


def _plain(sentence: str) -> str:
    return _MARKUP.sub("", sentence).strip()


def _agent_kind(sentence: str) -> str | None:
    if sentence.rstrip().endswith("?"):
        return None
    if _RELAYED.search(sentence):
        return "constraint"
    if _DOUBT.search(sentence):
        return None
    if _DECISION.search(sentence):
        return "decision"
    if _ALTERNATIVE.search(sentence) and not _LOOKING.search(sentence):
        return "decision"
    if _FINDING.search(sentence):
        return "discovery"
    return None


def _user_kind(sentence: str) -> str | None:
    if _NOT_A_RULE.search(sentence) or len(sentence.split()) < 3:
        return None  # "don't" alone answers something said before; it is no rule
    if sentence.rstrip().endswith("?"):
        return "user_instruction" if _ASKED_RULE.search(sentence) else None
    if _USER_RULE.search(sentence):
        return "user_instruction"
    # The user's own choice, said as one ("Let's go with Postgres", "I decided...").
    return "decision" if _DECISION.search(sentence) and not _DOUBT.search(sentence) else None


def claims(text: str, role: str, *, holding: tuple[str, ...] = ()) -> list[Claim]:
    """The claims a message makes, in its order: an agent's decisions, findings and relayed
    constraints, a user's instructions and decisions; one per sentence that makes one.
    With `holding`, only the sentences that hold one of those words (lower-cased) are read
    (DECISION_WORDS, RULE_WORDS: for the claims of those kinds, and only them)."""
    kind_of = _user_kind if role == "user" else _agent_kind if role == "agent" else None
    if kind_of is None:
        return []
    said = [_plain(s) for s in sentences(text)]
    found: list[Claim] = []
    for index, sentence in enumerate(said):
        if holding and not holds(sentence.lower(), holding):
            continue
        kind = kind_of(sentence)
        if kind is None:
            continue
        if len(sentence.split()) <= _ANNOUNCES and index + 1 < len(said):
            sentence = f"{sentence} {said[index + 1]}"
        if all(c.sentence != sentence for c in found):
            found.append(Claim(kind, sentence))
    return found


def holds(lowered: str, words: tuple[str, ...]) -> bool:
    """Whether lower-cased text holds one of `words` (DECISION_WORDS, RULE_WORDS)."""
    return any(word in lowered for word in words)
