// Buttons marked data-print open the browser's print dialog. A static file, not an inline
// onclick, so the page works under the Content-Security-Policy (docs/deployment.md).
document.querySelectorAll("[data-print]").forEach((button) => {
  button.addEventListener("click", () => window.print());
});
