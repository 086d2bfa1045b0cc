/* Parts of a page that scroll sideways on a narrow screen instead of widening the page: wide tables in
   their .table-wrap, and code blocks (<pre>). One that overflows becomes a keyboard-focusable region
   (arrow keys scroll it); a table also gets a visible hint above it. Re-checked when the window
   resizes; window.ArenaTables.refresh(root) re-checks a part of the page a script has just redrawn. */
(function () {
  "use strict";
  var HINT = "More columns: scroll the table sideways →";

  function label(el) {
    if (el.tagName === "PRE") return "code, scrolls sideways";
    var caption = el.querySelector("caption");
    var heading = caption ? caption.textContent.trim() : "";
    return (heading ? heading + ": " : "") + "table, scrolls sideways";
  }

  function setHint(wrap, shown) {
    var hint = wrap.previousElementSibling;
    var has = hint && hint.classList.contains("scroll-hint");
    if (shown && !has) {
      hint = document.createElement("p");
      hint.className = "scroll-hint";
      hint.setAttribute("aria-hidden", "true");
      hint.textContent = HINT;
      wrap.parentNode.insertBefore(hint, wrap);
    } else if (!shown && has) {
      hint.remove();
    }
  }

  function check(el) {
    var overflows = el.scrollWidth > el.clientWidth + 1;
    el.classList.toggle("scrolls", overflows);
    if (overflows) {
      el.setAttribute("tabindex", "0");
      el.setAttribute("role", "region");
      el.setAttribute("aria-label", label(el));
    } else if (el.getAttribute("role") === "region") {
      ["tabindex", "role", "aria-label"].forEach(function (a) { el.removeAttribute(a); });
    }
    if (el.classList.contains("table-wrap")) setHint(el, overflows);
  }

  function refresh(root) {
    (root || document).querySelectorAll(".table-wrap, pre").forEach(check);
  }

  var pending = null;
  window.addEventListener("resize", function () {
    if (pending !== null) window.cancelAnimationFrame(pending);
    pending = window.requestAnimationFrame(function () { pending = null; refresh(); });
  });
  window.ArenaTables = { refresh: refresh };
  refresh();
})();
