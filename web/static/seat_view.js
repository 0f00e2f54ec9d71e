// The owner's seat view (/my/matches/{id}): draw the board a seat saw at one of its moves when its
// "what seat N saw" box is opened. The board is the server-rendered, autoescaped fragment the match
// viewer swaps in (GET /matches/{id}/board?step=N&seat=S); without JavaScript the box holds a link to
// the same board in the match viewer. Drawing every board up front would make a La Fleur seat view
// megabytes long (docs/participants.md, "The owner's view").
(function () {
  "use strict";
  document.querySelectorAll("details.seat-board[data-board]").forEach(function (box) {
    var slot = box.querySelector(".board-slot");
    var state = "";  // "", "loading", "done"
    box.addEventListener("toggle", function () {
      if (!box.open || state !== "") { return; }
      state = "loading";
      box.setAttribute("aria-busy", "true");
      fetch(box.dataset.board, { credentials: "same-origin" }).then(function (r) {
        if (!r.ok) { throw new Error("HTTP " + r.status); }
        return r.text();
      }).then(function (html) {
        slot.innerHTML = html;  // server-rendered, autoescaped fragment
        state = "done";
      }).catch(function (err) {
        var p = document.createElement("p");
        p.className = "error-message";
        p.textContent = "Could not load this board: " + err.message;
        slot.prepend(p);
        state = "";  // opening the box again tries again
      }).then(function () { box.removeAttribute("aria-busy"); });
    });
  });
}());
