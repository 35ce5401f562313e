"""The vocabulary every part of clew shares, below the store: ids, time, exact JSON, input
checks, the journal's hash chain and tombstones, where a store lives, the search query's
structure, turns, keys as values, who a call comes from, and the value types the store's
contract names (waits, maintenance and stuck rules).

Owns only pure code. May import: the standard library, `clew.errors`, `clew.models`, and
its own modules. Everything else in clew may import it.
"""
