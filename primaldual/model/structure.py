"""Structural descriptions of a Problem that specialised backends read, derived from the problem.

:func:`detect_box_qp` and :func:`detect_kkt_system` read a record from the Problem itself (its
objective terms, variables and constraint rows; nothing attached by hand); :func:`box_qp_of` and
:func:`kkt_system_of` return it, cached in ``problem.structure`` on first use (the reading
itself is in :mod:`primaldual.model.detection`, the records are defined in
:mod:`primaldual.model.records`). A backend's
``accepts(problem)`` asks for its record and its ``solve`` reads the arrays from it, then
reports the solution in the Problem's own names.

* :class:`BoxQP` (SMO, low-rank): ``min_a 1/2 a^T Q a + p^T a`` s.t. ``0 <= a <= C``,
  ``sign^T a = delta`` (``equality="one"``), none, or LIBSVM's two nu equalities
  (``equality="nu"``: ``sum_{sign=+1} a = sum_{sign=-1} a = nu_total / 2``). If the Problem is a
  maximisation, its objective is ``-(1/2 a^T Q a + p^T a)`` (``sense_max=True``).
* :class:`KKTSystem` (KKT backend): the LS-SVM bordered system
  ``[[0, u^T], [u, D_s (K + I/C) D_s]] [b; a] = [0; d]`` (``bias=False``: no border).
"""

from __future__ import annotations

from typing import Any

from . import detection
from .detection import _NoShape, _read_box_qp, _read_kkt_system
from .records import BoxQP, KKTSystem


# ----------------------------------------------------------------------------- detection
def detect_box_qp(problem: Any) -> BoxQP | None:
    """Derive a :class:`BoxQP` from the problem itself (``None`` when it has none; the shape is
    documented in :func:`primaldual.model.detection._read_box_qp`, :func:`box_qp_refusal`
    says why not)."""
    try:
        return _read_box_qp(problem)
    except _NoShape:
        return None


def detect_kkt_system(problem: Any) -> KKTSystem | None:
    """Derive a :class:`KKTSystem` from the problem itself (``None`` when it has none; the shape
    is documented in :func:`primaldual.model.detection._read_kkt_system`,
    :func:`kkt_system_refusal` says why not)."""
    try:
        return _read_kkt_system(problem)
    except _NoShape:
        return None


def _cached(problem: Any, key: str, read: str) -> tuple[Any, str | None]:
    """``(record, None)`` with ``problem.structure[key]`` detected (and stored there) on first
    use, or ``(None, why)``; a problem without the structure remembers why, so that
    ``accepts`` and the refusal message do not detect twice."""
    st = getattr(problem, "structure", None)
    if st is not None and key in st:
        return st[key], None
    missing = problem.__dict__.setdefault("_not_detected", {}) if st is not None else {}
    if key in missing:
        return None, missing[key]
    try:
        rec = getattr(detection, read)(problem)
    except detection._NoShape as e:
        missing[key] = str(e)
        return None, str(e)
    if st is not None:
        st[key] = rec
    return rec, None


def box_qp_of(problem: Any) -> BoxQP | None:
    """The problem's BoxQP (:func:`detect_box_qp`, cached in ``problem.structure["box_qp"]``)."""
    return _cached(problem, "box_qp", "_read_box_qp")[0]


def accepted_box_qp(problem: Any, backend: str, why: str | None) -> BoxQP:
    """The problem's BoxQP for ``backend``, or the ``ValueError`` naming why that backend
    refused it (``why``, the backend's own refusal; ``None`` when it accepts)."""
    if why is not None:
        raise ValueError(f"backend {backend!r} does not accept problem {problem.name!r}: {why}")
    box = box_qp_of(problem)
    assert box is not None   # a backend that accepts a problem has read its BoxQP
    return box


def kkt_system_of(problem: Any) -> KKTSystem | None:
    """The problem's KKTSystem (:func:`detect_kkt_system`, cached in
    ``problem.structure["kkt_system"]``)."""
    return _cached(problem, "kkt_system", "_read_kkt_system")[0]


def box_qp_refusal(problem: Any) -> str | None:
    """Why ``problem`` has no BoxQP (the structural condition that fails), ``None`` if it has."""
    return _cached(problem, "box_qp", "_read_box_qp")[1]


def kkt_system_refusal(problem: Any) -> str | None:
    """Why ``problem`` has no KKTSystem (the structural condition that fails), ``None`` if it
    has."""
    return _cached(problem, "kkt_system", "_read_kkt_system")[1]
