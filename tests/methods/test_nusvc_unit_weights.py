"""NuSVC._prepare's unit-weight case (issue 31) gives what the general weight normalisation
gives for weights that are all 1: the same C_i, bit for bit, and the same feasibility bound."""
import numpy as np
import pytest

from primaldual import NuSVC


@pytest.mark.parametrize("n_pos", [1, 7, 13, 33])
def test_unit_weights_match_the_general_normalisation(n_pos):
    rng = np.random.default_rng(n_pos)
    X = rng.standard_normal((40, 3))
    y = np.r_[np.ones(n_pos), np.zeros(40 - n_pos)]
    est = NuSVC(nu=0.01)
    fast = est._prepare(X, y, None)
    general = est._prepare(X, y, np.ones(40))      # sample_weight given: the general route
    assert fast.C.tobytes() == general.C.tobytes()
    cap = 2.0 * min(n_pos, 40 - n_pos) / 40         # 2 min(W+, W-) / W with unit weights
    for w in (None, np.ones(40)):
        NuSVC(nu=cap)._prepare(X, y, w)             # at the bound: feasible
        with pytest.raises(ValueError, match="infeasible"):
            NuSVC(nu=cap * (1 + 1e-9))._prepare(X, y, w)
