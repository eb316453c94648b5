"""The pairs route: dual coordinate descent with the training scores ``f = K B a`` kept, for
box-QP duals whose ``Q = Bᵀ K B`` is a kernel over combinations of data rows (a ranking SVM's
pair differences), never forming ``Q`` nor a factor of ``K``.

* :mod:`~primaldual.backends.pairs.core` -- the compiled passes and kernel-row cache (numba);
* :mod:`~primaldual.backends.pairs.adapter` -- ``accepts``/``solve`` on Problem objects.
"""

from .adapter import accepts, refusal, solve

__all__ = ["accepts", "refusal", "solve"]
