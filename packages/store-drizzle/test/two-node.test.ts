import { isTaskError, owner, type TaskChange, type TaskRecord, TaskService } from "@mcp-tasks/core";
import { type OwnerScope, ownerScope } from "@mcp-tasks/core/store";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createPostgresTaskStore, type DrizzleTaskStore, migrate } from "../src/index.js";
import { DATABASE_URL, dropSchemas, freshSchemaName, migrateSchema, sleep } from "./helpers.js";

const ALICE = owner({ principalId: "alice", tenantId: "acme" });
const SCOPE = ownerScope(ALICE, { requireOwner: false }) as OwnerScope;

let n = 0;
const newTask = (overrides: Record<string, unknown> = {}) => ({
  taskId: `two-node-${process.pid}-${Date.now()}-${n++}`,
  era: "2026-07-28" as const,
  request: { toolName: "slow_compute", arguments: { n } },
  ttlMs: 3_600_000,
  ttlAnchor: "creation" as const,
  pollIntervalMs: 100,
  ...overrides,
});

/** Resolves with the first change matching `match`, or rejects after `timeoutMs`. */
function nextChange(
  store: DrizzleTaskStore,
  taskId: string,
  match: (c: TaskChange) => boolean,
  timeoutMs = 5000,
): Promise<TaskChange> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no matching change for ${taskId} within ${timeoutMs} ms`));
    }, timeoutMs);
    const stop = store.watch((c) => {
      if (!match(c)) return;
      clearTimeout(timer);
      stop();
      resolve(c);
    }, taskId);
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

for (const notify of ["after-commit", "in-transaction"] as const) {
  describe(`two nodes, two pools (notify ${notify})`, () => {
    const schema = freshSchemaName("n");
    let a: DrizzleTaskStore;
    let b: DrizzleTaskStore;

    // One clock for both nodes, moved by the tests that need leases or ttls to run out (as
    // the database's clock is one clock for every node), instead of sleeping past them.
    let time = Date.now();
    const clock = { now: () => time };
    const advance = (ms: number) => {
      time += ms;
    };

    beforeAll(async () => {
      await migrateSchema(schema);
      // Two independent pools, as two server nodes would have.
      a = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 8, notify, clock });
      b = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 8, notify, clock });
    });

    afterAll(async () => {
      await a?.close();
      await b?.close();
      await dropSchemas([schema]);
    });

    it("a task created on A is at once readable on B, owner and all", async () => {
      const created = await a.create(newTask(), SCOPE);
      const read = await b.get(created.taskId, SCOPE);
      expect(read).toEqual(created);
      expect(read.owner).toEqual(ALICE);
    });

    it("a cancel request written through B wakes the handler watching on A", async () => {
      const t = await a.create(newTask(), SCOPE);
      const woke = nextChange(a, t.taskId, (c) => c.kind === "cancel_requested");
      await b.requestCancel(t.taskId, SCOPE);
      expect(await woke).toMatchObject({ kind: "cancel_requested", status: "working", version: 2 });
      expect((await a.get(t.taskId, SCOPE)).cancelRequestedAt).not.toBeNull();
    });

    it("an input response submitted through B wakes the worker on A, which takes it", async () => {
      const t = await a.create(newTask(), SCOPE);
      await a.requireInput(t.taskId, SCOPE, { q: { method: "elicitation/create" } });
      const woke = nextChange(a, t.taskId, (c) => c.kind === "input_submitted");
      const submitted = await b.submitInput(t.taskId, SCOPE, { q: { action: "accept" } });
      expect(submitted.acceptedKeys).toEqual(["q"]);
      expect((await woke).status).toBe("working");
      const taken = await a.takeInputResponses(t.taskId, SCOPE);
      expect(taken.responses).toEqual({ q: { action: "accept" } });
    });

    it("a blocking wait for the result on B wakes when A completes the task", async () => {
      // Recheck far in the future: only the change feed can wake the wait in time.
      // B's reads are counted, so the task is completed only once the wait has read it
      // running (it subscribes before that read): a sleep raced this.
      let readsDone = 0;
      const countedB = new Proxy(b, {
        get(target, prop) {
          const value = Reflect.get(target, prop, target);
          if (typeof value !== "function") return value;
          if (prop !== "get") return value.bind(target);
          return (...args: Parameters<DrizzleTaskStore["get"]>) =>
            target.get(...args).finally(() => {
              readsDone += 1;
            });
        },
      });
      const serviceB = new TaskService({ store: countedB, waitRecheckMs: 60_000 });
      const serviceA = new TaskService({ store: a });
      const t = await serviceA.create(ALICE, {
        era: "2025-11-25",
        request: { toolName: "slow_compute", arguments: {} },
      });
      const started = Date.now();
      const waiting = serviceB.waitFor(ALICE, t.taskId, (task) => task.status === "completed");
      await vi.waitFor(() => expect(readsDone).toBeGreaterThanOrEqual(1), {
        timeout: 10_000,
        interval: 5,
      });
      await serviceA.complete(ALICE, t.taskId, { content: [{ type: "text", text: "done" }] });
      const done = await waiting;
      expect(done.status).toBe("completed");
      expect(Date.now() - started).toBeLessThan(30_000);
    });

    it("200 conflicting terminal transitions from both nodes: exactly one wins", async () => {
      const t = await a.create(newTask(), SCOPE);
      const writes = Array.from({ length: 200 }, (_, i) => {
        const node = i % 2 === 0 ? a : b;
        switch (i % 3) {
          case 0:
            return node.complete(t.taskId, SCOPE, { content: [{ type: "text", text: `w${i}` }] });
          case 1:
            return node.fail(t.taskId, SCOPE, { code: -32000, message: `w${i}` });
          default:
            return node.markCancelled(t.taskId, SCOPE, `w${i}`);
        }
      });
      const settled = await Promise.allSettled(writes);
      const won = settled.filter(
        (r) => r.status === "fulfilled",
      ) as PromiseFulfilledResult<TaskRecord>[];
      const lost = settled.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(199);
      for (const r of lost) expect(isTaskError(r.reason, "invalid_transition")).toBe(true);
      const final = await b.get(t.taskId, SCOPE);
      expect(final).toEqual(won[0]!.value);
      expect(final.version).toBe(2);
    });

    it("expired tasks are swept by both nodes at once, each exactly once", async () => {
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) {
        const t = await a.create(newTask({ ttlMs: 1 }), SCOPE);
        await a.complete(t.taskId, SCOPE, {});
        ids.push(t.taskId);
      }
      advance(1_000); // past their 1 ms ttl
      const [ra, rb] = await Promise.all([
        a.cleanupExpired({ limit: 1000 }),
        b.cleanupExpired({ limit: 1000 }),
      ]);
      expect(ra + rb).toBeGreaterThanOrEqual(30);
      for (const id of ids) {
        await expect(b.get(id, SCOPE)).rejects.toMatchObject({ code: "not_found_or_unauthorized" });
      }
    });

    // The queue. Tasks created without a lease by the tests above are queued too, so each
    // test below claims only a tool of its own.
    let tools = 0;
    const toolOfItsOwn = () => `tool-${notify}-${tools++}`;

    it("200 racing claims of one task from both nodes: exactly one run gets it", async () => {
      const toolName = toolOfItsOwn();
      const taskId = `claim-race-${notify}-${process.pid}-${Date.now()}`;
      const heard = new Set<string>();
      const stop = b.watch((c) => heard.add(c.kind), taskId);
      await a.create(newTask({ taskId, request: { toolName, arguments: {} } }), SCOPE);
      const claims = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          (i % 2 === 0 ? a : b).claim(`w${i}`, {
            limit: 1,
            leaseMs: 60_000,
            toolNames: [toolName],
          }),
        ),
      );
      const won = claims.flat();
      expect(won).toHaveLength(1);
      expect(won[0]!.execution).toMatchObject({ attempt: 1, fencingToken: 1 });
      expect(won[0]!.owner).toEqual(ALICE);
      expect(await a.get(taskId, SCOPE)).toEqual(won[0]);
      // B hears the whole story: created and queued (from A), claimed (from whichever node).
      for (let i = 0; i < 100 && heard.size < 3; i++) await sleep(20);
      stop();
      expect([...heard].sort()).toEqual(["claimed", "created", "queued"]);
    });

    it("a stale run's complete after the other node re-claimed the task is refused", async () => {
      const toolName = toolOfItsOwn();
      const first = await a.create(
        newTask({
          request: { toolName, arguments: {} },
          lease: { holder: "node-a-run", durationMs: 1 },
          execution: { maxAttempts: 2, backoffMs: 0 },
        }),
        SCOPE,
      );
      const runA = { ...SCOPE, fence: { holder: "node-a-run", fencingToken: 1 } };
      advance(1_000); // A stalls: its 1 ms lease runs out
      expect(await b.recoverOrphans()).toEqual({
        requeued: 1,
        failed: 0,
        failedTasks: [],
        cancelled: 0,
        cancelledTasks: [],
      });
      const [second] = await b.claim("node-b-run", {
        limit: 1,
        leaseMs: 60_000,
        toolNames: [toolName],
      });
      expect(second!.execution).toMatchObject({
        attempt: 2,
        fencingToken: 2,
        holder: "node-b-run",
      });
      const runB = { ...SCOPE, fence: { holder: "node-b-run", fencingToken: 2 } };
      // A wakes up and writes as if it still held the task.
      const fromA = { content: [{ type: "text", text: "from A" }] };
      await expect(a.complete(first.taskId, runA, fromA)).rejects.toMatchObject({
        code: "lease_lost",
      });
      expect(await a.get(first.taskId, SCOPE)).toEqual(second);
      // And again while B finishes: refused either way (lease_lost before B's commit,
      // invalid_transition after it: the task is finished).
      const [stale, fresh] = await Promise.allSettled([
        a.complete(first.taskId, runA, fromA),
        b.complete(first.taskId, runB, { content: [{ type: "text", text: "from B" }] }),
      ]);
      expect(stale.status).toBe("rejected");
      const reason = (stale as PromiseRejectedResult).reason;
      expect(isTaskError(reason, "lease_lost") || isTaskError(reason, "invalid_transition")).toBe(
        true,
      );
      expect(fresh.status).toBe("fulfilled");
      await expect(a.setStatusMessage(first.taskId, runA, "x")).rejects.toMatchObject({
        code: "invalid_transition",
      });
      expect(await a.renewLease(first.taskId, runA, 1000)).toBe(false);
      const stored = await a.get(first.taskId, SCOPE);
      expect(stored.outcome).toEqual({
        kind: "result",
        result: { content: [{ type: "text", text: "from B" }] },
      });
      expect(stored).toEqual((fresh as PromiseFulfilledResult<TaskRecord>).value);
    });

    it("recoverOrphans from both nodes at once recovers each orphan exactly once", async () => {
      const toolName = toolOfItsOwn();
      const ids: string[] = [];
      for (let i = 0; i < 60; i++) {
        const t = await a.create(
          newTask({
            request: { toolName, arguments: {} },
            lease: { holder: `dead-${i}`, durationMs: 1 },
            execution: { maxAttempts: i % 3 === 0 ? 1 : 2, backoffMs: 0 },
          }),
          SCOPE,
        );
        ids.push(t.taskId);
      }
      advance(1_000); // past their 1 ms leases
      const sweeps = await Promise.all(
        Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? a : b).recoverOrphans({ limit: 7 })),
      );
      const requeued = sweeps.reduce((sum, s) => sum + s.requeued, 0);
      const failed = sweeps.reduce((sum, s) => sum + s.failed, 0);
      expect({ requeued, failed }).toEqual({ requeued: 40, failed: 20 });
      const lost = sweeps.flatMap((s) => s.failedTasks.map((t) => t.taskId));
      expect(lost.sort()).toEqual(ids.filter((_, i) => i % 3 === 0).sort());
      for (const [i, id] of ids.entries()) {
        const t = await b.get(id, SCOPE);
        expect(t.version).toBe(2);
        expect(t.status).toBe(i % 3 === 0 ? "failed" : "working");
        expect(t.execution).toMatchObject({ attempt: 1, holder: null, fencingToken: 1 });
      }
      // Requeued once each: 40 claimable, no more.
      const claimed = await b.claim("w", { limit: 100, leaseMs: 60_000, toolNames: [toolName] });
      expect(claimed).toHaveLength(40);
    });

    it("measures the cross-node wake-up latency (printed, not asserted)", async () => {
      const t = await a.create(newTask(), SCOPE);
      const fromCall: number[] = [];
      const fromCommit: number[] = [];
      for (let i = 0; i < 200; i++) {
        const arrived = nextChange(b, t.taskId, (c) => c.version === i + 2);
        const t0 = performance.now();
        await a.setStatusMessage(t.taskId, SCOPE, `step ${i}`);
        const t1 = performance.now();
        await arrived;
        const t2 = performance.now();
        fromCall.push(t2 - t0);
        fromCommit.push(t2 - t1);
      }
      fromCall.sort((x, y) => x - y);
      fromCommit.sort((x, y) => x - y);
      const f = (x: number) => x.toFixed(2);
      console.log(
        `[wake-up latency, notify ${notify}] write issued on A → event on B: p50 ${f(percentile(fromCall, 50))} ms, p99 ${f(percentile(fromCall, 99))} ms; write resolved on A → event on B: p50 ${f(percentile(fromCommit, 50))} ms, p99 ${f(percentile(fromCommit, 99))} ms (200 samples)`,
      );
      expect(fromCall).toHaveLength(200);
    });
  });
}

describe("migrate", () => {
  const schema = freshSchemaName("m");
  afterEach(() => dropSchemas([schema]));

  it("is safe when two nodes run it at once: one applies, the other finds nothing to do", async () => {
    const results = await Promise.all([
      migrate(DATABASE_URL, { schema }),
      migrate(DATABASE_URL, { schema }),
    ]);
    const applied = results.map((r) => r.applied.length).sort();
    expect(applied[0]).toBe(0);
    expect(applied[1]).toBeGreaterThan(0);
    expect((await migrate(DATABASE_URL, { schema })).applied).toEqual([]);
  });
});
