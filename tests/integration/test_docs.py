"""The documentation builds offline: internal links resolve and rendered LaTeX compiles.

* Every relative link (and image) in README.md and docs/*.md points to an existing file, and a
  ``#anchor`` into a Markdown file names one of its headings (GitHub slug rules).
* Every method's ``to_latex()`` pieces (primal, Lagrangian, KKT conditions, dual) typeset with
  matplotlib's mathtext, row by row: mathtext has no ``aligned`` environment, so rows are split
  at ``\\\\``, alignment markers ``&`` dropped, and the LaTeX synonyms ``\\ge``/``\\le`` (which
  mathtext lacks) written ``\\geq``/``\\leq``.  Any other unsupported command fails the test.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest

import primaldual as pd
from primaldual.cli import METHOD_CLASSES, main

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _slug(heading: str) -> str:
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def _anchors(md: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", md.read_text(), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#{1,6}\s+(.*)$", text, flags=re.M)}


def _links(md: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", md.read_text(), flags=re.S)
    return [t for t in LINK.findall(text) if not re.match(r"^[a-z]+://|^mailto:", t)]


@pytest.mark.parametrize("md", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_relative_links_resolve(md: Path) -> None:
    broken = []
    for target in _links(md):
        path, _, anchor = target.partition("#")
        dest = md if not path else (md.parent / path).resolve()
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(target)
    assert not broken, f"broken links in {md.name}: {broken}"


def test_docs_pages_present() -> None:
    for name in ("index", "installation", "tutorial", "methods", "conventions", "backends",
                 "scaling", "api"):
        assert (ROOT / "docs" / f"{name}.md").exists(), name
    index = (ROOT / "docs" / "index.md").read_text()
    for ex in sorted((ROOT / "examples").glob("*.py")):
        png = ROOT / "docs" / "img" / f"{ex.stem}.png"
        if png.exists():  # every figure an example produced is described in the index
            assert f"img/{ex.stem}.png" in index, ex.name


def mathtext_rows(latex: str) -> list[str]:
    t = latex.replace(r"\begin{aligned}", "").replace(r"\end{aligned}", "")
    t = re.sub(r"\\(ge|le)(?![a-zA-Z])", r"\\\1q", t)
    rows = [r.replace("&&", r"\quad ").replace("&", "").strip() for r in re.split(r"\\\\", t)]
    return [r for r in rows if r]


def _render(row: str) -> None:
    from matplotlib import mathtext

    mathtext.math_to_image(f"${row}$", io.BytesIO(), format="png", dpi=50)


def test_row_splitting_is_faithful() -> None:
    rows = mathtext_rows(r"\begin{aligned}a & \ge 1 && [x] \\ & b \le 2\end{aligned}")
    assert rows == [r"a  \geq 1 \quad  [x]", r"b \leq 2"]
    with pytest.raises(ValueError):  # the renderer really rejects unknown commands
        _render(r"\nosuchcommand{x}")


def _tiny(task: str):
    X = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 0.5], [-1.0, -0.5], [-2.0, 0.0], [0.5, -1.5]])
    y = (np.array([0.3, 1.1, 0.9, -0.4, -1.2, 0.2]) if task == "regression"
         else np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0]))
    return X, y


@pytest.mark.parametrize("cls_name", METHOD_CLASSES)
def test_method_latex_compiles_with_mathtext(cls_name: str) -> None:
    try:
        cls = getattr(pd, cls_name)
    except AttributeError:
        pytest.skip(f"{cls_name} not available yet")
    X, y = _tiny(getattr(cls, "_task", "classification"))
    m = cls()
    P = m.primal(X, y)
    pieces = {"primal": P.to_latex(), "lagrangian": P.lagrangian().to_latex(),
              "kkt": P.kkt().to_latex(), "dual": m.dual(X, y).to_latex()}
    for name, tex in pieces.items():
        rows = mathtext_rows(tex)
        assert rows, f"{cls_name} {name}: empty LaTeX"
        for row in rows:
            try:
                _render(row)
            except ValueError as exc:
                pytest.fail(f"{cls_name} {name} row does not compile: {row!r}\n{exc}")


def test_methods_page_matches_show_output() -> None:
    """docs/methods.md is `primaldual show METHOD --markdown` for every method; it must not go
    stale (regenerate it with `python scripts/gen_methods_doc.py`)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_methods_doc",
                                                  ROOT / "scripts" / "gen_methods_doc.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    page = (ROOT / "docs" / "methods.md").read_text()
    fresh = gen.build()
    if page != fresh:
        import difflib
        diff = "".join(list(difflib.unified_diff(page.splitlines(True), fresh.splitlines(True),
                                                 "docs/methods.md", "show --markdown"))[:40])
        pytest.fail("docs/methods.md is stale; run python scripts/gen_methods_doc.py\n" + diff)


