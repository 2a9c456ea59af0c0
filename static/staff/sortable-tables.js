// Sortable staff tables: click a column heading of any <table class="sortable"> to sort its
// rows by that column, click again to reverse. Numbers sort as numbers ("0.188 [0.1, 0.3]" by
// 0.188, "< 0.001" as 0.001), "—" and empty cells last. A static file (the CSP allows no inline
// script); event delegation, so tables that htmx swaps in later sort too.
(function () {
  "use strict";

  function cellKey(cell) {
    var text = (cell.getAttribute("data-sort") || cell.textContent || "").trim();
    var match = text.replace(/^</, "").trim().match(/^[-+−]?\d+(\.\d+)?(e[-+]?\d+)?/i);
    if (match) return { empty: false, number: parseFloat(match[0].replace("−", "-")), text: text };
    return { empty: text === "" || text === "—", number: null, text: text.toLowerCase() };
  }

  function compare(a, b) {
    if (a.empty !== b.empty) return a.empty ? 1 : -1;
    if (a.number !== null && b.number !== null) return a.number - b.number;
    if (a.number !== null) return -1;
    if (b.number !== null) return 1;
    return a.text < b.text ? -1 : a.text > b.text ? 1 : 0;
  }

  function sortBy(heading) {
    var table = heading.closest("table");
    var body = table.tBodies[0];
    if (!body) return;
    var index = Array.prototype.indexOf.call(heading.parentNode.children, heading);
    var ascending = heading.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(heading.parentNode.children, function (th) {
      th.removeAttribute("aria-sort");
    });
    heading.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows).filter(function (row) {
      return row.cells.length > index;
    });
    var keyed = rows.map(function (row, position) {
      return { row: row, key: cellKey(row.cells[index]), position: position };
    });
    keyed.sort(function (a, b) {
      var order = compare(a.key, b.key);
      if (a.key.empty || b.key.empty) return order || a.position - b.position;
      return (ascending ? order : -order) || a.position - b.position;
    });
    keyed.forEach(function (entry) { body.appendChild(entry.row); });
  }

  // Headings take the keyboard focus too (Enter or Space sorts), here and in swapped content.
  function focusable(root) {
    Array.prototype.forEach.call(
      (root || document).querySelectorAll("table.sortable thead th"),
      function (th) { if (!th.hasAttribute("tabindex")) th.tabIndex = 0; }
    );
  }
  document.addEventListener("DOMContentLoaded", function () { focusable(document); });
  document.addEventListener("htmx:load", function (event) { focusable(event.target); });

  document.addEventListener("click", function (event) {
    var heading = event.target.closest && event.target.closest("table.sortable thead th");
    if (heading) sortBy(heading);
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" && event.key !== " ") return;
    var heading = event.target.closest && event.target.closest("table.sortable thead th");
    if (heading) { event.preventDefault(); sortBy(heading); }
  });
})();
