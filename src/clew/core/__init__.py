"""The vocabulary every part of clew shares, below the store: ids, time, exact JSON, input
checks, the journal's hash chain and tombstones, where a store lives, the search query's
structure, turns, keys as values, who a call comes from, and the value types the store's
contract names (waits, maintenance and stuck rules); and how clew itself was installed, for the
command that adds an extra (`installation`, which reads the package's metadata).

Owns only pure code, but for `installation`'s look at the install. May import: the standard
library, `clew.errors`, `clew.models`, and its own modules. Everything else in clew may import it.
"""
