// Judge page: answer with keys 1-5 (or rate criteria with them) and measure the time from display to answer.
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

  // Rating tasks (PEM's criteria): 1-5 rate the active criterion and move on, arrows move, Enter sends.
  function rateWithKeys(event, criteria) {
    var groups = Array.prototype.slice.call(criteria.querySelectorAll("fieldset.criterion"));
    var active = criteria.querySelector("fieldset.criterion.active") || groups[0];
    var index = groups.indexOf(active);
    function activate(next) {
      active.classList.remove("active");
      groups[next].classList.add("active");
    }
    if (/^[1-5]$/.test(event.key)) {
      var input = active.querySelector('input[value="' + event.key + '"]');
      if (input) { input.checked = true; }
      if (index < groups.length - 1) { activate(index + 1); }
    } else if (event.key === "ArrowDown" && index < groups.length - 1) {
      activate(index + 1);
    } else if (event.key === "ArrowUp" && index > 0) {
      activate(index - 1);
    } else if (event.key === "Enter") {
      criteria.querySelector("button.send-ratings").click();
    } else {
      return;
    }
    event.preventDefault();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) { return; }
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "textarea" || tag === "select") { return; }
    var criteria = document.querySelector("#item .criteria");
    if (criteria) { rateWithKeys(event, criteria); return; }
    if (tag === "input") { return; }
    if (!/^[1-5]$/.test(event.key)) { return; }
    var button = document.querySelector('#item button.answer[data-key="' + event.key + '"]');
    if (button && !button.disabled) { event.preventDefault(); button.click(); }
  });
})();
