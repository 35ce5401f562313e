"""Dangling references: a user message that points at conversation the
model may no longer see ("like we discussed", "that error", "go back to the previous
approach"). Pure and cheap, so it runs on every turn; a false alarm costs one needless
recall, a miss costs a guess, so it leans towards firing.

The phrases are whole-word patterns, not substrings, and leave out the common uses that
point forward or at the message itself ("remember to", "before you start", "Python 3.8
and earlier"). tests/test_hints.py measures them on a labelled list of messages.
"""

from __future__ import annotations

import re

_NOUNS = (
    r"(?:file|error|function|bug|test|thing|issue|approach|idea|command|script|module|class|"
    r"method|change|fix|output|query|config|configuration|branch|commit|table|endpoint|plan|"
    r"snippet|diff|patch|traceback|stack ?trace|exception|warning|migration|schema|design|"
    r"version|suggestion|solution|list|example|variable|component|page|step|problem|one|"
    r"part|section|paragraph|link|number|log|message|point|option|flag|value|result)"
    r"(?:e?s)?"
)
_PAST = (
    r"(?:mentioned|used|wrote|written|made|showed|shown|suggested|created|edited|changed|"
    r"fixed|found|saw|seen|had|added|removed|deleted|picked|chose|chosen|discussed|agreed on|"
    r"decided on|ran|tried|built|designed|drafted)"
)
_PATTERNS = (
    # Explicit pointers to the past of the conversation.
    r"like (?:we|you|i) (?:discussed|said|mentioned|agreed|decided|planned|talked about)",
    r"as (?:we|you|i) (?:discussed|said|mentioned|agreed|decided|planned|noted|showed)",
    r"as (?:discussed|mentioned|agreed|planned|before|earlier|previously)",
    r"(?:like|same as|just like) (?:before|earlier|last time)",
    r"(?:we|you|i) (?:did|had|used|tried|wrote|fixed|made|saw|ran) (?:\w+ )?(?:before|earlier)",
    r"(?:do|did|can) you remember|remember (?:when|what|how|which|where|the|that (?:we|you|i))",
    r"(?:you|we) (?:said|mentioned|suggested|proposed|recommended|promised|decided|agreed)",
    r"i (?:told|asked|showed|gave|sent) you",
    r"i (?:said|mentioned|explained) (?:earlier|before|that)",
    r"we (?:discussed|talked about|went over|looked at|already|were (?:discussing|working on))",
    r"(?:go|get|going|come|coming) back to",
    r"back to (?:the|that|what|where|how)",
    r"what (?:we|you) (?:did|had|wrote|found|tried|decided|changed)",
    r"(?<!and )(?<!or )(?<!version )\bearlier(?! versions?\b)(?! releases?\b)(?! than\b)",
    r"previously",
    r"(?:the|your|my) (?:previous|last|earlier|original|old|other) " + _NOUNS,
    r"last time",
    r"(?:do|run|try|say|show me|send) (?:that|it|those) again",
    r"(?<!so )(?<!sure )(?<!such )(?<!and )that " + _NOUNS + r"\b(?! (?:is|are) (?:not )?called)",
    r"(?<!such )(?<!all )those " + _NOUNS + r"\b",
    r"the same (?:error|thing|issue|problem|fix|approach|way|result|output|file|one)",
    r"the (?:\w+ )?" + _NOUNS + r" (?:that |which )?(?:you|we|i) (?:\w+ )?" + _PAST,
    r"(?:did|didn't|have|haven't) (?:we|you|i) (?:ever )?(?:decide|agree|say|use|put|choose|pick|"
    r"add|change|write|try|settle|mention|fix|solve|discuss|find|see)",
)
_REFERENCE = re.compile(r"\b(?:" + "|".join(_PATTERNS) + r")", re.IGNORECASE)

HINT = (
    "[clew: the user's message refers to earlier conversation ({phrase!r}) that is no longer"
    " in your context window. Search the archive with conversation_recall (action=search)"
    " before you answer, rather than guessing or asking the user to repeat it.]"
)


def reference(message: str) -> str | None:
    """The phrase by which a message refers to earlier conversation, if it does."""
    found = _REFERENCE.search(message)
    return found.group(0) if found else None


def hint(message: str) -> str | None:
    """The note to put before the model's answer when the message refers back."""
    phrase = reference(message)
    return HINT.format(phrase=phrase) if phrase else None
