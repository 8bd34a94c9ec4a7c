/**
 * The script's opening: the IIFE, the page state, DOM and formatting helpers, and the
 * JSON API client (bearer token, errors as `ApiError`, a `401` signs out).
 *
 * A part of the console page's script (see `CONSOLE_SCRIPT`): text, joined in page order.
 */
export const PRELUDE_SCRIPT: string = String.raw`// The console page: plain DOM, no framework. Everything it shows comes from the JSON API;
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

`;
