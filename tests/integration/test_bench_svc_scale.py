"""The C-SVC growth benchmark of docs/benchmarks.md ("The working set at scale") runs on tiny
sizes, its duals agree with the peers', the fitted exponent is the slope it says, and a missing
oneDAL (a benchmark peer, not a dependency) skips its column with the install hint."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from tests.conftest import ROOT


def _bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))   # (its `_timing`, `bench_peers` live there)
    try:
        spec = importlib.util.spec_from_file_location(
            "bench_svc_scale", ROOT / "benchmarks" / "bench_svc_scale.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return mod


def _rows(out: str) -> list[list[str]]:
    return [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in out.splitlines()
            if ln.startswith("| ") and ln[2].isdigit()]


@pytest.mark.parametrize("family", ["peers", "nested"])
def test_tiny_growth_table(capsys, family):
    bench = _bench()
    bench.main(["--sizes", "200", "400", "--repeats", "1", "--from", "200", "--family", family])
    out = capsys.readouterr().out
    rows = _rows(out)
    assert [r[0] for r in rows] == ["200", "400"]
    for r in rows:
        # N | ours | route | oneDAL | LIBSVM | ratio | dual | rel. diff | certificate | load
        assert r[2] in ("numba", "dense") and r[8] == "optimal", r
        assert float(r[7]) <= 1e-6
    assert "ours: wall time ~ N^" in out and "ours: CPU time ~ N^" in out
    if bench._onedal() is None:
        assert bench.INSTALL_HINT in out


def test_exponent_is_the_log_log_slope():
    bench = _bench()
    ns = [1000, 2000, 4000, 8000]
    slope, ends = bench.exponent(ns, [3.0 * n ** 1.5 for n in ns])
    assert slope == pytest.approx(1.5) and ends == pytest.approx(1.5)
    slope, ends = bench.exponent(ns, np.array([1.0, 2.0, 4.0, 16.0]))
    assert ends == pytest.approx(4.0 / 3.0)     # log2(16) / log2(8)
