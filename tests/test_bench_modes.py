"""``python -m yuebing bench --mode grad|jvp|hvp|all``: the tables have their columns, yuebing is
not refused on small cases, and the finite-difference checks catch wrong JVPs, HVPs and
Hessians. Timings are never asserted (tiny budgets, no peers)."""
import io
import json
import subprocess
import sys

import numpy as np
import pytest

from yuebing import api
from yuebing.bench import cases, main
from yuebing.bench.check import check_hvp
from yuebing.bench.memory import peak_bytes
from yuebing.bench.modes import HESSIAN, MODES
from yuebing.bench.peers import NoSuchMode, yuebing_forward
from yuebing.bench.peers_second_order import yuebing_hessian, yuebing_hvp
from yuebing.bench.report import Table
from yuebing.bench.runner import NO_SUCH_MODE, REFUSED, Row, measure_column, peak_memory

SMALL_CASES = ["broadcast_sin_cos_exp", "turing_broadcast_benchmark"]
TINY = ["--cases", *SMALL_CASES, "--peers", "none", "--budget", "0.005"]
BROADCAST = cases.BY_NAME["broadcast_sin_cos_exp"]


def header_of(output: str, title: str | None = None) -> str:
    """The header line of the table titled ``title`` (the first table when None)."""
    lines = output.splitlines()
    start = 0 if title is None else next(i for i, line in enumerate(lines) if line == f"== {title} ==")
    return next(line for line in lines[start:] if line.startswith("case "))


def yuebing_cells(rows: list[dict]) -> list[tuple[str, str, dict]]:
    return [(row["case"], column, cell) for row in rows for column, cell in row["cells"].items()
            if column.startswith("yuebing")]


