/**
 * The console page's script: plain DOM code, no framework, no build step. Kept as text
 * (String.raw, so it reads as the JavaScript it is) and served as `app.js`.
 */
export const CONSOLE_SCRIPT: string = String.raw`// The console page: plain DOM, no framework. Everything it shows comes from the JSON API;
// text is set with textContent only (never parsed as HTML).
(function () {
  "use strict";
  var BASE = document.body.getAttribute("data-base") || "";
  var TOKEN_KEY = "mcp-tasks-console-token";
  var TERMINAL = { completed: true, failed: true, cancelled: true };
  var state = {
    token: null, role: null, pageSize: 25, filters: { status: "", tool: "", id: "" },
    cursor: null, nextCursor: null, openTask: null, stream: null, retryMs: 1000,
  };

  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "className") node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    }
    (children || []).forEach(function (c) { if (c) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return node;
  }
  function time(iso) {
    if (!iso) return "\u2014";
    var d = new Date(iso);
    return d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
  }
  function duration(ms) {
    if (ms === null || ms === undefined) return "unlimited";
    if (ms < 1000) return ms + " ms";
    var s = ms / 1000;
    if (s < 120) return s + " s";
    if (s < 7200) return Math.round(s / 60) + " min";
    return Math.round(s / 3600) + " h";
  }

  function ApiError(status, message) { this.status = status; this.message = message; }
  function api(path, options) {
    options = options || {};
    var headers = { authorization: "Bearer " + state.token };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    return fetch(BASE + "/api" + path, {
      method: options.method || "GET", headers: headers, cache: "no-store",
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    }).then(function (res) {
      return res.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
        if (!res.ok) {
          if (res.status === 401 && path !== "/session") signOut(data && data.error);
          throw new ApiError(res.status, (data && data.error) || ("Request failed (" + res.status + ")"));
        }
        return data;
      });
    });
  }

  // ---------------------------------------------------------------- sign-in
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

  // ---------------------------------------------------------------- the list
  function listQuery(cursor) {
    var q = new URLSearchParams();
    if (state.filters.status) q.set("status", state.filters.status);
    if (state.filters.tool) q.set("tool", state.filters.tool);
    if (state.filters.id) q.set("id", state.filters.id);
    if (cursor) q.set("cursor", cursor);
    var s = q.toString();
    return s ? "?" + s : "";
  }
  function loadList(cursor) {
    $("list-status").textContent = "Loading\u2026";
    return api("/tasks" + listQuery(cursor)).then(function (page) {
      state.cursor = cursor;
      state.nextCursor = page.nextCursor || null;
      var body = $("tasks").tBodies[0];
      body.textContent = "";
      page.tasks.forEach(function (row) { body.appendChild(rowNode(row)); });
      $("older-page").disabled = !state.nextCursor;
      $("newest-page").disabled = !cursor;
      $("list-status").textContent = page.tasks.length === 0
        ? "No tasks match."
        : page.tasks.length + (page.tasks.length === 1 ? " task" : " tasks") + (cursor ? " (older page)" : "") + ", newest first.";
    }, function (error) {
      $("list-status").textContent = error.message;
    });
  }
  function cell(label, className, content) {
    var td = el("td", { "data-label": label, className: className || "" });
    if (typeof content === "string") td.textContent = content; else if (content) td.appendChild(content);
    return td;
  }
  function badge(status) { return el("span", { className: "badge " + status, text: status.replace("_", " ") }); }
  function rowNode(row) {
    var open = el("button", { type: "button", title: row.taskId, "aria-label": "Open task " + row.taskId, text: row.taskId });
    open.addEventListener("click", function () { openDetail(row.taskId); });
    var tr = el("tr", { "data-task-id": row.taskId, "data-status": row.status, "data-version": String(row.version) }, [
      cell("Task", "id", open),
      cell("Tool", "", row.toolName),
      cell("Status", "status", badge(row.status)),
      cell("Message", "msg", row.statusMessage || ""),
      cell("Created", "time", time(row.createdAt)),
      cell("Updated", "time", time(row.lastUpdatedAt)),
      cell("Era", "era", row.era),
      cell("Owner", "owner-col", row.owner || ""),
    ]);
    return tr;
  }
  function matchesFilters(row) {
    return (!state.filters.status || row.status === state.filters.status) &&
      (!state.filters.tool || row.toolName === state.filters.tool) &&
      (!state.filters.id || row.taskId === state.filters.id);
  }
  function findRow(taskId) {
    var rows = $("tasks").tBodies[0].rows;
    for (var i = 0; i < rows.length; i++) if (rows[i].getAttribute("data-task-id") === taskId) return rows[i];
    return null;
  }
  function applyRow(row) {
    var existing = findRow(row.taskId);
    if (existing) {
      if (Number(existing.getAttribute("data-version")) > row.version) return;
      var fresh = rowNode(row);
      fresh.className = "flash";
      existing.replaceWith(fresh);
    } else if (!state.cursor && matchesFilters(row)) {
      var node = rowNode(row);
      node.className = "flash";
      var body = $("tasks").tBodies[0];
      body.insertBefore(node, body.firstChild);
      $("list-status").textContent = "New task " + row.toolName + " (" + row.status + ").";
    }
    if (state.openTask === row.taskId) openDetail(row.taskId, true);
  }

  // ---------------------------------------------------------------- live updates
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

  // ---------------------------------------------------------------- detail
  function fact(dl, term, value) {
    dl.appendChild(el("dt", { text: term }));
    var dd = el("dd");
    if (typeof value === "string") dd.textContent = value; else dd.appendChild(value);
    dl.appendChild(dd);
  }
  function json(value) { return el("pre", { text: JSON.stringify(value, null, 2) }); }
  function openDetail(taskId, quiet) {
    state.openTask = taskId;
    return api("/tasks/" + encodeURIComponent(taskId)).then(function (task) {
      if (state.openTask !== taskId) return;
      if (quiet) keepEdits(function () { renderDetail(task); });
      else {
        renderDetail(task);
        $("detail-title").focus();
      }
    }, function (error) {
      $("detail").hidden = false;
      $("detail-body").textContent = "";
      $("detail-error").textContent = error.message;
    });
  }
  // A live update re-renders the open task; what the person was typing into its forms
  // (and where the focus was) survives that.
  function keepEdits(render) {
    var values = {};
    var focused = document.activeElement && document.activeElement.id;
    Array.prototype.forEach.call($("detail-body").querySelectorAll("input, select"), function (c) {
      values[c.id] = c.type === "checkbox" ? c.checked : c.value;
    });
    render();
    Object.keys(values).forEach(function (id) {
      var c = document.getElementById(id);
      if (!c) return;
      if (c.type === "checkbox") c.checked = values[id]; else c.value = values[id];
    });
    if (focused && document.getElementById(focused)) document.getElementById(focused).focus();
  }
  function renderDetail(task) {
    var section = $("detail");
    section.hidden = false;
    section.setAttribute("data-task-id", task.taskId);
    section.setAttribute("data-status", task.status);
    $("detail-title").textContent = "Task " + task.taskId;
    $("detail-error").textContent = "";
    var body = $("detail-body");
    body.textContent = "";
    var dl = el("dl", { className: "facts" });
    fact(dl, "Status", badge(task.status));
    fact(dl, "Message", task.statusMessage || "\u2014");
    fact(dl, "Tool", task.toolName);
    fact(dl, "Era", task.era);
    if (task.owner !== undefined) fact(dl, "Owner", task.owner);
    fact(dl, "Created", time(task.createdAt));
    fact(dl, "Updated", time(task.lastUpdatedAt));
    fact(dl, "Retention (ttl)", duration(task.ttlMs) + " from " + (task.ttlAnchor === "creation" ? "creation" : "the end"));
    fact(dl, "Expires", task.expiresAt ? time(task.expiresAt) : (TERMINAL[task.status] ? "never" : "not while running"));
    fact(dl, "Attempt", task.execution.attempt + " of " + task.execution.maxAttempts);
    fact(dl, "Lease holder", task.execution.holder || "\u2014");
    if (task.execution.leaseExpiresAt) fact(dl, "Lease expires", time(task.execution.leaseExpiresAt));
    if (task.cancelRequestedAt) fact(dl, "Cancel requested", time(task.cancelRequestedAt));
    body.appendChild(dl);

    if (!TERMINAL[task.status]) {
      var cancel = el("button", { type: "button", className: "danger", id: "cancel-task",
        text: task.cancelMode === "immediate" ? "Cancel task now" : "Request cancellation" });
      if (task.cancelRequestedAt && task.cancelMode === "cooperative") {
        cancel.disabled = true;
        cancel.textContent = "Cancellation requested";
      }
      cancel.addEventListener("click", function () {
        cancel.disabled = true;
        api("/tasks/" + encodeURIComponent(task.taskId) + "/cancel", { method: "POST" }).then(renderDetail, function (error) {
          cancel.disabled = false;
          $("detail-error").textContent = error.message;
        });
      });
      body.appendChild(el("div", { className: "actions" }, [cancel, el("span", { className: "hint",
        text: task.cancelMode === "immediate" ? "2025-11-25 task: cancelled at once." : "2026-07-28 task: the tool is asked to stop and acknowledges." })]));
    }

    if (task.inputRequests.length > 0) {
      body.appendChild(el("h3", { text: "Waiting for input" }));
      task.inputRequests.forEach(function (request) { body.appendChild(answerForm(task, request)); });
    }
    body.appendChild(el("h3", { text: "Arguments" }));
    body.appendChild(json(task.arguments));
    if (task.result) { body.appendChild(el("h3", { text: "Result" })); body.appendChild(json(task.result)); }
    if (task.error) { body.appendChild(el("h3", { text: "Error" })); body.appendChild(json(task.error)); }
    body.appendChild(el("h3", { text: "History (as far as recorded)" }));
    var ol = el("ol", { className: "history" });
    task.history.forEach(function (h) { ol.appendChild(el("li", { text: time(h.at) + " \u2014 " + h.event + " (" + h.status.replace("_", " ") + ")" })); });
    body.appendChild(ol);
  }
  function answerForm(task, request) {
    var form = el("form", { className: "answer", "data-input-key": request.key, novalidate: "" });
    var fieldset = el("fieldset");
    fieldset.appendChild(el("legend", { text: request.message || request.method }));
    form.appendChild(fieldset);
    if (!request.fields) {
      fieldset.appendChild(el("p", { className: "hint", text: "This request (" + request.method + ") cannot be answered from the console." }));
      return form;
    }
    var inputs = [];
    request.fields.forEach(function (f, i) {
      var id = "in-" + request.key + "-" + i;
      var label = (f.title || f.description || f.name) + (f.required && f.kind !== "boolean" ? " (required)" : "");
      var control;
      if (f.kind === "boolean") {
        control = el("input", { type: "checkbox", id: id, name: f.name });
        fieldset.appendChild(el("div", { className: "check" }, [control, el("label", { "for": id, text: label })]));
      } else {
        if (f.kind === "enum") {
          control = el("select", { id: id, name: f.name });
          if (!f.required) control.appendChild(el("option", { value: "", text: "\u2014" }));
          f.options.forEach(function (o) { control.appendChild(el("option", { value: o.value, text: o.label })); });
        } else {
          control = el("input", { id: id, name: f.name, type: f.kind === "string" ? "text" : "number" });
          if (f.kind === "integer") control.setAttribute("step", "1");
          if (f.kind === "number") control.setAttribute("step", "any");
          if (f.minimum !== undefined) control.setAttribute("min", String(f.minimum));
          if (f.maximum !== undefined) control.setAttribute("max", String(f.maximum));
          if (f.maxLength !== undefined) control.setAttribute("maxlength", String(f.maxLength));
        }
        if (f.required) control.setAttribute("aria-required", "true");
        fieldset.appendChild(el("div", { className: "field" }, [el("label", { "for": id, text: label }), control]));
      }
      inputs.push({ field: f, control: control });
    });
    var error = el("p", { className: "error", role: "alert" });
    var send = el("button", { type: "submit", text: "Send answer" });
    var decline = el("button", { type: "button", className: "secondary", text: "Decline" });
    fieldset.appendChild(el("div", { className: "actions" }, [send, decline]));
    fieldset.appendChild(error);
    function submit(body) {
      send.disabled = decline.disabled = true;
      api("/tasks/" + encodeURIComponent(task.taskId) + "/input", { method: "POST", body: body }).then(function (detail) {
        renderDetail(detail);
        $("list-status").textContent = "Answer sent.";
      }, function (e) {
        send.disabled = decline.disabled = false;
        error.textContent = e.message;
      });
    }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var content = {};
      inputs.forEach(function (i) {
        var f = i.field;
        if (f.kind === "boolean") content[f.name] = i.control.checked;
        else if (i.control.value !== "") {
          content[f.name] = f.kind === "number" || f.kind === "integer" ? Number(i.control.value) : i.control.value;
        }
      });
      submit({ key: request.key, action: "accept", content: content });
    });
    decline.addEventListener("click", function () { submit({ key: request.key, action: "decline" }); });
    return form;
  }

  // ---------------------------------------------------------------- traffic
  function drawTraffic(series) {
    var body = $("traffic-body");
    body.textContent = "";
    var points = series.points.slice(-30);
    var eras = {};
    series.points.forEach(function (p) { Object.keys(p.eras).forEach(function (e) { eras[e] = true; }); });
    if (series.totals) Object.keys(series.totals.eras).forEach(function (e) { eras[e] = true; });
    var eraList = Object.keys(eras).sort().reverse();
    $("traffic-hint").textContent = "Requests per " + Math.round(series.sampleMs / 1000) + " s interval, last " + points.length + (points.length === 1 ? " interval" : " intervals") + ", newest last.";
    var legend = el("div", { className: "legend" });
    eraList.forEach(function (era, i) {
      var total = series.totals && series.totals.eras[era] !== undefined ? series.totals.eras[era] : 0;
      legend.appendChild(el("span", {}, [el("span", { className: "swatch seg era-" + Math.min(i, 2), "aria-hidden": "true" }), era + ": " + total + " since start"]));
    });
    body.appendChild(legend);
    var max = 1;
    points.forEach(function (p) { var s = 0; eraList.forEach(function (e) { s += p.eras[e] || 0; }); max = Math.max(max, s); });
    var bars = el("div", { className: "bars", "aria-hidden": "true" });
    points.forEach(function (p) {
      var col = el("span", { className: "col", title: time(p.at) });
      eraList.forEach(function (era, i) {
        var seg = el("span", { className: "seg era-" + Math.min(i, 2) });
        seg.style.height = ((p.eras[era] || 0) / max * 86) + "px";
        col.appendChild(seg);
      });
      bars.appendChild(col);
    });
    body.appendChild(bars);
    // The same numbers as a table, for screen readers and exact values.
    var recent = points.slice(-6);
    var clients = {};
    recent.forEach(function (p) { Object.keys(p.clients).forEach(function (c) { clients[c] = (clients[c] || 0) + p.clients[c]; }); });
    var table = el("table", { id: "traffic-table" });
    table.appendChild(el("caption", { className: "sr-only", text: "Requests per interval by era" }));
    var head = el("tr", {}, [el("th", { scope: "col", text: "Interval ending" })]);
    eraList.forEach(function (era) { head.appendChild(el("th", { scope: "col", text: era })); });
    head.appendChild(el("th", { scope: "col", text: "Clients" }));
    table.appendChild(el("thead", {}, [head]));
    var tb = el("tbody");
    recent.slice().reverse().forEach(function (p) {
      var tr = el("tr", {}, [el("td", { text: time(p.at) })]);
      eraList.forEach(function (era) { tr.appendChild(el("td", { "data-era": era, text: String(p.eras[era] || 0) })); });
      var names = Object.keys(p.clients).filter(function (c) { return p.clients[c] > 0; })
        .map(function (c) { return c + ": " + p.clients[c]; });
      tr.appendChild(el("td", { text: names.join(", ") || "\u2014" }));
      tb.appendChild(tr);
    });
    table.appendChild(tb);
    body.appendChild(el("div", { className: "table-wrap" }, [table]));
  }

  // ---------------------------------------------------------------- wiring
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
