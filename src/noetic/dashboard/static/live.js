// Live updates for Noetic's dashboard: the one script. It listens to /live (server-sent events
// from the store's change cursor) and, when something changed, fetches this same URL and swaps
// the page's <main> in place, keeping the focus and the scroll; a burst of changes costs at most
// two fetches a second. Updates pause while the tab is hidden (the stream is closed) and while
// "Pause updates" is pressed; on return the stream reopens from the last cursor seen, so
// whatever changed meanwhile arrives as one update.
(function () {
  "use strict";
  var body = document.body;
  var status = document.getElementById("live-status");
  var toggle = document.getElementById("live-toggle");
  var cursor = body.getAttribute("data-cursor") || "";
  var source = null;
  var paused = false;
  var busy = false;
  var again = false;
  var GAP_MS = 500;

  function say(text) { if (status) { status.textContent = text; } }

  function open() {
    if (source || paused || document.hidden || !window.EventSource) { return; }
    source = new EventSource("/live?after=" + encodeURIComponent(cursor));
    source.addEventListener("change", function (e) {
      cursor = e.lastEventId || cursor;
      refresh();
    });
    source.onopen = function () { say(paused ? "Paused" : "Live"); };
    source.onerror = function () { say("Reconnecting…"); };
  }

  function close() {
    if (source) { source.close(); source = null; }
  }

  function refresh() {
    if (paused) { return; }
    if (busy) { again = true; return; }
    busy = true;
    fetch(window.location.href, { headers: { "X-Noetic-Live": "1" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html !== null) { swap(html); }
      })
      .catch(function () { say("Update failed; retrying"); })
      .then(function () {
        // changes that came meanwhile: one more fetch, half a second on, however many there were
        setTimeout(function () {
          busy = false;
          if (again) { again = false; refresh(); }
        }, again ? GAP_MS : 0);
      });
  }

  function swap(html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var fresh = doc.getElementById("main");
    var main = document.getElementById("main");
    if (!fresh || !main) { return; }
    var active = document.activeElement;
    var focusId = active && active.id && main.contains(active) ? active.id : null;
    var x = window.scrollX, y = window.scrollY;
    main.replaceChildren.apply(main, Array.prototype.slice.call(fresh.childNodes));
    var next = doc.body.getAttribute("data-cursor");
    if (next) { cursor = next; body.setAttribute("data-cursor", next); }
    if (focusId) {
      var again_ = document.getElementById(focusId);
      if (again_) { again_.focus({ preventScroll: true }); }
    }
    window.scrollTo(x, y);
    say("Updated " + new Date().toLocaleTimeString());
  }

  if (toggle) {
    toggle.addEventListener("click", function () {
      paused = !paused;
      toggle.setAttribute("aria-pressed", paused ? "true" : "false");
      toggle.textContent = paused ? "Resume updates" : "Pause updates";
      if (paused) { close(); say("Paused"); return; }
      say("Live");
      open();
    });
  }

  document.addEventListener("visibilitychange", function () {
    if (document.hidden) { close(); } else { open(); }
  });
  open();
})();
