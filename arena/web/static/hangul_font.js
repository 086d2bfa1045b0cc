/* Korean text on machines without a Korean font (arena.css: the "Arena Hangul" subset). Chromium can keep
   drawing boxes for Hangul it laid out while the web font was still loading, even after the font has
   arrived; once the font is in, the "hangul-ready" class switches to a font list that names it first
   (the same faces: the subset covers only Hangul), which makes the browser lay that text out again.
   Pages without Hangul never load the font. */
(function () {
  "use strict";
  if (!document.fonts || !document.fonts.load) return;
  if (!/[\u1100-\u11ff\u3131-\u318e\uac00-\ud7a3]/.test(document.body.textContent)) return;
  document.fonts.load('1em "Arena Hangul"', "\uac00").then(function () {
    document.documentElement.classList.add("hangul-ready");
  });
})();
