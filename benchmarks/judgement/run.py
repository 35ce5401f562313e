"""Score every judgement set (what clew says on its own) on this tree and on an earlier commit,
side by side: precision and recall per kind.

    python benchmarks/judgement/run.py                # against the previous commit (HEAD~1)
    python benchmarks/judgement/run.py --against REV  # against any commit
    python benchmarks/judgement/run.py --only errors  # one area

Each area is a module beside this one (`AREA.py`, its set in `data/AREA.jsonl`, its
provenance in `AREA.md`) with `score() -> list[dict]`: one row per kind with `kind`, `cases`,
`tp`, `fp`, `fn`, `precision`, `recall`. Each side runs in a child process whose `sys.path`
starts with that side's `src`, so the scorer (always this tree's) measures that commit's clew;
the earlier commit is checked out in a temporary git worktree. An area that cannot score an
earlier commit (the API it needs came later) says so in its row instead of failing the run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def areas() -> list[str]:
    """The areas with a scorer and a set."""
    return sorted(
        p.stem for p in HERE.glob("*.py") if p.stem not in ("run", "__init__")
        and (HERE / "data" / f"{p.stem}.jsonl").exists()
    )  # fmt: skip


def score(area: str, src: Path) -> list[dict[str, object]] | str:
    """An area's rows with clew imported from `src`, or why it could not be scored."""
    code = (
        "import json, sys, importlib.util\n"
        f"sys.path[:0] = [{str(src)!r}, {str(HERE)!r}]\n"
        f"spec = importlib.util.spec_from_file_location('area', {str(HERE / (area + '.py'))!r})\n"
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
        "print(json.dumps(module.score()))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(src), "CLEW_WORKER": "off", "CLEW_MAINTENANCE": "off"}
    with tempfile.TemporaryDirectory() as home:
        env["XDG_CONFIG_HOME"] = env["XDG_STATE_HOME"] = env["XDG_CACHE_HOME"] = home
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
        )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"not scored: {last[:160]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def worktree(rev: str, into: str) -> Path:
    """A checkout of `rev` in `into` (a temporary git worktree)."""
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", into, rev],
        check=True, capture_output=True,
    )  # fmt: skip
    return Path(into)


def table(area: str, now: list[dict[str, object]] | str, then: list[dict[str, object]] | str,
          rev: str) -> str:  # fmt: skip
    """The area's rows, this tree beside `rev`."""
    lines = [
        f"## {area}",
        "",
        f"| kind | cases | precision | recall | precision at {rev} | recall at {rev} |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    if isinstance(now, str):
        return "\n".join([*lines, f"| (this tree) {now} | | | | | |"])
    earlier = {} if isinstance(then, str) else {str(r["kind"]): r for r in then}
    for row in now:
        old = earlier.get(str(row["kind"]))
        before = (
            (then, "") if isinstance(then, str)
            else ("-", "-") if old is None
            else (f"{old['precision']:.3f}", f"{old['recall']:.3f}")
        )  # fmt: skip
        lines.append(
            f"| {row['kind']} | {row['cases']} | {row['precision']:.3f} | {row['recall']:.3f}"
            f" | {before[0]} | {before[1]} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="HEAD~1", help="the earlier commit (default HEAD~1)")
    parser.add_argument("--only", action="append", help="score only this area (repeatable)")
    args = parser.parse_args()
    chosen = args.only or areas()
    unknown = sorted(set(chosen) - set(areas()))
    if unknown:
        print(f"no judgement set named {', '.join(unknown)}; the sets: {', '.join(areas())}",
              file=sys.stderr)  # fmt: skip
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        earlier = worktree(args.against, os.path.join(scratch, "then"))
        try:
            for area in chosen:
                print(table(area, score(area, ROOT / "src"), score(area, earlier / "src"),
                            args.against))  # fmt: skip
                print()
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(earlier)], check=False, capture_output=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
