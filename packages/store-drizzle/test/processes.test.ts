import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { owner, type TaskChange } from "@mcp-tasks/core";
import { type OwnerScope, ownerScope, retryingMessage } from "@mcp-tasks/core/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPGliteTaskStore,
  createPostgresTaskStore,
  type DrizzleTaskStore,
} from "../src/index.js";
import {
  buildPackage,
  ChildNode,
  DATABASE_URL,
  dropSchemas,
  freshSchemaName,
  migrateSchema,
  sleep,
} from "./helpers.js";

const ALICE = owner({ principalId: "alice", tenantId: "acme" });
const SCOPE = ownerScope(ALICE, { requireOwner: false }) as OwnerScope;

const children: ChildNode[] = [];
const schemas: string[] = [];
const dirs: string[] = [];

beforeAll(() => buildPackage(), 120_000);
afterAll(async () => {
  await Promise.all(children.map((c) => c.kill()));
  await dropSchemas(schemas);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function child(env: Record<string, string>): ChildNode {
  const c = new ChildNode(env);
  children.push(c);
  return c;
}

describe("two OS processes on one PostgreSQL", () => {
  const schema = freshSchemaName("p");
  let a: DrizzleTaskStore;

  beforeAll(async () => {
    schemas.push(schema);
    await migrateSchema(schema);
    a = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 4 });
  });
  afterAll(() => a?.close());

  it("create here, read/cancel/answer there, and each side hears the other", async () => {
    const b = child({ SCENARIO: "serve", SCHEMA: schema });
    await b.waitFor((m) => m.ready === true);
    const t = await a.create(
      {
        taskId: `proc-${process.pid}-${Date.now()}`,
        era: "2026-07-28",
        request: { toolName: "slow_compute", arguments: { seconds: 1 } },
        ttlMs: 60_000,
        ttlAnchor: "creation",
        pollIntervalMs: 100,
      },
      SCOPE,
    );
    expect(await b.call("get", { taskId: t.taskId })).toEqual(t);

    const events: TaskChange[] = [];
    const stop = a.watch((c) => events.push(c), t.taskId);
    await b.call("requestCancel", { taskId: t.taskId });
    await a.requireInput(t.taskId, SCOPE, { q: { method: "elicitation/create" } });
    const submitted = (await b.call("submitInput", {
      taskId: t.taskId,
      responses: { q: { action: "accept" } },
    })) as { acceptedKeys: string[] };
    expect(submitted.acceptedKeys).toEqual(["q"]);
    for (let i = 0; i < 100 && events.length < 3; i++) await sleep(20);
    stop();
    // Changes made on different nodes reach a watcher in arrival order, not version order.
    events.sort((x, y) => x.version - y.version);
    expect(events.map((e) => [e.kind, e.version])).toEqual([
      ["cancel_requested", 2],
      ["input_requested", 3],
      ["input_submitted", 4],
    ]);

    // And the other way round: the child watches, this process completes.
    await b.call("watch", { taskId: t.taskId });
    await a.complete(t.taskId, SCOPE, { content: [] });
    const heard = await b.waitFor(
      (m) => (m.event as TaskChange | undefined)?.kind === "status_changed",
    );
    expect(heard.event).toMatchObject({ taskId: t.taskId, status: "completed", version: 5 });
    await b.call("exit");
  });

  it("a task whose create resolved survives kill -9, and its dead worker's task is failed after the lease runs out", async () => {
    const worker = child({
      SCENARIO: "hold",
      SCHEMA: schema,
      LEASE_MS: "1500",
      COUNT: "3",
      ID_PREFIX: `killed-${process.pid}-${Date.now()}`,
    });
    const created: string[] = [];
    for (let i = 0; i < 3; i++) {
      const m = await worker.waitFor(
        (msg) => typeof msg.created === "string" && !created.includes(msg.created as string),
      );
      created.push(m.created as string);
    }
    await worker.kill("SIGKILL");
    // A fresh store (new pool), as a node starting after the crash would open.
    const reopened = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 2 });
    try {
      for (const id of created) expect((await reopened.get(id, SCOPE)).status).toBe("working");
      // One attempt each (the default policy): the lost run was the last, so they fail.
      let failed = 0;
      const deadline = Date.now() + 15_000;
      while (failed < 3 && Date.now() < deadline) {
        const sweep = await reopened.recoverOrphans();
        expect(sweep.requeued).toBe(0);
        failed += sweep.failed;
        if (failed < 3) await sleep(200);
      }
      expect(failed).toBe(3);
      for (const id of created) {
        const t = await reopened.get(id, SCOPE);
        expect(t.status).toBe("failed");
        expect(t.outcome).toMatchObject({ kind: "error", error: { code: -32603 } });
        expect(t.statusMessage).toMatch(/worker lost/i);
      }
    } finally {
      await reopened.close();
    }
  });

  it("a killed worker's tasks with attempts left are requeued, claimed here and finished; the dead run's fence is refused", async () => {
    const prefix = `requeued-${process.pid}-${Date.now()}`;
    const worker = child({
      SCENARIO: "hold",
      SCHEMA: schema,
      LEASE_MS: "1500",
      COUNT: "2",
      MAX_ATTEMPTS: "2",
      ID_PREFIX: prefix,
    });
    await worker.waitFor((m) => m.created === `${prefix}-1`);
    const holder = `child-${worker.process.pid}`;
    await worker.kill("SIGKILL");
    const ids = [`${prefix}-0`, `${prefix}-1`];
    let requeued = 0;
    const deadline = Date.now() + 15_000;
    while (requeued < 2 && Date.now() < deadline) {
      const sweep = await a.recoverOrphans();
      expect(sweep.failed).toBe(0);
      requeued += sweep.requeued;
      if (requeued < 2) await sleep(200);
    }
    expect(requeued).toBe(2);
    const claimed = (await a.claim("survivor", { limit: 10, leaseMs: 60_000 })).filter((t) =>
      ids.includes(t.taskId),
    );
    expect(claimed.map((t) => t.taskId).sort()).toEqual(ids);
    for (const t of claimed) {
      expect(t.execution).toMatchObject({ attempt: 2, fencingToken: 2, holder: "survivor" });
      expect(t.statusMessage).toBe(retryingMessage("the worker was lost", 2, 2));
      const dead = { ...SCOPE, fence: { holder, fencingToken: 1 } };
      await expect(a.complete(t.taskId, dead, {})).rejects.toMatchObject({ code: "lease_lost" });
      const run = { ...SCOPE, fence: { holder: "survivor", fencingToken: 2 } };
      expect((await a.complete(t.taskId, run, { content: [] })).status).toBe("completed");
    }
  });
});

describe("file-backed PGlite", () => {
  it("a task whose create resolved survives kill -9 and reopening the directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-pglite-"));
    dirs.push(dir);
    const worker = child({
      SCENARIO: "hold",
      BACKEND: "pglite",
      DATA_DIR: dir,
      SCHEMA: "public",
      LEASE_MS: "60000",
      COUNT: "5",
      ID_PREFIX: "pglite",
    });
    await worker.waitFor((m) => m.created === "pglite-4", 60_000);
    await worker.kill("SIGKILL");
    const reopened = await createPGliteTaskStore({ dataDir: dir, migrate: true });
    try {
      for (let i = 0; i < 5; i++) {
        const t = await reopened.get(`pglite-${i}`, SCOPE);
        expect(t.status).toBe("working");
        expect(t.request.arguments).toEqual({ i });
        expect(t.owner).toEqual(ALICE);
      }
    } finally {
      await reopened.close();
    }
  });
});
