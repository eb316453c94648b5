"""The inputs of the compiled SMO core read from the caller's arguments: the kernel's code and
parameters, dense, sparse (CSR rows) or precomputed data, the variables' data rows, checked
vectors.  Plain numpy (no numba import); :mod:`~primaldual.backends.smo.solver` calls it."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .codes import _K_LINEAR, _K_POLY, _K_PRE, _K_RBF, _K_SIGMOID, _KERNEL_CODES

_SPEC_NAMES = {_K_LINEAR: "linear", _K_RBF: "rbf", _K_POLY: "poly", _K_SIGMOID: "sigmoid"}


def _kernel_spec(kernel: Any) -> tuple[str, float, float, float]:
    """``(name, gamma, coef0, degree)`` for the compiled code, read from
    :meth:`primaldual.kernels.Kernel.spec` only (the one description of a kernel numba
    consumes); a kernel without a spec is ``"precomputed"`` or ``"python"`` (full Gram)."""
    if isinstance(kernel, str):
        raise TypeError(f"kernel must be a primaldual.kernels.Kernel object, got the string "
                        f"{kernel!r}; build one with primaldual.kernels.make_kernel")
    spec_fn = getattr(kernel, "spec", None)
    spec = spec_fn() if callable(spec_fn) else None
    if spec is None:  # a precomputed Gram matrix, or a kernel evaluated in Python (full Gram)
        name = getattr(kernel, "name", None)
        return ("precomputed" if name == "precomputed" else "python"), 1.0, 0.0, 3.0
    return _SPEC_NAMES[spec.code], spec.gamma, spec.coef0, spec.degree


def _issparse(X: Any) -> bool:
    """Whether ``X`` is a scipy sparse matrix (or array), checked without importing scipy."""
    return "scipy.sparse" in sys.modules and sys.modules["scipy.sparse"].issparse(X)


def _as_vec(v: Any, n: int, name: str, default: float | None = None) -> np.ndarray:
    if v is None:
        if default is None:
            raise ValueError(f"{name} is required")
        return np.full(n, float(default))
    a = np.asarray(v, dtype=np.float64)
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    s = a.sum()
    if s != s and np.isnan(a).any():  # (a NaN sum is a NaN entry or +inf and -inf entries)
        raise ValueError(f"{name} contains NaN")
    return a.copy()


#: the sparse-row arrays ``(Xptr, Xind, Xval, Xs)`` of the compiled core for dense (or
#: precomputed) data: empty (see :func:`_sparse_rows`)
_NO_ROWS = (np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0),
            np.zeros(0))


def _sparse_rows(X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(Xptr, Xind, Xval, Xs, xsq)`` of a scipy sparse ``X`` for the compiled core: row
    ``r``'s nonzeros are ``Xval[Xptr[r, 0]:Xptr[r, 1]]`` at the sorted, distinct columns
    ``Xind[Xptr[r, 0]:Xptr[r, 1]]`` (CSR with both ends of each row's extent, so that
    shrinking swaps rows by swapping two integers); ``Xs`` a zero row of length n_features
    (the scratch a kernel column scatters its row into); ``xsq`` the squared row norms.
    O(nnz + d) memory; ``X`` itself is not modified."""
    import scipy.sparse as sp

    A = sp.csr_matrix(X, dtype=np.float64, copy=True)
    A.sum_duplicates()  # (sorts the indices too)
    A.sort_indices()
    ptr = A.indptr.astype(np.int64)
    Xptr = np.ascontiguousarray(np.column_stack([ptr[:-1], ptr[1:]]))
    Xval = np.ascontiguousarray(A.data, dtype=np.float64)
    xsq = np.zeros(A.shape[0])
    np.add.at(xsq, np.repeat(np.arange(A.shape[0]), np.diff(ptr)), Xval * Xval)
    return Xptr, A.indices.astype(np.int64), Xval, np.zeros(A.shape[1]), xsq


def _variable_rows(index: Any, n_var: int, n_data: int) -> np.ndarray:
    """The data row of each variable: ``index`` checked (integers, shape ``(n_var,)``, within
    the ``n_data`` rows), or ``0..n_var-1`` when it is ``None`` (then ``n_var == n_data``)."""
    if index is None:
        if n_var != n_data:
            raise ValueError(f"sign has {n_var} entries but X has {n_data} rows; pass index")
        return np.arange(n_var)
    idx = np.asarray(index).ravel()
    if idx.shape != (n_var,) or not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"index must be an integer array of shape ({n_var},)")
    if idx.min() < 0 or idx.max() >= n_data:
        raise ValueError("index out of range of the rows of X")
    return idx


