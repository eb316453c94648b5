"""Leaves of the modelling language: variables (plain and feature-space), data, the feature
map ``phi`` and Gram operators (the kernel matrix as a structured linear map).

Their operators build :class:`~primaldual.model.expr.Expr` objects.

Defined in :mod:`primaldual.model.expressions` (the node types, expressions, terms and
builders are one module: their operators need each other); every name is re-exported here.
"""

from .expressions import (  # noqa: F401
    ATOM,
    CONST,
    INDEX_LETTERS,
    PROD,
    SUM,
    Data,
    FeatureDiff,
    FeatureMap,
    FeatureVariable,
    GramOperator,
    Variable,
    _make_feature_variable,
    _n_rows,
    _rows,
    latex_indexed,
    latex_symbol,
    phi,
    psd_factor,
    text_indexed,
    text_symbol,
)
