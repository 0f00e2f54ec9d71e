// The challenge page (/my/challenge) works without JavaScript: its draft is a GET form. This only shortens
// the way: a changed game, player count or variant is applied at once, and the search shows its results
// as one types (the same page's results, fetched with the draft as it stands).
"use strict";
(function () {
  var form = document.getElementById("draft");
  var q = document.getElementById("q");
  var results = document.getElementById("results");
  if (!form || !q || !results) return;
  var apply = document.getElementById("apply");
  form.querySelectorAll("[data-apply]").forEach(function (field) {
    field.addEventListener("change", function () { form.requestSubmit(apply); });
  });
  var timer = null, asked = 0;
  q.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () {
      var mine = ++asked;
      var query = new URLSearchParams(new FormData(form)).toString();
      fetch(form.action + "?" + query, { credentials: "same-origin" }).then(function (r) {
        return r.ok ? r.text() : null;
      }).then(function (html) {
        if (html === null || mine !== asked) return;
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("results");
        if (fresh) results.replaceChildren.apply(results, Array.from(fresh.childNodes));
      });
    }, 200);
  });
})();
