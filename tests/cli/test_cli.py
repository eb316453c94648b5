"""The ``primaldual`` command line: every subcommand through ``main([...])``, exit codes, output.

Reference values come from independent computations in the test (CVXPY through ``Problem.solve``
on the same data, scikit-learn for predictions), never from hard-coded numbers.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import primaldual as pd
from primaldual.cli import METHOD_ALIASES, METHOD_CLASSES, main, resolve_method

ROOT = Path(__file__).resolve().parents[2]
HAS_PERSISTENCE = importlib.util.find_spec("primaldual.persistence") is not None


def _value(out: str, key: str) -> float:
    m = re.search(rf"^{re.escape(key)}\s+(\S+)", out, re.M)
    assert m, f"{key!r} missing in output:\n{out}"
    return float(m.group(1))


def _available(cls_name: str) -> bool:
    try:
        getattr(pd, cls_name)
        return True
    except AttributeError:
        return False


# ----------------------------------------------------------------------------- names
def test_every_alias_maps_to_a_catalogue_class():
    assert set(METHOD_ALIASES.values()) <= set(METHOD_CLASSES)
    for alias in ("csvc", "c-svc", "C_SVC", "CSVC", "hard-margin"):
        assert resolve_method(alias).__name__ in ("CSVC", "HardMarginSVC")


@pytest.mark.parametrize("argv", [["show", "nosuchmethod"], ["fit", "nosuchmethod"],
                                  ["check", "nosuchmethod"]])
def test_unknown_method_exit_2_names_allowed_values(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "METHOD" in err and "CSVC" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_unknown_dataset_and_backend(capsys):
    assert main(["fit", "csvc", "--data", "nosuchdata"]) == 2
    err = capsys.readouterr().err
    assert "--data" in err and "breast_cancer" in err
    assert main(["fit", "csvc", "--backend", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "--backend" in err and "cvxpy" in err and "smo" in err
    assert main(["fit", "csvc", "--data", "missing_file.csv"]) == 2
    assert "not found" in capsys.readouterr().err


def test_bad_values_are_one_line_errors(capsys):
    assert main(["fit", "csvc", "--gamma", "-1"]) == 2
    assert "--gamma" in capsys.readouterr().err
    assert main(["fit", "csvc", "--data", "ripley", "--n-samples", "30", "--C", "-1"]) == 2
    err = capsys.readouterr().err
    assert "C" in err and "Traceback" not in err
    assert main(["fit", "csvc", "--nu", "0.5"]) == 2  # not a CSVC parameter
    assert "--nu" in capsys.readouterr().err


def test_help_and_no_command(capsys):
    assert main([]) == 0
    assert "show" in capsys.readouterr().out
    assert main(["--help"]) == 0


# ----------------------------------------------------------------------------- show
@pytest.mark.parametrize("method", ["csvc", "hard-margin"])
def test_show_sections(method, capsys):
    assert main(["show", method]) == 0
    out = capsys.readouterr().out
    for section in ("== Primal ==", "== Lagrangian ==", "== KKT conditions ==", "== Dual =="):
        assert section in out
    assert "stationarity" in out and "complementary slackness" in out
    assert out.index("Primal") < out.index("Lagrangian") < out.index("KKT") < out.index("Dual")


def test_show_latex_and_markdown(capsys):
    assert main(["show", "CSVC", "--latex"]) == 0
    out = capsys.readouterr().out
    assert out.count("\\[") == 4 and "\\min" in out and "\\max" in out
    assert main(["show", "c-svc", "--markdown"]) == 0
    out = capsys.readouterr().out
    for section in ("## Primal", "## Lagrangian", "## KKT conditions", "## Dual"):
        assert section in out
    assert out.count("$$") == 8


@pytest.mark.parametrize("cls_name", [c for c in METHOD_CLASSES if c not in ("CSVC",)])
def test_show_every_available_method(cls_name, capsys):
    if not _available(cls_name):
        assert main(["show", cls_name]) == 2
        assert "not available" in capsys.readouterr().err
        return
    code = main(["show", cls_name])
    out = capsys.readouterr().out
    assert code == 0
    assert "== Primal ==" in out and "== Dual ==" in out


# ----------------------------------------------------------------------------- fit
def test_fit_without_arguments_prints_small_gap_certificate(capsys):
    assert main(["fit"]) == 0
    out = capsys.readouterr().out
    assert "CSVC on breast_cancer" in out and "kernel=rbf" in out
    for key in ("status", "primal objective", "dual objective", "duality gap", "relative gap",
                "#SV free", "#SV bounded", "b", "backend"):
        assert re.search(rf"^{re.escape(key)}\s", out, re.M), key
    assert "KKT" in out and "time" in out
    assert abs(_value(out, "relative gap")) <= 1e-6
    assert _value(out, "primal objective") >= _value(out, "dual objective") - 1e-6


def test_fit_primal_and_dual_agree_with_independent_solve(capsys):
    from primaldual.datasets import load_dataset

    X, y = load_dataset("ripley", n_samples=40, standardize=False)  # as the CLI loads it
    vals = {}
    for form in ("dual", "primal"):
        assert main(["fit", "csvc", "--data", "ripley", "--n-samples", "40", "--C", "2",
                     "--gamma", "0.5", "--backend", "cvxpy", "--form", form]) == 0
        out = capsys.readouterr().out
        vals[form] = _value(out, "primal objective")
        assert abs(_value(out, "relative gap")) <= 1e-6
    # independent reference (issue 27): LIBSVM's optimum (scikit-learn's SVC at tol 1e-10),
    # its dual value 1^T alpha - 1/2 beta^T K beta from its dual_coef_ and rbf_kernel
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.svm import SVC

    svc = SVC(C=2.0, gamma=0.5, tol=1e-10).fit(X, y)
    beta = np.zeros(len(y))
    beta[svc.support_] = svc.dual_coef_[0]
    ref = float(np.abs(beta).sum() - 0.5 * beta @ rbf_kernel(X, gamma=0.5) @ beta)
    assert vals["dual"] == pytest.approx(ref, rel=1e-5)
    assert vals["primal"] == pytest.approx(ref, rel=1e-5)


def test_fit_infeasible_hard_margin_exit_3(capsys):
    assert main(["fit", "hard-margin", "--data", "ripley", "--n-samples", "40",
                 "--backend", "cvxpy"]) == 3
    err = capsys.readouterr().err
    assert "infeasible" in err and "Traceback" not in err


def test_fit_csv_and_plot(tmp_path, capsys):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 2))
    y = np.where(X[:, 0] - X[:, 1] > 0, 1, -1)
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="a,b,y", comments="")
    png = tmp_path / "p.png"
    assert main(["fit", "csvc", "--data", str(path), "--kernel", "linear",
                 "--backend", "cvxpy", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "relative gap" in out and png.exists() and png.stat().st_size > 1000


@pytest.mark.skipif(not HAS_PERSISTENCE, reason="primaldual.persistence not written yet")
def test_fit_save_then_predict_roundtrip(tmp_path, capsys):
    from sklearn.svm import SVC

    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 2))
    y = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
    path = tmp_path / "train.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",")
    model = tmp_path / "m.npz"
    assert main(["fit", "csvc", "--data", str(path), "--kernel", "linear", "--C", "1",
                 "--save", str(model)]) == 0
    capsys.readouterr()
    Xt = rng.standard_normal((10, 2))
    test = tmp_path / "test.csv"
    np.savetxt(test, Xt, delimiter=",")
    assert main(["predict", str(model), str(test)]) == 0
    pred = np.array([float(v) for v in capsys.readouterr().out.split()])
    from primaldual.datasets import load_dataset

    Xs, ys = load_dataset(str(path))  # exactly what `fit --data PATH.csv` trained on
    ref = SVC(C=1.0, kernel="linear", tol=1e-8).fit(Xs, ys).predict(Xt)
    assert pred.shape == (10,)
    assert np.mean(pred == ref) >= 0.9  # LIBSVM reference; ties at the boundary may differ


@pytest.mark.skipif(HAS_PERSISTENCE, reason="persistence exists")
def test_save_and_predict_without_persistence(tmp_path, capsys):
    assert main(["predict", str(tmp_path / "m.npz"), str(tmp_path / "x.csv")]) == 2
    assert "persistence not available" in capsys.readouterr().err


# ----------------------------------------------------------------------------- check
def test_check_csvc_passes(capsys):
    assert main(["check", "csvc", "--n", "16"]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out
    for key in ("primal optimum", "dual optimum", "duality gap", "KKT max residual"):
        assert key in out


@pytest.mark.parametrize("name", ["HardMarginSVC", "CSVC", "L2SVC", "NuSVC", "EpsilonSVR",
                                  "NuSVR", "LSSVC", "LSSVR", "ProximalSVC", "KernelRidge",
                                  "LapRLS", "LapSVC", "KernelLogisticRegression"])
def test_check_passes_for_every_method(capsys, name):
    assert main(["check", name, "--n", "16"]) == 0, capsys.readouterr()
    assert "PASS" in capsys.readouterr().out


def test_check_fails_with_impossible_tolerance(capsys):
    assert main(["check", "csvc", "--n", "12", "--tol", "0"]) == 1
    assert "FAIL" in capsys.readouterr().out


# ----------------------------------------------------------------------------- bench
def test_bench_runs_the_builtin_comparison_without_a_benchmarks_folder(capsys, monkeypatch,
                                                                      tmp_path):
    monkeypatch.chdir(tmp_path)  # no benchmarks/ nor docs/ around: the package alone suffices
    assert main(["bench", "--n", "60", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    for name in ("CSVC", "sklearn SVC", "EpsilonSVR", "KernelRidge", "ratio"):
        assert name in out
    assert main(["bench", "nosuch"]) == 2
    assert "--dir" in capsys.readouterr().err


def test_bench_rows_agree_with_the_reference():
    from primaldual.bench import quick_comparison

    rows = quick_comparison(n_samples=80, repeats=1)
    assert [r.method for r in rows] == ["CSVC", "EpsilonSVR", "KernelRidge"]
    for r in rows:
        assert r.ours > 0 and r.ref > 0 and r.ratio > 0
        assert r.agreement < 1e-2, r  # the same problem solved on both sides
    with pytest.raises(ValueError, match="n_samples"):
        quick_comparison(n_samples=5)


def test_bench_quick_runs_scripts(tmp_path, capsys):
    (tmp_path / "bench_dummy.py").write_text(
        "import sys\nprint('quick' if '--quick' in sys.argv else 'full')\n")
    assert main(["bench", "--quick", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "bench_dummy.py" in out and "quick" in out
    assert main(["bench", "--quick", "--dir", str(tmp_path), "nosuch"]) == 2
    assert "bench_dummy" in capsys.readouterr().err


# ----------------------------------------------------------------------------- derive
def test_derive_spec(tmp_path, capsys):
    spec = tmp_path / "spec.py"
    spec.write_text(
        "import numpy as np\n"
        "from primaldual import CSVC\n"
        "X = np.array([[0., 1.], [1., 2.], [-1., -1.], [-2., 0.]])\n"
        "y = np.array([1., 1., -1., -1.])\n"
        "def build():\n"
        "    return CSVC(C=1.0, kernel='linear').primal(X, y)\n")
    code = main(["derive", str(spec)])
    out, err = capsys.readouterr()
    assert "== Primal ==" in out and "== Lagrangian ==" in out and "== KKT conditions ==" in out
    if importlib.util.find_spec("primaldual.model.dualize") is None:
        assert code == 2 and "not available" in err
    else:
        assert code in (0, 2)
        if code == 0:
            assert "Dual" in out or "Derivation" in out


def test_derive_bad_spec(tmp_path, capsys):
    spec = tmp_path / "empty.py"
    spec.write_text("x = 1\n")
    assert main(["derive", str(spec)]) == 2
    assert "primal" in capsys.readouterr().err
    assert main(["derive", str(tmp_path / "missing.py")]) == 2


# ----------------------------------------------------------------------------- entry points
def test_python_dash_m(tmp_path):
    r = subprocess.run([sys.executable, "-m", "primaldual", "show", "nosuch"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 2 and "unknown method" in r.stderr and "Traceback" not in r.stderr
