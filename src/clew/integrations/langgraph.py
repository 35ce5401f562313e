"""LangGraph over clew (the `langgraph` extra): `ClewSaver`, its checkpointer, and
`ClewStore`, its long-term memory store, each over a clew store (SQLite or PostgreSQL).

    saver = ClewSaver(clew.open("agent.db"))
    graph = builder.compile(checkpointer=saver, store=ClewStore(saver.memory))
"""

from __future__ import annotations

from clew.integrations.langgraph_saver import ClewSaver
from clew.integrations.langgraph_store import ClewStore

__all__ = ["ClewSaver", "ClewStore"]
