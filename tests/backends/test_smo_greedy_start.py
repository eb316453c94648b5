"""SMO's feasible start for the nu equalities (LIBSVM's: fill the variables of each sign in
order up to the sign's total), vectorised, against the sequential fill it stands for."""

from __future__ import annotations

import numpy as np
import pytest

from primaldual.backends.smo.adapter import greedy_start


def _sequential(sign, C, pos, neg):
    a = np.zeros(sign.shape[0])
    rem = {1.0: pos, -1.0: neg}
    for i in range(sign.shape[0]):
        s = 1.0 if sign[i] > 0 else -1.0
        a[i] = min(C[i], max(rem[s], 0.0))
        rem[s] -= a[i]
    return a


@pytest.mark.parametrize("seed", range(4))
def test_greedy_start_is_the_sequential_fill(seed):
    rng = np.random.default_rng(seed)
    for t in range(50):
        n = int(rng.integers(2, 40))
        sign = rng.choice([-1.0, 1.0], n)
        sign[:2] = [1.0, -1.0]
        C = rng.uniform(0.1, 1.0, n)
        if t % 3 == 0:
            C[rng.integers(0, n)] = np.inf    # SVDD-like unbounded variables
        pos = rng.uniform(0, min(C[sign > 0].sum(), 5.0))
        neg = rng.uniform(0, min(C[sign < 0].sum(), 5.0))
        a = greedy_start(sign, C, pos, neg)
        np.testing.assert_allclose(a, _sequential(sign, C, pos, neg), rtol=0, atol=1e-13)
        assert np.all((a >= 0) & (a <= C))
        np.testing.assert_allclose([a[sign > 0].sum(), a[sign < 0].sum()], [pos, neg])


def test_greedy_start_refuses_an_infeasible_total():
    with pytest.raises(ValueError, match="infeasible"):
        greedy_start(np.array([1.0, -1.0]), np.array([0.5, 0.5]), 0.6, 0.1)
