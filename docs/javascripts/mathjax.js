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
  },
  startup: {
    pageReady: function () {
      return window.MathJax.startup.defaultPageReady().then(function () {
        window.primaldualFitInlineMath();
      });
    }
  }
};

// An inline formula wider than its paragraph (a long one on a phone) becomes a block of its
// own that scrolls sideways (stylesheets/math.css, class pd-wide-inline); the container takes
// the formula's depth below the baseline so the text around it stays aligned.
window.primaldualFitInlineMath = function () {
  var boxes = document.querySelectorAll(".md-typeset span.arithmatex > mjx-container");
  for (var i = 0; i < boxes.length; i++) {
    var c = boxes[i];
    var svg = c.querySelector("svg");
    var block = c.parentElement && c.parentElement.parentElement;
    if (!svg || !block) continue;
    var wide = svg.getBoundingClientRect().width > block.clientWidth;
    c.classList.toggle("pd-wide-inline", wide);
    c.style.verticalAlign = wide ? svg.style.verticalAlign : "";
  }
};

(function () {
  var pending = null;
  window.addEventListener("resize", function () {
    if (pending) clearTimeout(pending);
    pending = setTimeout(window.primaldualFitInlineMath, 100);
  });

  function typeset() {
    var mj = window.MathJax;
    // not loaded (yet): MathJax typesets the page itself when it starts
    if (!mj || typeof mj.typesetPromise !== "function" || !mj.startup) return;
    if (mj.startup.output && typeof mj.startup.output.clearCache === "function") {
      mj.startup.output.clearCache();
    }
    if (typeof mj.typesetClear === "function") mj.typesetClear();
    if (typeof mj.texReset === "function") mj.texReset();
    mj.typesetPromise().then(window.primaldualFitInlineMath).catch(function (err) {
      console.warn("MathJax typesetting failed:", err);
    });
  }
  // Material for MkDocs announces every page (also with instant navigation) on document$
  if (typeof window.document$ !== "undefined" && window.document$ &&
      typeof window.document$.subscribe === "function") {
    window.document$.subscribe(typeset);
  }
})();
