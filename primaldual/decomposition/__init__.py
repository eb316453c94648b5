"""Kernel PCA (:mod:`~primaldual.decomposition.kpca`, the LS-SVM eigenproblem view) and kernel
PLS (:mod:`~primaldual.decomposition.kpls`, kernel NIPALS with deflation)."""

from .kpca import DENSE_LIMIT, CenteredKernel, KernelPCA, KernelPCADerivation, center_gram
from .kpls import KernelPLSRegression

__all__ = ["KernelPCA", "KernelPLSRegression", "KernelPCADerivation", "CenteredKernel",
           "center_gram", "DENSE_LIMIT"]
