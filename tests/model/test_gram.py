"""The Gram operator's factors: ``linear_factor`` is an exact factor of the structured ``Q``
(checked against the dense matrix it stands for), and ``None`` where it cannot be read off."""

import numpy as np
import pytest
import scipy.sparse as sp

from primaldual.kernels import make_kernel
from primaldual.model.gram import GramOperator


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("sparse", [False, True])
def test_linear_factor_reproduces_the_dense_operator(seed, sparse):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 4))
    sign = rng.choice([-1.0, 1.0], size=40)
    index = rng.integers(0, 30, size=40)
    diag = rng.uniform(0, 2, size=40)
    op = GramOperator(make_kernel("linear"), sp.csr_matrix(X) if sparse else X,
                      sign=sign, index=index, diag=diag)
    Z = op.linear_factor()
    assert Z.shape == (40, 4) and sp.issparse(Z) == sparse
    Zd = Z.toarray() if sparse else Z
    dense = GramOperator(make_kernel("linear"), X, sign=sign, index=index, diag=diag).dense()
    np.testing.assert_allclose(Zd @ Zd.T + np.diag(diag), dense, atol=1e-12)


def test_linear_factor_is_none_off_the_linear_kernel():
    X = np.random.default_rng(0).normal(size=(10, 3))
    assert GramOperator(make_kernel("rbf", gamma=0.5), X).linear_factor() is None
    assert GramOperator.dense_matrix(np.eye(3)).linear_factor() is None
