/* The tournament form: show only the bots of the chosen game, and untick the others. */
(function () {
  "use strict";
  var game = document.getElementById("game"), picker = document.getElementById("bot-picker");
  if (!game || !picker) return;
  function filter() {
    picker.querySelectorAll("li[data-game]").forEach(function (li) {
      var match = li.dataset.game === game.value;
      li.hidden = !match;
      if (!match) li.querySelector("input").checked = false;
    });
  }
  game.addEventListener("change", filter);
  filter();
})();
