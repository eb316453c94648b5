"""The import layering of ``primaldual`` (docs/architecture.md), read from the code's own imports.

Every ``import`` statement counts, including those inside functions (they are read with
``grimp``, which parses the source; nothing is imported). Two rules:

* no import cycle among the package's modules;
* a module imports only modules of its own layer or of the layers below it (``LAYERS``, bottom
  first, the same list the architecture page prints).

``KNOWN_UPWARD`` and ``KNOWN_CYCLES`` list the cycles and upward imports that remain to be
removed (issue 32; docs/architecture.md says why each waits). They are a ratchet: a new cycle or
upward import fails the test, and so does a listed one that no longer occurs (remove it from the
list when its import is gone).
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import grimp  # the test extra; a missing grimp is an error here, not a skip (the CI check)
import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = "primaldual"

#: Layers, bottom first: (name, module patterns relative to the package).
LAYERS: list[tuple[str, list[str]]] = [
    ("foundation", ["exceptions", "catalogue", "calibration", "datasets", "ranking"]),
    ("validation", ["validation"]),
    ("kernels", ["kernels", "kernels.*"]),
    ("model", ["model", "model.*"]),
    ("results", ["solution", "certificate"]),
    ("backends", ["backends", "backends.*"]),
    ("engine", ["engine", "engine.*"]),
    ("estimators", ["methods", "methods.*", "decomposition", "decomposition.*",
                    "gaussian_process", "rvm", "rvm.*", "distributed", "bounds"]),
    ("services", ["multiclass", "multiclass.*", "tuning", "sparsity", "teaching",
                  "persistence", "persistence.*", "plotting", "testing", "bench",
                  "derivation_check", "derivation_check.*", "derivation_file", "exercises",
                  "fuzz_variants",
                  "_oracle", "_oracle.*"]),
    ("cli", ["cli", "cli.*", "__main__"]),
]

#: Remaining debt (docs/architecture.md, "Known exceptions"): (importer, imported) upward imports,
#: and cycles as sorted module tuples.
KNOWN_UPWARD: set[tuple[str, str]] = set()
KNOWN_CYCLES: set[tuple[str, ...]] = set()


def _layer(module: str) -> int | None:
    rel = module[len(PKG) + 1:]
    for i, (_, patterns) in enumerate(LAYERS):
        if any(fnmatch.fnmatch(rel, p) for p in patterns):
            return i
    return None


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph(PKG, cache_dir=None)


def _edges(graph) -> list[tuple[str, str]]:
    return [(m, d) for m in sorted(graph.modules) if m != PKG
            for d in sorted(graph.find_modules_directly_imported_by(m)) if d != PKG]


def _cycles(graph) -> list[tuple[str, ...]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    succ = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[tuple[str, ...]] = []
    for root in sorted(succ):
        if root in index:
            continue
        work = [(root, iter(succ[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ[w])))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(tuple(sorted(comp)))
    return sorted(out)


def test_every_module_has_a_layer(graph) -> None:
    missing = sorted(m for m in graph.modules if m != PKG and _layer(m) is None)
    assert not missing, f"modules with no layer in LAYERS (add them): {missing}"


def test_every_layer_pattern_names_a_module(graph) -> None:
    """The page's layer table names no module that does not exist."""
    rels = [m[len(PKG) + 1:] for m in graph.modules if m != PKG]
    empty = [p for _, patterns in LAYERS for p in patterns
             if not any(fnmatch.fnmatch(r, p) for r in rels)]
    assert not empty, f"LAYERS patterns matching no module: {empty}"


def test_no_upward_import(graph) -> None:
    up = {(m, d) for m, d in _edges(graph)
          if _layer(m) is not None and _layer(d) is not None and _layer(d) > _layer(m)}
    new = sorted(up - KNOWN_UPWARD)
    gone = sorted(KNOWN_UPWARD - up)
    assert not new, "imports from a lower layer up to a higher one: " + ", ".join(
        f"{m} -> {d} ({LAYERS[_layer(m)][0]} -> {LAYERS[_layer(d)][0]})" for m, d in new)
    assert not gone, f"no longer upward, remove from KNOWN_UPWARD: {gone}"


