/* Follows a topic live: a running match's board (only what every player sees), a tournament's page or a
   leaderboard's. Server-sent events from /live/<topic>; where they are not available (no EventSource,
   the server full or without Redis) it polls /live/<topic>/last instead. Pages are not rebuilt here:
   on "look again" the page's own HTML is fetched and the parts of <main> that changed are swapped in. */
(function () {
  "use strict";
  var el = document.querySelector("[data-live-topic]");
  if (!el) return;
  var kind = el.dataset.liveKind, POLL_MS = 2000;
  var seenSeq = null, refreshTimer = null, refreshing = false, source = null, pollTimer = null, failures = 0;
  // A page that follows a topic knows the topic's event counter from before it read the database: any
  // later event, the kept one the stream replays on connecting included, is news to it.
  if (kind === "page" && /^\d+$/.test(el.dataset.liveSeq || "")) seenSeq = parseInt(el.dataset.liveSeq, 10);

  /* ---- tournament and leaderboard pages: fetch the page again, swap what changed ------------------ */

  function refreshSoon() {
    if (refreshTimer !== null) return;
    // spread the spectators' fetches over a second or two; several events in that time cost one fetch
    refreshTimer = window.setTimeout(refresh, 400 + Math.random() * 1200);
  }

  function refresh() {
    refreshTimer = null;
    if (refreshing) { refreshSoon(); return; }
    refreshing = true;
    fetch(window.location.href, { headers: { Accept: "text/html" }, cache: "no-store", credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("main");
        var main = document.getElementById("main");
        if (!fresh || !main) return;
        var now = main.children, next = fresh.children;
        if (now.length !== next.length) {
          main.innerHTML = fresh.innerHTML;
        } else {
          for (var i = next.length - 1; i >= 0; i--) {  // only what changed: focus and selection elsewhere stay
            if (now[i].contains(document.activeElement) && document.activeElement !== document.body) continue;  // being typed in
            if (now[i].outerHTML !== next[i].outerHTML) now[i].replaceWith(document.importNode(next[i], true));
          }
        }
        if (!document.querySelector("[data-live-topic]")) stop();  // e.g. the tournament has ended
      })
      .catch(function () { /* the next event, or poll, tries again */ })
      .then(function () { refreshing = false; });
  }

  /* ---- a match: the public board, who is thinking, the clocks -------------------------------------- */

  var names = [], view = null, turn = -1, lastBoard = null, withheld = false;
  if (kind === "match") {
    try { names = JSON.parse(document.getElementById("live-names").textContent); } catch (e) { names = []; }
  }

  function say(text) {
    var status = document.getElementById("live-status");
    if (status && status.textContent !== text) status.textContent = text;
  }

  function showClocks(d) {
    var rows = document.querySelectorAll("#live-clocks tr[data-seat]");
    Array.prototype.forEach.call(rows, function (row) {
      var seat = Number(row.dataset.seat);
      var now = row.querySelector(".live-now"), used = row.querySelector(".live-used");
      var thinking = d.thinking.indexOf(seat) >= 0;
      now.textContent = d.forfeited[seat] ? "forfeited" : thinking ? "thinking…" : d.over ? "done" : "waiting";
      row.classList.toggle("thinking", thinking);
      used.textContent = d.time_used_ms[seat] !== undefined ? (d.time_used_ms[seat] / 1000).toFixed(2) + " s" : "–";
    });
  }

  function drawBoard(d) {
    var boards = window.ArenaBoards;
    var boardEl = document.getElementById("live-board"), sideEl = document.getElementById("live-table-state");
    if (boards && boardEl && sideEl) boards.draw(el.dataset.game, boardEl, sideEl, d.view, lastBoard, names);
    lastBoard = d.view;
    showClocks(d);
    say(d.over ? "The match is over; its result comes with the replay." :
      "Step " + d.turn + (d.thinking.length ? " · thinking: " + d.thinking.map(function (s) {
        return names[s] !== undefined ? names[s] : "seat " + s; }).join(", ") : ""));
  }

  function applyChanges(prev, change) {
    var next = Object.assign({}, prev);
    if (change.set) Object.assign(next, change.set);
    if (change.append) {
      Object.keys(change.append).forEach(function (k) { next[k] = (prev[k] || []).concat(change.append[k]); });
    }
    (change.unset || []).forEach(function (k) { delete next[k]; });
    return next;
  }

  function markRunning() {
    var tag = document.querySelector("h1 .tag");
    if (tag && tag.textContent === "queued") { tag.textContent = "running"; tag.className = "tag status-running"; }
  }

  function onMatchEvent(type, d) {
    if (type === "board" || type === "step" || type === "hidden") markRunning();
    if (type === "board") {
      view = d.view; turn = d.turn;
      drawBoard(d);
    } else if (type === "step") {
      if (view === null || d.turn !== turn + 1) { resync(); return; }  // missed one: take the kept board
      view = applyChanges(view, d.changes); turn = d.turn;
      drawBoard({ view: view, turn: d.turn, thinking: d.thinking, time_used_ms: d.time_used_ms,
                  forfeited: d.forfeited, over: d.over });
    } else if (type === "hidden") {
      withheld = true;
      say("The match is being played. Its board stays hidden while another match of the same deal is still to " +
          "be played, so that no bot can read the deal it is about to play.");
    } else if (type === "status") {
      onStatus(d.status);
    }
  }

  function onStatus(status) {
    if (status === el.dataset.status || status === "queued" || status === "running") {
      // a withheld board keeps its reason on the page: "being played" alone read as a board that never came
      if (status === "running" && kind === "match") { markRunning(); if (turn < 0 && !withheld) say("The match is being played…"); }
      return;
    }
    stop();  // sealed, finished, void, error, cancelled: the page as the server shows it now
    window.setTimeout(function () { window.location.reload(); }, 300);
  }

  /* ---- transport: server-sent events, else polling ------------------------------------------------- */

  function handle(type, d, kept) {
    if (kept && (kind === "page") && seenSeq === null) {  // no counter from the page: take it as seen, count later ones
      seenSeq = d.seq;
      return;
    }
    if (d && typeof d.seq === "number") {
      if (type !== "step" && seenSeq !== null && d.seq <= seenSeq) return;  // an old kept event
      seenSeq = Math.max(seenSeq || 0, d.seq);
    }
    if (kind === "match") onMatchEvent(type, d);
    else if (type === "status") onStatus(d.status);
    else if (kind === "reload") onStatus(d.status);
    else refreshSoon();
  }

  function listen(type) {
    source.addEventListener(type, function (e) {
      failures = 0;
      var d;
      try { d = JSON.parse(e.data); } catch (err) { return; }
      handle(type, d, e.lastEventId === "k");
    });
  }

  function resync() {
    fetch(el.dataset.liveLast, { cache: "no-store" })
      .then(function (r) { return r.status === 200 ? r.json() : null; })
      .then(function (last) { if (last) { seenSeq = null; handle(last.kind, last.data, false); } })
      .catch(function () {});
  }

  function poll() {
    pollTimer = null;
    fetch(el.dataset.liveLast, { cache: "no-store" })
      .then(function (r) { return r.status === 200 ? r.json() : null; })
      .then(function (last) {
        if (last && (seenSeq === null || last.data.seq > seenSeq)) handle(last.kind, last.data, seenSeq === null);
      })
      .catch(function () {})
      .then(function () { if (el.isConnected !== false && !stopped) pollTimer = window.setTimeout(poll, POLL_MS); });
  }

  var stopped = false;
  function stop() {
    stopped = true;
    if (source) source.close();
    if (pollTimer !== null) window.clearTimeout(pollTimer);
  }

  function startPolling() {
    if (source) { source.close(); source = null; }
    el.dataset.liveMode = "polling";
    if (pollTimer === null && !stopped) poll();
  }

  function connect() {
    if (stopped) return;
    if (!window.EventSource) { startPolling(); return; }
    source = new EventSource(el.dataset.liveStream);
    el.dataset.liveMode = "events";
    ["board", "step", "hidden", "status", "changed", "refitted"].forEach(listen);
    source.addEventListener("open", function () { failures = 0; });
    source.addEventListener("error", function () {
      failures += 1;  // the browser reconnects by itself; a server that keeps refusing (503) is polled instead
      if (source && (source.readyState === EventSource.CLOSED || failures >= 3)) startPolling();
    });
  }

  // The board as it is now at once; the stream a moment after the page has loaded, so that the page's
  // own loading (and whatever waits for its network to fall quiet) is over before a connection stays open.
  if (kind === "match") resync();
  function later() { window.setTimeout(connect, 1000); }
  if (document.readyState === "complete") later(); else window.addEventListener("load", later);
})();
