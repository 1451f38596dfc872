// identity-gateway console: the little script the pages use. Everything
// works without it; it only asks before destructive actions, reads an
// import file into its form, and selects a new token's text for copying.
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
