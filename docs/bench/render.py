"""The benchmark page's numbers, from ``docs/bench/results.json`` (never typed by hand).

* ``python docs/bench/render.py --run`` runs the benchmark (``COMMAND``: a few small cases, a short
  budget, a few minutes on a shared machine) on the last commit, writing ``results.json``,
  ``run.json`` (when, where, on which commit, with which command) and the plot ``ratios.png``.
* ``python docs/bench/render.py`` redraws ``ratios.png`` from the committed ``results.json``.
* As an mkdocs hook (``mkdocs.yml``), it replaces the markers ``<!-- bench:run -->`` and
  ``<!-- bench:tables -->`` of ``benchmarks.md`` with the run's description and the tables.

The columns, their order, titles and explanations and the number formats are the bench's own
(``yuebing.bench.modes``, ``yuebing.bench.report``), so the page reads like the printed tables.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS, RUN, PLOT = HERE / "results.json", HERE / "run.json", HERE / "ratios.png"
CASES = ["sum_1000", "sum_sin_1000", "broadcast_sin_cos_exp", "simple_mlp", "gp_lml", "kron_sum"]
COMMAND = ["python", "-m", "yuebing", "bench", "--mode", "all", "--budget", "0.2", "--cases", *CASES,
           "--json", "docs/bench/results.json"]


def load(path: Path = RESULTS) -> dict:
    with open(path) as handle:
        return json.load(handle)


def _specs(document: dict) -> list:
    from yuebing.bench.modes import GRAD, HESSIAN, HVP, JVP

    return [spec for spec in (GRAD, JVP, HVP, HESSIAN) if spec.name in document["tables"]]


def _cell_text(cell: dict | None, column: str, case: str, notes: list[str]) -> str:
    """A cell as the bench prints it: a ratio, seconds, or a status with a footnote number
    (``notes`` collects the footnotes, one per distinct note, the case's name generalised)."""
    from yuebing.bench.report import SECONDS_COLUMNS, format_ratio, format_seconds

    if cell is None:
        return "n/a"
    if cell["status"] == "ok":
        return format_seconds(cell["seconds"]) if column in SECONDS_COLUMNS else format_ratio(cell["ratio"])
    if not cell.get("note"):
        return cell["status"]
    note = cell["note"].replace(case, "<case>")
    if note not in notes:
        notes.append(note)
    return f"{cell['status']} [{notes.index(note) + 1}]"


def tables_markdown(document: dict) -> str:
    """One markdown table per table of the run, with the bench's explanation and footnotes."""
    from yuebing.bench.report import SHORT_NAMES, format_seconds

    peers = document["meta"]["peers"]
    parts = []
    for spec in _specs(document):
        columns, notes = spec.columns(peers), []
        header = ["case", "primal"] + [SHORT_NAMES.get(c, c) for c in columns]
        lines = [f"### {spec.title[0].upper()}{spec.title[1:]}", "",
                 "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for row in document["tables"][spec.name]:
            if row.get("error"):
                lines.append(f"| `{row['case']}` | error: {row['error']} |" + " |" * len(columns))
                continue
            cells = [_cell_text(row["cells"].get(c), c, row["case"], notes) for c in columns]
            lines.append("| " + " | ".join([f"`{row['case']}`", format_seconds(row["primal_s"]), *cells]) + " |")
        footnotes = "".join(f"\n{n}. {note}" for n, note in enumerate(notes, 1))
        parts.append("\n".join(lines) + f"\n\n{spec.explanation}\n{footnotes}\n")
    return "\n".join(parts)


def run_markdown(document: dict, run: dict | None) -> str:
    """What produced the numbers: machine, versions, date and command."""
    meta = document["meta"]
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    lines = []
    if run is not None:
        commit = f" at commit `{run['commit'][:10]}`" if run.get("commit") else ""
        lines.append(f"Measured on {run['date']} by `{' '.join(run['command'])}`{commit} "
                     f"({run['seconds']:.0f} s), on {run['cpu']} ({meta['cpus']} cores, shared with other "
                     f"work: load average {run['load_before']} before the run, {run['load_after']} after).")
    lines.append(f"Python {meta['python']} on {meta['machine']}; {versions}. Every column single-threaded "
                 f"({', '.join(f'{k}={v}' for k, v in meta['threads'].items())}); timing budget "
                 f"{meta['budget_s']} s per column and case; glibc's allocator as found.")
    return "\n\n".join(lines)


def write_plot(document: dict, path: Path = PLOT) -> str:
    """The bench's own bar chart (``yuebing.bench.report.write_plot``) of the JSON's rows."""
    from yuebing.bench.report import write_plot as bench_plot
    from yuebing.bench.runner import Cell, Row

    panels = []
    for spec in _specs(document):
        rows = [Row(r["case"], r["primal_s"], {k: Cell(**c) for k, c in r["cells"].items()}, r.get("error"))
                for r in document["tables"][spec.name]]
        panels.append((spec.title, rows, spec.columns(document["meta"]["peers"])))
    return bench_plot(str(path), panels)


def run_benchmark(root: Path) -> None:
    """Run ``COMMAND`` on the committed tree (``git archive HEAD`` into a temporary directory, so
    edits in progress in the working tree neither change nor break the run) and record when,
    where, on which commit and how long."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True,
                            text=True).stdout.strip()
    with open("/proc/cpuinfo") as handle:
        cpu = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")),
                   platform.processor())
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    started = datetime.datetime.now(datetime.timezone.utc)
    with tempfile.TemporaryDirectory() as tree:
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=root, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        env = {**os.environ, "PYTHONPATH": str(Path(tree) / "src")}
        subprocess.run([sys.executable, *COMMAND[1:]], cwd=tree, env=env, check=True)
        shutil.copyfile(Path(tree) / "docs" / "bench" / "results.json", RESULTS)
    seconds = (datetime.datetime.now(datetime.timezone.utc) - started).total_seconds()
    run = {"date": started.strftime("%Y-%m-%d %H:%M UTC"), "command": COMMAND, "commit": commit, "cpu": cpu,
           "load_before": load_before, "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
           "seconds": seconds}
    RUN.write_text(json.dumps(run, indent=2) + "\n")


def on_page_markdown(markdown: str, page, config, files) -> str:
    """mkdocs hook: fill in the benchmark page from the committed JSON."""
    if page.file.src_uri != "benchmarks.md":
        return markdown
    document = load()
    run = json.loads(RUN.read_text()) if RUN.exists() else None
    markdown = markdown.replace("<!-- bench:run -->", run_markdown(document, run))
    return markdown.replace("<!-- bench:tables -->", tables_markdown(document))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="store_true", help="run the benchmark first (a few minutes)")
    options = parser.parse_args(argv)
    if options.run:
        run_benchmark(HERE.parents[1])
    print(write_plot(load()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
