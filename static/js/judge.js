// Judge page: answer with keys 1-5 and measure the time from display to answer.
(function () {
  "use strict";
  var shownAt = performance.now();

  function restartClock() { shownAt = performance.now(); }

  // The only swaps on this page bring the next pair: its clock starts when it has settled.
  document.addEventListener("htmx:afterSettle", restartClock);

  // Runs before the form is serialised (by htmx or by a plain submit).
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button.answer");
    if (!button) { return; }
    var field = button.form.querySelector("input[name=response_ms]");
    if (field) { field.value = String(Math.round(performance.now() - shownAt)); }
  }, true);

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) { return; }
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select") { return; }
    if (!/^[1-5]$/.test(event.key)) { return; }
    var button = document.querySelector('#item button.answer[data-key="' + event.key + '"]');
    if (button && !button.disabled) { event.preventDefault(); button.click(); }
  });
})();
