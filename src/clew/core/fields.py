"""Length-prefixed fields: the one encoding clew hashes, for the journal's chain (chain.py)
and for seals (sealing.py). Pure.

Each field is its UTF-8 length as 8 bytes big-endian and its UTF-8 bytes, a null the length
2**64 - 1 alone, so no two lists of fields give the same bytes ("ab", "c" is not "a", "bc";
None is not ""). Text a store kept may hold a lone surrogate: it is encoded as it is
(surrogatepass), so hashing it never raises.
"""

from __future__ import annotations

from collections.abc import Iterable

_NULL = (2**64 - 1).to_bytes(8, "big")


def encoded(label: bytes, fields: Iterable[str | None]) -> bytes:
    """Return `label` followed by `fields`, each length-prefixed."""
    parts = [label]
    for field in fields:
        if field is None:
            parts.append(_NULL)
            continue
        raw = field.encode("utf-8", "surrogatepass")
        parts += (len(raw).to_bytes(8, "big"), raw)
    return b"".join(parts)
