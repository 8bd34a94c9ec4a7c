import { parseArgs } from "node:util";
import type { StoreKind } from "./store.js";

/** The demo's settings after flags and environment. */
export interface DemoConfig {
  readonly host: string;
  readonly port: number;
  readonly store: StoreKind;
  /** `token=principal@tenant,...`, or `undefined` to generate two dev tokens. */
  readonly tokens: string | undefined;
  readonly requireAuth: boolean;
  readonly legacy: boolean;
  readonly help: boolean;
}

export const HELP = `Usage: mcp-tasks-demo [options]

Serves MCP tasks at http://HOST:PORT/mcp (2026-07-28 tasks extension; 2025-11-25 when a
legacy facade is plugged in).

Options (flag / environment variable):
  --port N            PORT             port to listen on; 0 picks a free port (default 3000)
  --host H            HOST             address to bind (default 127.0.0.1)
  --store KIND        MCP_TASKS_STORE  memory | pglite | postgres (default memory)
  --tokens LIST       DEMO_TOKENS      bearer tokens: alice-token=alice@acme,bob-token=bob@acme
                                       (default: two random dev tokens, printed at start)
  --require-auth      DEMO_REQUIRE_AUTH=1  answer anonymous requests 401
  --legacy on|off     DEMO_LEGACY      serve the 2025-11-25 era (default on when available)
  -h, --help                           show this help
`;

/** Thrown for bad flags; the message is for the user. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value);
}

/** Parses flags (winning) and environment variables. */
export function parseConfig(argv: readonly string[], env: NodeJS.ProcessEnv): DemoConfig {
  let values: ReturnType<typeof parse>["values"];
  function parse() {
    return parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        store: { type: "string" },
        tokens: { type: "string" },
        "require-auth": { type: "boolean" },
        legacy: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  }
  try {
    values = parse().values;
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const portText = values.port ?? env.PORT ?? "3000";
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`--port must be an integer from 0 to 65535, got '${portText}'`);
  }
  const store = values.store ?? env.MCP_TASKS_STORE ?? "memory";
  if (store !== "memory" && store !== "pglite" && store !== "postgres") {
    throw new ConfigError(`--store must be memory, pglite or postgres, got '${store}'`);
  }
  const legacy = values.legacy ?? env.DEMO_LEGACY ?? "on";
  if (legacy !== "on" && legacy !== "off") {
    throw new ConfigError(`--legacy must be on or off, got '${legacy}'`);
  }
  const host = values.host ?? env.HOST ?? "127.0.0.1";
  return {
    host,
    port,
    store,
    tokens: values.tokens ?? env.DEMO_TOKENS,
    requireAuth: values["require-auth"] ?? truthy(env.DEMO_REQUIRE_AUTH),
    legacy: legacy === "on",
    help: values.help ?? false,
  };
}
