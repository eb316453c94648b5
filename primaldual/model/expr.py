"""Variables, data and expressions of the modelling core.

An :class:`Expr` is a vector (length ``m``, rendered per index ``i``) or a scalar. Its numeric
content is an affine part, ``sum_v M_v (G_v x_v) + c``, plus (scalars only) a list of convex or
concave *terms* (``||w||^2``, ``sum_squares``, ``x^T P x``, logistic, entropy). ``G_v`` is the
identity for ordinary variables and the Gram matrix ``K`` for a feature-space variable: a
feature-space ``w`` is stored by its coefficients ``beta`` over its basis points,
``w = sum_j beta_j phi(z_j)``, so ``<w, phi(z_i)> = (K beta)_i`` and ``||w||^2 = beta^T K beta``.
This is the representer form that makes the kernel trick mechanical.

Every expression also carries its text and LaTeX rendering, built with the names the user gave,
in per-index notation (``y_i (<w, phi(x_i)> + b)``).

Defined in :mod:`primaldual.model.expressions` (the node types, expressions, terms and
builders are one module: their operators need each other); every name is re-exported here.
"""

from .expressions import (  # noqa: F401
    ATOM,
    CONST,
    INDEX_LETTERS,
    OPS_TEX,
    OPS_TXT,
    PROD,
    SUM,
    Constraint,
    Data,
    Expr,
    Variable,
    _as_expr,
    _auto,
    _bcast_vec,
    _broadcast,
    _const_txt,
    _eye,
    _fail_terms,
    _has_top_sum,
    _is_zero,
    _lookup,
    _merge_ctx,
    _mono_mul,
    _mono_text,
    _paren,
    _scale,
    _scale_rows,
    coef_add,
    coef_mul,
    latex_indexed,
    latex_symbol,
    text_indexed,
    text_symbol,
)
