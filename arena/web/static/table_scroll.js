/* Wide tables scroll sideways inside their .table-wrap on a narrow screen instead of widening the page.
   A wrap that overflows gets a visible hint above it and becomes a keyboard-focusable, named region
   (arrow keys scroll it), and is re-checked when the window resizes. window.ArenaTables.refresh(root)
   re-checks the wraps inside a part of the page a script has just redrawn. */
(function () {
  "use strict";
  function label(wrap) {
    var caption = wrap.querySelector("caption");
    var heading = caption ? caption.textContent.trim() : "";
    return (heading ? heading + ": " : "") + "table, scrolls sideways";
  }
  function check(wrap) {
    var overflows = wrap.scrollWidth > wrap.clientWidth + 1;
    var hint = wrap.previousElementSibling;
    var hasHint = hint && hint.classList.contains("scroll-hint");
    wrap.classList.toggle("scrolls", overflows);
    if (overflows) {
      wrap.setAttribute("tabindex", "0");
      wrap.setAttribute("role", "region");
      wrap.setAttribute("aria-label", label(wrap));
      if (!hasHint) {
        hint = document.createElement("p");
        hint.className = "scroll-hint";
        hint.setAttribute("aria-hidden", "true");
        hint.textContent = "More columns: scroll the table sideways →";
        wrap.parentNode.insertBefore(hint, wrap);
      }
    } else {
      ["tabindex", "role", "aria-label"].forEach(function (a) { wrap.removeAttribute(a); });
      if (hasHint) hint.remove();
    }
  }
  function refresh(root) {
    (root || document).querySelectorAll(".table-wrap").forEach(check);
  }
  var pending = null;
  window.addEventListener("resize", function () {
    if (pending !== null) window.cancelAnimationFrame(pending);
    pending = window.requestAnimationFrame(function () { pending = null; refresh(); });
  });
  window.ArenaTables = { refresh: refresh };
  refresh();
})();
