// Replay viewer: step through a match without reloading the page.
//
// The board panel of each step is rendered by the server (GET
// /matches/{id}/board?step=N&all=0|1, an HTML fragment, autoescaped) and
// swapped in here; this script only navigates: buttons, the step list, the
// jump box, play/pause, the "show all hands" toggle and the keyboard
// (← → step, Shift+← → previous/next decision, Home/End, Space play/pause).
// Without JavaScript the same controls are plain links (?step=N).
(function () {
  "use strict";
  var viewer = document.getElementById("viewer");
  if (!viewer) { return; }
  var matchId = viewer.dataset.match;
  var total = parseInt(viewer.dataset.steps, 10);
  var step = parseInt(viewer.dataset.step, 10);
  var allHands = viewer.dataset.all === "1";
  var seat = viewer.dataset.seat || "";   // a seat's own view ("" = spectator or all hands)
  var viewSel = document.getElementById("view");
  var decisions = (viewer.dataset.decisions || "").split(",").filter(Boolean).map(Number);
  var board = document.getElementById("board");
  var list = document.getElementById("steps");
  var jump = document.getElementById("jump");
  var playBtn = viewer.querySelector('[data-go="play"]');
  var speed = document.getElementById("speed");
  var allBox = document.getElementById("all-hands");
  var cache = new Map();
  var wanted = 0;
  var timer = null;

  playBtn.hidden = false;
  viewer.querySelector(".speed").hidden = false;

  function scrollList(li) {
    var top = li.offsetTop - list.offsetTop;
    if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - li.offsetHeight) {
      list.scrollTop = top - list.clientHeight / 2;
    }
  }
  var initial = list.querySelector("li.current");
  if (initial) { scrollList(initial); }

  function url(s, all) {
    return "/matches/" + matchId + "/board?step=" + s + "&all=" + (all ? 1 : 0) + (seat ? "&seat=" + seat : "");
  }

  function fetchFrame(s, all) {
    var key = s + ":" + (all ? 1 : 0);
    if (!cache.has(key)) {
      cache.set(key, fetch(url(s, all), { credentials: "same-origin" }).then(function (r) {
        if (!r.ok) { throw new Error("HTTP " + r.status); }
        return r.text();
      }).catch(function (err) { cache.delete(key); throw err; }));
    }
    return cache.get(key);
  }

  function clamp(s) { return Math.max(-1, Math.min(total - 1, s)); }

  function show(s) {
    s = clamp(s);
    var token = ++wanted;
    return fetchFrame(s, allHands).then(function (html) {
      if (token !== wanted) { return; }  // a later request won
      board.innerHTML = html;           // server-rendered, autoescaped fragment
      step = s;
      viewer.dataset.step = String(s);
      jump.value = String(s + 1);  // the page counts steps from 1 (0: the start), as the heading does
      var current = list.querySelector("li.current");
      if (current) { current.classList.remove("current"); }
      var li = list.querySelector('li[data-step="' + s + '"]');
      if (li) {
        li.classList.add("current");
        scrollList(li);
      }
      var q = "?step=" + s + (allHands ? "&all=1" : "") + (seat ? "&seat=" + seat : "");
      history.replaceState(null, "", q + "#viewer");
      [1, 2].forEach(function (d) { if (s + d < total) { fetchFrame(s + d, allHands).catch(function () {}); } });
    }).catch(function (err) {
      if (token !== wanted) { return; }
      var p = document.createElement("p");
      p.className = "error-message";
      p.textContent = "Could not load step " + (s + 1) + ": " + err.message;
      board.prepend(p);
    });
  }

  function nextDecision(dir) {
    var i;
    if (dir > 0) {
      for (i = 0; i < decisions.length; i++) { if (decisions[i] > step) { return decisions[i]; } }
      return total - 1;
    }
    for (i = decisions.length - 1; i >= 0; i--) { if (decisions[i] < step) { return decisions[i]; } }
    return -1;
  }

  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    playBtn.textContent = "▶ play";
    playBtn.setAttribute("aria-pressed", "false");
  }

  function play() {
    if (timer !== null) { stop(); return; }
    if (step >= total - 1) { show(-1); }
    playBtn.textContent = "⏸ pause";
    playBtn.setAttribute("aria-pressed", "true");
    timer = setInterval(function () {
      if (step >= total - 1) { stop(); return; }
      show(step + 1);
    }, parseInt(speed.value, 10));
  }

  function go(what, ev) {
    if (ev) { ev.preventDefault(); }
    if (what === "play") { play(); return; }
    stop();
    if (what === "first") { show(-1); }
    else if (what === "prev") { show(step - 1); }
    else if (what === "next") { show(step + 1); }
    else if (what === "last") { show(total - 1); }
  }

  viewer.querySelectorAll("[data-go]").forEach(function (el) {
    el.addEventListener("click", function (ev) { go(el.dataset.go, ev); });
  });
  viewer.querySelector("form.controls").addEventListener("submit", function (ev) {
    ev.preventDefault();
    stop();
    var v = parseInt(jump.value, 10);
    if (!isNaN(v)) { show(v - 1); }
  });
  list.addEventListener("click", function (ev) {
    var li = ev.target.closest("li[data-step]");
    if (!li) { return; }
    ev.preventDefault();
    stop();
    show(parseInt(li.dataset.step, 10));
  });
  speed.addEventListener("change", function () { if (timer !== null) { stop(); play(); } });
  // Changing the point of view reloads the page: the step list's labels belong to the view.
  if (allBox) {
    allBox.addEventListener("change", function () {
      location.href = "?step=" + step + (allBox.checked ? "&all=1" : "") + "#viewer";
    });
  }
  if (viewSel) {
    viewSel.addEventListener("change", function () {
      var v = viewSel.value;
      location.href = "?step=" + step + (v === "all" ? "&all=1" : v === "" ? "" : "&seat=" + v) + "#viewer";
    });
  }
  document.addEventListener("keydown", function (ev) {
    var t = ev.target || {};
    var typing = t.tagName === "SELECT" || t.tagName === "TEXTAREA" ||
      (t.tagName === "INPUT" && t.type !== "checkbox" && t.type !== "radio" && t.type !== "button");
    if (typing || ev.altKey || ev.ctrlKey || ev.metaKey) { return; }
    if (ev.key === "ArrowRight") { stop(); show(ev.shiftKey ? nextDecision(1) : step + 1); }
    else if (ev.key === "ArrowLeft") { stop(); show(ev.shiftKey ? nextDecision(-1) : step - 1); }
    else if (ev.key === "Home") { stop(); show(-1); }
    else if (ev.key === "End") { stop(); show(total - 1); }
    else if (ev.key === " " || ev.key === "Spacebar") {
      if (t.tagName === "INPUT" || t.tagName === "BUTTON" || t.tagName === "A") { return; }  // native toggle/click
      play();
    }
    else { return; }
    ev.preventDefault();
  });
}());
