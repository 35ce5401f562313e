"""Short random ids.

Ten characters of lowercase Crockford base32 (50 bits): short enough to type,
random rather than time-ordered so that short prefixes stay unambiguous (ids
made in the same second would share a time-ordered prefix).
"""

from __future__ import annotations

import os

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
ID_LENGTH = 10


# Each byte to its symbol: byte b is ALPHABET[b % 32] (32 symbols divide 256: no bias).
_SYMBOLS = bytes(ord(ALPHABET[b % 32]) for b in range(256))


def new_id() -> str:
    """Return a fresh random id."""
    # os.urandom is the CSPRNG behind `secrets`, without the import cost (hmac, hashlib)
    # that the CLI's start-up would pay; one translate maps its bytes (every write makes a
    # few ids: a join over a generator cost 3 µs each).
    return os.urandom(ID_LENGTH).translate(_SYMBOLS).decode("ascii")


def is_id_prefix(text: str) -> bool:
    """Tell whether `text` could be (a prefix of) an id."""
    return 0 < len(text) <= ID_LENGTH and all(c in ALPHABET for c in text)
