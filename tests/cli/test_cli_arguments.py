"""CLI argument checks: a tolerance that is not a finite number >= 0 is a usage error
(exit 2) on every command that takes one, and ``show --help`` lists the method names."""

from __future__ import annotations

import pytest

from primaldual import catalogue
from primaldual.cli import main


@pytest.mark.parametrize("argv", [["check", "csvc", "--tol", "nan"],
                                  ["check", "csvc", "--tol", "inf"],
                                  ["check", "csvc", "--tol", "x"],
                                  ["fit", "csvc", "--tol", "nan"],
                                  ["fit", "csvc", "--tol", "-1"]])
def test_a_bad_tolerance_is_a_usage_error(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--tol" in err and "finite number >= 0" in err


def test_show_help_lists_every_method_name(capsys):
    assert main(["show", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for name in catalogue.NAMES:
        assert name in out


def _csv(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_finite_values_near_the_float_limit_fit_without_numpy_warnings(tmp_path, capsys):
    import warnings
    path = _csv(tmp_path, "big.csv", "a,b,y\n1e308,1.7e308,1\n-1e308,1e308,-1\n1.5e308,-1e308,1\n"
                "-1.2e308,0,-1\n0.5e308,1e307,1\n-0.1e308,-1e308,-1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert main(["fit", "csvc", "--data", path]) == 0
    assert "training accuracy" in capsys.readouterr().out


@pytest.mark.parametrize("text, cell", [("1,2,y\n3,4,1\n5,6,-1\n", "'y'"),
                                        ("a,b,y\n1_000,2,1\n3,4,-1\n", "'1_000'")])
def test_a_bad_cell_is_reported_not_taken_as_a_header_or_a_number(tmp_path, capsys, text, cell):
    assert main(["fit", "csvc", "--data", _csv(tmp_path, "bad.csv", text)]) == 2
    assert f"non-numeric cell {cell}" in capsys.readouterr().err
