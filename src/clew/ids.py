"""Short random ids.

Ten characters of lowercase Crockford base32 (50 bits): short enough to type,
random rather than time-ordered so that short prefixes stay unambiguous (ids
made in the same second would share a time-ordered prefix).
"""

from __future__ import annotations

import os

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
ID_LENGTH = 10


def new_id() -> str:
    """Return a fresh random id."""
    # os.urandom is the CSPRNG behind `secrets`, without the import cost (hmac, hashlib)
    # that the CLI's start-up would pay. 32 symbols divide 256, so there is no bias.
    return "".join(ALPHABET[b % 32] for b in os.urandom(ID_LENGTH))


def is_id_prefix(text: str) -> bool:
    """Tell whether `text` could be (a prefix of) an id."""
    return 0 < len(text) <= ID_LENGTH and all(c in ALPHABET for c in text)
