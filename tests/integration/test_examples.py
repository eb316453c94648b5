"""Smoke test: every ``examples/*.py`` runs to completion (exit 0) within its time limit.

Each example runs in a subprocess with ``MPLBACKEND=Agg``; examples added by anyone are picked up
automatically.  An example whose method is not available must exit 0 with a "skipped" message.

A figure caption in docs/index.md (``CAPTIONS``) or docs/tutorial.md (``TUTORIAL_CAPTIONS``)
that quotes numbers its example prints must quote what the example prints now: each number, read
from the caption and from the printout, agrees to the caption's decimals.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests import background

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
TIMEOUT = 120  # the budget per example is 60 s on an idle machine; CI machines are shared

#: example -> (the number in the caption of its figure, the same number in its printout)
CAPTIONS = {
    "svr_tube.py": [
        (r"the (\d+) strictly inside the tube", r"points strictly inside the tube\s+(\d+)"),
        (r"the (\d+) free SVs", r"\((\d+) free on the tube"),
        (r"the (\d+) points outside are all bounded", r"(\d+) bounded\)"),
        (r"`max_i min\(alpha_i, alpha\*_i\)` = ([\d.e+-]+)",
         r"max_i min\(alpha_i, alpha\*_i\)\s+([\d.e+-]+)"),
        (r"of the (\d+)\s+points", r"N = (\d+)"),
    ],
    "rvm_sinc.py": [
        (r"band from (\d+) relevance vectors", r"RVM \(noise sd [\d.]+ estimated\)\s+(\d+)"),
        (r"relevance vectors \(test RMSE ([\d.]+)\)",
         r"RVM \(noise sd [\d.]+ estimated\)\s+\d+\s+([\d.]+)"),
        (r"epsilon-SVR with (\d+) support", r"eps-SVR, 5-fold CV: \S+ \S+\s+(\d+)"),
        (r"support vectors \(([\d.]+)\); right", r"eps-SVR, 5-fold CV: \S+ \S+\s+\d+\s+([\d.]+)"),
        (r"boundary from (\d+) relevance vectors", r"RVC, max evidence: \S+\s+(\d+)"),
        (r"\(([\d.]+) % test\s+error\)", r"RVC, max evidence: \S+\s+\d+\s+([\d.]+)%"),
        (r"C-SVC's from (\d+) support", r"C-SVC, 5-fold CV: \S+ \S+\s+(\d+)"),
        (r"support vectors \(([\d.]+) %\)", r"C-SVC, 5-fold CV: \S+ \S+\s+\d+\s+([\d.]+)%"),
    ],
}


#: the figures of the tutorial's "Why" section: (caption, printout) as in CAPTIONS
TUTORIAL_CAPTIONS = {
    "margin_geometry.py": [
        (r"lie 2/‖w‖ = ([\d.]+) apart", r"margin width 2/\|\|w\|\| = ([\d.]+)"),
        (r"the (\d+) free support vectors", r"free SVs \(0 < alpha < C\) (\d+)"),
        (r"the (\d+) bounded ones", r"bounded SVs \(alpha = C\) (\d+)"),
        (r"`y f ≤ ([\d.]+)`", r"max y f\(x\) = ([\d.]+) \(<= 1"),
        (r"\((\d+) of them misclassified\)", r"(\d+) misclassified"),
        (r"the (\d+) others", r"other points \(alpha = 0\) (\d+)"),
        (r"`y f ≥ ([\d.]+)`", r"min y f\(x\) = ([\d.]+) \(>= 1\)"),
        (r"on (\d+) Ripley points", r"N = (\d+)"),
    ],
    "smo_duality_gap.py": [
        (r"they meet at ([\d.]+)",
         r"\n\s*\d+\s+\d+\s+[\d.]+\s+([\d.]+)\s+\S+\s+\S+\s+optimal"),
        (r"after (\d+) SMO iterations",
         r"\n\s*\d+\s+(\d+)\s+[\d.]+\s+[\d.]+\s+\S+\s+\S+\s+optimal"),
    ],
    "kkt_regions.py": [
        (r"the (\d+) points with α = 0", r"alpha = 0\s+(\d+) points"),
        (r"`y f ≥ ([\d.]+)`", r"alpha = 0\s+\d+ points: min y f\(x\) = ([\d.]+)"),
        (r"the (\d+) free support vectors", r"0 < alpha < C\s+(\d+) points"),
        (r"the (\d+) bounded ones", r"alpha = C\s+(\d+) points"),
        (r"`y f ≤ ([\d.]+)`", r"alpha = C\s+\d+ points: max y f\(x\) = ([\d.]+)"),
        (r"\((\d+) of them misclassified\)", r"(\d+) misclassified"),
    ],
}


def _caption(script: Path, page: str = "index.md") -> str:
    """The caption of the example's figure on ``docs/<page>`` (the paragraph holding the image,
    or the one after it when the image stands alone), whitespace folded."""
    index = (ROOT / "docs" / page).read_text()
    image = re.search(rf"!\[[^\]]*\]\(img/{re.escape(script.stem)}\.png\)", index)
    assert image, f"docs/{page} shows no img/{script.stem}.png"
    paragraphs = re.split(r"\n\s*\n", index[image.start():])
    alone = paragraphs[0].strip() == image.group(0)
    return " ".join((paragraphs[1] if alone else paragraphs[0]).split())


def _check_caption(script: Path, stdout: str, page: str = "index.md",
                   table: dict | None = None) -> None:
    caption = _caption(script, page)
    for in_caption, in_output in (CAPTIONS if table is None else table)[script.name]:
        said = re.search(in_caption, caption)
        printed = re.search(in_output, stdout)
        assert said and printed, (script.name, in_caption, bool(said), in_output, bool(printed))
        decimals = len(said.group(1).partition(".")[2]) if "e" not in said.group(1) else 12
        assert round(float(printed.group(1)), decimals) == float(said.group(1)), (
            f"{script.name}: the caption says {said.group(1)} ({in_caption}); the example "
            f"prints {printed.group(1)}")


def _command(script: Path) -> dict:
    """The example's run: figures to a folder of this test process (the smoke test must not
    rewrite docs/img); PRIMALDUAL_QUICK=1: long examples (suykens_table_3_4) run a reduced
    smoke-test protocol."""
    figures = Path(tempfile.gettempdir()) / f"primaldual-examples-{os.getpid()}" / script.stem
    figures.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MPLBACKEND="Agg", PRIMALDUAL_FIGURES=str(figures), PRIMALDUAL_QUICK="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {"args": [sys.executable, str(script)], "cwd": ROOT, "env": env, "timeout": TIMEOUT}


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
@background.job(_command)
def test_example_runs(script: Path) -> None:
    try:
        r = background.run(**_command(script))
    except subprocess.TimeoutExpired:
        pytest.fail(f"{script.name} did not finish in {TIMEOUT} s")
    assert r.returncode == 0, f"{script.name} failed:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    assert r.stdout.strip(), f"{script.name} printed nothing"
    assert "Traceback" not in r.stderr
    if script.name in CAPTIONS:
        _check_caption(script, r.stdout)
    if script.name in TUTORIAL_CAPTIONS:
        _check_caption(script, r.stdout, "tutorial.md", TUTORIAL_CAPTIONS)
