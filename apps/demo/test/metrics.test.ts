import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientLabel, escapeLabelValue, RequestMetrics } from "../src/metrics.js";
import { connectLegacy } from "./helpers/legacy-client.js";
import { ALICE, startDualDemo } from "./helpers/server.js";
import { rpc } from "./helpers/wire.js";

/** Parses `mcp_requests_total{era="…",client="…"} N` lines (label values unescaped). */
function counters(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const line = /^mcp_requests_total\{era="((?:[^"\\]|\\.)*)",client="((?:[^"\\]|\\.)*)"\} (\d+)$/;
  const unescapeLabel = (v: string) => v.replace(/\\(["\\n])/g, (_, c) => (c === "n" ? "\n" : c));
  for (const row of text.split("\n")) {
    const m = line.exec(row);
    if (m) out.set(`${unescapeLabel(m[1] ?? "")}|${unescapeLabel(m[2] ?? "")}`, Number(m[3]));
  }
  return out;
}

describe("/metrics", () => {
  let server: Awaited<ReturnType<typeof startDualDemo>>;
  const metricsUrl = () => server.url.replace(/\/mcp$/, "/metrics");

  beforeAll(async () => {
    server = await startDualDemo();
  });
  afterAll(async () => {
    await server.stop();
  });

  it("counts requests per era and client name, in the Prometheus text format", async () => {
    // 2026-07-28: the name comes from _meta["io.modelcontextprotocol/clientInfo"].
    const asAlice = { token: ALICE };
    for (let i = 0; i < 3; i++) {
      await rpc(
        server.url,
        "tools/call",
        {
          name: "greet",
          arguments: { name: "Ada" },
          _meta: { "io.modelcontextprotocol/clientInfo": { name: "modern-app", version: "1" } },
        },
        asAlice,
      );
    }
    const weird = 'we"ird\\name\nline2';
    await rpc(
      server.url,
      "tools/list",
      { _meta: { "io.modelcontextprotocol/clientInfo": { name: weird, version: "1" } } },
      asAlice,
    );
    await rpc(
      server.url,
      "tools/list",
      { _meta: { "io.modelcontextprotocol/clientInfo": { version: "1" } } },
      asAlice,
    );

    // 2025-11-25: the name comes from the session's initialize clientInfo.
    const legacy = await connectLegacy(server.url, ALICE, "legacy-app");
    try {
      const execution = await legacy.session.callTool(
        "slow_compute",
        { seconds: 0 },
        { task: { preference: "require" } },
      );
      expect((await execution.settle()).outcome.status).toBe("completed");
    } finally {
      await legacy.close();
    }
    // A legacy request outside any session has no name.
    const orphan = await fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    await orphan.body?.cancel();

    const response = await fetch(metricsUrl());
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    const text = await response.text();
    expect(text).toContain("# TYPE mcp_requests_total counter");
    expect(text).toContain("# TYPE mcp_legacy_sessions gauge");
    const seen = counters(text);
    expect(seen.get("2026-07-28|modern-app")).toBe(3);
    expect(seen.get(`2026-07-28|${weird}`)).toBe(1);
    expect(text).toContain('client="we\\"ird\\\\name\\nline2"');
    expect(seen.get("2026-07-28|unknown")).toBe(1);
    // initialize, notifications/initialized, tools/list, tools/call, tasks/get…, DELETE
    expect(seen.get("2025-11-25|legacy-app")).toBeGreaterThanOrEqual(4);
    expect(seen.get("2025-11-25|unknown")).toBe(1);
    // Every line is a comment or a sample.
    for (const row of text.trimEnd().split("\n")) {
      expect(row).toMatch(/^(# (HELP|TYPE) .+|mcp_\w+(\{.*\})? \d+)$/);
    }
  });

  it("bounds client names and sessions", () => {
    const metrics = new RequestMetrics({ maxClients: 2, maxSessions: 1 });
    metrics.count("2026-07-28", "a");
    metrics.count("2026-07-28", "b");
    metrics.count("2026-07-28", "c");
    expect(metrics.get("2026-07-28", "other")).toBe(1);
    metrics.bindSession("s1", "a");
    metrics.bindSession("s2", "b");
    expect(metrics.sessionClient("s1")).toBe("unknown");
    expect(metrics.sessionClient("s2")).toBe("b");
    expect(clientLabel("  ")).toBe("unknown");
    expect(clientLabel(42)).toBe("unknown");
    expect(clientLabel("x".repeat(500))).toHaveLength(128);
    expect(escapeLabelValue('a"b\\c\nd')).toBe('a\\"b\\\\c\\nd');
  });
});
