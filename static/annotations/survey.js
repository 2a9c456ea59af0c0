// Keyboard-first survey: number keys answer, Enter submits, arrows move, S skips, B flags, Z zooms.
// The page works without this file (plain form posts); htmx swaps #survey in place when present.
(function () {
  function survey() { return document.getElementById("survey"); }

  function typing(event) {
    const tag = (event.target.tagName || "").toLowerCase();
    return tag === "textarea" || (tag === "input" && event.target.type === "text");
  }

  function submit(form) {
    if (form.requestSubmit) { form.requestSubmit(); } else { form.submit(); }
  }

  document.addEventListener("keydown", function (event) {
    const root = survey();
    if (!root || event.ctrlKey || event.metaKey || event.altKey) { return; }
    const form = root.querySelector("#answer-form");
    if (typing(event)) {
      if (event.key === "Escape") { event.target.blur(); }
      return;
    }
    const radio = root.querySelector('input[data-key="' + event.key + '"]');
    if (radio) { radio.checked = true; event.preventDefault(); return; }
    switch (event.key) {
      case "Enter": event.preventDefault(); submit(form); break;
      case "ArrowLeft": { const a = root.querySelector("#nav-prev"); if (a) { a.click(); } break; }
      case "ArrowRight": { const a = root.querySelector("#nav-next"); if (a) { a.click(); } break; }
      case "s": case "S": root.querySelector("#skip").click(); break;
      case "b": case "B": { const box = root.querySelector('input[name="broken_image"]'); box.checked = !box.checked; break; }
      case "z": case "Z": { const img = root.querySelector("#item-image"); if (img) { toggleZoom(img); } break; }
      default: return;
    }
  });

  // Zoom is at least twice the fitted size (a 512 px image fitted to 608 px used to shrink to
  // its natural 512 px), or the natural size when that is larger.
  function toggleZoom(img) {
    if (img.classList.contains("zoomed")) {
      img.classList.remove("zoomed");
      img.style.width = "";
      return;
    }
    const width = Math.max(img.naturalWidth, 2 * img.getBoundingClientRect().width);
    img.classList.add("zoomed");
    img.style.width = Math.round(width) + "px";
  }

  document.addEventListener("click", function (event) {
    if (event.target.id === "item-image") { toggleZoom(event.target); }
  });

  // Keep the tab title in step with the swapped-in item (the page gives it in its language).
  document.addEventListener("htmx:afterSwap", function () {
    const root = survey();
    if (root && root.dataset.title) { document.title = root.dataset.title; }
  });
})();
