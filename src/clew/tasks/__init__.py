"""The task tracker: tasks, their plans and steps, their actions and messages (`tracker`,
`taskrecord`), the rules they follow (`rules`, `record`), smart waits and what checks them
(`waits`, `probes`), watching a running task for being stuck (`watch`, `stuck`), progress read
from what an agent says (`progress`) and a task's history in words (`history`).

May import: `clew.core`, `clew.privacy`, `clew.errors`, `clew.models`, `clew.settings`,
`clew.kernel` and the store's contract through it. Nothing above: the archive, layer-1 state,
search and conversations build on it.
"""
