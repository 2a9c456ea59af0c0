// Wide staff tables on a narrow screen (docs/annotation.md, "Staff pages"): a table wider than
// its box scrolls sideways inside its own box (a .table-scroll, added around it if missing), and
// says so: a "scroll →" line above it and a shadow on the side with more columns. Nothing is
// clipped and the page itself never scrolls sideways. A static file (the CSP allows no inline
// script); it runs again when htmx swaps a fragment in and when the window changes size.
(function () {
  "use strict";

  function wrap(table) {
    const box = document.createElement("div");
    box.className = "table-scroll";
    table.parentNode.insertBefore(box, table);
    box.appendChild(table);
    return box;
  }

  function hintFor(box) {
    const previous = box.previousElementSibling;
    if (previous && previous.classList.contains("scroll-hint")) { return previous; }
    const hint = document.createElement("p");
    hint.className = "scroll-hint";
    hint.setAttribute("aria-hidden", "true");
    hint.textContent = "scroll →";
    box.parentNode.insertBefore(hint, box);
    return hint;
  }

  function edges(box) {
    const more = box.scrollWidth - box.clientWidth;
    box.classList.toggle("more-left", box.scrollLeft > 1);
    box.classList.toggle("more-right", box.scrollLeft < more - 1);
  }

  function mark(root) {
    (root || document).querySelectorAll("main table.table").forEach(function (table) {
      if (table.closest(".table-scroll") === null && table.parentElement.clientWidth > 0
          && table.offsetWidth > table.parentElement.clientWidth + 1) {
        wrap(table);
      }
    });
    document.querySelectorAll("main .table-scroll").forEach(function (box) {
      const wide = box.scrollWidth > box.clientWidth + 1;
      box.classList.toggle("overflowing", wide);
      if (wide) { hintFor(box).hidden = false; edges(box); }
      else {
        const previous = box.previousElementSibling;
        if (previous && previous.classList.contains("scroll-hint")) { previous.hidden = true; }
      }
    });
  }

  document.addEventListener("scroll", function (event) {
    const box = event.target;
    if (box.classList && box.classList.contains("table-scroll")) { edges(box); }
  }, true);
  document.addEventListener("DOMContentLoaded", function () { mark(); });
  document.addEventListener("htmx:afterSettle", function () { mark(); });
  document.addEventListener("toggle", function () { mark(); }, true);  // a <details> opened
  let pending = null;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(mark, 100);
  });
})();
