"""docs/tutorial.md quotes output of real runs: regenerated here (scripts/gen_tutorial_tables.py)
and compared to the page; the Python section's certificate is the command line's."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _gen():
    spec = importlib.util.spec_from_file_location("gen_tutorial_tables",
                                                  ROOT / "scripts" / "gen_tutorial_tables.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


NUM = re.compile(r"^(.*?)\s+(-?[0-9.]+(?:e[-+][0-9]+)?)$")


def _same(page: str, run: str) -> list[str]:
    """Line-by-line differences: text equal; a trailing number equal to 1e-4 relative, or both
    at round-off level (below 1e-9: KKT residuals of an exact solve vary with the BLAS)."""
    a, b = page.strip().splitlines(), run.strip().splitlines()
    if len(a) != len(b):
        return [f"{len(a)} lines on the page, {len(b)} printed:\n{run}"]
    bad = []
    for x, y in zip(a, b, strict=True):
        mx, my = NUM.match(x), NUM.match(y)
        if mx and my and mx.group(1) == my.group(1):
            u, v = float(mx.group(2)), float(my.group(2))
            if abs(u - v) <= max(1e-9, 1e-4 * abs(v)):
                continue
        elif x == y:
            continue
        bad.append(f"page {x!r} / run {y!r}")
    return bad


@pytest.fixture(scope="module")
def gen():
    return _gen()


def test_tutorial_blocks_are_regenerated_output(gen):
    quoted = gen.quoted()
    assert set(quoted) == {"cli-certificate", "python-certificate"}
    for key, block in quoted.items():
        bad = _same(block, gen.GENERATORS[key]())
        assert not bad, f"{key}: docs/tutorial.md is stale (python scripts/" \
                        f"gen_tutorial_tables.py):\n" + "\n".join(bad)


def test_python_section_prints_the_commands_table(gen):
    """Section 5 says its certificate is section 3's: the same lines, except the command's
    header and accuracy lines."""
    cli = gen.cli_certificate().strip().splitlines()
    py = gen.python_certificate().strip().splitlines()
    assert cli[0].startswith("CSVC on ripley (250 x 2)") and cli[-1].startswith("training")
    assert cli[1:-1] == py
    stats = dict(NUM.match(ln).groups() for ln in py if NUM.match(ln))
    assert stats["#SV"] == "70" and stats["b"] == "-1.28783"
    # the data handling matters: standardised ripley (load_dataset's default) is another fit
    import primaldual as pd
    from primaldual.datasets import load_dataset

    X, y = load_dataset("ripley")
    other = pd.CSVC(C=10.0, gamma=2.0, tol=1e-5).fit(X, y).certificate_
    assert abs(other.primal_objective - float(stats["primal objective"])) > 1.0
