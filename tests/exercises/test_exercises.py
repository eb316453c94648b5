"""The graded exercises (``primaldual exercise``): every shipped reference answer passes the
grader, and the same answer with one sign flipped fails, naming the first wrong line with a
numeric witness; the command's listing, statements and exit codes."""

from __future__ import annotations

import re

import pytest

from primaldual.cli import main
from primaldual.derivation_file import DerivationFileError
from primaldual.exercises import (
    EXERCISES,
    exercise,
    grade,
    names,
    reference_path,
    reference_text,
    statement,
)

#: One sign flipped in each reference answer: (the text, its flipped form, what the first
#: wrong piece of the report names).
FLIPS: dict[str, tuple[str, str, str]] = {
    "hard-margin-dual": ("pm.vsum(alpha) - 0.5", "pm.vsum(alpha) + 0.5", "quadratic part"),
    "csvc-dual": ("(alpha >= 0)", "(alpha <= 0)", "'α_i ≥ 0'"),
    "l2svc-dual": ("diag=1.0 / C", "diag=-1.0 / C", "quadratic part"),
    "nusvc-dual": ("pm.vsum(alpha) >= pm.Data", "pm.vsum(alpha) <= pm.Data", "Σ_i α_i ≥ ν"),
    "svr-dual": ("+ pm.vsum(alpha_star))", "- pm.vsum(alpha_star))", "linear part"),
    "lssvm-kkt": ("Cd * e - alpha == 0", "Cd * e + alpha == 0", "C e_i + α_i = 0"),
    "kernel-ridge-dual": ("pm.dot(Y, alpha) - 0.5", "-pm.dot(Y, alpha) - 0.5", "linear part"),
    "ball-dual": ("pm.vsum(kappa * alpha) - pm.quad_form", "pm.vsum(kappa * alpha) + pm.quad_form",
                  "quadratic part"),
    "proximal-dual": ("- 0.5 * pm.sum_squares", "+ 0.5 * pm.sum_squares", "quadratic part"),
    "csvc-kkt": ("Cd - alpha - mu == 0", "Cd - alpha + mu == 0", "∂L/∂ξ_i"),
}


def test_at_least_eight_exercises_each_with_a_flip():
    assert len(EXERCISES) >= 8
    assert sorted(FLIPS) == sorted(names())
    assert len(set(names())) == len(names())


@pytest.mark.parametrize("name", names())
def test_reference_answer_passes(name):
    ex = exercise(name)
    assert reference_path(ex).is_file()
    g = grade(ex, str(reference_path(ex)))
    assert g.ok, str(g)
    assert str(g).startswith(f"{name}: PASS\nderivation OK")


@pytest.mark.parametrize("name", names())
def test_one_sign_flipped_fails_at_the_first_wrong_line(name, tmp_path):
    ex = exercise(name)
    old, new, needle = FLIPS[name]
    text = reference_text(ex)
    assert text.count(old) == 1, f"the flip {old!r} must occur once in {name}'s answer"
    f = tmp_path / "answer.py"
    f.write_text(text.replace(old, new))
    g = grade(ex, str(f))
    assert not g.ok
    first = g.report.first
    assert first is not None
    shown = f"{first.title} | {first.yours} | {first.derived}"
    assert needle in shown, str(g)
    assert first.witness.startswith("at ") and re.search(r"\d", first.witness), str(g)
    out = str(g)
    assert out.startswith(f"{name}: FAIL (first wrong line: {first.part}: {first.title})")
    assert "witness :" in out