def test_no_import_cycle(graph) -> None:
    cycles = set(_cycles(graph))
    new = sorted(cycles - KNOWN_CYCLES)
    gone = sorted(KNOWN_CYCLES - cycles)
    assert not new, f"import cycles: {new}"
    assert not gone, f"cycles gone, remove from KNOWN_CYCLES: {gone}"


def test_cycle_finder_finds_a_planted_cycle() -> None:
    class G:
        modules = {"a", "b", "c", "d"}

        @staticmethod
        def find_modules_directly_imported_by(m):
            return {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}[m]

    assert _cycles(G) == [("a", "b", "c")]


def test_architecture_page_lists_the_layers() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    rows = re.findall(r"^\|\s*(\d+)\s*\|\s*`?([\w-]+)`?\s*\|(.*)\|\s*$", page, flags=re.M)
    assert [(int(i), n) for i, n, _ in rows] == [(i + 1, n) for i, (n, _) in enumerate(LAYERS)]
    for (_, name, mods), (_, patterns) in zip(rows, LAYERS, strict=True):
        listed = re.findall(r"`([^`]+)`", mods)
        assert listed == patterns, f"layer {name}: page lists {listed}, contract {patterns}"


# ----------------------------------------------------------------------------- private names
def _private_crossings(root: Path = ROOT, pkg_name: str = PKG) -> list[tuple[str, str, str]]:
    """``(importer, module, name)`` for every ``from M import _name`` whose module ``M`` lives
    in another package than the importer (a private name used across packages), relative and
    absolute imports alike."""
    import ast

    out = []
    for path in sorted((root / pkg_name).rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        mod = ".".join(rel.parts)
        pkg = mod[: -len(".__init__")] if mod.endswith(".__init__") else mod.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith(pkg_name + "."):
                target = node.module
            else:
                continue
            home = target if (root / Path(*target.split("."))).is_dir() else \
                target.rsplit(".", 1)[0]
            if home == pkg:
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    out.append((str(rel), target, alias.name))
    return out


#: the compiled SMO's internals the generalised SMO reads (kernel codes, compiled column
#: functions, the row readers), and the fast exp's pieces the SMO's columns inline: both
#: share one numba cache of compiled code and are kept private to it; the variant's own
#: parameter names that the model file checks
KNOWN_PRIVATE_CROSSINGS = {
    ("primaldual/backends/gsmo/core", "primaldual.backends.smo.columns"),
    ("primaldual/backends/gsmo/solver", "primaldual.backends.smo.codes"),
    ("primaldual/backends/gsmo/solver", "primaldual.backends.smo.inputs"),
    ("primaldual/backends/smo/columns", "primaldual.kernels._fastexp"),
    ("primaldual/persistence/build", "primaldual.methods.variant"),
}


def test_no_private_name_imported_across_packages() -> None:
    found = {(imp.replace("\\", "/"), mod) for imp, mod, _ in _private_crossings()}
    # a ratchet: a new crossing fails, and so does a listed one that is gone
    assert found == KNOWN_PRIVATE_CROSSINGS, (sorted(found - KNOWN_PRIVATE_CROSSINGS),
                                              sorted(KNOWN_PRIVATE_CROSSINGS - found))


def test_private_crossing_finder_sees_a_planted_one(tmp_path) -> None:
    # a package whose subpackage imports a private name of a sibling: one crossing; the
    # same name imported within its own package: none
    for d in ("pkg", "pkg/a", "pkg/b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "__init__.py").write_text("")
    (tmp_path / "pkg/a/m.py").write_text("_x = 1\n")
    (tmp_path / "pkg/a/n.py").write_text("from .m import _x\n")
    (tmp_path / "pkg/b/k.py").write_text("from ..a.m import _x\nfrom pkg.a.m import _x\n")
    found = _private_crossings(tmp_path, "pkg")
    assert sorted(found) == [(str(Path("pkg/b/k")), "pkg.a.m", "_x")] * 2


def test_comments_say_why_not_which_issue() -> None:
    # a comment or docstring that names a tracker issue ("issue 31") tells a reader nothing
    # the code does not; the measurement or the reason it stood for is written out instead
    import re

    pat = re.compile(r"\bissue\s+#?\d+", re.IGNORECASE)
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in sorted((ROOT / PKG).rglob("*.py"))
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if pat.search(line)]
    assert not hits, hits
