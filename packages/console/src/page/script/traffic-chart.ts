/**
 * The operators' traffic panel: requests per interval by era as stacked bars, with the same
 * numbers as a table for screen readers and exact values.
 *
 * A part of the console page's script (see `CONSOLE_SCRIPT`): text, joined in page order.
 */
export const TRAFFIC_CHART_SCRIPT: string = String.raw`  // ---------------------------------------------------------------- traffic
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

`;
