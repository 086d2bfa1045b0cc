/* Drawing one public view of a match, and putting a recorded action into words.
   window.ArenaBoards.draw(game, boardEl, sideEl, view, previousView, names, step)
   window.ArenaBoards.describe(game, decision, names) -> HTML (every recorded value escaped)
   ``step`` is the replay step that led to ``view`` (replay_annotations.py: game_turn, reveals, path). */
(function () {
  "use strict";

  function esc(value) {
    return String(value).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function key(square) { return square[0] + "," + square[1]; }
  function sq(square) { return "(" + square[0] + ", " + square[1] + ")"; }
  function nameOf(names, seat) { return names[seat] !== undefined ? names[seat] : "seat " + seat; }

  /* ---- Piranha Pedro --------------------------------------------------------------------------- */

  var CELL = 30;
  var TERRAIN = { ".": "water", "S": "sand", "P": "palm", "F": "marked" };

  function piranhaShape(x, y) {
    return '<g class="piranha" transform="translate(' + x + "," + y + ')"><title>piranha</title>' +
      '<ellipse cx="-2" cy="0" rx="8" ry="5.5"/><path d="M5 0 L11 -5 L11 5 Z"/>' +
      '<circle cx="-6" cy="-1.5" r="1.3" class="eye"/></g>';
  }

  function palmShape(x, y) {
    return '<g transform="translate(' + x + "," + y + ')"><title>palm</title>' +
      '<path class="palm-trunk" d="M0 11 Q2 3 0 -4"/>' +
      '<path class="palm-leaf" d="M0 -4 Q-7 -10 -12 -4 Q-6 -6 0 -4 Z M0 -4 Q7 -10 12 -4 Q6 -6 0 -4 Z ' +
      'M0 -4 Q-3 -12 -8 -12 Q-2 -9 0 -4 Z M0 -4 Q3 -12 8 -12 Q2 -9 0 -4 Z"/></g>';
  }

  function center(square) { return (square[1] * CELL + 15) + "," + (square[0] * CELL + 15); }

  function drawPiranhaBoard(view, prev, korean, step) {
    var b = view.board, rows = b.rows, H = b.height, W = b.width;
    var fish = {}, stones = {}, piranhas = {};
    (b.fish_squares || []).forEach(function (s) { fish[key(s)] = true; });
    view.board_stones.forEach(function (s) { stones[key(s)] = true; });
    view.piranhas.forEach(function (s) { piranhas[key(s)] = true; });
    var newStones = {};
    if (prev) {
      var before = {};
      prev.board_stones.forEach(function (s) { before[key(s)] = true; });
      view.board_stones.forEach(function (s) { if (!before[key(s)]) newStones[key(s)] = true; });
    }
    var label = "River " + W + " by " + H + ". Pedro at row " + view.pedro[0] + ", column " + view.pedro[1] + "; " +
      view.piranhas.length + " piranhas; " + view.board_stones.length + (korean ? " logs" : " stones") + " on the board.";
    var out = ['<svg class="river" viewBox="-20 -20 ' + (W * CELL + 22) + " " + (H * CELL + 22) +
      '" role="img" aria-label="' + esc(label) + '">'];
    for (var c = 0; c < W; c++) {
      out.push('<text class="axis" x="' + (c * CELL + CELL / 2) + '" y="-6" text-anchor="middle">' + c + "</text>");
    }
    for (var r = 0; r < H; r++) {
      out.push('<text class="axis" x="-6" y="' + (r * CELL + CELL / 2 + 4) + '" text-anchor="end">' + r + "</text>");
      for (c = 0; c < W; c++) {
        var t = TERRAIN[rows[r][c]] || "water";
        var x = c * CELL, y = r * CELL, k = r + "," + c;
        out.push('<rect class="cell ' + t + '" x="' + x + '" y="' + y + '" width="' + CELL + '" height="' + CELL + '"/>');
        if (t === "marked") out.push('<circle class="marked-ring" cx="' + (x + 15) + '" cy="' + (y + 15) + '" r="11"/>');
        if (fish[k]) out.push('<rect class="fish-square" x="' + (x + 2) + '" y="' + (y + 2) + '" width="26" height="26" rx="4"><title>fish square</title></rect>');
        if (t === "palm") out.push(palmShape(x + 15, y + 15));
        if (stones[k]) {
          var cls = (korean ? "log" : "stone") + (newStones[k] ? " new" : "");
          out.push(korean
            ? '<rect class="' + cls + '" x="' + (x + 4) + '" y="' + (y + 10) + '" width="22" height="10" rx="4"><title>log</title></rect>'
            : '<circle class="' + cls + '" cx="' + (x + 15) + '" cy="' + (y + 15) + '" r="9"><title>stone</title></circle>');
        }
        if (piranhas[k]) out.push(piranhaShape(x + 16, y + 15));
      }
    }
    var path = step && step.path ? step.path : [];
    if (path.length > 1) {  // square by square, as Pedro walked: never a diagonal shortcut
      out.push('<polyline class="trail" points="' + path.map(center).join(" ") + '"/>');
      path.slice(1, -1).forEach(function (s) {
        out.push('<circle class="trail-dot" cx="' + (s[1] * CELL + 15) + '" cy="' + (s[0] * CELL + 15) + '" r="2.5"/>');
      });
    }
    var px = view.pedro[1] * CELL + 15, py = view.pedro[0] * CELL + 15;
    out.push('<g class="pedro"><title>Pedro</title><circle cx="' + px + '" cy="' + py + '" r="11"/>' +
      '<text x="' + px + '" y="' + (py + 4.5) + '" text-anchor="middle">P</text></g>');
    if (view.fall && view.fall.at) {
      var fx = view.fall.at[1] * CELL + 15, fy = view.fall.at[0] * CELL + 15;
      out.push('<g class="fall"><title>Pedro fell here (' + esc(view.fall.cause) + ')</title>' +
        '<circle cx="' + fx + '" cy="' + fy + '" r="14"/></g>');
    }
    out.push("</svg>");
    out.push('<p class="board-legend small muted">P: Pedro (dashed orange line: his path in this step) · red fish: piranha · ' +
      (korean ? "brown bar: log" : "grey disc: stone") + " · sand and palm: the island · dotted ring: marked piranha square" +
      (korean ? " · dashed red square: fish square" : "") + " · red ring: where Pedro fell</p>");
    return out.join("");
  }

  /* A seat's Played cell: cards revealed since everyone last took their 12 back (this step's in bold),
     then this step's committed cards that were never revealed because Pedro fell first. */
  function playedCell(view, seat, step) {
    var fresh = 0, hidden = [];
    if (step && step.reveals) step.reveals.forEach(function (r) { if (r[0] === seat) fresh++; });
    if (step) {
      step.decisions.forEach(function (d) {
        if (d.seat !== seat || !d.cards) return;
        d.cards.forEach(function (c) { if (!c.revealed) hidden.push(c.card); });
      });
    }
    var played = view.played[seat] || [];
    var cells = played.map(function (card, i) {
      return i >= played.length - fresh ? "<strong>" + esc(card) + "</strong>" : esc(card);
    });
    hidden.forEach(function (card) {
      cells.push('<span class="card-unrevealed" title="committed, never revealed: Pedro fell first">' + esc(card) +
        '</span> <span class="small muted">(not revealed)</span>');
    });
    return cells.join(" ");
  }

  function piranhaSide(view, names, korean, step) {
    var advanced = view.scores !== undefined;
    var acting = {};
    (view.to_act || []).forEach(function (s) { acting[s] = true; });
    var out = ['<div class="table-wrap"><table class="compact state"><thead><tr><th scope="col">Seat</th><th scope="col">' +
      (korean ? "Logs" : "Stones") + '</th><th scope="col">Piranhas</th><th scope="col">Hand</th>' +
      '<th scope="col">Played</th>' + (advanced ? '<th scope="col">Points</th>' : "") + "</tr></thead><tbody>"];
    for (var s = 0; s < view.players; s++) {
      out.push("<tr" + (acting[s] ? ' class="acting"' : "") + '><th scope="row">' + esc(nameOf(names, s)) +
        (view.sombrero === s ? ' <span class="tag" title="holds the sombrero">sombrero</span>' : "") +
        (acting[s] ? ' <span class="visually-hidden">(to act)</span>' : "") + "</th><td>" + view.stones[s] +
        "</td><td>" + view.piranhas_taken[s] + " / " + view.loss_threshold + "</td><td>" + view.hand_sizes[s] +
        "</td><td>" + playedCell(view, s, step) + "</td>" +
        (advanced ? "<td>" + view.scores[s] + "</td>" : "") + "</tr>");
    }
    out.push("</tbody></table></div>");
    var turn = step && step.game_turn ? step.game_turn.number : view.move_round;
    var facts = ["move round " + turn + (view.move_round !== turn && view.phase !== "over" ? " (next: move round " +
      view.move_round + ")" : ""), "phase: " + String(view.phase).replace(/_/g, " "),
      "supply: " + (view.supply === null ? "unlimited" : view.supply)];
    if (advanced) facts.push("barrels left: " + view.barrels_left);
    out.push('<p class="muted small">' + esc(facts.join(" · ")) + "</p>");
    if (step && step.hands_back) {
      out.push('<p class="note">All 12 cards played without a fall: everyone takes their cards back.</p>');
    }
    if (view.fall) {
      out.push('<p class="note warn">Pedro fell (' + esc(view.fall.cause.replace(/_/g, " ")) + ") on " +
        esc(nameOf(names, view.fall.seat)) + "'s card " + esc(view.fall.card) + ".</p>");
    }
    var history = view.history || [];
    if (history.length) {
      out.push('<p class="small"><strong>Last cards:</strong> ' + history.slice(-6).map(function (h) {
        return esc(nameOf(names, h[1])) + " " + esc(h[2]) + (h[3] ? " (fall: " + esc(h[3]) + ")" : "");
      }).join(", ") + "</p>");
    }
    out.push(resultLine(view, names));
    return out.join("");
  }

  function describePiranha(d) {
    var action = d.action;
    if (d.decision === "choose_card") {
      var cards = d.cards || (Array.isArray(action) ? action : [action]).map(function (c) { return { card: c, revealed: true }; });
      var hidden = cards.filter(function (c) { return !c.revealed; }).length;
      return (hidden === cards.length ? "commits " : "plays ") + cards.map(function (c) {
        return c.revealed ? esc(c.card) : '<span class="card-unrevealed">' + esc(c.card) +
          '</span> <span class="muted">(never revealed: Pedro fell first, it goes under the board)</span>';
      }).join(" then ");
    }
    if (d.decision === "take_piranha") return esc("takes the piranha at " + sq(action));
    if (d.decision === "move_piranha") {
      return esc(action === null ? "moves no piranha" : "moves a piranha " + sq(action[0]) + " → " + sq(action[1]));
    }
    return esc(JSON.stringify(action));
  }

  /* ---- Pajarracos ------------------------------------------------------------------------------ */

  var FRUITS = ["cherries", "apples", "oranges", "bananas", "grapes"];

  function tree(t) {
    var cards = t.cards.map(function (c) {
      var juicy = c.slice(-1) === "*";
      return '<li class="card-chip ' + esc(t.fruit) + (juicy ? " juicy" : "") + '" title="' + esc(c) + '">' +
        (juicy ? "★" : "") + "</li>";
    }).join("");
    var badges = (t.crow ? '<span class="badge crow">' + (t.crow === "flock" ? "flock" : "crow") + "</span>" : "") +
      (t.scarecrow ? '<span class="badge scarecrow">scarecrow</span>' : "");
    return '<div class="tree ' + esc(t.fruit) + '"><div class="tree-head"><span class="fruit-name">' + esc(t.fruit) +
      "</span> <span class=\"size\">" + t.size + "</span></div><ul class=\"stack\" aria-label=\"" + t.size + " " +
      esc(t.fruit) + ' cards">' + cards + '</ul><div class="badges">' + badges + "</div></div>";
  }

  function drawOrchards(view, names) {
    var out = ['<div class="orchards">'];
    view.orchards.forEach(function (trees, seat) {
      var active = view.active === seat && view.phase !== "over";
      out.push('<section class="orchard' + (active ? " active" : "") + '" aria-label="' +
        esc(nameOf(names, seat)) + "'s orchard\"><h4>" + esc(nameOf(names, seat)) +
        (active ? ' <span class="tag">to act</span>' : "") + '</h4><p class="muted small">score ' + view.scores[seat] +
        " · hand " + view.hand_sizes[seat] + "</p>" +
        (trees.length ? '<div class="trees">' + trees.map(tree).join("") + "</div>" :
          '<p class="muted small">' + (view.phase === "over" ? "no trees" : "no trees yet") + "</p>") +
        "</section>");
    });
    out.push("</div>");
    out.push(PAJARRACOS_LEGEND);
    return out.join("");
  }

  var PAJARRACOS_LEGEND = '<div class="board-legend small muted"><strong>Legend:</strong> ' +
    '<ul class="legend-list">' +
    FRUITS.map(function (f) { return '<li><span class="card-chip legend-chip ' + f + '"></span> ' + f + "</li>"; }).join("") +
    '<li><span class="card-chip legend-chip cherries juicy">★</span> juicy fruit, written apples* in card lists ' +
    "(pulls a crow onto its tree)</li>" +
    "<li>a bar: one fruit card on the tree; the number: the tree's size</li>" +
    '<li><span class="badge crow">crow</span> eats one card at the end of its owner\'s turn</li>' +
    '<li><span class="badge crow">flock</span> eats the whole tree at the end of its owner\'s turn</li>' +
    '<li><span class="badge scarecrow">scarecrow</span> protects the tree to the end</li>' +
    '<li><span class="legend-box"></span> framed orchard: the player to act</li></ul></div>';

  function pajarracosSide(view, names, step) {
    var counts = {};
    view.discard.forEach(function (c) { counts[c] = (counts[c] || 0) + 1; });
    var pile = Object.keys(counts).map(function (c) { return esc(c) + " ×" + counts[c]; }).join(", ");
    var turn = step && step.game_turn ? step.game_turn.number : view.turn;
    var facts = ["turn " + turn + (view.turn !== turn && view.phase !== "over" ? " (next: turn " + view.turn + ")" : ""),
      "phase: " + String(view.phase).replace(/_/g, " "), "reserve: " + view.reserve_size + " cards"];
    if (view.extra_action_pending) facts.push("extra action pending");
    return '<p class="small">' + esc(facts.join(" · ")) + "</p>" +
      '<p class="small"><strong>Discard pile (' + view.discard.length + "):</strong> " + (pile || "empty") + "</p>" +
      resultLine(view, names);
  }

  function treeName(t, names) { return nameOf(names, t.orchard) + "'s " + t.fruit; }

  function describePajarracos(decision, action, names) {
    return esc(pajarracosWords(decision, action, names));
  }

  function pajarracosWords(decision, action, names) {
    if (!action || typeof action !== "object") return JSON.stringify(action);
    switch (action.type) {
      case "fruit":
        return "plays " + action.cards.join(", ") + " into " + nameOf(names, action.orchard) + "'s orchard" +
          (action.crow_from ? " (pulls the crow from " + treeName(action.crow_from, names) + ")" : "");
      case "crow": return "puts a " + action.card + " on " + nameOf(names, action.orchard) + "'s " + action.fruit;
      case "scarecrow":
        return "scarecrow on own " + action.fruit + ": " + action.mode.replace(/_/g, " ") +
          (action.to ? " to " + treeName(action.to, names) : "");
      case "discard": return "discards " + action.cards.join(", ");
      case "done": return "done";
      default: return JSON.stringify(action);
    }
  }

  /* ---- shared ---------------------------------------------------------------------------------- */

  function resultLine(view, names) {
    if (!view.result) return "";
    var order = view.result.ranks.map(function (rank, seat) { return [rank, seat]; })
      .sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    return '<p class="result"><strong>Result:</strong> ' + order.map(function (p) {
      return p[0] + ". " + esc(nameOf(names, p[1])) + " (" + view.result.scores[p[1]] + ")";
    }).join(", ") + (view.stalled ? " — ended by the move-round cap" : "") + "</p>";
  }

  function draw(game, boardEl, sideEl, view, prev, names, step) {
    if (game.indexOf("piranha-pedro") === 0) {
      var korean = game.indexOf("-ko") > 0;
      boardEl.innerHTML = drawPiranhaBoard(view, prev, korean, step);
      sideEl.innerHTML = piranhaSide(view, names, korean, step);
      if (window.ArenaTables) window.ArenaTables.refresh(sideEl);
    } else if (game === "pajarracos") {
      boardEl.innerHTML = drawOrchards(view, names);
      sideEl.innerHTML = pajarracosSide(view, names, step);
    } else {
      boardEl.innerHTML = "<pre class=\"view-json\">" + esc(JSON.stringify(view, null, 2)) + "</pre>";
      sideEl.innerHTML = "";
    }
  }

  function describe(game, d, names) {
    if (game.indexOf("piranha-pedro") === 0) return describePiranha(d);
    if (game === "pajarracos") return describePajarracos(d.decision, d.action, names);
    return esc(JSON.stringify(d.action));
  }

  window.ArenaBoards = { draw: draw, describe: describe, escape: esc, fruits: FRUITS };
})();
