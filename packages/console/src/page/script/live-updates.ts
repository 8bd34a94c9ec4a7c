/**
 * The live connection: the server-sent-events stream read through `fetch` (the token goes
 * in a header), reconnecting with backoff, and its events dispatched to the list, the detail
 * and the traffic panel.
 *
 * A part of the console page's script (see `CONSOLE_SCRIPT`): text, joined in page order.
 */
export const LIVE_UPDATES_SCRIPT: string = String.raw`  // ---------------------------------------------------------------- live updates
  // Server-sent events read through fetch, so the token travels in a header (EventSource
  // cannot send one). A dropped stream reconnects and reloads the page of tasks.
  function openStream() {
    if (state.stream) state.stream.abort();
    var controller = new AbortController();
    state.stream = controller;
    fetch(BASE + "/api/events", { headers: { authorization: "Bearer " + state.token }, signal: controller.signal, cache: "no-store" })
      .then(function (res) {
        if (!res.ok || !res.body) throw new ApiError(res.status, "live updates refused");
        $("live").textContent = "Live";
        state.retryMs = 1000;
        // Changes made before the stream was open are not on it: read the page again.
        loadList(state.cursor);
        var reader = res.body.getReader();
        var decoder = new TextDecoder();
        var buffer = "";
        function pump() {
          return reader.read().then(function (chunk) {
            if (chunk.done) throw new Error("stream ended");
            buffer += decoder.decode(chunk.value, { stream: true });
            var at;
            while ((at = buffer.indexOf("\n\n")) >= 0) {
              handleEvent(buffer.slice(0, at));
              buffer = buffer.slice(at + 2);
            }
            return pump();
          });
        }
        return pump();
      })
      .catch(function (error) {
        if (controller.signal.aborted || state.stream !== controller) return;
        if (error && error.status === 401) { signOut("Your token is no longer accepted."); return; }
        $("live").textContent = "Reconnecting\u2026";
        var wait = state.retryMs;
        state.retryMs = Math.min(state.retryMs * 2, 30000);
        setTimeout(function () {
          if (state.stream !== controller || !state.token) return;
          loadList(state.cursor);
          openStream();
        }, wait);
      });
  }
  function handleEvent(block) {
    var event = "message";
    var data = "";
    block.split("\n").forEach(function (line) {
      if (line.indexOf("event: ") === 0) event = line.slice(7);
      else if (line.indexOf("data: ") === 0) data += line.slice(6);
    });
    if (!data) return;
    var payload;
    try { payload = JSON.parse(data); } catch (e) { return; }
    if (event === "task") applyRow(payload);
    else if (event === "gone") {
      var row = findRow(payload.taskId);
      if (row) row.remove();
    } else if (event === "resync") loadList(state.cursor);
    else if (event === "traffic") drawTraffic(payload);
  }

`;
