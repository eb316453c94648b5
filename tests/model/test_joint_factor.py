"""The pieces the kernel-size joint elimination rests on: a data matrix times ``s I`` read off
without a product, the curvature factored in its own memory (``L Lᵀ = H``, its smallest
eigenvalue, an indefinite ``H`` refused) and a dense ``L⁻¹A`` term giving the same ``Q`` as the
sparse one."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from primaldual.model import Data, Variable
from primaldual.model.atoms import _identity_scale
from primaldual.model.qform import QForm
from primaldual.model.reduce_joint import _factor


@pytest.mark.parametrize("G, s", [
    (sp.identity(4, format="csr"), 1.0), (2.5 * sp.identity(4, format="csr"), 2.5),
    (np.eye(4) * -3.0, -3.0), (sp.diags([1.0, 1.0, 2.0, 1.0]), None),
    (sp.csr_matrix(np.eye(4) + np.eye(4, k=1)), None), (np.ones((4, 4)), None),
    (sp.identity(3, format="csr"), None)])
def test_identity_scale(G, s):
    assert _identity_scale(G, 4) == s


def test_data_times_a_scaled_vector_is_the_scaled_matrix():
    rng = np.random.default_rng(0)
    K = rng.normal(size=(6, 5))
    u = Variable("u", 5)
    e = Data("K", K) @ (3.0 * u)
    # a full block stays dense (its CSR copy would cost 12 bytes an entry), the array itself
    # when nothing scales it; a mostly-zero matrix is stored sparse
    assert isinstance(e.lin[u], np.ndarray)
    np.testing.assert_array_equal(e.lin[u], 3.0 * K)
    assert (Data("K", K) @ u).lin[u] is K
    S = np.zeros((6, 5))
    S[[0, 3], [1, 4]] = 2.0
    s_ = (Data("S", S) @ u).lin[u]
    assert sp.issparse(s_)
    np.testing.assert_array_equal(s_.toarray(), S)
    with pytest.raises(TypeError, match="vector variable"):
        Data("K", K) @ (Data("d", np.arange(1.0, 6.0)) * u)


def test_factor_in_place_and_its_eigenvalue():
    rng = np.random.default_rng(1)
    M = rng.normal(size=(30, 12))
    H = M.T @ M + 1e-3 * np.eye(12)
    ref, lam = H.copy(), np.linalg.eigvalsh(H)
    L, lam_min, lam_top = _factor(H)
    assert L is not None and np.shares_memory(L, H)       # factored in H's own memory
    np.testing.assert_allclose(np.tril(L) @ np.tril(L).T, ref, rtol=1e-12, atol=1e-12)
    assert np.array_equal(L, np.tril(L))
    assert lam_min == pytest.approx(lam[0], rel=0.05) and lam_top >= lam[-1]
    bad = -np.eye(3)
    assert _factor(bad)[0] is None


def test_dense_term_gives_the_sparse_terms_q():
    rng = np.random.default_rng(2)
    W = rng.normal(size=(7, 9))
    dense, sparse = QForm(9), QForm(9)
    dense.add(W, sp.identity(7, format="csr"))
    sparse.terms.append((sp.csr_matrix(W), sp.identity(7, format="csr")))
    for idx in (np.arange(9), np.array([0, 3, 4, 8])):
        np.testing.assert_allclose(dense.dense(idx), sparse.dense(idx), rtol=1e-13)
        np.testing.assert_allclose(dense.dense(idx), W[:, idx].T @ W[:, idx], rtol=1e-13)
