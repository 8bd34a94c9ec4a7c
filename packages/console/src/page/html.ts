import { TASK_STATUSES } from "@mcp-tasks/core";

const escapeAttr = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The console page: static markup; the script fills it in from the JSON API. */
export function pageHtml(basePath: string): string {
  const base = escapeAttr(basePath);
  const statuses = TASK_STATUSES.map((s) => `<option value="${s}">${s}</option>`).join("");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Tasks console</title>
<link rel="stylesheet" href="${base}/app.css">
<script src="${base}/app.js" defer></script>
</head>
<body data-base="${base}">
<a class="skip" href="#tasks-title">Skip to the task list</a>
<header class="top">
  <h1>Tasks console</h1>
  <p id="who" class="who"></p>
  <p id="live" class="live" role="status" aria-live="polite"></p>
  <button type="button" id="sign-out" hidden>Sign out</button>
</header>
<main>
<section id="sign-in" aria-labelledby="sign-in-title" class="card">
  <h2 id="sign-in-title">Sign in</h2>
  <form id="sign-in-form" autocomplete="off">
    <label for="token">Token</label>
    <input id="token" name="token" type="password" required spellcheck="false" aria-describedby="token-hint">
    <button type="submit">Sign in</button>
  </form>
  <p id="sign-in-error" class="error" role="alert"></p>
  <p id="token-hint" class="hint">Your MCP token shows your own tasks; an operator token shows every owner's.
  The token stays in this browser tab (session storage) and travels only in request headers, never in a URL.</p>
</section>
<div id="app" hidden>
  <section id="traffic" aria-labelledby="traffic-title" class="card" hidden>
    <h2 id="traffic-title">Traffic by protocol era</h2>
    <p class="hint" id="traffic-hint">Requests per sample interval, newest last.</p>
    <div id="traffic-body"></div>
  </section>
  <section aria-labelledby="tasks-title" class="card">
    <h2 id="tasks-title" tabindex="-1">Tasks</h2>
    <form id="filters" role="search" aria-label="Filter tasks">
      <div class="field"><label for="f-status">Status</label>
        <select id="f-status" name="status"><option value="">any</option>${statuses}</select></div>
      <div class="field"><label for="f-tool">Tool</label>
        <input id="f-tool" name="tool" list="tool-names" spellcheck="false" autocomplete="off">
        <datalist id="tool-names"></datalist></div>
      <div class="field"><label for="f-id">Task id</label>
        <input id="f-id" name="id" spellcheck="false" autocomplete="off"></div>
      <div class="buttons"><button type="submit">Apply</button>
        <button type="button" id="f-clear" class="secondary">Clear</button></div>
    </form>
    <p id="list-status" class="status-line" role="status" aria-live="polite"></p>
    <div class="table-wrap">
    <table id="tasks">
      <caption class="sr-only">Tasks, newest first</caption>
      <thead><tr>
        <th scope="col">Task</th><th scope="col">Tool</th><th scope="col">Status</th>
        <th scope="col">Message</th><th scope="col">Created</th><th scope="col">Updated</th>
        <th scope="col">Era</th><th scope="col" class="owner-col">Owner</th>
      </tr></thead>
      <tbody></tbody>
    </table>
    </div>
    <nav class="pager" aria-label="Pages">
      <button type="button" id="newest-page" class="secondary">Newest</button>
      <button type="button" id="older-page" class="secondary">Older</button>
    </nav>
  </section>
  <section id="detail" aria-labelledby="detail-title" class="card" hidden>
    <div class="detail-head"><h2 id="detail-title" tabindex="-1">Task</h2>
    <button type="button" id="detail-close" class="secondary">Close</button></div>
    <p id="detail-error" class="error" role="alert"></p>
    <div id="detail-body"></div>
  </section>
</div>
</main>
</body>
</html>
`;
}
