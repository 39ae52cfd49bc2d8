"""Every ```python sample of the README and docs/ runs as written: each in a fresh Python process (as a reader
would paste it), in an empty folder (the files it writes stay there), artic importable from this checkout. A sample
that needs an optional package (Ray, PyTorch, usd-core) is skipped where it is not installed."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OPTIONAL = {"artic.distributed": "ray", "torch_views": "torch", "write_usd": "pxr"}  # what a sample needs -> module


def _samples():
    out = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks = re.findall(r"^```python\n(.*?)^```", path.read_text(), re.S | re.M)
        out += [pytest.param(code, id=f"{path.name}-{k}") for k, code in enumerate(blocks)]
    return out


SAMPLES = _samples()


def test_the_docs_have_samples():
    assert len(SAMPLES) >= 14


@pytest.mark.parametrize("code", SAMPLES)
def test_sample_runs(code, tmp_path):
    for marker, module in OPTIONAL.items():
        if marker in code and importlib.util.find_spec(module) is None:
            pytest.skip(f"the sample needs {module}, which is not installed")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"the sample failed:\n{code}\n--- stderr ---\n{done.stderr[-3000:]}"


def test_docs_do_not_point_at_issue_numbers():
    """A reader of a clone cannot follow "issue 13" or "the open issues": the README and docs/ say what they mean."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for k, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\bissues? ?#?\d+|open issues?\b", line, re.I):
                found.append(f"{path.name}:{k}: {line.strip()}")
    assert not found, "\n".join(found)


def test_readme_links_resolve():
    """Every relative link of the README's feature table names a file of the checkout, and every #anchor a heading
    of that file (GitHub's rule: lower case, punctuation dropped, spaces as hyphens)."""
    text = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#]+)(?:#([^)]+))?\)", text)
    assert len(links) >= 10
    for target, anchor in links:
        path = ROOT / target
        assert path.is_file(), target
        if anchor:
            heads = re.findall(r"^#+ (.+)$", path.read_text(), re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}
            assert anchor in slugs, (target, anchor, sorted(slugs))
