"""The compiled SMO start functions (``backends/smo/_start.py``, issue 31) give the bits of
the numpy code they stand in for: the greedy nu start and the start's bound snapping."""

import numpy as np
import pytest

import primaldual.backends.smo.adapter as adapter
import primaldual.backends.smo.solver as solver

pytest.importorskip("numba")


@pytest.fixture(scope="module", autouse=True)
def _core():
    solver.compile_core()


def _cases(rng):
    for n in (1, 2, 3, 7, 40, 101):
        sign = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        for C in (np.ones(n), rng.uniform(0.01, 3.0, n), np.full(n, 0.37),
                  np.where(rng.random(n) < 0.2, np.inf, rng.uniform(0.1, 2.0, n))):
            tot = float(np.where(np.isfinite(C), C, 0.0).sum())
            for frac in (0.0, 0.1, 0.33, 0.5, 1.0, 3.0):
                yield sign, C, frac * tot / 2, frac * tot / 3


def _numpy(fn, *args):
    real = adapter._start_module
    adapter._start_module = lambda: None
    try:
        return fn(*args)
    finally:
        adapter._start_module = real


def test_greedy_start_same_bits_and_errors():
    assert adapter._start_module() is not None
    rng = np.random.default_rng(5)
    for sign, C, pos, neg in _cases(rng):
        try:
            want = _numpy(adapter.greedy_start, sign, C, pos, neg)
        except ValueError:
            with pytest.raises(ValueError, match="equality constraints"):
                adapter.greedy_start(sign, C, pos, neg)
            continue
        got = adapter.greedy_start(sign, C, pos, neg)
        assert got.tobytes() == want.tobytes()


def _snap_numpy(alpha, C):
    fin = np.isfinite(C)
    eps = 1e-12 * np.where(fin, C, 1.0)
    if (alpha < -eps).any() or (alpha > C + eps).any():
        return None
    alpha[alpha <= eps] = 0.0
    near = fin & (alpha >= C - eps)
    alpha[near] = C[near]
    return alpha


def test_snap_start_same_bits():
    from primaldual.backends.smo._start import snap_start

    rng = np.random.default_rng(7)
    for n in (1, 5, 60):
        for _ in range(30):
            C = np.where(rng.random(n) < 0.2, np.inf, rng.uniform(0.1, 2.0, n))
            a = np.where(np.isfinite(C), C, 5.0) * rng.choice([0.0, 0.5, 1.0], n)
            a = a + rng.choice([0.0, 1e-14, -1e-14, 1e-9, -1e-9], n) * rng.random(n)
            want = _snap_numpy(a.copy(), C)
            got = a.copy()
            ok = snap_start(got, C)
            assert ok == (want is not None)
            if ok:
                assert got.tobytes() == want.tobytes()


def test_precomputed_start_columns_same_iterates(capsys):
    """The initial gradient's whole-column fill from a precomputed matrix (core._new_col_whole)
    gives the iterates of the general column path (taken with verbose=True, which times the
    column computations)."""
    rng = np.random.default_rng(3)
    n = 60
    X = rng.standard_normal((n, 3))
    K = np.ascontiguousarray(np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1)))
    sign = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    C = np.full(n, 0.7)
    half = 0.3 * min((sign > 0).sum(), (sign < 0).sum()) * 0.7
    a0 = adapter.greedy_start(sign, C, half, half)
    assert (a0 > 0).sum() > 10
    runs = []
    for verbose in (False, True):
        r = solver.solve_arrays(None, None, np.zeros(n), C, sign=sign, equality="nu", alpha0=a0,
                          gram=(K, np.arange(n)), verbose=verbose, dense=False)
        runs.append(r)
    capsys.readouterr()
    assert runs[0].route == "numba" and runs[0].n_iter == runs[1].n_iter
    assert runs[0].alpha.tobytes() == runs[1].alpha.tobytes()
    assert runs[0].grad.tobytes() == runs[1].grad.tobytes()
