import { randomBytes } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import {
  createPGliteTaskStore,
  createPostgresTaskStore,
  type DrizzleTaskStore,
  dropTaskSchema,
  type MigrateResult,
  migrate,
} from "../src/index.js";

/** The test database; override with DATABASE_URL. */
export const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** A schema name no other run uses. */
export function freshSchemaName(prefix = "t"): string {
  return `${prefix}_${process.pid}_${randomBytes(5).toString("hex")}`;
}

/**
 * The file's connection that migrates its fresh schemas (`migrateSchema`), opened on first use
 * and closed by itself after a second idle, so it holds nothing open after the file's tests.
 */
let migrator: postgres.Sql | undefined;

/**
 * Migrates `schema` on the test database through one connection kept for the file: a new
 * connection per schema (`migrate(DATABASE_URL, …)`) spent most of each migrate warming its
 * catalog caches (the PostgreSQL contract suite ran in 112 s that way, 60 s this way).
 */
export function migrateSchema(schema: string): Promise<MigrateResult> {
  migrator ??= postgres(DATABASE_URL, {
    max: 1,
    idle_timeout: 1,
    fetch_types: false,
    onnotice: () => {},
  });
  return migrate(migrator, { schema });
}

/** Drops test schemas. */
export async function dropSchemas(schemas: Iterable<string>): Promise<void> {
  const names = [...schemas];
  if (names.length === 0) return;
  const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    for (const name of names) await dropTaskSchema(sql, name);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * How many connections to the test database have an `application_name` starting with
 * `prefix`, once none is left or after about a second: a backend leaves pg_stat_activity a
 * moment after its client's socket closed.
 */
export async function connectionsNamed(prefix: string): Promise<number> {
  const sql = postgres(DATABASE_URL, { max: 1, fetch_types: false, onnotice: () => {} });
  try {
    const count = async () =>
      (
        await sql`select count(*)::int as n from pg_stat_activity
          where starts_with(application_name, ${prefix})`
      )[0]?.n as number;
    let n = await count();
    for (let i = 0; i < 50 && n !== 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      n = await count();
    }
    return n;
  } finally {
    await sql.end();
  }
}

/** A store on a fresh, migrated schema, and the schema's name (for bulk SQL). */
export type OpenSchemaStore = () => Promise<{ store: DrizzleTaskStore; schema: string }>;

/**
 * The two databases a test file runs its stores on, by name: PostgreSQL (a fresh schema per
 * store, on `poolSize` connections) and an in-memory PGlite the file's stores share (a schema
 * each). `close` (for `afterAll`) drops the PostgreSQL schemas and closes the PGlite.
 */
export function schemaStoreBackends(
  prefix: string,
  poolSize = 2,
): { backends: [name: string, open: OpenSchemaStore][]; close: () => Promise<void> } {
  const schemas: string[] = [];
  const db = new PGlite();
  return {
    backends: [
      [
        "PostgreSQL",
        async () => {
          const schema = freshSchemaName(prefix);
          schemas.push(schema);
          await migrateSchema(schema);
          const store = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize });
          return { store, schema };
        },
      ],
      [
        "PGlite",
        async () => {
          const schema = freshSchemaName(prefix);
          const store = await createPGliteTaskStore({ client: db, schema, migrate: true });
          return { store, schema };
        },
      ],
    ],
    close: async () => {
      await dropSchemas(schemas);
      await db.close();
    },
  };
}

/** A new task with id `taskId`: tool `t`, no arguments, no ttl. */
export function newTask(taskId: string) {
  return {
    taskId,
    era: "2026-07-28" as const,
    request: { toolName: "t", arguments: {} },
    ttlMs: null,
    ttlAnchor: "creation" as const,
    pollIntervalMs: null,
  };
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

/** Builds dist/ (child processes run the built package with plain `node`). */
export function buildPackage(): void {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
    cwd: packageDir,
    stdio: "inherit",
    timeout: 120_000,
  });
}

/** A child process running test/fixtures/store-node.mjs, read line by line. */
export class ChildNode {
  readonly process: ChildProcess;
  readonly messages: Record<string, unknown>[] = [];
  #waiters: (() => void)[] = [];
  #buffer = "";
  #nextId = 1;
  stderr = "";

  constructor(env: Record<string, string>) {
    this.process = spawn(process.execPath, ["test/fixtures/store-node.mjs"], {
      cwd: packageDir,
      env: { ...process.env, DATABASE_URL, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.process.stdout!.on("data", (chunk: Buffer) => {
      this.#buffer += chunk.toString("utf8");
      let nl = this.#buffer.indexOf("\n");
      while (nl >= 0) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        if (line.trim()) this.messages.push(JSON.parse(line));
        nl = this.#buffer.indexOf("\n");
      }
      for (const w of this.#waiters.splice(0)) w();
    });
    this.process.stderr!.on("data", (chunk: Buffer) => {
      this.stderr += chunk.toString("utf8");
    });
  }

  /** Waits (bounded) for a message matching `match`. */
  async waitFor(
    match: (m: Record<string, unknown>) => boolean,
    timeoutMs = 15_000,
  ): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(match);
      if (found) return found;
      if (Date.now() > deadline || this.process.exitCode !== null) {
        throw new Error(`child: no matching message (stderr: ${this.stderr.slice(-2000)})`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends a command and resolves with its value (or rejects with its error). */
  async call(op: string, args: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.#nextId++;
    this.process.stdin!.write(`${JSON.stringify({ id, op, args })}\n`);
    const reply = await this.waitFor((m) => m.id === id);
    if (reply.ok !== true) throw Object.assign(new Error("child call failed"), reply.error);
    return reply.value;
  }

  /** SIGKILL, and wait for the process to be gone. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.process.once("exit", () => resolve()));
    this.process.kill(signal);
    await exited;
  }
}

/**
 * The connect timeout of the contract suites' stores: a loaded 2-core CI machine can take
 * seconds to start a backend for each of the hundreds of fresh pools these suites open (one
 * run failed a `get` on a 5 s connect at load average 10). The suites are not about connect
 * timeouts; `connection-loss.test.ts` is, with the default.
 */
export const CONTRACT_CONNECT_TIMEOUT_S = 30;
