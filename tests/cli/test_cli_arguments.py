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
