/**
 * The form answering a task's input request (its fields as the server describes them):
 * accept with the typed content, or decline.
 *
 * A part of the console page's script (see `CONSOLE_SCRIPT`): text, joined in page order.
 */
export const ANSWER_FORM_SCRIPT: string = String.raw`  function answerForm(task, request) {
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

`;
