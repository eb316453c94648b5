"""The linear route: dual coordinate descent with ``w`` kept explicitly, for box-QP duals on
the linear kernel (dense or CSR rows), the equality rows kept exactly.

* :mod:`~primaldual.backends.linear.core` -- the compiled passes (numba);
* :mod:`~primaldual.backends.linear.adapter` -- ``accepts``/``solve`` on Problem objects.
"""

from .adapter import accepts, refusal, solve

__all__ = ["accepts", "refusal", "solve"]
