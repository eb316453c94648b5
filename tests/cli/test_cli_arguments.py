"""CLI argument checks: a tolerance that is not a finite number >= 0 is a usage error
(exit 2) on every command that takes one, and ``show --help`` lists the method names."""

from __future__ import annotations

import pytest

from primaldual import catalogue
from primaldual.cli import main


@pytest.mark.parametrize("argv", [["check", "csvc", "--tol", "nan"],
                                  ["check", "csvc", "--tol", "inf"],
                                  ["check", "csvc", "--tol", "x"],
                                  ["fit", "csvc", "--tol", "nan"],
                                  ["fit", "csvc", "--tol", "-1"]])
def test_a_bad_tolerance_is_a_usage_error(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--tol" in err and "finite number >= 0" in err


def test_show_help_lists_every_method_name(capsys):
    assert main(["show", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for name in catalogue.NAMES:
        assert name in out


def _csv(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


_BIG = ("a,b,y\n1e308,1.7e308,1\n-1e308,1e308,-1\n1.5e308,-1e308,1\n-1.2e308,0,-1\n"
        "0.5e308,1e307,1\n-0.1e308,-1e308,-1\n")


def _run_quiet(argv, capsys):
    """``main(argv)`` with numpy's RuntimeWarnings turned into errors (the CLI would report
    one as an internal error): the exit code and the combined output."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out + out.err


def test_finite_values_near_the_float_limit_fit_without_numpy_warnings(tmp_path, capsys):
    """Standardised (the default) the CSV fits; the saved model predicts the same file."""
    path, model = _csv(tmp_path, "big.csv", _BIG), str(tmp_path / "big.npz")
    rc, text = _run_quiet(["fit", "csvc", "--data", path, "--save", model], capsys)
    assert rc == 0 and "training accuracy" in text
    rc, text = _run_quiet(["predict", model, path], capsys)
    assert rc == 0 and "accuracy against the last column" in text
    assert "RuntimeWarning" not in text and "internal error" not in text


@pytest.mark.parametrize("extra, rc_expected, says", [
    (["--no-standardize"], 2, "X.var() overflows"),
    (["--no-standardize", "--gamma", "1", "--backend", "lowrank"], 0, "training accuracy"),
    (["--no-standardize", "--kernel", "laplacian", "--gamma", "1"], 0, "training accuracy")])
def test_unstandardised_values_near_the_float_limit_are_a_clean_message(tmp_path, capsys,
                                                                        extra, rc_expected,
                                                                        says):
    """Without standardisation X.var() and the distances overflow: gamma='scale' is refused
    in words (never a NaN kernel reaching scikit-learn's missing-value advice), an explicit
    gamma fits on the distances' correctly rounded inf; no numpy warning either way."""
    rc, text = _run_quiet(["fit", "csvc", "--data", _csv(tmp_path, "big.csv", _BIG)] + extra,
                          capsys)
    assert rc == rc_expected and says in text
    assert "RuntimeWarning" not in text and "internal error" not in text
    assert "HistGradientBoosting" not in text and "NaN" not in text


@pytest.mark.parametrize("text, cell", [
    ("1,2,y\n3,4,1\n5,6,-1\n", "'y' at row 1, column 3"),        # not a header: has numbers
    ("1.5,x,1\n3,4,-1\n5,6,1\n", "'x' at row 1, column 2"),
    ("a,b,y\n1_000,2,1\n3,4,-1\n", "'1_000' at row 2, column 1"),  # no digit separators
    ("a,b,y\n0x10,2,1\n3,4,-1\n", "'0x10' at row 2, column 1"),
    ("a,b,y\n1,2,1\n3,x,-1\n", "'x' at row 3, column 2")])
def test_a_bad_cell_is_reported_not_taken_as_a_header_or_a_number(tmp_path, capsys, text, cell):
    assert main(["fit", "csvc", "--data", _csv(tmp_path, "bad.csv", text)]) == 2
    assert f"non-numeric cell {cell}" in capsys.readouterr().err


def test_a_header_of_names_is_still_a_header(tmp_path, capsys):
    text = "a,b,y\n1,2,1\n3,4,-1\n5,6,1\n7,8,-1\n"
    assert main(["fit", "csvc", "--data", _csv(tmp_path, "ok.csv", text)]) == 0
    assert "(4 x 2)" in capsys.readouterr().out


def test_predict_with_a_saved_regressor_or_ball_labels_its_output(tmp_path, capsys):
    """``predict`` on a regressor's file reports R^2 (was labelled 'accuracy'); on a ball's
    or a kernel PCA's, which have no ``predict``, one score (row of scores) per row."""
    import numpy as np

    import primaldual as pd
    from primaldual.persistence import save
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((30, 2))
    csv = tmp_path / "pts.csv"
    np.savetxt(csv, np.column_stack([Z, Z[:, 0]]), delimiter=",")
    for name, model in [("svr", pd.EpsilonSVR().fit(Z, Z[:, 0])),
                        ("rvr", pd.RVR().fit(Z, Z[:, 0]))]:
        save(model, tmp_path / f"{name}.npz")
        assert main(["predict", str(tmp_path / f"{name}.npz"), str(csv)]) == 0
        assert "# R^2 against the last column" in capsys.readouterr().err
    ball = pd.EnclosingBall().fit(Z)
    save(ball, tmp_path / "ball.npz")
    np.savetxt(csv, Z, delimiter=",")
    assert main(["predict", str(tmp_path / "ball.npz"), str(csv)]) == 0
    out = capsys.readouterr()
    assert np.allclose([float(v) for v in out.out.split()], ball.decision_function(Z),
                       rtol=1e-9, atol=1e-12)
    assert "inside the ball" in out.err
    kpca = pd.KernelPCA(n_components=2, kernel="rbf").fit(Z)
    save(kpca, tmp_path / "kpca.npz")
    assert main(["predict", str(tmp_path / "kpca.npz"), str(csv)]) == 0
    out = capsys.readouterr()
    rows = np.array([[float(v) for v in line.split(",")] for line in out.out.split()])
    assert np.allclose(rows, kpca.transform(Z), rtol=1e-9, atol=1e-12)
    assert "component scores" in out.err
