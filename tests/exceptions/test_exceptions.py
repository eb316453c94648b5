"""Every error and warning class lives in primaldual.exceptions and keeps its old import path."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import primaldual
import primaldual.exceptions as exc

OLD_HOMES = {
    "DualizationError": ["primaldual.model.dualize", "primaldual"],
    "ModelFileError": ["primaldual.persistence"],
    "DatasetFileNotFoundError": ["primaldual.datasets"],
    "InaccurateSolutionWarning": ["primaldual.solution"],
    "InfeasibleProblemWarning": ["primaldual.solution"],
    "InfeasibleProblemError": ["primaldual.solution", "primaldual"],
    "SingularKKTError": ["primaldual.backends.linsys"],
    "IndefiniteKernelWarning": ["primaldual.validation"],
    "NumericalTroubleError": ["primaldual.validation"],
    "ConvergenceWarning": ["primaldual.backends.linsys", "primaldual.backends.smo"],
}


@pytest.mark.parametrize("name", sorted(exc.__all__))
def test_class_is_exported_once(name):
    cls = getattr(exc, name)
    assert isinstance(cls, type) and issubclass(cls, (Exception, Warning))
    assert getattr(primaldual, name) is cls
    assert name in primaldual.__all__
    for module in OLD_HOMES.get(name, []):
        assert getattr(importlib.import_module(module), name) is cls, module


def test_every_class_defined_in_the_package_lives_in_exceptions():
    """No module of primaldual defines its own error or warning class (CLIError aside)."""
    import ast
    import pathlib

    root = pathlib.Path(primaldual.__file__).parent
    stray = []
    for path in root.rglob("*.py"):
        if path.name == "exceptions.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.name.endswith(("Error", "Warning")):
                if node.name != "CLIError":
                    stray.append(f"{path.relative_to(root)}:{node.name}")
    assert stray == []


def test_errors_stay_value_errors():
    for name in ("DualizationError", "InfeasibleProblemError", "NumericalTroubleError",
                 "SingularKKTError", "ModelFileError", "DatasetFileNotFoundError"):
        assert issubclass(getattr(exc, name), ValueError)
    assert issubclass(exc.SingularKKTError, np.linalg.LinAlgError)
    assert issubclass(exc.DatasetFileNotFoundError, FileNotFoundError)
    err = exc.InfeasibleProblemError("x", solution=3)
    assert err.solution == 3
