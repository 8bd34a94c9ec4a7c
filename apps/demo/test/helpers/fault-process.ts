import { type ChildProcess, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { DEMO_ROOT } from "./process.js";

const SCRIPT = fileURLToPath(new URL("./fault-server.mjs", import.meta.url));

/** Settings of the fault-suite server process (see `fault-server.mjs`). */
export interface FaultServerOptions {
  /** `{ token: "principal@tenant" }`. */
  readonly tokens: Record<string, string>;
  readonly sweepIntervalMs?: number;
  readonly maxTasks?: number;
  readonly maxTasksPerOwner?: number;
  readonly pollIntervalMs?: number;
  readonly concurrency?: number;
}

/** The server's memory after two full collections, as the process itself sees it. */
export interface ServerMemory {
  readonly rss: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
  /** Tasks the memory store holds, finished ones not yet swept included. */
  readonly tasks: number;
  /** Whether the collections ran (the process has `--expose-gc`). */
  readonly gc: boolean;
  /** What the app reported to its `onError` (never sent to clients). */
  readonly errors: readonly string[];
  /** Of those, the `TypeError`s, `RangeError`s and `ReferenceError`s: broken code paths. */
  readonly bugs: readonly string[];
}

export interface FaultServer {
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  alive(): boolean;
  /** Memory after GC (bounded wait). */
  memory(): Promise<ServerMemory>;
  /** Resident set size from `/proc/<pid>/status`, in bytes, without collecting first. */
  rss(): Promise<number>;
  stderr(): string;
  stop(): Promise<void>;
}

/** Starts `fault-server.mjs` under `node --expose-gc` and waits for its URL (bounded). */
export async function startFaultServer(options: FaultServerOptions): Promise<FaultServer> {
  const child = spawn(process.execPath, ["--expose-gc", SCRIPT], {
    cwd: DEMO_ROOT,
    env: { ...process.env, FAULT_SERVER_OPTIONS: JSON.stringify(options) },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => {
    stdout += d;
  });
  child.stderr?.on("data", (d) => {
    if (stderr.length < 100_000) stderr += d;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  let url = "";
  for (let i = 0; i < 1_200 && alive(); i++) {
    url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1] ?? "";
    if (url) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  if (!url) {
    child.kill("SIGKILL");
    throw new Error(`the fault server did not start:\n${stdout}\n${stderr}`);
  }
  let nextId = 1;
  return {
    url,
    pid: child.pid as number,
    child,
    alive,
    memory() {
      const id = nextId++;
      return new Promise<ServerMemory>((resolve, reject) => {
        const timer = setTimeout(() => {
          child.off("message", onMessage);
          reject(new Error("the fault server did not report its memory within 10 s"));
        }, 10_000);
        const onMessage = (message: unknown) => {
          const m = message as ServerMemory & { id: number };
          if (m?.id !== id) return;
          clearTimeout(timer);
          child.off("message", onMessage);
          resolve(m);
        };
        child.on("message", onMessage);
        child.send({ type: "memory", id });
      });
    },
    async rss() {
      const status = await readFile(`/proc/${child.pid}/status`, "utf8");
      const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1]);
      return kb * 1024;
    },
    stderr: () => stderr,
    async stop() {
      if (!alive()) return;
      child.kill("SIGTERM");
      const timeout = new Promise<"timeout">((resolve) =>
        setTimeout(() => resolve("timeout"), 15_000).unref(),
      );
      if ((await Promise.race([exited, timeout])) === "timeout") {
        child.kill("SIGKILL");
        await exited;
      }
    },
  };
}
