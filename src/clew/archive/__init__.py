"""Layer 2: the typed archive of decisions, errors, findings and notes (`entries`), the
episodic trace and command ledger (`trace`), learned patterns with their evidence
(`semantic`), and the pure rules they use: error fingerprints, which records are one fact
(`linking`), what a message claims (`claims`), write-time extraction, the error lines of a
long output and the outline of the work.

May import: `clew.tasks` and everything below it.
"""