def test_cli_grades_pass_and_fail(tmp_path, capsys):
    ex = exercise("csvc-dual")
    good = tmp_path / "good.py"
    good.write_text(reference_text(ex))
    assert main(["exercise", "csvc-dual", "--answer", str(good)]) == 0
    assert capsys.readouterr().out.startswith("csvc-dual: PASS")
    bad = tmp_path / "bad.py"
    bad.write_text(reference_text(ex).replace(*FLIPS["csvc-dual"][:2]))
    assert main(["exercise", "csvc-dual", "--answer", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "FAIL (first wrong line: dual: the derived constraint 'α_i ≥ 0'" in out
    assert "witness :" in out


def test_cli_list_statement_and_solution(capsys):
    assert main(["exercise", "--list"]) == 0
    out = capsys.readouterr().out
    assert [ln.split()[0] for ln in out.splitlines()] == names()
    assert main(["exercise"]) == 0
    assert capsys.readouterr().out == out
    assert main(["exercise", "svr-dual"]) == 0
    out = capsys.readouterr().out
    assert out == statement(exercise("svr-dual")) + "\n"
    for piece in ("epsilon-SVR primal", "[α_i ≥ 0]", "`alpha_star`", "Hints:",
                  "primaldual exercise svr-dual --answer"):
        assert piece in out
    assert main(["exercise", "svr_dual", "--solution"]) == 0
    assert capsys.readouterr().out == reference_text(exercise("svr-dual"))


@pytest.mark.parametrize("argv, needle", [
    (["exercise", "nope"], "unknown exercise 'nope'; allowed: hard-margin-dual"),
    (["exercise", "csvc-dual", "--list"], "--list"),
    (["exercise", "--answer", "x.py"], "need an exercise name"),
    (["exercise", "csvc-dual", "--answer", "none.py"], "file not found: none.py"),
    (["exercise", "csvc-dual", "--answer", "x.py", "--solution"], "not with --answer"),
    (["exercise", "csvc-dual", "--tol", "nan"], "--tol"),
])
def test_cli_bad_usage_exits_2(argv, needle, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("primaldual") and err.count("\n") == 1 and needle in err


@pytest.mark.parametrize("body, needle", [
    ("x = 1\n", "defines none of `dual`"),
    ("kkt = []\n", "defines no `dual`: exercise csvc-dual asks for the dual"),
    ("import primaldual as pd\nprimal = pd.CSVC().primal(X[:4], y[:4])\ndual = 1\n",
     "defines its own `primal`"),
    ("a = 1\ndual = 1 / 0\n", "line 2: ZeroDivisionError"),
    ("dual = (\n", "does not parse"),
])
def test_bad_answer_files_exit_2(body, needle, tmp_path, capsys):
    f = tmp_path / "answer.py"
    f.write_text(body)
    with pytest.raises(DerivationFileError, match=re.escape(needle)):
        grade("csvc-dual", str(f))
    assert main(["exercise", "csvc-dual", "--answer", str(f)]) == 2
    assert needle in capsys.readouterr().err


def test_answer_may_name_the_given_primal(tmp_path):
    """``primal = primal`` (a check-derivation file's line kept) is the exercise's own."""
    f = tmp_path / "answer.py"
    f.write_text("primal = primal\n" + reference_text(exercise("csvc-dual")))
    assert grade("csvc-dual", str(f)).ok


def test_docs_page_quotes_real_runs(tmp_path, monkeypatch, capsys):
    """docs/exercises.md: each ```bash command and each ```python block (in order, one
    namespace) prints exactly the ```text block after it."""
    import shlex
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "exercises.md").read_text()
    pairs = re.findall(r"```(bash|python)\n(.*?)```\s*\n```text\n(.*?)\n```", page, flags=re.S)
    kinds = [k for k, _, _ in pairs]
    assert kinds.count("bash") >= 3 and kinds.count("python") >= 2
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "__docs__"}
    for kind, code, quoted in pairs:
        capsys.readouterr()
        if kind == "bash":
            argv = shlex.split(code.strip())
            assert argv[0] == "primaldual"
            assert main(argv[1:]) == 0
        else:
            exec(compile(code, "exercises.md", "exec"), ns)  # noqa: S102 - the page's code
        assert capsys.readouterr().out.rstrip("\n") == quoted
    assert "witness :" in page and "FAIL (first wrong line:" in page
