"""What a LangGraph conversation's checkpoints cost on disk: clew's ClewSaver next to
langgraph-checkpoint-sqlite's SqliteSaver, in the same run.

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_langgraph.py                # 50 to 400 turns, a minute or two
    python benchmarks/bench_langgraph.py --quick        # a smoke run
    python benchmarks/bench_langgraph.py --turns 2000 --comparator-turns 400

The graph: LangGraph's `MessagesState`, one node that plays a scripted model. A turn is one
`invoke` with the next message of the benchmark workload (benchmarks/workload.py: user
turns of 10-60 words, assistant turns of 20-200 words, tool results of 200-4,000
characters) as the user's, the node answering with the message after it: two messages a
turn, about 1.2 KB each on average, and the messages list grows by two every turn. Both
savers see the same messages in the same order; their turns alternate, so machine noise
hits both alike. Bytes are the store file after a WAL checkpoint, less the empty store's.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph

import clew
from clew.integrations.langgraph import ClewSaver
from common import header, table
from workload import messages


def _graph(saver: Any, script: list[str]) -> Any:
    def model(state: MessagesState) -> dict[str, Any]:
        turn = sum(1 for m in state["messages"] if m.type == "ai")
        return {"messages": [AIMessage(script[turn])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_edge(START, "model")
    return graph.compile(checkpointer=saver)


def _file_bytes(path: Path, conn: sqlite3.Connection) -> int:
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = Path(str(path) + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: up to 60 turns")
    parser.add_argument("--turns", type=int, default=400, help="the longest conversation")
    parser.add_argument(
        "--comparator-turns",
        type=int,
        default=None,
        help="stop SqliteSaver after this many turns (its file grows quadratically)",
    )
    args = parser.parse_args()
    last = 60 if args.quick else args.turns
    stop = last if args.comparator_turns is None else args.comparator_turns
    marks = sorted({m for m in (last // 8, last // 4, last // 2, last) if m > 0})
    texts = [m["content"] for m in messages(2 * last + 2)]
    users, answers = texts[0::2], texts[1::2]

    header(
        "LangGraph checkpoints: bytes after N turns of a growing conversation",
        ("turns", last),
        ("comparator", "langgraph-checkpoint-sqlite SqliteSaver, same run, turns alternating"),
    )
    with tempfile.TemporaryDirectory() as folder:
        clew_path = Path(folder) / "clew.db"
        memory = clew.open(clew_path)
        clew_conn = memory._store._connection()  # type: ignore[attr-defined]
        clew_base = _file_bytes(clew_path, clew_conn)
        lg_path = Path(folder) / "langgraph.db"
        lg_conn = sqlite3.connect(lg_path, check_same_thread=False)
        lg_saver = SqliteSaver(lg_conn)
        lg_saver.setup()
        lg_base = _file_bytes(lg_path, lg_conn)
        graphs = {
            "clew": _graph(ClewSaver(memory), answers),
            "SqliteSaver": _graph(lg_saver, answers),
        }
        config = {"configurable": {"thread_id": "bench"}}
        spent = {name: [0.0, 0.0] for name in graphs}  # wall, cpu since the last mark
        rows: list[list[object]] = []
        done = 0
        for mark in marks:
            for name in spent:
                spent[name] = [0.0, 0.0]
            for turn in range(done, mark):
                order = [(n, g) for n, g in graphs.items() if n == "clew" or turn < stop]
                for name, graph in order if turn % 2 else order[::-1]:
                    wall, cpu = time.perf_counter(), time.process_time()
                    graph.invoke({"messages": [HumanMessage(users[turn])]}, config)
                    spent[name][0] += time.perf_counter() - wall
                    spent[name][1] += time.process_time() - cpu
            steps = mark - done
            done = mark
            if mark > stop:  # the comparator has stopped: measure clew alone from here
                graphs.pop("SqliteSaver", None)
            reads: dict[str, list[float]] = {name: [] for name in graphs}
            read_cpu: dict[str, list[float]] = {name: [] for name in graphs}
            for sample in range(7):  # reading the thread back: what a resume costs
                order = list(graphs.items())
                for name, graph in order if sample % 2 else order[::-1]:
                    wall, cpu = time.perf_counter(), time.process_time()
                    graph.get_state(config)
                    reads[name].append(1000 * (time.perf_counter() - wall))
                    read_cpu[name].append(1000 * (time.process_time() - cpu))
            ours = _file_bytes(clew_path, clew_conn) - clew_base
            theirs = _file_bytes(lg_path, lg_conn) - lg_base
            alone = "SqliteSaver" not in graphs
            rows.append(
                [
                    mark,
                    _mb(ours),
                    "-" if alone else _mb(theirs),
                    "-" if alone else f"{theirs / max(ours, 1):,.1f}x",
                    f"{1000 * spent['clew'][0] / steps:.1f}"
                    f" / {1000 * spent['clew'][1] / steps:.1f}",
                    "-"
                    if alone
                    else f"{1000 * spent['SqliteSaver'][0] / steps:.1f}"
                    f" / {1000 * spent['SqliteSaver'][1] / steps:.1f}",
                    f"{statistics.median(reads['clew']):.1f}"
                    f" / {statistics.median(read_cpu['clew']):.1f}",
                    "-"
                    if alone
                    else f"{statistics.median(reads['SqliteSaver']):.1f}"
                    f" / {statistics.median(read_cpu['SqliteSaver']):.1f}",
                ]
            )
            print(f"  {mark} turns done", file=sys.stderr)
        text = sum(len(t) for t in texts[: 2 * last])
        print(
            table(
                [
                    "turns",
                    "clew MB",
                    "SqliteSaver MB",
                    "SqliteSaver / clew",
                    "clew ms/turn (wall / cpu)",
                    "SqliteSaver ms/turn (wall / cpu)",
                    "clew read ms (wall / cpu)",
                    "SqliteSaver read ms (wall / cpu)",
                ],
                rows,
            )
        )
        print(f"\nThe conversation's own text: {_mb(text)} MB over {last} turns.")
        print("ms/turn: the mean over the turns since the row before (wall / CPU).")
        print("read ms: medians of 7 `get_state` calls at that length (the thread read back).")
        memory.close()
        lg_conn.close()


if __name__ == "__main__":
    main()
