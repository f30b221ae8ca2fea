"""The architecture is a checked contract (docs/architecture.md): the layers of pyproject.toml's
import-linter configuration hold, no module of the package is part of an import cycle (imports
inside functions count), and no source file grows much past 800 lines."""
import pathlib
import shutil
import subprocess
import sys

import pytest

grimp = pytest.importorskip("grimp", reason="the test extra installs grimp")

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src"
MAX_LINES = 850  # "no file much over 800 lines"


def _import_graph():
    sys.path.insert(0, str(SOURCE))  # grimp finds packages on sys.path (an editable install may not be)
    try:
        return grimp.build_graph("yuebing", include_external_packages=False)
    finally:
        sys.path.remove(str(SOURCE))


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycles():
    cycles = _cycles(_import_graph())
    assert not cycles, "import cycles (break them by moving code down a layer or by a hook):\n" + "\n".join(
        " <-> ".join(c) for c in cycles)


def test_cycle_finder_finds_a_cycle():
    class Graph:  # a -> b -> c -> a, and d alone
        modules = {"a", "b", "c", "d"}
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

        def find_modules_directly_imported_by(self, m):
            return self.edges[m]

    assert _cycles(Graph()) == [["a", "b", "c"]]


def test_import_linter_contract_is_kept():
    lint = shutil.which("lint-imports")
    if lint is None:
        pytest.skip("lint-imports is not installed (the test extra installs import-linter)")
    result = subprocess.run([lint], cwd=ROOT, capture_output=True,  # reads pyproject.toml in ROOT
                            text=True, env={"PYTHONPATH": str(SOURCE), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_source_file_is_much_over_800_lines():
    long = {str(p.relative_to(SOURCE)): n for p in sorted((SOURCE / "yuebing").rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"split these by sub-domain (docs/architecture.md): {long}"
