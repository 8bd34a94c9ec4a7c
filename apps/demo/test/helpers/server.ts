import { owner } from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { createDemoApp, type DemoAppOptions } from "../../src/app.js";
import { StaticTokenResolver } from "../../src/auth/static-tokens.js";
import { listen, type RunningServer } from "../../src/http-server.js";
import { demoTools } from "../../src/tools/index.js";

export const ALICE = "alice-token";
export const BOB = "bob-token";

/** Starts the demo in-process on 127.0.0.1, port 0, with two static tokens. */
export async function startDemo(overrides: Partial<DemoAppOptions> = {}): Promise<RunningServer> {
  const app = createDemoApp({
    store: new MemoryTaskStore({ sweepIntervalMs: 0 }),
    resolver: new StaticTokenResolver(
      new Map([
        [ALICE, owner({ principalId: "alice", tenantId: "acme" })],
        [BOB, owner({ principalId: "bob", tenantId: "acme" })],
      ]),
    ),
    tools: demoTools({ reportMsPerSection: 50 }),
    pollIntervalMs: 50,
    ...overrides,
  });
  return listen(app, { host: "127.0.0.1", port: 0 });
}
