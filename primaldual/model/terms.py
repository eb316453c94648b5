"""Nonlinear terms of a scalar expression: ``||w||^2``, ``sum_squares``, ``x^T P x``, the l1 and
l-inf norms, the logistic and Huber losses and the entropies, each with its value and rendering
(their convex conjugates are used by :func:`~primaldual.model.dualize.dualize`).

Defined in :mod:`primaldual.model.expressions` (the node types, expressions, terms and
builders are one module: their operators need each other); every name is re-exported here.
"""

from .expressions import (  # noqa: F401
    ATOM,
    PROD,
    Data,
    Expr,
    FeatureNorm,
    GramOperator,
    Huber,
    Norm1,
    NormInf,
    QuadForm,
    SumBinaryEntropy,
    SumEntropy,
    SumLogistic,
    SumSquares,
    Term,
    Variable,
    _const_txt,
    _entry_weights,
    _lookup,
    _paren,
    _term_expr,
    coef_mul,
)
