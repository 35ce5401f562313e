"""What the benchmark scripts share: percentiles and markdown tables."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def pct(values: Sequence[float], q: int) -> float:
    """The q-th percentile (inclusive method) of `values`."""
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    right = [i > 0 and all(_numeric(row[i]) for row in cells[1:]) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        parts = [
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right, strict=True)
        ]
        return "| " + " | ".join(parts) + " |"

    rule = (
        "|"
        + "|".join(
            ("-" * (w + 1) + ":") if r else "-" * (w + 2)
            for w, r in zip(widths, right, strict=True)
        )
        + "|"
    )
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])


def _numeric(text: str) -> bool:
    """Right-align columns of numbers (blank cells allowed)."""
    return not text or text.lstrip("+-").replace(",", "").replace(".", "").isdigit()
