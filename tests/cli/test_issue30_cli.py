"""Issue 30: the command line prints only what the user set or what the fit used."""

from __future__ import annotations

import warnings

import numpy as np

from primaldual.cli import main
from primaldual.datasets import load_dataset


def _run(capsys, *argv: str) -> tuple[int, str, str, list]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err, caught


def test_show_steps_warns_about_nothing_the_user_did_not_set(capsys):
    code, out, err, caught = _run(capsys, "show", "csvc", "--data", "amini", "--steps")
    assert code == 0 and "== Derivation (mechanical) ==" in out
    assert not [w for w in caught if "tol" in str(w.message)], [str(w.message) for w in caught]
    assert "Warning" not in err and "Warning" not in out


def test_fit_cvxpy_route_does_not_warn_about_the_cli_default_tol(capsys, monkeypatch):
    from primaldual.engine import stages as _steps

    monkeypatch.setattr(_steps, "_WARNED_IGNORED", set())   # the warn-once registry, fresh
    code, _, _, caught = _run(capsys, "fit", "svr", "--data", "sinc", "--n-samples", "40",
                              "--backend", "cvxpy")
    assert code == 0
    assert not [w for w in caught if "tol=1e-05" in str(w.message)]
    # a tol the user did set is still reported when the backend does not use it
    code, _, _, caught = _run(capsys, "fit", "svr", "--data", "sinc", "--n-samples", "40",
                              "--backend", "cvxpy", "--tol", "1e-4")
    assert code == 0 and any("tol=0.0001 is ignored" in str(w.message) for w in caught)


def test_fit_header_prints_only_parameters_that_exist_and_matter(capsys):
    code, out, _, _ = _run(capsys, "fit", "hard-margin", "--data", "amini", "--table")
    head = out.splitlines()[0]
    assert code == 0 and head.startswith("HardMarginSVC on amini (6 x 2), kernel=linear, ")
    assert "C=" not in head and "gamma" not in head
    # an RBF fit with gamma="scale": the value it resolved to, 1 / (d * var(X))
    code, out, _, _ = _run(capsys, "fit", "csvc", "--data", "amini", "--kernel", "rbf",
                           "--C", "1")
    head = out.splitlines()[0]
    X, _ = load_dataset("amini")
    scale = 1.0 / (X.shape[1] * np.var(X))
    assert code == 0 and ", C=1.0, " in head and f"gamma=scale (= {scale:.4g})" in head
