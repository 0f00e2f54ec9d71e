// Live match: server-sent events of the spectator view (GET /matches/{id}/live), relayed by
// the server after the operator's delay. Each "step" event carries the board panel rendered
// by the server (autoescaped HTML) and the step's spectator-safe label; "end" the result.
(function () {
  "use strict";
  var live = document.getElementById("live-view");
  if (!live || !window.EventSource) { return; }
  var board = document.getElementById("live-board");
  var list = document.getElementById("live-steps");
  var status = document.getElementById("live-status");
  var result = document.getElementById("live-result");
  var source = new EventSource("/matches/" + live.dataset.match + "/live");

  source.addEventListener("open", function () { status.textContent = "live"; });
  source.addEventListener("step", function (ev) {
    var d = JSON.parse(ev.data);
    board.innerHTML = d.board;  // server-rendered, autoescaped fragment
    live.dataset.step = String(d.i);
    if (d.i < 0) { return; }
    var li = document.createElement("li");
    li.dataset.step = String(d.i);
    var who = document.createElement("span");
    who.className = d.player >= 0 ? "seat-tag seat-" + d.player : "chance";
    who.textContent = d.player >= 0 ? d.name : "chance";
    var no = document.createElement("span");
    no.className = "i";
    no.textContent = String(d.i + 1);
    li.appendChild(no);
    li.appendChild(who);
    li.appendChild(document.createTextNode(" " + d.label));
    var current = list.querySelector("li.current");
    if (current) { current.classList.remove("current"); }
    li.classList.add("current");
    list.appendChild(li);
    list.scrollTop = list.scrollHeight;
    status.textContent = "live · step " + (d.i + 1);
  });
  source.addEventListener("end", function (ev) {
    var d = JSON.parse(ev.data);
    source.close();
    status.textContent = "match over";
    result.hidden = false;
    result.textContent = "Match over (" + d.status + "): " + d.reason + " · ranks " + d.ranks.join(", ") +
      " · scores " + d.scores.join(", ") + ". Reload the page for the full replay once it is recorded.";
    live.dataset.ended = "1";
  });
  source.addEventListener("gone", function () {
    source.close();
    status.textContent = "no live feed for this match";
  });
}());
