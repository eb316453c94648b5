"""The documentation site works offline, as a reader sees it.

The site is built (``mkdocs build --strict``) into a temporary folder, served on 127.0.0.1 and
loaded in a real headless Chromium (Playwright) with every request off this machine blocked.
On the Formulations, Methods, Tutorial and Write-your-own-variant pages: all math typeset
(MathJax is served by the site), no raw TeX (delimiters, ``$...$``, commands such as
``\\tfrac`` or ``\\alpha``) in the visible text, no console error or uncaught exception, no
broken image, nothing wider than the main column except inside a block that scrolls, and at
1280 px no display equation wider than the column (a wide one is broken into aligned rows).
Without MathJax the configuration script throws nothing and the TeX stays readable as text.

Without a browser, the built HTML of every page is read the same way: no TeX left outside the
math spans (a Markdown construct that breaks an inline formula, such as a list line that starts
with ``+ `` inside one, leaves its TeX as text), no ``\\|`` escape printed in a table cell.

The browser part needs the ``playwright`` package (test extra) and a Chromium binary
(Debian: ``apt-get install chromium``; Playwright's own browser download is not used). It is
skipped, with the reason, where either is missing. ``PRIMALDUAL_CHROMIUM`` names the binary.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("formulations", "methods", "tutorial", "write_your_own_variant")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return out


# ----------------------------------------------------------------------------- no browser needed
def test_site_loads_nothing_from_the_network(site: Path) -> None:
    """Every script, stylesheet, font and image a page loads is a file of the site."""
    bad = []
    for html in site.rglob("*.html"):
        text = html.read_text()
        for tag, url in re.findall(r"<(script|link|img)\b[^>]*?(?:src|href)=\"([^\"]+)\"", text):
            if tag == "link" and not re.search(rf"<link\b[^>]*href=\"{re.escape(url)}\"[^>]*"
                                               r"rel=\"(?:stylesheet|preload|icon)", text) \
                    and not re.search(r"<link\b[^>]*rel=\"(?:stylesheet|preload|icon)\"[^>]*"
                                      rf"href=\"{re.escape(url)}\"", text):
                continue   # canonical / alternate links are not loaded
            if re.match(r"^(https?:)?//", url):
                bad.append((html.relative_to(site).as_posix(), url))
    assert not bad, bad
    mj = site / "javascripts" / "mathjax" / "tex-svg.js"
    assert mj.stat().st_size > 1_000_000   # the MathJax bundle itself, not a stub


class _Text(HTMLParser):
    """The text of a page's article as a reader sees it without MathJax: outside the math spans
    (class ``arithmatex``), code, scripts and svg; and, apart, the text of table cells."""

    VOID = {"br", "img", "hr", "input", "meta", "link", "wbr", "source"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[bool, bool, bool]] = []   # (hidden, code, table cell)
        self.prose: list[str] = []
        self.cells: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.VOID:
            return
        cls = (dict(attrs).get("class") or "").split()
        hidden, code, cell = self.stack[-1] if self.stack else (False, False, False)
        self.stack.append((hidden or tag in ("script", "style", "svg") or "arithmatex" in cls,
                           code or tag in ("pre", "code"), cell or tag in ("td", "th")))

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        hidden, code, cell = self.stack[-1] if self.stack else (False, False, False)
        if hidden:
            return
        if not code:
            self.prose.append(data)
        if cell:
            self.cells.append(data)


def _article_text(html_file: Path) -> tuple[str, str]:
    m = re.search(r"<article\b[^>]*>(.*?)</article>", html_file.read_text(), flags=re.S)
    parser = _Text()
    parser.feed(m.group(1) if m else "")
    return "".join(parser.prose), "".join(parser.cells)


#: TeX a reader must never see: a command (``\alpha``, ``\tfrac``), an escaped brace or bar, a
#: ``$...$`` or ``$$`` left unparsed, a ``\(`` / ``\[`` delimiter
_RAW_TEX = re.compile(r"\\[a-zA-Z]+|\\[{}|()\[\]]|\$\$|\$[^$\s][^$]*?\$")


def test_rendered_text_holds_no_tex(site: Path) -> None:
    """Outside the math spans no page's text holds TeX, and no table cell (code included) shows
    a ``\\|`` (Python-Markdown takes a bar inside backticks as it is, the backslash stays)."""
    bad = []
    for page in sorted(site.rglob("*.html")):
        prose, cells = _article_text(page)
        hits = _RAW_TEX.findall(prose) + [r"\|"] * cells.count("\\|")
        if hits:
            bad.append((page.relative_to(site).as_posix(), hits[:5]))
    assert not bad, bad


def test_the_text_check_sees_broken_math(tmp_path: Path) -> None:
    """The check above fails on the constructs it is for (it is not blind)."""
    page = tmp_path / "p.html"
    page.write_text('<article><p>dual $= -\\tfrac12\\alpha^TQ\\alpha$</p>'
                    '<p><span class="arithmatex">\\(\\alpha\\)</span> ok</p><pre>$x$ \\alpha</pre>'
                    '<table><tr><td><code>\\|t\\| ≤ δ</code></td></tr></table></article>')
    prose, cells = _article_text(page)
    assert _RAW_TEX.findall(prose) == ["$= -\\tfrac12\\alpha^TQ\\alpha$"]
    assert "\\|" in cells and "\\alpha" not in prose.replace("$= -\\tfrac12\\alpha^TQ\\alpha$", "")


def test_no_link_leaves_the_site_to_repository_files() -> None:
    """Relative links in docs/ stay inside docs/ (repository files are not on the site)."""
    link = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
    docs = (ROOT / "docs").resolve()
    bad = []
    for md in docs.rglob("*.md"):
        text = re.sub(r"```.*?```", "", md.read_text(), flags=re.S)
        for target in link.findall(text):
            if re.match(r"^[a-z]+://|^mailto:|^#", target):
                continue
            dest = (md.parent / target.partition("#")[0]).resolve()
            if docs not in dest.parents:
                bad.append((md.relative_to(docs).as_posix(), target))
    assert not bad, bad


def test_index_links_pages_by_title() -> None:
    """The index's page table names pages by their titles (the navigation's, or the page's
    heading), never by file name."""
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    titles: dict[str, set[str]] = {}

    def walk(items: list, section: str | None = None) -> None:
        for item in items:
            for name, value in item.items():
                if isinstance(value, list):
                    walk(value, name)
                else:
                    titles.setdefault(value, set()).update({name} | ({section} if section
                                                                      else set()))
    walk(nav)
    index = (ROOT / "docs" / "index.md").read_text()
    rows = re.findall(r"^\| \[([^\]]+)\]\(([^)#]+)\)", index, flags=re.M)
    assert len(rows) >= 10
    for text, target in rows:
        h1 = re.search(r"^# (.*)$", (ROOT / "docs" / target).read_text(), flags=re.M)
        allowed = titles.get(target, set()) | ({h1.group(1), h1.group(1).split(":")[0]}
                                               if h1 else set())
        assert ".md" not in text and text in allowed, (text, target, allowed)


# ----------------------------------------------------------------------------- the browser
def _chromium() -> str | None:
    for cand in (os.environ.get("PRIMALDUAL_CHROMIUM"), "/usr/bin/chromium",
                 shutil.which("chromium"), shutil.which("chromium-browser"),
                 shutil.which("google-chrome")):
        if cand and os.path.exists(cand):
            return cand
    return None


@pytest.fixture(scope="module")
def browser(site: Path):
    pw = pytest.importorskip("playwright.sync_api",
                             reason="playwright is not installed (pip install playwright; the "
                                    "test extra has it)")
    exe = _chromium()
    if exe is None:
        pytest.skip("no Chromium binary (apt-get install chromium, or set PRIMALDUAL_CHROMIUM)")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with pw.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        try:
            yield b, f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            b.close()
            server.shutdown()
            server.server_close()


#: what a reader sees, measured in the page: raw TeX delimiters in the visible text (outside
#: code and typeset math), broken images, untypeset or erroneous math, and elements that stick
#: out of the main column without a scrolling block around them
_MEASURE = r"""
() => {
  const main = document.querySelector('article.md-content__inner');
  const clone = main.cloneNode(true);
  clone.querySelectorAll('pre, code, mjx-container, script').forEach(e => e.remove());
  const text = clone.textContent;
  const raw = ['\\(', '\\)', '\\[', '\\]', '$$'].filter(d => text.includes(d))
    .concat((text.match(/\\[a-zA-Z]+|\$[^$\s][^$]*?\$/g) || []).slice(0, 5));
  // a display equation wider than its block (it scrolls: fine on a phone, not at full width)
  const wide = [...main.querySelectorAll('div.arithmatex')].filter(
    d => d.scrollWidth > d.clientWidth + 1).map(d => d.textContent.slice(0, 50));
  const broken = [...document.images].filter(i => !i.complete || i.naturalWidth === 0)
                                     .map(i => i.getAttribute('src'));
  const box = main.getBoundingClientRect();
  // the theme lets blocks (code, math) bleed .8rem into the page margin on a narrow screen
  const bleed = 0.8 * parseFloat(getComputedStyle(document.documentElement).fontSize) + 1;
  const inside = (r, pad) => r.right <= Math.min(box.right + pad, window.innerWidth)
                             && r.left >= Math.max(box.left - pad, 0);
  const sticking = [];
  for (const e of main.querySelectorAll('*:not(mjx-container *)')) {
    const r = e.getBoundingClientRect();
    if (!r.width || inside(r, bleed)) continue;
    let p = e, scrolls = false;
    while (p && p !== main) {
      const s = getComputedStyle(p);
      if (['auto', 'scroll', 'hidden'].includes(s.overflowX)
          && inside(p.getBoundingClientRect(), bleed)) { scrolls = true; break; }
      p = p.parentElement;
    }
    if (!scrolls) sticking.push(e.tagName + ': ' + (e.textContent || '').slice(0, 50));
  }
  // a formula drawn smaller than its natural size (the theme's svg max-width shrinks it)
  const shrunk = [...main.querySelectorAll('.arithmatex mjx-container > svg')].filter(
    s => s.getBoundingClientRect().width < 0.98 * s.width.baseVal.value - 1).length;
  return {raw, broken, sticking: sticking.slice(0, 5), shrunk, wide,
          arithmatex: document.querySelectorAll('.arithmatex').length,
          typeset: main.querySelectorAll('.arithmatex mjx-container').length,
          merror: main.querySelectorAll('mjx-merror, [data-mjx-error]').length,
          page_wider: document.documentElement.scrollWidth - document.documentElement.clientWidth};
}
"""


def _load(browser, page_name: str, width: int, block: tuple[str, ...] = ()) -> tuple[dict, list]:
    b, base = browser
    page = b.new_page(viewport={"width": width, "height": 900})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console.{m.type}: {m.text}")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"uncaught: {e}"))

    def route(r) -> None:
        url = r.request.url
        if not url.startswith(base + "/"):
            problems.append(f"network request off the machine: {url}")
            r.abort()
        elif any(url.endswith(s) for s in block):
            r.abort()
        else:
            r.continue_()
    page.route("**/*", route)
    try:
        page.goto(f"{base}/{page_name}/", wait_until="load", timeout=60_000)
        if not block:
            page.wait_for_function("() => window.MathJax && MathJax.startup && "
                                   "MathJax.startup.promise", timeout=60_000)
            page.evaluate("() => MathJax.startup.promise")
        else:
            page.wait_for_timeout(300)
        return page.evaluate(_MEASURE), problems
    finally:
        page.close()


@pytest.mark.parametrize("page_name", PAGES)
def test_page_reads_right_in_a_browser(browser, page_name: str) -> None:
    m, problems = _load(browser, page_name, 1280)
    assert not problems, problems
    assert not m["raw"], f"raw TeX delimiters visible: {m['raw']}"
    assert not m["broken"], f"broken images: {m['broken']}"
    assert m["typeset"] == m["arithmatex"], m          # every formula typeset
    assert m["merror"] == 0, m                          # and none a TeX error
    assert m["page_wider"] <= 0 and not m["sticking"] and m["shrunk"] == 0, m
    assert not m["wide"], f"display equations wider than the column: {m['wide']}"
    if page_name in ("formulations", "methods"):
        assert m["arithmatex"] > 40                      # the math pages do hold math


@pytest.mark.parametrize("page_name", ["methods", "formulations"])
def test_wide_equations_scroll_in_their_block_on_a_phone(browser, page_name: str) -> None:
    """At 390 px most of Methods' display equations and some of Formulations' inline ones are
    wider than the column: each scrolls inside its own block at its natural size (the theme's
    max-width would shrink them, display ones to nothing), the page never scrolls sideways."""
    m, problems = _load(browser, page_name, 390)
    assert not problems and m["page_wider"] <= 0 and not m["sticking"], (problems, m)
    assert m["shrunk"] == 0, m
    assert m["typeset"] == m["arithmatex"]


def test_without_mathjax_the_page_keeps_its_tex_and_throws_nothing(browser) -> None:
    """MathJax's script not loaded: mathjax.js throws nothing (no uncaught exception), and the
    measure above does see the raw delimiters (the check can fail)."""
    m, problems = _load(browser, "formulations", 1280, block=("tex-svg.js",))
    assert not [p for p in problems if p.startswith("uncaught")], problems
    assert m["raw"] and m["typeset"] == 0


#: every page names the pages it links to by their titles
TITLED = tuple(sorted(p.stem for p in (ROOT / "docs").glob("*.md")))


@pytest.mark.parametrize("name", TITLED)
def test_link_text_is_a_title_not_a_file_name(name: str) -> None:
    text = re.sub(r"```.*?```", "", (ROOT / "docs" / f"{name}.md").read_text(), flags=re.S)
    files = re.findall(r"\[([^\]]*\.md\b[^\]]*)\]\(", text)
    assert not files, files
