// Judge page: answer with keys 1-5 and measure the time from display to answer. It knows widgets, not task
// types: a task type's template marks what it shows with data attributes (data-rating-keys, data-key-choices,
// data-span-tagger), and the keys follow what the page has.
(function () {
  "use strict";
  var shownAt = performance.now();

  function restartClock() { shownAt = performance.now(); }

  // The only swaps on this page bring the next pair (or the training feedback): its clock
  // starts when it has settled, and the feedback's Continue takes the focus (Enter goes on).
  function focusContinue() {
    var next = document.querySelector("#item #continue");
    if (next) { next.focus(); }
  }
  document.addEventListener("htmx:afterSettle", function () { restartClock(); focusContinue(); });
  document.addEventListener("DOMContentLoaded", focusContinue);

  // A refused answer comes back as a 400 that carries the pair and says what is missing:
  // show it rather than nothing (htmx swaps no error response by default).
  document.addEventListener("htmx:beforeSwap", function (event) {
    var xhr = event.detail.xhr;
    if (xhr.status === 400 && /id="item"/.test(xhr.responseText)) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  // Runs before the form is serialised (by htmx or by a plain submit).
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button.answer");
    if (!button) { return; }
    var field = button.form.querySelector("input[name=response_ms]");
    if (field) { field.value = String(Math.round(performance.now() - shownAt)); }
  }, true);

  // Ratings ([data-rating-keys], groups [data-rating-group]): 1-5 rate the active group and move on,
  // arrows move, Enter sends ([data-send]).
  function rateWithKeys(event, ratings) {
    var groups = Array.prototype.slice.call(ratings.querySelectorAll("[data-rating-group]"));
    var active = ratings.querySelector("[data-rating-group].active") || groups[0];
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
      ratings.querySelector("[data-send]").click();
    } else {
      return;
    }
    event.preventDefault();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) { return; }
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "textarea" || tag === "select") { return; }
    var ratings = document.querySelector("#item [data-rating-keys]");
    if (ratings) { rateWithKeys(event, ratings); return; }
    if (!/^[1-5]$/.test(event.key)) { return; }
    // Choices kept until another control submits ([data-key-choices]): 1-5 choose one.
    var choice = document.querySelector('#item [data-key-choices] input[data-key="' + event.key + '"]');
    if (choice) { event.preventDefault(); choice.checked = true; return; }
    if (tag === "input") { return; }
    var button = document.querySelector('#item button.answer[data-key="' + event.key + '"]');
    if (button && !button.disabled) { event.preventDefault(); button.click(); }
  });
})();

