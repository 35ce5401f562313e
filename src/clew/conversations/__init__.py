"""The conversation archive: sessions and their verbatim turns (`sessions`), assistants'
transcript files read and captured (`transcripts`, `capture`), the agents' own lists in them
kept as tasks (`agent_plans`, `plan_capture`), recall of turns fitted to a
budget (`recall`, `recollection`), token-aware context assembly and resume (`context`,
`assembly`, `prompting`), structured session state and dangling references (`session_state`,
`hints`).

May import: `clew.search`, `clew.state`, `clew.archive`, `clew.tasks` and everything below.
"""
