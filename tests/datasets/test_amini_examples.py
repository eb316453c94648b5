"""Amini's four worked examples ("Samples of SVM") as the datasets amini, amini_soft,
amini_kernel and amini_kernel_soft: the library's fit reproduces what each slide prints.

The slides print ``X`` to two decimals and ``alpha``, ``w0`` to four, computed from the unrounded
points, so the fit on the printed ``X`` differs from a slide in the third decimal.  Two checks:

* on the printed points the fit has the slide's support pattern (which ``alpha_i`` are 0, free,
  at ``C``);
* on points within the printed rounding (``|X' - X| < 0.005`` entrywise) the fit prints the
  slide's digits: ``round(alpha, 4)`` and ``round(b, 4)`` equal the slide's.  The points
  ``WITNESS`` were found by benchmarks/amini_rounding_witness.py (the smallest largest move on
  which each slide's free support vectors lie on its margin); one ``X'`` serves both slides that
  print the same ``X``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import primaldual as pd
from primaldual.cli import main
from primaldual.datasets import AMINI_EXAMPLES, load_dataset

NAMES = tuple(AMINI_EXAMPLES)
HALF_UNIT = 0.005   # half a unit of the printed X's last digit
_LINEAR = np.array([[2.162528, 2.937775], [2.946110, 1.894167], [3.085861, 2.770317],
                    [1.174167, 0.924167], [-0.972339, 0.980119], [-0.847752, -1.208240]])
_KERNEL = np.array([[0.921554, -0.011554], [-0.428446, 1.331554], [-1.360608, -0.168446],
                    [0.101554, -1.251554], [-2.209878, 1.818446], [-1.891269, -1.541554],
                    [2.008446, -2.221554], [2.111554, 1.880833]])
_KERNEL_SOFT = _KERNEL.copy()
_KERNEL_SOFT[3] = (0.100124, -3.248446)
WITNESS = {"amini": _LINEAR, "amini_soft": _LINEAR, "amini_kernel": _KERNEL,
           "amini_kernel_soft": _KERNEL_SOFT}


def _fit(name: str, X: np.ndarray):
    """The slide's problem solved by the direct QP (exact on 8 points; SMO stops at a relative
    gap of 2e-5 on amini_kernel_soft whatever its tol, which its certificate reports)."""
    ex = AMINI_EXAMPLES[name]
    if ex.method == "hard-margin":
        m = pd.HardMarginSVC(kernel=ex.kernel, tol=1e-10)
    else:
        m = pd.CSVC(kernel=ex.kernel, C=ex.C, tol=1e-10)
    return m.fit(X, ex.y, backend="qpdirect")


def _pattern(alpha: np.ndarray, C: float | None) -> list[str]:
    top = np.inf if C is None else C
    return ["0" if a <= 1e-8 else "C" if a >= top - 1e-8 else "free" for a in alpha]


@pytest.mark.parametrize("name", NAMES)
def test_dataset_is_the_slide_as_printed(name):
    ex = AMINI_EXAMPLES[name]
    X, y = load_dataset(name)            # never standardised: the slide's numbers
    np.testing.assert_array_equal(X, ex.X)
    np.testing.assert_array_equal(y, ex.y)
    assert np.all(np.round(X, 2) == X) and len(ex.alpha) == len(y)
    # the printed alpha is feasible for the slide's problem up to its 4-decimal rounding
    assert abs(ex.y @ np.array(ex.alpha)) <= 1e-4 + 1e-12
    if ex.C is not None:
        assert max(ex.alpha) <= ex.C


@pytest.mark.parametrize("name", NAMES)
def test_fit_on_printed_points_has_the_slides_support(name):
    ex = AMINI_EXAMPLES[name]
    m = _fit(name, ex.X)
    assert m.certificate_.status == "optimal"
    assert _pattern(m.alpha_, ex.C) == _pattern(np.array(ex.alpha), ex.C)


@pytest.mark.parametrize("name", NAMES)
def test_points_within_the_rounding_give_the_slides_digits(name):
    ex = AMINI_EXAMPLES[name]
    Xw = WITNESS[name]
    assert np.abs(Xw - ex.X).max() < HALF_UNIT     # the slide prints these points as X
    m = _fit(name, Xw)
    np.testing.assert_array_equal(np.round(m.alpha_, 4), np.array(ex.alpha))
    if ex.w0 is not None:
        assert round(float(m.b_), 4) == ex.w0
    # and on the printed points the digits differ: the rounding, not the solver, moves them
    assert not np.array_equal(np.round(_fit(name, ex.X).alpha_, 4), np.array(ex.alpha))


def test_cli_prints_the_slide_next_to_the_fit(capsys):
    assert main(["fit", "csvc", "--data", "amini_kernel_soft", "--backend", "qpdirect",
                 "--table"]) == 0
    out = capsys.readouterr().out
    assert "kernel=paraboloid, C=10.0" in out                # the slide's kernel and C
    assert ('Amini\'s slide "Soft Margin kernel-SVM with C = 10" and this fit on its X:\n'
            "  slide  α = (0.0000, 2.7729, 3.8414, 10.0000, 0.0000, 10.0000, 6.4263, 0.1879)"
            "  w₀ = 2.0089\n") in out
    # another method, kernel or C is not the slide's problem: no comparison
    assert main(["fit", "csvc", "--data", "amini_kernel_soft", "--C", "1", "--backend",
                 "qpdirect", "--table"]) == 0
    assert "Amini's slide" not in capsys.readouterr().out


def _page_section() -> str:
    text = (Path(__file__).resolve().parents[2] / "docs" / "texts.md").read_text()
    return text[text.index("### Amini's worked examples"):text.index("## Fasshauer")]


def test_notation_page_quotes_what_the_commands_print(capsys):
    """docs/texts.md shows each example's command and the comparison it prints: run, the
    quoted lines are in the output verbatim; the largest moves the page states are the
    witnesses'."""
    import shlex

    section = _page_section()
    pairs = re.findall(r"```sh\n(primaldual [^\n]+)\n```\n\n```text\n(.*?)```", section, re.S)
    assert [shlex.split(c)[4] for c, _ in pairs] == list(NAMES)
    for command, quoted in pairs:
        assert main(shlex.split(command)[1:]) == 0
        out = capsys.readouterr().out
        assert quoted in out, (command, quoted)
    said = " ".join(section.split())
    for names, pattern in ((("amini", "amini_soft"), r"at most ([\d.]+) for the two linear"),
                           (("amini_kernel", "amini_kernel_soft"),
                            r"and ([\d.]+) for the two kernel slides")):
        stated = re.search(pattern, said).group(1)
        move = max(np.abs(WITNESS[n] - AMINI_EXAMPLES[n].X).max() for n in names)
        assert f"{move:.{len(stated.split('.')[1])}f}" == stated, (names, move, stated)
