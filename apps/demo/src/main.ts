#!/usr/bin/env node
import { randomBytes } from "node:crypto";
import { owner } from "@mcp-tasks/core";
import { createDemoApp } from "./app.js";
import { parseTokenList, StaticTokenResolver } from "./auth/static-tokens.js";
import { ConfigError, HELP, parseConfig } from "./config.js";
import { listen } from "./http-server.js";
import { openStore, StoreUnavailableError } from "./store.js";

async function main(): Promise<number> {
  let config: ReturnType<typeof parseConfig>;
  try {
    config = parseConfig(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`error: ${error.message}\n\n${HELP}`);
    return 2;
  }
  if (config.help) {
    process.stdout.write(HELP);
    return 0;
  }

  let tokens: Map<string, ReturnType<typeof owner>>;
  let generated = false;
  try {
    if (config.tokens !== undefined && config.tokens.trim() !== "") {
      tokens = parseTokenList(config.tokens);
    } else {
      generated = true;
      tokens = new Map([
        [
          `dev-${randomBytes(12).toString("hex")}`,
          owner({ principalId: "alice", tenantId: "dev" }),
        ],
        [`dev-${randomBytes(12).toString("hex")}`, owner({ principalId: "bob", tenantId: "dev" })],
      ]);
    }
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    return 2;
  }

  let store: Awaited<ReturnType<typeof openStore>>;
  try {
    store = await openStore(config.store);
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    console.error(`error: ${error.message}`);
    return 1;
  }

  const app = createDemoApp({
    store,
    resolver: new StaticTokenResolver(tokens),
    requireAuth: config.requireAuth,
    legacy: config.legacy ? undefined : "off",
    loopbackOnly:
      config.host === "127.0.0.1" || config.host === "localhost" || config.host === "::1",
  });
  const running = await listen(app, { host: config.host, port: config.port });
  console.log(`listening on ${running.url}`);
  console.log(
    `store: ${config.store}; eras: ${app.eras.join(", ")}${config.legacy && app.eras.length === 1 ? " (2025-11-25 legacy facade not plugged in yet)" : ""}`,
  );
  if (generated) {
    for (const [token, who] of tokens) {
      console.log(`dev token for ${who.principalId}@${who.tenantId}: ${token}`);
    }
  }

  return new Promise<number>((resolve) => {
    const shutdown = (signal: string) => {
      console.log(`${signal}: shutting down`);
      running.stop().then(
        () => resolve(0),
        (error) => {
          console.error("shutdown failed:", error instanceof Error ? error.message : error);
          resolve(1);
        },
      );
    };
    process.once("SIGTERM", () => shutdown("SIGTERM"));
    process.once("SIGINT", () => shutdown("SIGINT"));
  });
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error("fatal:", error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
