"""LoCoMo, scored openly: each of its conversations written into a clew store through the
public API, each question with evidence asked of `Memory.search_all`, turn-level evidence
scored (hit@5, hit@10, MRR per category, and how often and how rightly the top hit is
marked `confident`), keyword and hybrid.

    python benchmarks/retrieval/locomo.py --data DIR        # default: $CLEW_LOCOMO
    python benchmarks/retrieval/locomo.py --modes keyword --json > locomo.json
    python benchmarks/retrieval/locomo.py --model minilm-onnx-int8   # hybrid with that model

The data is not part of clew and is never downloaded: DIR holds LoCoMo's conversation
files (locomo10.json, or one JSON file per conversation as in its multimodal_dialog
folder), from https://github.com/snap-research/locomo (its licence applies).

Each session is a clew session started at its `session_N_date_time`, each turn appended
with the store's clock at that date (30 seconds apart) and the speaker as the message's
`name`; a shared photo's caption follows its turn's text ("[shares a photo: ...]"), as
the dataset gives it (`--speaker-in-text`: the text also begins "Speaker: ", how the
baseline in issue 25 was measured). Questions are asked a day after the last session. Categories as
numbered in the data, named as in the LoCoMo paper's task (1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.retrieval.conversations import (
    Asked,
    Conversation,
    Said,
    Sitting,
    printed,
    run,
    table,
)

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ENV = "CLEW_LOCOMO"


def when(text: str) -> datetime:
    """A LoCoMo session date ("1:56 pm on 8 May, 2023") as a UTC time."""
    return datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def refs(evidence: Sequence[str]) -> list[str]:
    """A question's evidence as dia_ids: a few are written several to a string ("D8:6;
    D9:17") or with a leading zero ("D30:05")."""
    out = []
    for item in evidence:
        for ref in re.split(r"[;,\s]+", str(item)):
            m = re.fullmatch(r"D(\d+):0*(\d+)", ref.strip())
            if m:
                out.append(f"D{m[1]}:{m[2]}")
    return out


def conversation(sample: dict[str, Any], name: str, *, in_text: bool = False) -> Conversation:
    """One LoCoMo sample (its `conversation`, or the sample itself when flattened) as a
    Conversation; `in_text`: each turn's text begins "Speaker: " too."""
    conv = sample.get("conversation", sample)
    numbers = sorted(int(k.split("_")[1]) for k in conv
                     if k.startswith("session_") and k.count("_") == 1)  # fmt: skip
    sittings = []
    for n in numbers:
        turns = conv[f"session_{n}"]
        if not turns:
            continue
        said = []
        for t in turns:
            text = f"{t['speaker']}: {t['text']}" if in_text else t["text"]
            if t.get("blip_caption"):
                text += f" [shares a photo: {t['blip_caption']}]"
            said.append(Said(t["dia_id"], t["speaker"], text))
        sittings.append(Sitting(when(conv[f"session_{n}_date_time"]), tuple(said)))
    questions = tuple(
        Asked(q["question"], CATEGORIES.get(int(q["category"]), str(q["category"])),
              tuple(refs(q.get("evidence", ()))))
        for q in sample["qa"]
        if q.get("evidence")
    )  # fmt: skip
    name += "-named" if in_text else ""
    return Conversation(name, (conv["speaker_a"], conv["speaker_b"]), tuple(sittings), questions)


def load(folder: Path, *, in_text: bool = False) -> list[Conversation]:
    """Every conversation in a LoCoMo data folder (locomo10.json or one file each)."""
    whole = folder / "locomo10.json"
    if whole.is_file():
        samples = json.loads(whole.read_text())
        return [conversation(s, f"locomo-{s.get('sample_id', i)}", in_text=in_text)
                for i, s in enumerate(samples)]  # fmt: skip
    files = sorted(folder.glob("*.json"))
    return [conversation(json.loads(f.read_text()), f"locomo-{f.stem}", in_text=in_text)
            for f in files]  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=os.environ.get(ENV), metavar="DIR")
    parser.add_argument("--modes", default="keyword,hybrid")
    parser.add_argument("--model", default=None, help="the embedding model of hybrid")
    parser.add_argument("--speaker-in-text", action="store_true",
                        help='each turn\'s text begins "Speaker: " (as the issue\'s baseline'
                        " was measured), besides the name")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print every question's row")
    args = parser.parse_args(argv)
    if args.data is None or not Path(args.data).is_dir():
        print(f"--data DIR (or ${ENV}): LoCoMo's data folder; it is not downloaded",
              file=sys.stderr)  # fmt: skip
        return 2
    conversations = load(Path(args.data), in_text=args.speaker_in_text)
    if not conversations:
        print(f"{args.data}: no LoCoMo conversation files", file=sys.stderr)
        return 2
    if args.model is not None:
        from clew.search import embedding

        os.environ[embedding.ENV] = args.model
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    rows = run(conversations, modes, lambda line: print(line, file=sys.stderr))
    lines = table(rows, list(CATEGORIES.values()))
    if args.json:
        print(json.dumps({"rows": rows, "table": lines}, indent=1))
    else:
        print(printed(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
