import { owner } from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { createDemoApp, type DemoApp, type DemoAppOptions } from "../../src/app.js";
import { StaticTokenResolver } from "../../src/auth/static-tokens.js";
import { listen, type RunningServer } from "../../src/http-server.js";
import { demoTools } from "../../src/tools/index.js";

export const ALICE = "alice-token";
export const BOB = "bob-token";
export const ALICE_OWNER = owner({ principalId: "alice", tenantId: "acme" });
export const BOB_OWNER = owner({ principalId: "bob", tenantId: "acme" });

/**
 * Starts the demo in-process on 127.0.0.1, port 0, with two static tokens. Anonymous
 * callers are let in (`requireAuth: false`, the demo's `--allow-anonymous`) on purpose:
 * most suites drive unowned tasks; the require-owner default is tested where it matters
 * (limits.test.ts, auth.test.ts) with `requireAuth` left out or `true`.
 */
export async function startDemo(
  overrides: Partial<DemoAppOptions> = {},
  serve: { metricsToken?: string } = {},
): Promise<RunningServer & { app: DemoApp }> {
  const app = createDemoApp({
    store: new MemoryTaskStore({ sweepIntervalMs: 0 }),
    resolver: new StaticTokenResolver(
      new Map([
        [ALICE, ALICE_OWNER],
        [BOB, BOB_OWNER],
      ]),
    ),
    tools: demoTools({ reportMsPerSection: 50 }),
    pollIntervalMs: 50,
    onError: () => {},
    requireAuth: false,
    ...overrides,
  });
  const running = await listen(app, { host: "127.0.0.1", port: 0, ...serve });
  return Object.assign(running, { app });
}

/** The demo with both eras, as the binary serves them. */
export function startDualDemo(overrides: Partial<DemoAppOptions> = {}) {
  return startDemo({ legacy: true, ...overrides });
}
