/**
 * Signing in with a token (checked against `/api/session`, kept in session storage) and
 * signing out.
 *
 * A part of the console page's script (see `CONSOLE_SCRIPT`): text, joined in page order.
 */
// biome-ignore lint/complexity/noUselessStringRaw: every part of the page script is raw text, so an escape added later reaches the browser as written.
export const SIGN_IN_SCRIPT: string = String.raw`  // ---------------------------------------------------------------- sign-in
  function signIn(token) {
    state.token = token;
    $("sign-in-error").textContent = "";
    return api("/session").then(function (session) {
      sessionStorage.setItem(TOKEN_KEY, token);
      state.role = session.role;
      state.pageSize = session.pageSize;
      document.body.classList.toggle("operator", session.role === "operator");
      $("who").textContent = session.role === "operator"
        ? "Signed in as an operator: every owner's tasks"
        : "Signed in as " + session.owner;
      var list = $("tool-names");
      list.textContent = "";
      session.toolNames.forEach(function (name) { list.appendChild(el("option", { value: name })); });
      $("sign-in").hidden = true;
      $("app").hidden = false;
      $("sign-out").hidden = false;
      $("traffic").hidden = !session.traffic;
      openStream();
      $("tasks-title").focus();
    }, function (error) {
      sessionStorage.removeItem(TOKEN_KEY);
      state.token = null;
      $("sign-in-error").textContent = error.status === 401
        ? error.message
        : "Could not sign in: " + error.message;
      $("token").focus();
    });
  }
  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    state.token = null;
    if (state.stream) state.stream.abort();
    state.stream = null;
    $("app").hidden = true;
    $("sign-out").hidden = true;
    $("sign-in").hidden = false;
    $("who").textContent = "";
    $("token").value = "";
    $("sign-in-error").textContent = message || "";
    document.body.classList.remove("operator");
  }

`;
