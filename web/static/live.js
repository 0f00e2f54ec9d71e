// Live match: server-sent events of the spectator view (GET /matches/{id}/live), relayed by
// the server after the operator's delay. Each "step" event carries the board panel rendered
// by the server (autoescaped HTML) and the spectator-safe labels of the steps since the previous
// event; "end" the result; "unavailable" when the feed's Redis is away (the browser reconnects).
(function () {
  "use strict";
  var live = document.getElementById("live-view");
  if (!live || !window.EventSource) { return; }
  var board = document.getElementById("live-board");
  var list = document.getElementById("live-steps");
  var status = document.getElementById("live-status");
  var result = document.getElementById("live-result");
  var source = new EventSource("/matches/" + live.dataset.match + "/live");
  // opened from /tv (web/featured.py): back to /tv, and its next featured match, once this one is over
  function next(seconds) {
    if (live.dataset.tv !== "1") { return; }
    status.textContent += " · the next featured match in " + seconds + " s";
    window.setTimeout(function () { window.location.assign("/tv"); }, seconds * 1000);
  }

  source.addEventListener("open", function () { status.textContent = "live"; });
  function addStep(s) {
    var li = document.createElement("li");
    li.dataset.step = String(s.i);
    var who = document.createElement("span");
    who.className = s.player >= 0 ? "seat-tag seat-" + s.player : "chance";
    who.textContent = s.player >= 0 ? s.name : "chance";
    var no = document.createElement("span");
    no.className = "i";
    no.textContent = String(s.i + 1);
    li.appendChild(no);
    li.appendChild(who);
    li.appendChild(document.createTextNode(" " + s.label));
    list.appendChild(li);
    return li;
  }
  source.addEventListener("step", function (ev) {
    var d = JSON.parse(ev.data);
    board.innerHTML = d.board;  // server-rendered, autoescaped fragment
    live.dataset.step = String(d.i);
    status.textContent = d.i < 0 ? "live" : "live · step " + (d.i + 1);
    if (!d.steps.length) { return; }  // a snapshot: the board only
    var current = list.querySelector("li.current");
    if (current) { current.classList.remove("current"); }
    if (d.gap && list.lastElementChild) {
      var gap = document.createElement("li");
      gap.className = "gap";
      gap.textContent = "…";
      list.appendChild(gap);
    }
    var li = null;
    d.steps.forEach(function (s) { li = addStep(s); });
    li.classList.add("current");
    list.scrollTop = list.scrollHeight;
  });
  source.addEventListener("end", function (ev) {
    var d = JSON.parse(ev.data);
    source.close();
    status.textContent = "match over";
    result.hidden = false;
    result.textContent = "Match over (" + d.status + "): " + d.reason + " · ranks " + d.ranks.join(", ") +
      " · scores " + d.scores.join(", ") + ". Reload the page for the full replay once it is recorded.";
    live.dataset.ended = "1";
    next(8);
  });
  source.addEventListener("unavailable", function () {
    // the server ended the stream; EventSource reconnects after the "retry:" the server gave
    status.textContent = "live feed unavailable · reconnecting";
  });
  source.addEventListener("gone", function () {
    source.close();
    status.textContent = "no live feed for this match";
    next(3);
  });
}());
