"""The peers benchmark of docs/benchmarks.md runs on tiny sizes, its dual values agree with the
peers', and a missing oneDAL (scikit-learn-intelex, a benchmark peer, not a dependency) skips
its column with the install hint instead of failing."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.conftest import ROOT


def _bench():
    spec = importlib.util.spec_from_file_location("bench_peers",
                                                  ROOT / "benchmarks" / "bench_peers.py")
    assert spec is not None and spec.loader is not None
    sys.path.insert(0, str(ROOT / "benchmarks"))   # (its `_timing` helper lives there)
    try:
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return mod


def _rows(out: str) -> list[list[str]]:
    return [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in out.splitlines()
            if ln.startswith("| svr |") or ln.startswith("| nusvr |")
            or ln.startswith("| csvc |")]


def test_bench_peers_tiny_rows_agree(capsys):
    bench = _bench()
    bench.main(["--sizes", "120", "--repeats", "1"])
    out = capsys.readouterr().out
    rows = _rows(out)
    assert [r[0] for r in rows] == ["svr", "nusvr", "csvc"]
    for r in rows:
        # ... | rel. diff | agree | certificate | load
        assert r[-3] == "yes" and r[-2] == "optimal", r
        assert float(r[-4]) <= bench.DUAL_RTOL
        assert "LIBSVM" in r[-6] or "oneDAL" in r[-6]     # the ratio names the fastest peer
    if bench._onedal() is None:
        assert bench.INSTALL_HINT in out and "not installed" in out


def test_bench_peers_without_onedal_skips_its_column(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearnex", None)      # import fails as if not installed
    monkeypatch.setitem(sys.modules, "sklearnex.svm", None)
    bench = _bench()
    bench.main(["--sizes", "120", "--repeats", "1", "--routes", "csvc"])
    out = capsys.readouterr().out
    assert bench.INSTALL_HINT in out
    (r,) = _rows(out)
    assert r[4] == "not installed" and r[-3] == "yes", r


def test_dual_value_is_the_formulation():
    """``dual_value`` on a hand-checked case: two points, ``beta = (1, -1)``, ``K_12 = k``."""
    import numpy as np
    bench = _bench()
    X = np.array([[0.0] * bench.D, [1.0] + [0.0] * (bench.D - 1)])
    y = np.array([2.0, -1.0])
    k = float(np.exp(-bench.GAMMA))
    quad = 2.0 - 2.0 * k                          # beta^T K beta
    beta, sup = np.array([1.0, -1.0]), np.array([0, 1])
    assert bench.dual_value("nusvr", X, y, sup, beta) == pytest.approx(3.0 - quad / 2)
    assert bench.dual_value("svr", X, y, sup, beta) == pytest.approx(
        3.0 - 2 * bench.EPSILON - quad / 2)
    assert bench.dual_value("csvc", X, y, sup, beta) == pytest.approx(2.0 - quad / 2)


def test_bench_peers_svr_routes_against_onedal_alone(capsys):
    """The commands of docs/benchmarks.md's "SVR against oneDAL" (``--routes svr nusvr --peers
    onedal``) on a tiny size: the two SVR rows, LIBSVM's column absent, the duals agreeing
    where oneDAL is installed and its column skipped with the hint where it is not."""
    bench = _bench()
    bench.main(["--sizes", "120", "--repeats", "1", "--routes", "svr", "nusvr",
                "--peers", "onedal"])
    out = capsys.readouterr().out
    rows = _rows(out)
    assert [r[0] for r in rows] == ["svr", "nusvr"]
    assert "LIBSVM [s]" not in out and "oneDAL [s]" in out
    for r in rows:
        assert r[-3] == "yes" and r[-2] == "optimal", r
    if bench._onedal() is None:
        assert bench.INSTALL_HINT in out and all(r[3] == "not installed" for r in rows)
    else:
        assert all("oneDAL" in r[4] for r in rows)
