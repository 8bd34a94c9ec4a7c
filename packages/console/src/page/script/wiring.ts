/**
 * The page's controls wired to the parts above, the IIFE's end, and the start: sign in with
 * the saved token, or ask for one.
 *
 * A part of the console page's script (see `CONSOLE_SCRIPT`): text, joined in page order.
 */
// biome-ignore lint/complexity/noUselessStringRaw: every part of the page script is raw text, so an escape added later reaches the browser as written.
export const WIRING_SCRIPT: string = String.raw`  // ---------------------------------------------------------------- wiring
  $("sign-in-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var token = $("token").value.trim();
    if (!token) { $("sign-in-error").textContent = "Enter a token."; return; }
    signIn(token);
  });
  $("sign-out").addEventListener("click", function () { signOut(""); });
  $("filters").addEventListener("submit", function (event) {
    event.preventDefault();
    state.filters = { status: $("f-status").value, tool: $("f-tool").value.trim(), id: $("f-id").value.trim() };
    loadList(null);
  });
  $("f-clear").addEventListener("click", function () {
    $("f-status").value = ""; $("f-tool").value = ""; $("f-id").value = "";
    state.filters = { status: "", tool: "", id: "" };
    loadList(null);
  });
  $("older-page").addEventListener("click", function () { if (state.nextCursor) loadList(state.nextCursor); });
  $("newest-page").addEventListener("click", function () { loadList(null); });
  $("detail-close").addEventListener("click", function () {
    state.openTask = null;
    $("detail").hidden = true;
    $("tasks-title").focus();
  });
  var saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) signIn(saved); else $("token").focus();
})();
`;