def _data_arrays(X: Any, kernel: Any, Q: Any, gram: Any, owned: bool, index: Any,
                 sign: np.ndarray, n_var: int) -> tuple:
    """The compiled core's data arguments of :func:`solve_arrays`: ``(X, kcode, Kpre, Xd, rows,
    dorig, gamma, coef0, degree, n_data, idx)`` -- the kernel's code and parameters, the
    precomputed matrix ``Kpre`` or the dense rows ``Xd`` (a copy: the core permutes it) or the
    sparse ``rows`` (``(Xptr, Xind, Xval, Xs, xsq)``), the data position of each row of
    ``Kpre`` (``dorig``, ``None``: the identity) and of each variable (``idx``); ``X`` as
    read (a sparse ``X`` densified for a kernel the core does not evaluate)."""
    empty2 = np.zeros((0, 0))
    rows = None  # (Xptr, Xind, Xval, Xs, xsq) of sparse X
    dorig = None  # data position -> row of the precomputed matrix (default: the identity)
    if gram is not None and Q is None:
        Kpre, dorig = gram
        dorig = np.asarray(dorig, dtype=np.int64).copy()  # (the core swaps it when shrinking)
        if Kpre.dtype != np.float64 or not Kpre.flags.c_contiguous or Kpre.ndim != 2 \
                or Kpre.shape[0] != Kpre.shape[1]:
            raise ValueError("gram: K must be a square C-contiguous float64 matrix")
        n_data = int(dorig.shape[0])
        if X is not None and X.shape[0] != n_data:
            raise ValueError(f"gram: {n_data} rows for X with {X.shape[0]} rows")
        if n_data and (dorig.min() < 0 or dorig.max() >= Kpre.shape[0]):
            raise ValueError("gram: rows out of range of K")
        kcode = _K_PRE
        gamma = coef0 = degree = 0.0
        Xd = empty2
        idx = _variable_rows(index, n_var, n_data)
    elif owned and Q is None and type(X) is np.ndarray and X.ndim == 2 \
            and X.flags.c_contiguous and (spec := _kernel_spec(kernel))[0] in _KERNEL_CODES:
        name, gamma, coef0, degree = spec   # a compiled kernel on dense rows (the pair route)
        kcode = _KERNEL_CODES[name]
        Kpre = empty2
        Xd = X.copy()
        n_data = X.shape[0]
        idx = _variable_rows(index, n_var, n_data)
    elif Q is not None:
        Q = np.asarray(Q, dtype=np.float64)
        if Q.shape != (n_var, n_var):
            raise ValueError(f"Q must have shape ({n_var}, {n_var}), got {Q.shape}")
        kcode = _K_PRE
        Kpre = np.ascontiguousarray(Q * np.outer(sign, sign))
        n_data = n_var
        idx = np.arange(n_var)
        gamma = coef0 = degree = 0.0
        Xd = empty2
    else:
        if kernel is None:
            raise TypeError("kernel is required unless Q is given")
        name, gamma, coef0, degree = _kernel_spec(kernel)
        if _issparse(X) and name not in _KERNEL_CODES:
            X = X.toarray()  # a precomputed or Python kernel: the full Gram matrix anyway
        if _issparse(X):  # CSR rows into the compiled core, never densified
            rows = _sparse_rows(X)
        else:
            X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        if name == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise ValueError("X must be the square Gram matrix for a precomputed kernel")
            kcode = _K_PRE
            Kpre = np.ascontiguousarray(X)
            Xd = empty2
        elif name in _KERNEL_CODES:
            kcode = _KERNEL_CODES[name]
            Kpre = empty2
            Xd = empty2 if rows is not None else np.ascontiguousarray(X).copy()
        else:
            if not callable(kernel):
                raise TypeError(f"kernel {kernel!r} is neither a known kernel name nor callable")
            kcode = _K_PRE
            Kpre = np.ascontiguousarray(np.asarray(kernel(X, X), dtype=np.float64))
            Xd = empty2
        n_data = X.shape[0]
        idx = _variable_rows(index, n_var, n_data)
    return X, kcode, Kpre, Xd, rows, dorig, gamma, coef0, degree, n_data, idx
