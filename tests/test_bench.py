"""The benchmark command runs and its gradient check works. Timings are never asserted."""
import json
import subprocess
import sys
import types

import numpy as np

from yuebing.bench import cases
from yuebing.bench.check import check_gradient
from yuebing.bench.peers import Prepared, rebind
from yuebing.bench.runner import measure_column


def test_command_runs_on_a_tiny_subset(tmp_path):
    out = tmp_path / "bench.json"
    command = [sys.executable, "-m", "yuebing", "bench", "--cases", "sum_1000", "_sum_1000",
               "--peers", "none", "--budget", "0.01", "--json", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "sum_1000" in result.stdout and "_sum_1000" in result.stdout
    rows = json.loads(out.read_text())["rows"]
    assert [r["case"] for r in rows] == ["sum_1000", "_sum_1000"]
    assert {"yuebing reverse", "yuebing forward", "yuebing first gradient"} <= set(rows[0]["cells"])


def test_finite_differences_catch_a_wrong_gradient():
    x = np.random.default_rng(0).standard_normal(5)

    def directional(gradient):
        return lambda directions: [float(np.sum(gradient * d[0])) for d in directions]

    assert check_gradient(cases.sum_sin_1000, (x,), directional(np.cos(x))) is None
    assert "finite differences" in check_gradient(cases.sum_sin_1000, (x,), directional(1.01 * np.cos(x)))


def test_a_wrong_gradient_is_reported_and_not_timed():
    case = cases.Case("sum_sin", cases.sum_sin_1000, lambda rng: (rng.standard_normal(5),))
    x = case.args()[0]

    def wrong(case):
        return Prepared(lambda: None, lambda directions: [float(np.sum(np.sin(x) * d[0])) for d in directions])

    cell = measure_column(case, "wrong", wrong, "error", budget=0.01)
    assert cell.status == "WRONG" and cell.seconds is None


def test_peers_run_the_case_source_with_their_own_namespace():
    fake_np = types.SimpleNamespace(sum=lambda x: "framework sum", triu=lambda y: y, kron=lambda a, b: a)
    assert rebind(cases.kron_view_sum, {"np": fake_np}, lambda a: a)(np.ones((40, 30)), np.ones((40, 40))) == "framework sum"


def test_large_block_is_the_generated_source():
    with open(cases.large_single_block.__code__.co_filename) as handle:
        assert handle.read() == cases.large_block_source()
