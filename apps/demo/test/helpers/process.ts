import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { dropTaskSchema } from "@mcp-tasks/store-drizzle";

/** The package directory (where `pnpm --filter @mcp-tasks/demo start` runs). */
export const DEMO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The built binary (vitest's global setup builds it). */
export const MAIN = fileURLToPath(new URL("../../dist/main.js", import.meta.url));
/** The test database (CI provides it; override with DATABASE_URL). */
export const DATABASE_URL = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";

export interface DemoProcess {
  readonly child: ChildProcess;
  /** What the start line printed: the MCP endpoint (`…/mcp`), or a worker's base URL. */
  readonly url: string;
  /** `http://host:port` (empty until started), where `/metrics` and `/health` are served. */
  readonly base: string;
  readonly exited: Promise<number | null>;
  out(): string;
  err(): string;
  /** Sends `signal` (default SIGKILL) if still running and waits for the exit (bounded). */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Every process started here, so a failing test still kills them (see {@link killAll}). */
const started = new Set<DemoProcess>();

/**
 * Runs `node dist/main.js ...args` without waiting for anything: for runs that are meant
 * to exit on their own (`--help`, a refused configuration). `url` stays empty.
 */
export function spawnDemo(args: string[], env: Record<string, string> = {}): DemoProcess {
  const child = spawn(process.execPath, [MAIN, ...args], {
    cwd: DEMO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => {
    stdout += d;
  });
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const proc: DemoProcess = {
    child,
    url: "",
    base: "",
    exited,
    out: () => stdout,
    err: () => stderr,
    async kill(signal = "SIGKILL") {
      if (isRunning(child)) child.kill(signal);
      const timer = new Promise<"timeout">((resolve) =>
        setTimeout(() => resolve("timeout"), 15_000).unref(),
      );
      const result = await Promise.race([exited, timer]);
      if (result === "timeout") {
        child.kill("SIGKILL");
        return exited;
      }
      started.delete(proc);
      return result;
    },
  };
  started.add(proc);
  return proc;
}

/**
 * Starts `node dist/main.js ...args` and resolves once it printed its `listening on <url>`
 * line, or a worker's `worker on <base>` line (bounded by `timeoutMs`); rejects, after
 * killing it, when it exits or times out first.
 */
export async function startProcess(
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<DemoProcess> {
  const proc = spawnDemo(args, options.env);
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (let i = 0; i < 2_000 && Date.now() < deadline; i++) {
    const url = /(?:listening|worker) on (http:\/\/\S+)/.exec(proc.out())?.[1];
    if (url) return Object.assign(proc, { url, base: new URL(url).origin });
    if (!isRunning(proc.child)) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await proc.kill();
  throw new Error(`the demo did not start: ${args.join(" ")}\n${proc.out()}\n${proc.err()}`);
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Kills every process still running (for `afterEach`/`afterAll`). */
export async function killAll(): Promise<void> {
  await Promise.all([...started].map((p) => p.kill()));
}

/** A fresh schema name in the test database, dropped by {@link dropSchema}. */
export function schemaName(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString("hex")}`;
}

/** Drops a test schema (and everything in it). */
export function dropSchema(schema: string): Promise<void> {
  return dropTaskSchema(DATABASE_URL, schema);
}

/** `/metrics` of a node, from its MCP endpoint (or a worker's base URL). */
export function metricsUrl(url: string): string {
  return `${new URL(url).origin}/metrics`;
}

/** `/health` of a node: `{ status, role, holder, claiming, running }`. */
export function healthUrl(url: string): string {
  return `${new URL(url).origin}/health`;
}

/** The `lease holder: <holder>` a node on a leasing store printed at start. */
export function leaseHolder(proc: DemoProcess): string {
  const holder = /^lease holder: (\S+)$/m.exec(proc.out())?.[1];
  if (holder === undefined) throw new Error(`no lease holder line:\n${proc.out()}`);
  return holder;
}
