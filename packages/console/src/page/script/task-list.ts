/**
 * The task list: its filtered, paged load and the rows, and a live change applied to a row
 * (newer versions only; new tasks on the newest page when they pass the filters).
 *
 * A part of the console page's script (see `CONSOLE_SCRIPT`): text, joined in page order.
 */
export const TASK_LIST_SCRIPT: string = String.raw`  // ---------------------------------------------------------------- the list
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

`;
