// The language switcher returns to the page shown now: htmx may have swapped in a later item
// since the page loaded, so the form's "next" is refreshed from the address bar on submit.
document.addEventListener("submit", function (event) {
  const form = event.target;
  if (form.classList && form.classList.contains("language-switcher")) {
    form.querySelector('input[name="next"]').value = location.pathname + location.search;
  }
});
