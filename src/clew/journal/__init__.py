"""The journal as a whole: read back and verified (`audit`), sealed checkpoints of where it
ended (`checkpoints`, `checkpointfile`), moved between stores as a file (`transfer`,
`journalfile`), and forgetting, which removes a record's content and leaves a tombstone
(`forgetting`, `forgettable`).

May import: `clew.conversations`, `clew.state`, `clew.tasks` and everything below them.
"""
