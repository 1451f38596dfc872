// identity-gateway console: the little script the pages use. Everything
// works without it; it only asks before destructive actions, reads an
// import file into its form, selects a new token's text for copying, and
// shows only the chosen kind's fields of an options form's sender.
document.addEventListener("submit", function (event) {
  var message = event.target.getAttribute("data-confirm");
  if (message && !window.confirm(message)) { event.preventDefault(); }
});
document.addEventListener("change", function (event) {
  var target = event.target.getAttribute("data-fills");
  if (!target || !event.target.files || !event.target.files[0]) { return; }
  var reader = new FileReader();
  reader.onload = function () { document.getElementById(target).value = reader.result; };
  reader.readAsText(event.target.files[0]);
});
document.addEventListener("focusin", function (event) {
  if (event.target.hasAttribute("data-select-on-focus")) { event.target.select(); }
});
// An options form's sender (or any choice by `type`): only the chosen kind's
// fields are shown; without the script every kind's fields are, and the
// server reads only the chosen kind's.
function showChosenKind(select) {
  var kinds = select.parentNode.querySelectorAll(":scope > fieldset.variant");
  for (var i = 0; i < kinds.length; i++) {
    kinds[i].hidden = select.value !== "" && kinds[i].getAttribute("data-kind") !== select.value;
  }
}
document.addEventListener("change", function (event) {
  if (event.target.classList && event.target.classList.contains("variant-choice")) { showChosenKind(event.target); }
});
document.addEventListener("DOMContentLoaded", function () {
  var selects = document.querySelectorAll("select.variant-choice");
  for (var i = 0; i < selects.length; i++) { showChosenKind(selects[i]); }
});
