/* Follows a running tournament: polls its API resource every second, moves the progress bar, and
   reloads the page once it has ended so the final standings show. Backs off when the server fails. */
(function () {
  "use strict";
  var section = document.querySelector("[data-tournament]");
  if (!section || section.dataset.running !== "true") return;
  var bar = document.getElementById("tournament-progress");
  var fill = bar.querySelector(".progress-fill");
  var status = document.getElementById("tournament-status");
  var note = document.getElementById("progress-note");
  var failures = 0;

  function setField(name, value) {
    var el = section.querySelector('[data-field="' + name + '"]');
    if (el) el.textContent = String(value);
  }

  function render(p) {
    var pct = p.total ? (100 * p.done) / p.total : 100;
    fill.setAttribute("width", pct.toFixed(1));  // an SVG rect in a 100-wide viewBox
    bar.setAttribute("aria-valuenow", String(p.done));
    bar.setAttribute("aria-valuemax", String(p.total));
    ["done", "total", "running", "queued", "errors", "cancelled"].forEach(function (k) { setField(k, p[k]); });
  }

  function poll() {
    if (document.hidden) { window.setTimeout(poll, 1000); return; }
    fetch(section.dataset.api, { headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(function (t) {
        failures = 0;
        render(t.progress);
        status.textContent = t.status;
        status.className = "tag status-" + t.status;
        if (t.status !== "running") {
          if (note) note.textContent = "The tournament has ended; loading the final standings…";
          window.setTimeout(function () { window.location.reload(); }, 600);
          return;
        }
        window.setTimeout(poll, 1000);
      })
      .catch(function () {
        failures += 1;
        if (note) note.textContent = "Lost contact with the server; retrying…";
        window.setTimeout(poll, Math.min(15000, 1000 * Math.pow(2, failures)));
      });
  }

  window.setTimeout(poll, 1000);
})();
