/**
 * The open task's detail: its facts, arguments, outcome and history, the cancel action, and
 * a re-render on live changes that keeps what the person was typing.
 *
 * A part of the console page's script (see `CONSOLE_SCRIPT`): text, joined in page order.
 */
export const TASK_DETAIL_SCRIPT: string = String.raw`  // ---------------------------------------------------------------- detail
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
`;