@pytest.mark.parametrize("mode, columns", [
    ("jvp", ["yb jvp"]),
    ("hvp", ["yb hvp", "yb prep hvp"]),
])
def test_a_mode_prints_its_columns_and_yuebing_is_not_refused(mode, columns, capsys, tmp_path):
    out = tmp_path / "bench.json"
    assert main([*TINY, "--mode", mode, "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert header_of(printed).split()[1:] == ["primal", *" ".join(columns).split()]
    tables = json.loads(out.read_text())["tables"]
    assert list(tables) == [spec.name for spec in MODES[mode]]
    for name, rows in tables.items():
        for case, column, cell in yuebing_cells(rows):
            assert cell["status"] == "ok", (name, case, column, cell["note"])


@pytest.mark.slow  # every table: the default run checks each mode's columns
def test_mode_all_prints_every_table_in_one_run(tmp_path):
    out = tmp_path / "bench.json"
    command = [sys.executable, "-m", "yuebing", "bench", *TINY, "--mode", "all", "--json", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    for spec in MODES["all"]:
        assert f"== {spec.title} ==" in result.stdout
    assert "allocator: default" in result.stdout
    assert header_of(result.stdout, MODES["all"][3].title).split()[1:] == [
        "primal", "yb", "hessian", "yb", "prep", "hess"]
    document = json.loads(out.read_text())
    assert list(document["tables"]) == ["grad", "jvp", "hvp", "hessian"]
    for name, rows in document["tables"].items():
        assert [r["case"] for r in rows] == SMALL_CASES
        for case, column, cell in yuebing_cells(rows):
            assert cell["status"] == "ok", (name, case, column, cell["note"])
    memory = document["tables"]["grad"][0]["cells"]["yuebing peak memory"]
    assert memory["peak_bytes"] > 0 and memory["ratio"] > 0


def test_mode_grad_keeps_its_columns(capsys):
    assert main(["--cases", "sum_1000", "--peers", "none", "--budget", "0.005"]) == 0
    printed = capsys.readouterr().out
    assert "==" not in printed  # one untitled table, as before the modes
    names = header_of(printed).split()[1:]
    assert names[:7] == ["primal", "yb", "reverse", "yb", "forward", "yb", "1st"]
    assert " ".join(names[7:]) == "grad yb plain yb peak mem"


def test_the_hessian_table_has_the_small_cases_only():
    assert HESSIAN.applies(BROADCAST) and not HESSIAN.applies(cases.BY_NAME["sum_1000"])


# ------------------------------------------------------------------------------------------------
# The checks catch wrong derivatives
# ------------------------------------------------------------------------------------------------


def test_a_wrong_jvp_is_reported_and_not_timed(monkeypatch):
    right = api.jvp
    monkeypatch.setattr(api, "jvp", lambda f, primals, tangents: (lambda out: (out[0], 1.01 * out[1]))(
        right(f, primals, tangents)))
    cell = measure_column(BROADCAST, "yuebing jvp", yuebing_forward, REFUSED, budget=0.005)
    assert cell.status == "WRONG" and cell.seconds is None and "finite differences" in cell.note


def test_a_wrong_hvp_is_reported_and_not_timed(monkeypatch):
    right = api.hvp

    def wrong(f, primals, tangents):
        value, grads, hvps = right(f, primals, tangents)
        return value, grads, tuple(h + 1e-3 for h in hvps)

    monkeypatch.setattr(api, "hvp", wrong)
    cell = measure_column(BROADCAST, "yuebing hvp", yuebing_hvp, REFUSED, budget=0.005)
    assert cell.status == "WRONG" and cell.seconds is None and "central differences of the gradient" in cell.note


def test_a_wrong_hessian_is_reported_and_not_timed(monkeypatch):
    right = api.hessian

    def wrong(f, argnums=0):
        hessian = right(f, argnums=argnums)
        return lambda *args: ((hessian(*args)[0][0].T * 0.99,),)

    monkeypatch.setattr(api, "hessian", wrong)
    cell = measure_column(BROADCAST, "yuebing hessian", yuebing_hessian, REFUSED, budget=0.005)
    assert cell.status == "WRONG" and cell.seconds is None


def test_a_wrong_gradient_under_a_right_hvp_is_caught():
    x = np.random.default_rng(0).standard_normal(6)
    f = cases.sum_sin_1000

    def hvp(v):
        return -np.sin(x) * v[0]

    assert check_hvp(f, (x,), lambda xs: np.cos(xs[0]), hvp) is None
    assert "its gradient" in check_hvp(f, (x,), lambda xs: 1.01 * np.cos(xs[0]), hvp)
    assert "central differences" in check_hvp(f, (x,), lambda xs: np.cos(xs[0]), lambda v: 1.01 * hvp(v))
    assert "not finite" in check_hvp(f, (x,), lambda xs: np.cos(xs[0]), lambda v: np.full(6, np.nan))


def test_a_refusal_is_a_cell_not_a_crash(monkeypatch):
    def refuse(f, primals, tangents):
        raise NotImplementedError("no second-order rule for np.frobnicate\nsecond line")

    monkeypatch.setattr(api, "hvp", refuse)
    cell = measure_column(BROADCAST, "yuebing hvp", yuebing_hvp, REFUSED, budget=0.005)
    assert cell.status == REFUSED and cell.note == "yuebing hvp: NotImplementedError: no second-order rule for np.frobnicate"


def test_a_library_without_the_mode_shows_a_dash_with_its_reason():
    def no_forward_mode(case):
        raise NoSuchMode("this library has no forward mode")

    cell = measure_column(BROADCAST, "somelib", no_forward_mode, "missing", budget=0.005)
    assert cell.status == NO_SUCH_MODE
    out = io.StringIO()
    table = Table(["somelib"], out=out, title="one JVP")
    table.header()
    table.row(Row(BROADCAST.name, primal_s=1e-5, cells={"somelib": cell}))
    table.footer()
    assert f"{NO_SUCH_MODE} [1]" in out.getvalue()
    assert "[1] somelib: this library has no forward mode" in out.getvalue()


# ------------------------------------------------------------------------------------------------
# Memory
# ------------------------------------------------------------------------------------------------


def test_peak_bytes_sees_numpy_buffers():
    assert peak_bytes(lambda: np.ones(100_000).sum()) >= 800_000


def test_peak_memory_of_a_case():
    cell = peak_memory(BROADCAST)
    assert cell.status == "ok" and cell.peak_bytes > 0 and cell.function_peak_bytes > 0 and cell.ratio > 0


def test_peak_bytes_counts_buffers_taken_from_the_pool():
    """A gradient whose output comes from the pool of large buffers counts that output."""
    import yuebing as yb
    x, y = np.ones((20, 20)), np.ones((40, 40))
    gradient = yb.value_and_grad(lambda a, b: np.sum(np.kron(a, b)), argnums=(0, 1))
    assert peak_bytes(lambda: gradient(x, y)) >= 800 * 800 * 8  # the 640k-element kron product