# ----------------------------------------------------------------------------- docs execute
PY_BLOCK = re.compile(r"(<!--\s*skip-test:[^>]*-->\s*\n)?```python\n(.*?)```", re.S)
SH_BLOCK = re.compile(r"```(?:bash|sh|console)\n(.*?)```", re.S)
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _python_pages() -> list[Path]:
    return [p for p in PAGES if "```python" in p.read_text()]


@pytest.mark.parametrize("md", _python_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_python_blocks_run(md: Path, tmp_path: Path, monkeypatch) -> None:
    """Every ```python block of a page runs, in order, in one namespace (a fresh folder as the
    working directory). A block preceded by ``<!-- skip-test: reason -->`` is only compiled."""
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "__docs__"}
    for k, (skip, code) in enumerate(PY_BLOCK.findall(md.read_text())):
        compiled = compile(code, f"{md.name}[block {k}]", "exec")
        if not skip:
            exec(compiled, ns)  # noqa: S102 - the documentation's own code


def _commands() -> list[tuple[str, list[str]]]:
    import shlex

    out = []
    for md in PAGES:
        for block in SH_BLOCK.findall(md.read_text()):
            for line in block.splitlines():
                for part in line.split("#")[0].split("&&"):
                    argv = shlex.split(part)
                    if argv[:1] == ["primaldual"]:
                        out.append((md.name, argv[1:]))
                    elif argv[:3] == ["python", "-m", "primaldual"]:
                        out.append((md.name, argv[3:]))
    return out


def test_every_documented_command_runs(tmp_path: Path, monkeypatch, capsys) -> None:
    """Every `primaldual ...` command shown in README.md and docs/ exits 0 (in a fresh folder
    holding the files the tutorial mentions: my.csv, new_points.csv)."""
    import matplotlib

    from primaldual.datasets import load_dataset

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    X, y = load_dataset("ripley", n_samples=60, standardize=False)
    np.savetxt("my.csv", np.column_stack([X, y]), delimiter=",")
    np.savetxt("new_points.csv", X[:5], delimiter=",")
    cmds = _commands()
    assert len(cmds) >= 10
    failed = []
    for page, argv in cmds:
        code = main(argv)
        capsys.readouterr()
        if code != 0:
            failed.append((page, " ".join(argv), code))
    assert not failed, failed


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    """The site builds with `mkdocs build --strict` (material theme, rendered math)."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d",
                        str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                       timeout=300, env={**__import__("os").environ,
                                         "NO_MKDOCS_2_WARNING": "1"})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    html = (tmp_path / "site" / "formulations" / "index.html").read_text()
    assert "arithmatex" in html   # the math is handed to MathJax, not printed raw


def test_no_reference_outside_the_repository() -> None:
    """README and docs never point at files a user does not have (design notes, ../shared)."""
    bad = re.compile(r"FORMULATIONS\.md|DESIGN\.md|\.\./shared|design notes|formulation catalogue")
    hits = [(p.name, m.group(0)) for p in PAGES for m in bad.finditer(p.read_text())]
    assert not hits, hits
    assert "../shared" not in (ROOT / "scripts" / "gen_methods_doc.py").read_text()
    for src in (ROOT / "primaldual").rglob("*.py"):
        assert "FORMULATIONS" not in src.read_text(), src


def test_variant_page_messages_are_what_the_assertions_print() -> None:
    """The "real messages" of Write your own variant, section 9, are what `assert_strong_duality`
    and `assert_kkt` print on the section's own `make_data` (its mistakes planted as it says)."""
    import dataclasses

    from primaldual.testing import assert_kkt, assert_strong_duality

    page = (ROOT / "docs" / "write_your_own_variant.md").read_text()
    section = page[page.index("## 9. Test your variant"):page.index("## 10.")]
    ns: dict = {"__name__": "__docs__"}
    exec(compile(PY_BLOCK.search(section).group(2), "section 9", "exec"), ns)  # noqa: S102
    shown = re.search(r"```text\n(.*?)```", section, flags=re.S).group(1).splitlines()
    data = [ns["make_data"](seed) for seed in range(3)]
    with pytest.raises(AssertionError) as duality:
        assert_strong_duality(ns["build_primal"],
                              lambda X, y: pd.CSVC(C=2.0, kernel="rbf", gamma=0.5).dual(X, y),
                              data, tol=1e-6)
    sol = ns["build_primal"](*data[0]).solve()
    moved = dataclasses.replace(sol, multipliers={**sol.multipliers,
                                                  "alpha": sol.multipliers["alpha"] + 0.1})
    with pytest.raises(AssertionError) as kkt:
        assert_kkt(moved, tol=1e-6)
    number = re.compile(r"-?\d+\.\d+(?:e[+-]\d+)?")
    for text, raised in zip(shown, (str(duality.value), str(kkt.value)), strict=True):
        assert number.sub("#", text) == number.sub("#", raised), (text, raised)
        np.testing.assert_allclose([float(v) for v in number.findall(text)],
                                   [float(v) for v in number.findall(raised)], rtol=1e-3)


