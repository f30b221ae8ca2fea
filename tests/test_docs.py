"""The documentation runs: every ```python block of the site's pages (tutorials and guides,
and of the README's "Using it" section) is executed, page by page in one namespace, and the
site builds with ``mkdocs build --strict``.

A block whose first line is ``# docs: no-run`` is shown but not executed (for code that needs
a cluster or another machine); use it sparingly. Each page runs in a fresh subprocess, so one
page's state cannot leak into the next and a crash names the page. ``NOT_RUN`` lists the pages
whose blocks are excerpts, not programs; ``SLOW_PAGES`` those run by the slow step of .ci/run.
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NO_RUN = "# docs: no-run"
# pages whose python blocks are excerpts, not programs: of rule files (relative imports, elided
# bodies), of a user's function (fft.md: `x` and the imports left out); the generated rules table
NOT_RUN = {"writing-rules.md", "rules.md", "fft.md"}
# pages whose examples start processes or import torch and jax (10-20 s each on a shared machine):
# run by .ci/run's slow step, so that the default suite stays fast
SLOW_PAGES = {"docs/tutorials/dask.md", "docs/interop.md"}
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```\s*$", re.DOTALL | re.MULTILINE)


def python_blocks(markdown: str) -> list[str]:
    """The ```python blocks of ``markdown``, in order, without those marked ``# docs: no-run``."""
    blocks = [textwrap.dedent(b) for b in FENCE.findall(markdown)]
    return [b for b in blocks if not b.lstrip().startswith(NO_RUN)]


def readme_using_it() -> str:
    """The README's "Using it" section (up to the next heading)."""
    text = (ROOT / "README.md").read_text()
    match = re.search(r"^## Using it\n(.*?)(?=^## )", text, re.DOTALL | re.MULTILINE)
    assert match, "README.md has no '## Using it' section"
    return match.group(1)


def pages() -> dict[str, str]:
    """Every page of ``docs/`` with a python block (``NOT_RUN`` aside), and the README's example."""
    found = {}
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text()
        if path.name not in NOT_RUN and "```python" in text:
            found[str(path.relative_to(ROOT))] = text
    found["README.md#using-it"] = readme_using_it()
    return found


def script(page: str, blocks: list[str]) -> str:
    """One script running ``blocks`` in order, each headed by a comment naming it, so that a
    traceback's line points into the right block. A file, not ``exec`` of strings: yuebing
    reads the source of the functions it differentiates."""
    return "\n".join(f"# ---- {page}, block {n} ----\n{block}" for n, block in enumerate(blocks, 1))


@pytest.mark.parametrize("page", [pytest.param(p, marks=pytest.mark.slow) if p in SLOW_PAGES else p
                                  for p in sorted(pages())])
def test_page_examples_run(page, tmp_path):
    blocks = python_blocks(pages()[page])
    assert blocks, f"{page} has no python blocks to run"
    path = tmp_path / "page.py"
    path.write_text(script(page, blocks))
    result = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{page}: an example failed\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"


def test_no_run_marker_is_rare():
    """``# docs: no-run`` hides examples from this test: keep it for what needs a cluster."""
    marked = {name: text.count(NO_RUN) for name, text in pages().items() if NO_RUN in text}
    assert all(count <= 2 for count in marked.values()), marked


@pytest.mark.slow  # 13 s; .ci/run also runs `mkdocs build --strict` itself
def test_mkdocs_build_strict(tmp_path):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        pytest.skip("mkdocs/mkdocstrings not installed (pip install -e '.[docs]'): the site build is not checked")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                            cwd=ROOT, capture_output=True, text=True, timeout=180,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})  # material's end-of-life banner
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr[-4000:]}"
