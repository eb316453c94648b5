r"""A vectorisable ``exp`` for compiled kernel code.

``math.exp`` is a scalar libm call: in an RBF kernel column of 20 features it took half the
time. :func:`_exp` is branch-free arithmetic the compiler vectorises, to about one ulp for
``|x| <= 700`` (arguments are clamped there). Its pieces -- the range reduction
:func:`_exp_reduce`, the scaling :func:`_exp_scale` and the Horner tail
:func:`_taylor_from_9` -- are shared with the SMO core's float32 variant.

One definition for every compiled caller: the SMO core (``backends/smo/core.py``) and the
Nystrom factor's fused RBF pass (``kernels/compiled.py``). numba's on-disk cache of a caller
does not notice an edit of this file (it keys on the caller's own source file): after
changing it, touch the callers' files or clear their ``__pycache__``.
"""

from __future__ import annotations

from numba import njit

from .bitcast import bits_to_float as _bits_to_f64
from .bitcast import float_to_bits as _f64_to_bits

__all__ = ["_exp", "_exp_reduce", "_exp_scale", "_taylor_from_9", "_bits_to_f64",
           "_f64_to_bits"]


_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01   # ln 2 = _LN2_HI + _LN2_LO (fdlibm's split)
_LN2_LO = 1.90821492927058770002e-10
_ROUND = 6755399441055744.0            # 1.5 * 2**52: x + _ROUND rounds x to an integer


@njit(cache=True, inline="always")
def _exp_reduce(x):
    """Range reduction of :func:`_exp` and :func:`_exp_f32`: ``x = k ln 2 + r`` with
    ``|r| <= ln(2) / 2`` (two-part Cody-Waite), ``k`` held in the low bits of ``kb``."""
    x = min(max(x, -700.0), 700.0)
    kd = x * _LOG2E + _ROUND
    kb = _f64_to_bits(kd)
    kd = kd - _ROUND
    r = x - kd * _LN2_HI
    r = r - kd * _LN2_LO
    return r, kb


@njit(cache=True, inline="always")
def _exp_scale(q, kb):
    """``q * 2^k``, the integer ``k`` held in the low 51 bits of ``kb`` (sign-extended)."""
    k = (kb << 13) >> 13
    return q * _bits_to_f64((k + 1023) << 52)


@njit(cache=True, inline="always")
def _taylor_from_9(q, r):
    """Horner's scheme of ``exp(r)``'s Taylor polynomial from ``q``, the value reached at the
    coefficient of ``r^9``, down to the constant term (shared by :func:`_exp` and
    :func:`_exp_f32`)."""
    q = q * r + 1.0 / 40320.0
    q = q * r + 1.0 / 5040.0
    q = q * r + 1.0 / 720.0
    q = q * r + 1.0 / 120.0
    q = q * r + 1.0 / 24.0
    q = q * r + 1.0 / 6.0
    q = q * r + 0.5
    q = q * r + 1.0
    q = q * r + 1.0
    return q


@njit(cache=True, inline="always")
def _exp(x):
    r"""``exp(x)`` for ``|x| <= 700`` (arguments are clamped there) to about one ulp, in
    branch-free arithmetic the compiler vectorises (``math.exp`` is a scalar libm call: half
    the time of an RBF kernel column of 20 features).

    ``x = k ln 2 + r`` with ``k = rint(x / ln 2)`` (the ``1.5 * 2^52`` rounding trick; the low
    bits of ``x / ln 2 + 1.5 * 2^52`` hold ``k``), ``|r| <= ln(2) / 2`` by the two-part
    Cody-Waite reduction, ``exp(r)`` by its Taylor polynomial of degree 13 (truncation
    ``0.35^14 / 14! < 4e-18``), times ``2^k`` built in the exponent bits.  Never compile this
    with ``fastmath`` reassociation: it would fold the rounding trick and the two-part
    reduction away (every caller is compiled without it)."""
    r, kb = _exp_reduce(x)
    q = 1.0 / 6227020800.0
    q = q * r + 1.0 / 479001600.0
    q = q * r + 1.0 / 39916800.0
    q = q * r + 1.0 / 3628800.0
    q = q * r + 1.0 / 362880.0  # the coefficient of r^9: the rest is _exp_f32's
    return _exp_scale(_taylor_from_9(q, r), kb)
