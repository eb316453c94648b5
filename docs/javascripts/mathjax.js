// MathJax 3 configuration for pymdownx.arithmatex (generic mode): \(...\) inline, \[...\]
// display. MathJax itself is served by the site (javascripts/mathjax/tex-svg.js, MathJax 3.2.2,
// Apache-2.0, SVG output: no web fonts, no network). If that script is missing or fails, the
// page keeps the TeX source as text and nothing here throws.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true
  },
  svg: { fontCache: "global" },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex"
  }
};

(function () {
  function typeset() {
    var mj = window.MathJax;
    // not loaded (yet): MathJax typesets the page itself when it starts
    if (!mj || typeof mj.typesetPromise !== "function" || !mj.startup) return;
    if (mj.startup.output && typeof mj.startup.output.clearCache === "function") {
      mj.startup.output.clearCache();
    }
    if (typeof mj.typesetClear === "function") mj.typesetClear();
    if (typeof mj.texReset === "function") mj.texReset();
    mj.typesetPromise().catch(function (err) {
      console.warn("MathJax typesetting failed:", err);
    });
  }
  // Material for MkDocs announces every page (also with instant navigation) on document$
  if (typeof window.document$ !== "undefined" && window.document$ &&
      typeof window.document$.subscribe === "function") {
    window.document$.subscribe(typeset);
  }
})();
