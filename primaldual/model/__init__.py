"""The modelling core: variables, expressions, constraints with multipliers, problems."""

from .atoms import (
    AbsVector,
    absolute,
    as_expr,
    dot,
    huber,
    inner,
    logistic,
    matmul,
    norm1,
    norm2,
    norm_inf,
    quad_form,
    sum_entropy,
    sum_logistic,
    sum_squares,
    vsum,
)
from .expr import Expr
from .gram import GramOperator, psd_factor
from .kkt import KKTConditions
from .lagrangian import Lagrangian
from .leaves import Data, FeatureVariable, Variable, phi
from .placeholders import N, Param, X, d, x, y
from .problem import Constraint, Problem
from .terms import Huber

__all__ = ["AbsVector", "Constraint", "Data", "Expr", "FeatureVariable", "GramOperator", "Huber",
           "KKTConditions", "Lagrangian", "N", "Param", "Problem", "Variable", "X", "absolute",
           "as_expr", "d", "dot",
           "huber", "inner", "logistic", "matmul", "norm1", "norm2", "norm_inf", "phi",
           "psd_factor", "quad_form", "sum_entropy", "sum_logistic", "sum_squares", "vsum",
           "x", "y"]
