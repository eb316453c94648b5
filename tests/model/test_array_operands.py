"""A plain numpy array as an operand of the model, in either order: numpy defers to the model
(``__array_ufunc__ = None``) and the model says to wrap the array in ``Data`` (it has no name
to print), instead of numpy's own ``ValueError`` or an object array."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from primaldual.model import Data, Variable, phi

WRAP = r"Wrap it in Data: Data\("


def _operands():
    w = Variable("w", 3)
    return {"variable": w, "expression": w + 1.0, "data vector": Data("y", np.ones(3))}


@pytest.mark.parametrize("kind", ["variable", "expression", "data vector"])
def test_array_matmul_either_order_asks_for_data(kind):
    v = _operands()[kind]
    A = np.ones((2, 3))
    with pytest.raises(TypeError, match=WRAP):
        A @ v
    with pytest.raises(TypeError, match=WRAP):
        v @ A.T
    with pytest.raises(TypeError, match=WRAP):
        sp.csr_matrix(A) @ v


@pytest.mark.parametrize("kind", ["variable", "expression"])
@pytest.mark.parametrize("op", ["mul", "add", "sub"])
def test_array_elementwise_either_order_asks_for_data(kind, op):
    v = _operands()[kind]
    c = np.arange(1.0, 4.0)
    f = {"mul": lambda a, b: a * b, "add": lambda a, b: a + b, "sub": lambda a, b: a - b}[op]
    with pytest.raises(TypeError, match=r"plain numpy array \(3\)"):
        f(c, v)
    with pytest.raises(TypeError, match=WRAP):
        f(v, c)


def test_array_at_feature_map_asks_for_data():
    X = np.ones((4, 2))
    with pytest.raises(TypeError, match=WRAP):
        np.ones((2, 4)) @ phi(X)


def test_numpy_scalars_and_0d_arrays_are_numbers():
    w = Variable("w", 3)
    for c in (np.float64(2.0), np.array(2.0)):
        e = c * w
        assert e.txt == "2 w_i" and np.allclose(e.lin[w].toarray(), 2 * np.eye(3))
        assert (w * c).txt == "2 w_i" and (c * (w + 1)).txt == "2 (w_i + 1)"


def test_wrapped_array_works():
    w = Variable("w", 3)
    A = np.arange(6.0).reshape(2, 3)
    e = Data("A", A) @ w
    assert e.txt == "A_iᵀw"
    np.testing.assert_allclose(e.affine_value({"w": np.ones(3)}), A.sum(axis=1))
