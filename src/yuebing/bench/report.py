"""Output of the suite: the tables (each printed row by row as cases finish, footnotes at the end),
the JSON file and the bar chart."""
from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import TextIO

from .runner import MEMORY, TTFG, Cell, Row

CASE_WIDTH = 27
CELL_WIDTH = 13
SHORT_NAMES = {"yuebing reverse": "yb reverse", "yuebing forward": "yb forward", TTFG: "yb 1st grad",
               "yuebing plain": "yb plain", MEMORY: "yb peak mem", "yuebing jvp": "yb jvp",
               "yuebing hvp": "yb hvp", "yuebing prepared hvp": "yb prep hvp",
               "yuebing hessian": "yb hessian", "yuebing prepared hessian": "yb prep hess"}
SECONDS_COLUMNS = {TTFG}
GRADIENT_EXPLANATION = (
    "primal: median time of the NumPy function. Ratio columns: median, over interleaved samples, "
    "of time(value and gradient) / time(function); 'yb forward' is one JVP. 'yb 1st grad': "
    "seconds for yuebing's first value_and_grad, transformation included.")


def format_seconds(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def format_ratio(ratio: float) -> str:
    return f"{ratio:.3g}" if ratio < 1e4 else f"{ratio:.2e}"


class Table:
    """A fixed-width table printed one row at a time; notes become numbered footnotes."""

    def __init__(self, columns: list[str], out: TextIO | None = None, title: str | None = None,
                 explanation: str = GRADIENT_EXPLANATION) -> None:
        self.columns = columns
        self.out = sys.stdout if out is None else out  # looked up now: tests and callers redirect it
        self.title = title
        self.explanation = explanation
        self.footnotes: dict[str, list[str]] = {}  # note -> the cases it applies to

    def header(self) -> None:
        if self.title is not None:
            print(f"\n== {self.title} ==", file=self.out)
        names = ["primal"] + [SHORT_NAMES.get(c, c) for c in self.columns]
        self._line("case", names)
        self._line("-" * CASE_WIDTH, ["-" * (CELL_WIDTH - 1)] * len(names))

    def row(self, row: Row) -> None:
        if row.error is not None:
            self._line(row.case, [self._mark("error", row.error, row.case)])
            return
        cells = [format_seconds(row.primal_s)]
        cells += [self._cell(row.cells.get(c, Cell("n/a")), c, row.case) for c in self.columns]
        self._line(row.case, cells)

    def _cell(self, cell: Cell, column: str, case: str) -> str:
        if cell.status == "ok":
            return format_seconds(cell.seconds) if column in SECONDS_COLUMNS else format_ratio(cell.ratio)
        return self._mark(cell.status, cell.note, case)

    def _mark(self, status: str, note: str | None, case: str) -> str:
        """``status [n]``, footnote n being ``note`` (the case's name in it generalised, so that
        one failure on many cases is one footnote)."""
        if note is None:
            return status
        note = note.replace(case, "<case>")
        cases = self.footnotes.setdefault(note, [])
        if case not in cases:
            cases.append(case)
        return f"{status} [{list(self.footnotes).index(note) + 1}]"

    def _line(self, first: str, cells: list[str]) -> None:
        text = first.ljust(CASE_WIDTH) + "".join(c.rjust(CELL_WIDTH) for c in cells)
        print(text.rstrip(), file=self.out, flush=True)

    def footer(self) -> None:
        print(file=self.out)
        print(self.explanation, file=self.out)
        for number, (note, cases) in enumerate(self.footnotes.items(), 1):
            print(f"[{number}] {note}  ({', '.join(cases)})", file=self.out)


def write_json(path: str, tables: dict[str, list[Row]], meta: dict) -> None:
    """Every number: ``tables`` maps a table's name (grad, jvp, hvp, hessian) to its rows;
    ``rows`` repeats the grad table's, where earlier files had it."""
    document = {"meta": meta, "tables": {name: [asdict(r) for r in rows] for name, rows in tables.items()}}
    if "grad" in tables:
        document["rows"] = document["tables"]["grad"]
    with open(path, "w") as handle:
        json.dump(document, handle, indent=2)


def write_plot(path: str, tables: list[tuple[str, list[Row], list[str]]]) -> str:
    """Grouped bar charts of the ratio columns (log scale), one panel per (title, rows, columns).
    Returns what was done, as a message."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"--plot: matplotlib is not installed (pip install matplotlib); no plot written to {path}"
    widest = max((len(rows) for _, rows, _ in tables), default=1)
    fig, axes = plt.subplots(len(tables), 1, figsize=(max(8, 1.1 * widest), 5 * len(tables)), squeeze=False)
    for ax, (title, rows, columns) in zip(axes[:, 0], tables):
        _bars(ax, rows, [c for c in columns if c not in SECONDS_COLUMNS and c != MEMORY])
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return f"plot written to {path}"


def _bars(ax, rows: list[Row], ratio_columns: list[str]) -> None:
    width = 0.8 / max(1, len(ratio_columns))
    for k, column in enumerate(ratio_columns):
        xs, ys = [], []
        for i, row in enumerate(rows):
            cell = row.cells.get(column)
            if cell is not None and cell.status == "ok":
                xs.append(i + (k - (len(ratio_columns) - 1) / 2) * width)
                ys.append(cell.ratio)
        ax.bar(xs, ys, width, label=SHORT_NAMES.get(column, column))
    ax.set_yscale("log")
    ax.set_ylabel("time(derivative) / time(function)")
    ax.set_xticks(range(len(rows)), [r.case for r in rows], rotation=40, ha="right", fontsize=8)
    ax.axhline(1.0, color="grey", linewidth=0.5)
    ax.legend(fontsize=8)
