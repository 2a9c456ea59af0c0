// Keyboard-first survey: number keys answer, Enter submits, arrows move, S skips, B flags, Z zooms
// (arrows or H/J/K/L then pan the zoomed image; Z or Esc leaves the zoom).
// The page works without this file (plain form posts); htmx swaps #survey in place when present.
// No inline style is ever set (the CSP allows none): the zoomed size goes in the image's width
// and height attributes, the rest in classes.
(function () {
  function survey() { return document.getElementById("survey"); }

  function typing(event) {
    const tag = (event.target.tagName || "").toLowerCase();
    return tag === "textarea" || (tag === "input" && event.target.type === "text");
  }

  function submit(form) {
    if (form.requestSubmit) { form.requestSubmit(); } else { form.submit(); }
  }

  // Panning steps while zoomed: a fifth of the visible pane per key press.
  const PAN = {
    ArrowLeft: [-1, 0], h: [-1, 0], H: [-1, 0],
    ArrowRight: [1, 0], l: [1, 0], L: [1, 0],
    ArrowUp: [0, -1], k: [0, -1], K: [0, -1],
    ArrowDown: [0, 1], j: [0, 1], J: [0, 1],
  };

  document.addEventListener("keydown", function (event) {
    const root = survey();
    if (!root || event.ctrlKey || event.metaKey || event.altKey) { return; }
    const form = root.querySelector("#answer-form");
    if (typing(event)) {
      if (event.key === "Escape") { event.target.blur(); }
      return;
    }
    const zoomed = root.querySelector("#item-image.zoomed");
    if (zoomed) {
      const step = PAN[event.key];
      if (step) {
        const pane = zoomed.closest(".image-pane");
        pane.scrollBy(step[0] * pane.clientWidth / 5, step[1] * pane.clientHeight / 5);
        event.preventDefault();
        return;
      }
      if (event.key === "Escape") { zoomOut(zoomed); event.preventDefault(); return; }
    }
    const radio = root.querySelector('input[data-key="' + event.key + '"]');
    if (radio) {
      if (!radio.matches(":disabled")) { radio.checked = true; }  // a harmful control not opened yet
      event.preventDefault();
      return;
    }
    switch (event.key) {
      case "Enter": {
        event.preventDefault();
        const button = form.querySelector("button[type=submit]");
        if (!button || !button.disabled) { submit(form); }
        break;
      }
      case "ArrowLeft": { const a = root.querySelector("#nav-prev"); if (a) { a.click(); } break; }
      case "ArrowRight": { const a = root.querySelector("#nav-next"); if (a) { a.click(); } break; }
      case "s": case "S": root.querySelector("#skip").click(); break;
      case "b": case "B": { const box = root.querySelector('input[name="broken_image"]'); box.checked = !box.checked; break; }
      case "z": case "Z": { const img = root.querySelector("#item-image"); if (img) { toggleZoom(img); } break; }
      default: return;
    }
  });

  // The scale (drawn pixels per image pixel) of the image fitted in its box (object-fit: contain).
  function fittedScale(img) {
    const box = img.getBoundingClientRect();
    return Math.min(box.width / img.naturalWidth, box.height / img.naturalHeight);
  }

  // Zoom shows the image at least at full resolution and at least twice its fitted size (a
  // 512 px image fitted to 608 px is drawn at 1216 px), centred on the point clicked (or the
  // middle) and scrolled into view; the pane scrolls, and the keys above pan it.
  function zoomIn(img, point) {
    if (!img.naturalWidth || !img.naturalHeight) { return; }
    const box = img.getBoundingClientRect();
    const fitted = fittedScale(img);
    const drawnWidth = img.naturalWidth * fitted;
    const drawnHeight = img.naturalHeight * fitted;
    const left = box.left + (box.width - drawnWidth) / 2;
    const top = box.top + (box.height - drawnHeight) / 2;
    const fx = point ? Math.min(1, Math.max(0, (point.x - left) / drawnWidth)) : 0.5;
    const fy = point ? Math.min(1, Math.max(0, (point.y - top) / drawnHeight)) : 0.5;
    const scale = Math.max(1, 2 * fitted);
    const pane = img.closest(".image-pane");
    img.width = Math.round(img.naturalWidth * scale);
    img.height = Math.round(img.naturalHeight * scale);
    img.classList.add("zoomed");
    pane.classList.add("zoomed");
    pane.scrollIntoView({ block: "nearest", inline: "nearest" });
    pane.scrollLeft = img.offsetLeft + fx * img.width - pane.clientWidth / 2;
    pane.scrollTop = img.offsetTop + fy * img.height - pane.clientHeight / 2;
  }

  function zoomOut(img) {
    img.classList.remove("zoomed");
    img.removeAttribute("width");
    img.removeAttribute("height");
    const pane = img.closest(".image-pane");
    pane.classList.remove("zoomed");
    pane.scrollLeft = 0;
    pane.scrollTop = 0;
  }

  function toggleZoom(img, point) {
    if (img.classList.contains("zoomed")) { zoomOut(img); } else { zoomIn(img, point); }
  }

  document.addEventListener("click", function (event) {
    if (event.target.id === "item-image") {
      toggleZoom(event.target, { x: event.clientX, y: event.clientY });
    }
  });

  // Keep the tab title in step with the swapped-in item (the page gives it in its language).
  document.addEventListener("htmx:afterSwap", function () {
    const root = survey();
    if (root && root.dataset.title) { document.title = root.dataset.title; }
  });
})();
