/** The console's style sheet: system fonts, readable at 1280 px and on a phone. */
export const CONSOLE_STYLE = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #57606a; --bg: #f6f8fa; --card: #fff;
  --line: #d0d7de; --accent: #0550ae; --bad: #b3261e; --ok: #1a7f37; --warn: #9a6700; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9da7b3; --bg: #0d1117;
  --card: #161b22; --line: #30363d; --accent: #6cb6ff; --bad: #ff7b72; --ok: #56d364; --warn: #e3b341; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg); background: var(--bg); }
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: var(--card); padding: 4px 8px; }
.top { display: flex; align-items: center; gap: 16px; padding: 10px 20px; border-bottom: 1px solid var(--line);
  background: var(--card); flex-wrap: wrap; }
.top h1 { font-size: 1.2rem; margin: 0; }
.who { margin: 0; color: var(--muted); flex: 1; }
main { max-width: 1280px; margin: 0 auto; padding: 16px; display: grid; gap: 16px; }
#app { display: grid; gap: 16px; } #app[hidden], [hidden] { display: none !important; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; min-width: 0; }
.card h2 { font-size: 1.05rem; margin: 0 0 10px; }
label { font-weight: 600; font-size: .85rem; display: block; margin-bottom: 2px; }
input, select, button { font: inherit; color: inherit; }
input, select { padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); min-width: 0; }
button { padding: 6px 12px; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent);
  color: #fff; cursor: pointer; }
button.secondary { background: transparent; color: var(--accent); }
button.danger { background: var(--bad); border-color: var(--bad); }
button:disabled { opacity: .5; cursor: default; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
#sign-in-form { display: flex; gap: 8px; align-items: end; flex-wrap: wrap; }
#sign-in-form label { width: 100%; } #sign-in-form input { flex: 1; min-width: 12rem; }
.error { color: var(--bad); margin: 6px 0; min-height: 1em; } .error:empty { display: none; }
.hint { color: var(--muted); font-size: .85rem; margin: 6px 0; }
#filters { display: flex; gap: 10px; align-items: end; flex-wrap: wrap; margin-bottom: 8px; }
.field { display: flex; flex-direction: column; } .buttons { display: flex; gap: 6px; }
.status-line { color: var(--muted); margin: 4px 0 8px; min-height: 1.2em; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; color: var(--muted); font-weight: 600; }
td.id button { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .8rem; padding: 2px 6px;
  background: transparent; color: var(--accent); border-color: var(--line); max-width: 14ch; overflow: hidden;
  text-overflow: ellipsis; white-space: nowrap; display: inline-block; }
td.msg { max-width: 28ch; overflow-wrap: anywhere; } td.time { white-space: nowrap; font-size: .85rem; }
tr.flash td { animation: flash 1.2s ease-out; }
@keyframes flash { from { background: color-mix(in srgb, var(--accent) 20%, transparent); } to { background: transparent; } }
@media (prefers-reduced-motion: reduce) { tr.flash td { animation: none; } }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: .8rem; border: 1px solid currentColor; white-space: nowrap; }
.badge.working { color: var(--accent); } .badge.input_required { color: var(--warn); }
.badge.completed { color: var(--ok); } .badge.failed { color: var(--bad); } .badge.cancelled { color: var(--muted); }
.owner-col { display: none; } body.operator .owner-col { display: table-cell; }
.pager { display: flex; gap: 8px; margin-top: 10px; }
.detail-head { display: flex; justify-content: space-between; align-items: center; gap: 8px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; margin: 0 0 12px; }
dl.facts dt { color: var(--muted); font-size: .85rem; } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 8px; overflow: auto; max-height: 20rem;
  font-size: .82rem; white-space: pre-wrap; overflow-wrap: anywhere; }
h3 { font-size: .95rem; margin: 14px 0 6px; }
ol.history { margin: 0; padding-left: 1.4rem; } ol.history li { margin: 2px 0; }
form.answer { border: 1px solid var(--warn); border-radius: 8px; padding: 10px 12px; margin: 8px 0; }
form.answer fieldset { border: 0; padding: 0; margin: 0; display: grid; gap: 8px; }
form.answer legend { font-weight: 600; margin-bottom: 6px; }
form.answer .check { display: flex; gap: 6px; align-items: center; } form.answer .check label { margin: 0; }
.actions { display: flex; gap: 8px; flex-wrap: wrap; margin: 8px 0; }
.traffic-grid { display: grid; gap: 4px; }
.bars { display: flex; align-items: end; gap: 3px; height: 90px; border-bottom: 1px solid var(--line); padding-top: 4px; }
.bars .col { flex: 1; display: flex; flex-direction: column-reverse; min-width: 4px; max-width: 28px; }
.bars .seg { display: block; min-height: 0; }
.seg.era-0 { background: var(--accent); } .seg.era-1 { background: var(--warn); } .seg.era-2 { background: var(--muted); }
.legend { display: flex; gap: 14px; flex-wrap: wrap; font-size: .85rem; margin: 6px 0; }
.legend .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
.live { margin: 0; font-size: .8rem; color: var(--muted); border: 1px solid var(--line); border-radius: 999px;
  padding: 2px 10px; } .live:empty { display: none; }
td.era { white-space: nowrap; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (max-width: 720px) {
  main { padding: 8px; }
  table#tasks thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table#tasks, table#tasks tbody, table#tasks tr, table#tasks td { display: block; width: 100%; }
  table#tasks tr { border: 1px solid var(--line); border-radius: 8px; margin-bottom: 8px; padding: 6px; }
  table#tasks td { border: 0; padding: 2px 4px; } table#tasks td::before { content: attr(data-label) ": "; color: var(--muted); font-size: .8rem; }
  table#tasks td.owner-col { display: none; } body.operator table#tasks td.owner-col { display: block; }
  #filters .field, #filters input, #filters select { width: 100%; }
}
`;
