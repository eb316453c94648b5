"""primaldual.testing: the assertions pass on correct problems and fail with numbers otherwise."""

import numpy as np
import pytest

import primaldual as pd
from primaldual.model import Data, Problem, Variable, vsum
from primaldual.model.dualize import dualize
from primaldual.testing import assert_kkt, assert_same_problem, assert_strong_duality


def _xy(seed, n=20):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X, y


DATA = [_xy(s) for s in (0, 1, 2)]


def test_strong_duality_hand_written_and_derived():
    m = pd.CSVC(C=1.0, gamma=0.5)
    vals = assert_strong_duality(m.primal, m.dual, DATA)
    assert len(vals) == 3 and all(abs(p - d) < 1e-6 * max(1, p) for p, d in vals)
    assert_strong_duality(m.primal, lambda X, y: dualize(m.primal(X, y)), DATA)
    der = dualize(m.primal(*DATA[0]))
    assert_strong_duality(der.primal, der)


def test_strong_duality_failure_states_numbers():
    m = pd.CSVC(C=1.0, gamma=0.5)
    X, y = DATA[0]
    wrong = pd.CSVC(C=2.0, gamma=0.5).dual(X, y)
    with pytest.raises(AssertionError, match=r"primal value .* dual value .* gap"):
        assert_strong_duality(m.primal(X, y), wrong)
    with pytest.raises(ValueError, match="tol"):
        assert_strong_duality(m.primal(X, y), wrong, tol=0)


def test_assert_kkt_passes_and_fails():
    X, y = DATA[1]
    sol = pd.CSVC(C=1.0, gamma=0.5).primal(X, y).solve()
    res = assert_kkt(sol, tol=1e-6)
    assert max(res.values()) <= 1e-6
    sol.multipliers["alpha"] = sol.multipliers["alpha"] + 0.1
    with pytest.raises(AssertionError, match=r"stationarity.* = \d\.\d+e"):
        assert_kkt(sol, tol=1e-6)
    with pytest.raises(TypeError):
        assert_kkt({"alpha": 1})


def test_same_problem_hand_vs_derived_and_mismatch():
    m = pd.CSVC(C=1.0, gamma=0.5)

    def hand_recover(X, y):
        data = m._prepare(X, y)
        return lambda sol: m._from_dual(data, sol).primal_point

    for X, y in DATA:
        der = dualize(m.primal(X, y))
        assert_same_problem(der, m.dual(X, y), recover_b=hand_recover(X, y))
    assert_same_problem(lambda X, y: dualize(m.primal(X, y)), m.dual, DATA)
    X, y = DATA[0]
    with pytest.raises(AssertionError, match=r"optimal values differ .* relative difference"):
        assert_same_problem(dualize(m.primal(X, y)), pd.CSVC(C=3.0, gamma=0.5).dual(X, y))
    # same value, different map: shift b in the recovered point
    der = dualize(m.primal(X, y))

    def bad(sol):
        pt = der.recover(sol)
        pt["b"] = pt["b"] + 1.0
        return pt
    with pytest.raises(AssertionError, match=r"solution maps differ .* b: max \|difference\|"):
        assert_same_problem(der, m.dual(X, y), recover_b=bad)


def test_unsolvable_problem_reports_status():
    x = Variable("x", 2)
    P = Problem(vsum(Data("c", [1.0, 1.0]) * x), [(x >= 0).named("s"), (x <= -1).named("t")])
    Q = Problem(vsum(x), [(x >= 0).named("s")])
    with pytest.raises(AssertionError, match="status"):
        assert_strong_duality(P, Q)