// Span tagging: each word is a toggle button; the pressed ones are posted as hidden inputs.
// A pointer press toggles the word under it and dragging sets the words it crosses to the
// same state; keyboard: arrows move, Space toggles (a click with detail 0), Enter submits.
(function () {
  "use strict";
  var drag = null; // {state: "true"|"false"} while a pointer is down on a word

  function tagger(node) { return node && node.closest("[data-span-tagger]"); }
  function words(root) { return Array.prototype.slice.call(root.querySelectorAll("button.word")); }

  function sync(root) {
    var box = root.querySelector(".tag-inputs");
    box.textContent = "";
    words(root).forEach(function (word) {
      if (word.getAttribute("aria-pressed") !== "true") { return; }
      var input = document.createElement("input");
      input.type = "hidden";
      input.name = word.dataset.field;
      input.value = word.dataset.index;
      box.appendChild(input);
    });
    root.querySelector("input[name=empty_confirmed]").value = "";
    root.querySelector(".span-confirm").textContent = "";
  }

  function setPressed(word, state) {
    if (word.getAttribute("aria-pressed") === state) { return; }
    word.setAttribute("aria-pressed", state);
    sync(tagger(word));
  }

  function toggle(word) { setPressed(word, word.getAttribute("aria-pressed") === "true" ? "false" : "true"); }

  function enhance() {
    document.querySelectorAll("[data-span-words][hidden]").forEach(function (row) { row.hidden = false; });
  }
  document.addEventListener("DOMContentLoaded", enhance);
  document.addEventListener("htmx:afterSettle", enhance);
  enhance();

  document.addEventListener("pointerdown", function (event) {
    var word = event.target.closest && event.target.closest("button.word");
    if (!word || event.button !== 0) { return; }
    toggle(word);
    drag = {state: word.getAttribute("aria-pressed")};
  });
  document.addEventListener("pointermove", function (event) {
    if (!drag) { return; }
    var under = document.elementFromPoint(event.clientX, event.clientY);
    var word = under && under.closest("button.word");
    if (word) { setPressed(word, drag.state); }
  });
  ["pointerup", "pointercancel"].forEach(function (name) {
    document.addEventListener(name, function () { drag = null; });
  });

  document.addEventListener("click", function (event) {
    var word = event.target.closest("button.word");
    // Pointer clicks were handled on pointerdown; detail 0 is a keyboard activation (Space).
    if (word && event.detail === 0) { toggle(word); }
    var sent = event.target.closest("button.span-submit, button.span-nothing");
    var missing = sent && tagger(sent).querySelector("[data-choice-missing]");
    if (missing && !tagger(sent).querySelector("[data-key-choices] input:checked")) {
      // A choice beside the tagging ([data-key-choices]) comes first; say so on the page, keeping the tags.
      event.preventDefault();
      event.stopImmediatePropagation();
      missing.textContent = missing.dataset.text;
      return;
    }
    if (missing) { missing.textContent = ""; }
    var submit = event.target.closest("button.span-submit");
    if (!submit) { return; }
    var root = tagger(submit);
    var confirmed = root.querySelector("input[name=empty_confirmed]");
    if (root.querySelector(".tag-inputs input") || confirmed.value) { return; }
    // Nothing tagged and "Nothing to tag" not chosen: ask once before submitting an empty tagging.
    event.preventDefault();
    event.stopImmediatePropagation();
    confirmed.value = "1";
    var message = root.querySelector(".span-confirm");
    message.textContent = message.dataset.text;
  }, true);

  document.addEventListener("keydown", function (event) {
    var word = event.target.closest && event.target.closest("button.word");
    if (!word || event.ctrlKey || event.metaKey || event.altKey) { return; }
    var all = words(tagger(word));
    var at = all.indexOf(word);
    var moves = {ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1};
    if (event.key in moves) {
      event.preventDefault();
      var next = all[Math.min(all.length - 1, Math.max(0, at + moves[event.key]))];
      next.focus();
    } else if (event.key === "Enter") {
      event.preventDefault();
      tagger(word).querySelector("button.span-submit").click();
    }
  });
  // Ready: every handler above is in place (after htmx's own, added first) and the item on show has settled.
  // Browser tests wait for it before they type or click (tests/browser.py `ready`); a swap clears it until done.
  function markReady() { document.body.setAttribute("data-judge-ready", ""); }
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.shouldSwap) { document.body.removeAttribute("data-judge-ready"); }
  });
  document.addEventListener("htmx:afterSettle", markReady);
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", markReady); } else { markReady(); }
})();

// Key hints on touch screens: parasol.css hides them where the browser reports a touch screen (no hover, or a
// coarse pointer); some report a mouse-like pointer instead (a stylus, a desktop site on a phone), so the first
// touch hides them too (html.touch), and the judge's next pages remember it for the session.
(function () {
  var root = document.documentElement;
  try { if (sessionStorage.getItem("parasol-touch")) { root.classList.add("touch"); } } catch (e) { /* storage off */ }
  document.addEventListener("pointerdown", function (event) {
    if (event.pointerType !== "touch") { return; }
    root.classList.add("touch");
    try { sessionStorage.setItem("parasol-touch", "1"); } catch (e) { /* storage off */ }
  }, {capture: true, passive: true});
})();
