/* The replay viewer: rebuilds the public view of every step from the embedded first view plus
   per-step changes, steps through them (buttons, slider, play/pause, arrow keys), lists each step's
   decisions, and recomputes every commitment sha256(salt + canonical_json([turn, seat, action])). */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var boards = window.ArenaBoards, esc = boards.escape;
  var steps = data.steps, total = steps.length;
  var names = data.players.map(function (p) { return p.name || "seat " + p.seat; });
  var frames = buildFrames(data.frames);
  var root = document.getElementById("replay");
  var boardEl = document.getElementById("board"), sideEl = document.getElementById("table-state");
  var decisionsEl = document.getElementById("decisions"), slider = document.getElementById("replay-slider");
  var label = document.getElementById("step-label"), playButton = document.getElementById("play-button");
  var speed = document.getElementById("replay-speed"), summary = document.getElementById("commit-summary");
  var current = 0, timer = null, checks = {};

  function buildFrames(f) {
    var out = [f.initial];
    f.changes.forEach(function (change) {
      var prev = out[out.length - 1], next = Object.assign({}, prev);
      if (change.set) Object.assign(next, change.set);
      if (change.append) {
        Object.keys(change.append).forEach(function (k) { next[k] = (prev[k] || []).concat(change.append[k]); });
      }
      (change.unset || []).forEach(function (k) { delete next[k]; });
      out.push(next);
    });
    return out;
  }

  /* Canonical JSON as Python's json.dumps(value, sort_keys=True, separators=(",", ":"),
     ensure_ascii=False): keys sorted by code point, no spaces, non-ASCII kept as is. (Whole numbers
     only: the games' actions hold no floats, which the two languages would print differently.) */
  function byCodePoint(a, b) {
    var i = 0, j = 0;
    while (i < a.length && j < b.length) {
      var x = a.codePointAt(i), y = b.codePointAt(j);
      if (x !== y) return x - y;
      i += x > 0xffff ? 2 : 1;
      j += y > 0xffff ? 2 : 1;
    }
    return (a.length - i) - (b.length - j);
  }
  function canonical(value) {
    if (value === null || typeof value !== "object") return JSON.stringify(value);
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    return "{" + Object.keys(value).sort(byCodePoint).map(function (k) {
      return JSON.stringify(k) + ":" + canonical(value[k]);
    }).join(",") + "}";
  }
  window.arenaCanonicalJson = canonical;

  function hex(buffer) {
    return Array.prototype.map.call(new Uint8Array(buffer), function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }
  function digest(bytes) {
    if (window.crypto && window.crypto.subtle) {
      return window.crypto.subtle.digest("SHA-256", bytes).then(hex);
    }
    return Promise.resolve(window.arenaSha256(bytes));  // plain-HTTP pages have no crypto.subtle
  }

  function verifyCommitments() {
    var encoder = new TextEncoder(), jobs = [];
    steps.forEach(function (step, k) {
      step.decisions.forEach(function (d, i) {
        var payload = data.salt + canonical([step.turn, d.seat, d.action]);
        jobs.push(digest(encoder.encode(payload)).then(function (h) { checks[k + ":" + i] = h === d.commitment; }));
      });
    });
    return Promise.all(jobs).then(function () {
      var ok = 0, bad = 0;
      Object.keys(checks).forEach(function (k) { if (checks[k]) ok++; else bad++; });
      summary.dataset.checked = String(ok + bad);
      summary.dataset.failed = String(bad);
      summary.classList.add(bad ? "bad" : "good");
      summary.textContent = bad
        ? "✗ " + bad + " of " + (ok + bad) + " commitments do not match their actions."
        : "✓ All " + ok + " commitments match their actions" +
          (window.crypto && window.crypto.subtle ? "." : " (checked with the page's own SHA-256).");
      renderDecisions(current);
    }, function (err) {
      summary.textContent = "The commitments could not be checked here: " + err;
    });
  }

  function mark(k, i) {
    var key = k + ":" + i;
    if (!(key in checks)) return '<span class="check pending" title="checking">…</span>';
    return checks[key]
      ? '<span class="check ok" title="commitment verified">✓ commitment</span>'
      : '<span class="check bad" title="commitment does not match">✗ commitment</span>';
  }

  function renderDecisions(k) {
    if (k === 0) {
      decisionsEl.innerHTML = '<p class="muted">Start of the match: no decision yet.</p>';
      return;
    }
    var step = steps[k - 1];
    var items = step.decisions.map(function (d, i) {
      var notes = [];
      if (d.fault) notes.push('<span class="tag warn">fault: ' + esc(d.fault) + "</span>");
      if (d.forfeited) notes.push('<span class="tag warn">forfeited: seeded default action</span>');
      else if (d.default) notes.push('<span class="tag">seeded default action</span>');
      return '<li class="decision"><div class="decision-head"><strong>' + esc(names[d.seat] || "seat " + d.seat) +
        "</strong> <code>" + esc(d.decision) + '</code> <span class="muted">' +
        (d.latency_ms === null ? "not asked" : d.latency_ms.toFixed(1) + " ms") + "</span> " + mark(k - 1, i) +
        '</div><div class="decision-action">' + boards.describe(data.game, d, names) + "</div>" +
        (notes.length ? '<div class="small">' + notes.join(" ") + "</div>" : "") +
        (d.hand ? '<div class="muted small">hand before: ' + esc(d.hand.join(" ")) + "</div>" : "") + "</li>";
    });
    decisionsEl.innerHTML = '<ol class="decision-list" aria-label="Decisions of step ' + k + '">' + items.join("") + "</ol>";
  }

  /* The game's own turn of step k (the turn its decisions were made in): the label and the side panel
     both print this, never the referee's step counter nor the next turn of the view after the step. */
  function turnText(k) {
    var t = k > 0 ? steps[k - 1].game_turn : null;
    return t ? t.label + " " + t.number : "";
  }

  function show(k) {
    current = Math.max(0, Math.min(total, k));
    slider.value = String(current);
    var turn = turnText(current);
    label.textContent = current === 0 ? "Start (step 0 of " + total + ")"
      : "Step " + current + " of " + total + (turn ? " · " + turn : "") + (current === total ? " · final position" : "");
    slider.setAttribute("aria-valuetext", label.textContent);
    boards.draw(data.game, boardEl, sideEl, frames[current], current > 0 ? frames[current - 1] : null, names,
                current > 0 ? steps[current - 1] : null);
    renderDecisions(current);
    root.dataset.step = String(current);
    if (window.history && window.history.replaceState) window.history.replaceState(null, "", "#step=" + current);
  }

  function stop() {
    if (timer !== null) window.clearInterval(timer);
    timer = null;
    playButton.textContent = "Play";
    playButton.setAttribute("aria-pressed", "false");
  }
  function play() {
    if (current >= total) show(0);
    playButton.textContent = "Pause";
    playButton.setAttribute("aria-pressed", "true");
    timer = window.setInterval(function () {
      if (current >= total) { stop(); return; }
      show(current + 1);
    }, Number(speed.value) || 800);
  }

  root.querySelector(".replay-controls").addEventListener("click", function (event) {
    var button = event.target.closest("button[data-action]");
    if (!button) return;
    var action = button.dataset.action;
    if (action === "play") { if (timer === null) play(); else stop(); return; }
    stop();
    show({ first: 0, prev: current - 1, next: current + 1, last: total }[action]);
  });
  slider.addEventListener("input", function () { stop(); show(Number(slider.value)); });
  speed.addEventListener("change", function () { if (timer !== null) { stop(); play(); } });
  /* Arrow keys step the viewer when nothing else on the page wants them: focus on the page itself, or on
     the viewer's own buttons. The slider and the speed menu keep their native keys; links, fields and
     other widgets elsewhere on the page keep theirs; keys with a modifier are the browser's. */
  function viewerTakesKeys(target) {
    if (!target || target === document.body || target === document.documentElement) return true;
    if (root.contains(target)) return target !== slider && !/^(SELECT|INPUT|TEXTAREA)$/.test(target.tagName);
    return target.tabIndex < 0 && !target.isContentEditable;  // not a tab stop: the page, <main>, plain text
  }
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey || event.defaultPrevented) return;
    if (!viewerTakesKeys(event.target)) return;
    var moves = { ArrowRight: current + 1, ArrowLeft: current - 1, Home: 0, End: total };
    if (!(event.key in moves)) return;
    if ((event.key === "Home" || event.key === "End") && event.target !== root && !root.contains(event.target)) return;
    stop();
    show(moves[event.key]);
    event.preventDefault();
  });

  var fromHash = /^#step=(\d+)$/.exec(window.location.hash);
  show(fromHash ? Number(fromHash[1]) : 0);
  verifyCommitments();
})();
