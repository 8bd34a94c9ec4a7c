import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRawDispatch } from "@mcp-tasks/extension/client";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { afterAll, describe, expect, it } from "vitest";
import { connectLegacy } from "./helpers/legacy-client.js";
import { killAll, metricsUrl, startProcess } from "./helpers/process.js";

/**
 * The "done when": the demo started as the root `npm run demo` starts it (the
 * package's `start` script, `node dist/main.js` in apps/demo, no tokens configured) on the
 * embedded store, and the official ext-tasks client completes a task in each era.
 */
describe("quick start on the embedded store", () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-demo-quickstart-"));
  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves both eras to the ext-tasks client", { timeout: 90_000 }, async () => {
    const env: Record<string, string> = {};
    for (const name of ["PORT", "HOST", "MCP_TASKS_STORE", "DEMO_TOKENS", "DEMO_LEGACY"]) {
      if (process.env[name] !== undefined) env[name] = "";
    }
    const demo = await startProcess(["--store", "pglite", "--data-dir", dir, "--port", "0"], {
      env: { ...env, DEMO_REQUIRE_AUTH: "0" },
      timeoutMs: 60_000,
    });
    try {
      expect(demo.out()).toContain(`store: pglite ${join(dir, "pglite")}`);
      expect(demo.out()).toContain("eras: 2026-07-28, 2025-11-25");
      const token = /dev token for alice@dev: (\S+)/.exec(demo.out())?.[1];
      expect(token).toBeTruthy();
      if (!token) return;

      // 2026-07-28: ext-tasks' v2 path (host-side rawDispatch).
      const clientInfo = { name: "quickstart-modern", version: "1.0.0" };
      const client = new Client(clientInfo, {
        capabilities: {},
        versionNegotiation: { mode: "auto" },
      });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(demo.url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      const session = createTaskSessionFromClient(client, {
        endpointId: "quickstart-modern",
        rawDispatch: createRawDispatch({ url: demo.url, token }),
        v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo, clientCapabilities: {} },
      });
      try {
        expect(client.getProtocolEra()).toBe("modern");
        const execution = await session.callTool("generate_report", { topic: "q", sections: 1 });
        expect(execution.kind).toBe("task");
        const { outcome } = await execution.settle();
        expect(outcome.status).toBe("completed");
        if (outcome.status === "completed") {
          expect(JSON.stringify(outcome.result)).toContain("# Report: q");
        }
      } finally {
        await session.close();
        await client.close();
      }

      // 2025-11-25: ext-tasks' v1 path over a session.
      const legacy = await connectLegacy(demo.url, token, "quickstart-legacy");
      try {
        expect(legacy.client.getProtocolEra()).toBe("legacy");
        const execution = await legacy.session.callTool(
          "slow_compute",
          { seconds: 0.1, label: "legacy" },
          { task: { preference: "require" } },
        );
        expect(execution.kind).toBe("task");
        const { outcome } = await execution.settle();
        expect(outcome.status).toBe("completed");
      } finally {
        await legacy.close();
      }

      const metrics = await (await fetch(metricsUrl(demo.url))).text();
      expect(metrics).toMatch(
        /mcp_requests_total\{era="2026-07-28",client="quickstart-modern"\} \d+/,
      );
      expect(metrics).toMatch(
        /mcp_requests_total\{era="2025-11-25",client="quickstart-legacy"\} \d+/,
      );
      expect(await demo.kill("SIGTERM")).toBe(0);
    } finally {
      await demo.kill();
    }
  });
});
