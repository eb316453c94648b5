"""A sparse matrix in a model file: CSR as four plain arrays, and back (an apply/invert pair).

A model fitted on a CSR ``X`` keeps ``support_vectors_`` as a ``scipy.sparse`` CSR matrix.
``np.savez`` would store it as a pickled 0-d object array, which the safe loader refuses, so
:func:`pack_sparse` writes it as ``<name>__csr_data`` (float64), ``__csr_indices``,
``__csr_indptr`` (integers, their dtype kept) and ``__csr_shape`` (int64, two entries), all
1-D numeric arrays that the multiclass layout can concatenate like any other, and
:func:`unpack_sparse` rebuilds the matrix, checking its format in full (indices in range,
``indptr`` non-decreasing and consistent), so a round trip is bit for bit and a forged file is
refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["CSR_PARTS", "pack_sparse", "unpack_sparse"]

#: the suffixes of one packed matrix, in the order of ``csr_matrix((data, indices, indptr))``
CSR_PARTS = ("__csr_data", "__csr_indices", "__csr_indptr", "__csr_shape")


def pack_sparse(arrays: dict[str, Any]) -> dict[str, Any]:
    """``arrays`` with every scipy.sparse entry replaced by its four CSR arrays (in place)."""
    for k in [k for k, v in arrays.items() if sp.issparse(v)]:
        m = sp.csr_matrix(arrays.pop(k))
        m.sort_indices()
        arrays[k + "__csr_data"] = np.asarray(m.data, dtype=np.float64)
        arrays[k + "__csr_indices"] = np.asarray(m.indices)
        arrays[k + "__csr_indptr"] = np.asarray(m.indptr)
        arrays[k + "__csr_shape"] = np.asarray(m.shape, dtype=np.int64)
    return arrays


def unpack_sparse(arrays: dict[str, Any], where: str, error: type[Exception]) -> dict[str, Any]:
    """The inverse of :func:`pack_sparse` (in place); ``error(message)`` on a malformed part.

    A missing part, a part of the wrong kind or shape, or an inconsistent CSR structure raises
    ``error`` naming the matrix; ``where`` names the file in the message.
    """
    names = {k[: -len(CSR_PARTS[0])] for k in arrays if k.endswith(CSR_PARTS[0])}
    for k in sorted(names):
        parts = [arrays.pop(k + s, None) for s in CSR_PARTS]
        if any(p is None for p in parts):
            raise error(f"{where}: the sparse array {k!r} is missing one of its CSR parts")
        data, indices, indptr, shape = (np.asarray(p) for p in parts)
        if data.dtype != np.float64:        # as a dense array: the writer stores float64 only
            raise error(f"{where}: array {k!r} must be float64, got {data.dtype}")
        ok = (data.ndim == indices.ndim == indptr.ndim == 1
              and indices.dtype.kind in "iu" and indptr.dtype.kind in "iu"
              and shape.dtype.kind in "iu" and shape.shape == (2,) and bool(np.all(shape >= 0))
              and indptr.shape == (int(shape[0]) + 1,) and data.shape == indices.shape)
        if not ok:
            raise error(f"{where}: the sparse array {k!r} has malformed CSR parts")
        if not bool(np.all(np.isfinite(data))):
            raise error(f"{where}: array {k!r} has non-finite values")
        try:
            m = sp.csr_matrix((data, indices, indptr), shape=(int(shape[0]), int(shape[1])))
            m.check_format(full_check=True)
        except ValueError as exc:
            raise error(f"{where}: the sparse array {k!r} is not a valid CSR matrix "
                        f"({exc})") from exc
        arrays[k] = m
    return arrays
