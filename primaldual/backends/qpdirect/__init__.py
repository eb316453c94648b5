"""The direct QP route: the Problem read as ``min 1/2 zᵀPz + qᵀz`` s.t. ``A z + s = b``
(:mod:`.form`) and solved by Clarabel's interior-point method without a CVXPY compile step
(:mod:`.adapter`)."""

from .adapter import accepts, refusal, solve

__all__ = ["accepts", "refusal", "solve"]