def test_api_page_synopsis_lists_every_option_of_the_cli() -> None:
    """The command-line synopsis of the API page names every subcommand and each of its
    options (as `primaldual COMMAND --help` lists them), and nothing the parser lacks."""
    import argparse

    from primaldual.cli import build_parser

    page = (ROOT / "docs" / "api.md").read_text()
    block = page[page.index("## Command line"):]
    block = block[block.index("```\n") + 4:]
    block = block[:block.index("```")]
    synopsis: dict[str, str] = {}
    for line in block.splitlines():
        m = re.match(r"primaldual (\S+)", line)
        if m:
            cmd = m.group(1)
        synopsis[cmd] = synopsis.get(cmd, "") + " " + line.split("#")[0]
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(synopsis) == set(sub.choices), (sorted(synopsis), sorted(sub.choices))
    for cmd, parser in sub.choices.items():
        options = {s for a in parser._actions for s in a.option_strings if s.startswith("--")}
        options -= {"--help"}
        shown = set(re.findall(r"--[A-Za-z][A-Za-z0-9-]*", synopsis[cmd]))
        assert options == shown, (cmd, sorted(options - shown), sorted(shown - options))


def test_tutorial_says_in_which_order_fit_table_prints(capsys) -> None:
    """`fit --table` prints the certificate, then the primal and the dual side by side, then
    the per-point table: the order the tutorial states."""
    assert main(["fit", "hard-margin", "--data", "amini", "--table"]) == 0
    out = capsys.readouterr().out
    where = [out.index(s) for s in ("primal objective", "PRIMAL", "DUAL", "y_i f(x_i)")]
    assert where == sorted(where), where
    text = " ".join((ROOT / "docs" / "tutorial.md").read_text().split())
    assert "`fit --table` first prints the fit's certificate" in text
    said = text[text.index("`fit --table` first prints"):]
    assert said.index("certificate") < said.index("side by side") < said.index("the table below")


def test_no_heading_names_an_issue() -> None:
    """A heading says what its section is about, not which issue asked for it (the benchmark
    log, docs/benchmarks.md, keeps its dated rounds)."""
    hits = []
    for md in PAGES:
        if md == ROOT / "docs" / "benchmarks.md":
            continue
        text = re.sub(r"```.*?```", "", md.read_text(), flags=re.S)
        hits += [(md.name, h) for h in re.findall(r"^#{1,6}\s+(.*)$", text, flags=re.M)
                 if re.search(r"\bissue\s*#?\d", h, flags=re.I)]
    assert not hits, hits
