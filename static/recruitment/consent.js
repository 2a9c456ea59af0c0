// One enrolment per click: the first submit disables the button (the database refuses a
// second enrolment anyway; this only spares the person a confusing second page).
(function () {
  const form = document.getElementById("consent-form");
  if (!form) { return; }
  form.addEventListener("submit", function () {
    const button = form.querySelector('button[type="submit"]');
    if (button) { setTimeout(function () { button.disabled = true; }, 0); }
  });
})();
