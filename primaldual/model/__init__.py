"""The modelling core: variables, expressions, constraints with multipliers, problems."""

from .expressions import (
                          AbsVector,
                          Data,
                          Expr,
                          FeatureVariable,
                          GramOperator,
                          Huber,
                          Variable,
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
                          phi,
                          psd_factor,
                          quad_form,
                          sum_entropy,
                          sum_logistic,
                          sum_squares,
                          vsum,
)
from .kkt import KKTConditions
from .lagrangian import Lagrangian
from .problem import Constraint, Problem

__all__ = ["AbsVector", "Constraint", "Data", "Expr", "FeatureVariable", "GramOperator", "Huber",
           "KKTConditions", "Lagrangian", "Problem", "Variable", "absolute", "as_expr", "dot",
           "huber", "inner", "logistic", "matmul", "norm1", "norm2", "norm_inf", "phi",
           "psd_factor", "quad_form", "sum_entropy", "sum_logistic", "sum_squares", "vsum"]
