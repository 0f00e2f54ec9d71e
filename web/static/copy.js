// "Copy" buttons (the owner's bot pages): <button data-copy="ID"> copies the text of the element ID.
// Without JavaScript the text is still there to select (pre.connect selects whole on a click).
"use strict";
document.querySelectorAll("button[data-copy]").forEach(function (button) {
  button.addEventListener("click", function () {
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      button.textContent = "Copied";
    }, function () {
      button.textContent = "Select the text to copy";
    });
  });
});
