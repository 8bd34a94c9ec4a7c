// The queue semantics of the store, on PostgreSQL and PGlite, against the rules core's pure
// lifecycle functions state (claimTask, requeueTask, recoverOrphan, assertFence). The shared
// contract suite runs in queue-contract.test.ts; these pin what is particular to this store
// (events, the SQL paths of the fence, the columns behind `execution`).
import { PGlite } from "@electric-sql/pglite";
import { isTaskError, ManualClock, owner, type TaskChange, type TaskRecord } from "@mcp-tasks/core";
import {
  claimTask,
  type NewTask,
  type OwnerScope,
  ownerScope,
  recoverOrphan,
  retryingMessage,
  WORKER_LOST_ERROR,
} from "@mcp-tasks/core/store";
import pg from "pg";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createPGliteTaskStore,
  createPostgresTaskStore,
  createTaskStore,
  type DrizzleTaskStore,
  migrate,
} from "../src/index.js";
import { DATABASE_URL, dropSchemas, freshSchemaName, migrateSchema } from "./helpers.js";

const ALICE = ownerScope(owner({ principalId: "alice", tenantId: "acme" }), {
  requireOwner: false,
}) as OwnerScope;
const BOB = ownerScope(owner({ principalId: "bob" }), { requireOwner: false }) as OwnerScope;

const schemas: string[] = [];
const db = new PGlite();
afterAll(async () => {
  await dropSchemas(schemas);
  await db.close();
});

/** The schema of the store opened last. */
let openedSchema = "";
const backends: [string, (clock: ManualClock) => Promise<DrizzleTaskStore>][] = [
  [
    "PostgreSQL",
    async (clock) => {
      const schema = freshSchemaName("q");
      schemas.push(schema);
      openedSchema = schema;
      await migrateSchema(schema);
      return createPostgresTaskStore({ url: DATABASE_URL, schema, clock, poolSize: 4 });
    },
  ],
  [
    "PGlite",
    (clock) => {
      openedSchema = freshSchemaName("q");
      return createPGliteTaskStore({ client: db, schema: openedSchema, migrate: true, clock });
    },
  ],
];

let n = 0;
function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return {
    taskId: `q-${process.pid}-${n++}`,
    era: "2026-07-28",
    request: { toolName: "slow", arguments: {} },
    ttlMs: 60_000,
    ttlAnchor: "terminal",
    pollIntervalMs: null,
    ...overrides,
  };
}

const fenced = (scope: OwnerScope, t: TaskRecord): OwnerScope => ({
  ...scope,
  fence: { holder: t.execution.holder!, fencingToken: t.execution.fencingToken },
});

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await expect(promise).rejects.toSatisfy((e: unknown) => isTaskError(e, code as never));
}

/**
 * Two runs of Alice's end while a claim under her limit of 2 is sent in the same turn: the
 * claim goes with their batch, after it, and takes the places they freed (sent beside it,
 * it counted them running); then again once every statement is prepared on the connection.
 */
async function claimRidesWithEndings(store: DrizzleTaskStore): Promise<void> {
  const limits = { limit: 4, leaseMs: 5000, maxRunningPerOwner: 2 };
  const lease = { holder: "w1", durationMs: 5000 };
  const running = await Promise.all([1, 2].map(() => store.create(newTask({ lease }), ALICE)));
  const queued = await store.create(newTask(), ALICE);
  // Alone, a claim finds Alice at her limit.
  expect(await store.claim("w2", limits)).toEqual([]);
  // Both runs end, and a claim is sent in the same turn: it goes with their batch, after
  // it, and takes the places they freed (sent beside it, it counted them running).
  const [first, second, claimed] = await Promise.all([
    store.complete(running[0]!.taskId, fenced(ALICE, running[0]!), { n: 1 }),
    store.complete(running[1]!.taskId, fenced(ALICE, running[1]!), { n: 2 }),
    store.claim("w2", limits),
  ]);
  expect([first.status, second.status]).toEqual(["completed", "completed"]);
  expect(claimed.map((t) => t.taskId)).toEqual([queued.taskId]);
  expect(claimed[0]!.execution).toMatchObject({ holder: "w2", attempt: 1, fencingToken: 1 });
  for (const t of [first, second, claimed[0]!]) {
    expect(await store.get(t.taskId, ALICE)).toEqual(t);
  }
  // Again (the statements prepared where that script ran): Alice's one run ends, and the
  // claim takes two (alone, it would take one).
  const more = [await store.create(newTask(), ALICE), await store.create(newTask(), ALICE)];
  const [, again] = await Promise.all([
    store.complete(queued.taskId, fenced(ALICE, claimed[0]!), {}),
    store.claim("w2", limits),
  ]);
  expect(again.map((t) => t.taskId)).toEqual(more.map((t) => t.taskId));
}

for (const [name, open] of backends) {
  describe(`queue (${name})`, () => {
    let clock: ManualClock;
    let store: DrizzleTaskStore;
    let events: TaskChange[];

    beforeEach(async () => {
      clock = new ManualClock(Date.UTC(2026, 6, 28, 12));
      store = await open(clock);
      events = [];
      store.watch((c) => events.push(c));
    });
    afterEach(() => store.close());

    /** The events so far, once the store has delivered them. */
    async function seen(): Promise<[string, string, number][]> {
      await new Promise<void>((resolve) => setTimeout(resolve, 0));
      return events.splice(0).map((e) => [e.kind, e.status, e.version]);
    }

    it("creates queued without a lease (created, queued) and claimed with one (created)", async () => {
      const queued = await store.create(newTask({ execution: { maxAttempts: 3 } }), ALICE);
      expect(queued.execution).toEqual({
        maxAttempts: 3,
        backoffMs: 1000,
        retryOnError: false,
        deadlineMs: null,
        attempt: 0,
        holder: null,
        fencingToken: 0,
        leaseExpiresAt: null,
        availableAt: null,
      });
      expect(queued.inputAnswers).toEqual({});
      expect(await seen()).toEqual([
        ["created", "working", 1],
        ["queued", "working", 1],
      ]);
      const held = await store.create(
        newTask({
          lease: { holder: "w1", durationMs: 5000 },
          execution: { backoffMs: 0, retryOnError: true, deadlineMs: 90_000 },
        }),
        ALICE,
      );
      expect(held.execution).toEqual({
        maxAttempts: 1,
        backoffMs: 0,
        retryOnError: true,
        deadlineMs: 90_000,
        attempt: 1,
        holder: "w1",
        fencingToken: 1,
        leaseExpiresAt: clock.now() + 5000,
        availableAt: null,
      });
      expect(await seen()).toEqual([["created", "working", 1]]);
      expect(await store.get(queued.taskId, ALICE)).toEqual(queued);
      expect(await store.get(held.taskId, ALICE)).toEqual(held);
    });

    it("claims the oldest claimable tasks across owners, as core's claimTask does", async () => {
      const a = await store.create(newTask(), ALICE);
      clock.advance(1);
      const b = await store.create(newTask({ request: { toolName: "fast", arguments: {} } }), BOB);
      clock.advance(1);
      const held = await store.create(newTask({ lease: { holder: "w0", durationMs: 1 } }), ALICE);
      const done = await store.create(newTask(), ALICE);
      await store.complete(done.taskId, ALICE, {});
      const c = await store.create(newTask(), ALICE);
      await seen();
      clock.advance(5);
      const claimed = await store.claim("w1", { limit: 2, leaseMs: 30_000 });
      expect(claimed).toEqual([
        claimTask(a, "w1", 30_000, clock.now()),
        claimTask(b, "w1", 30_000, clock.now()),
      ]);
      expect(claimed[1]!.owner).toEqual(BOB.owner);
      expect(await seen()).toEqual([
        ["claimed", "working", 2],
        ["claimed", "working", 2],
      ]);
      expect(await store.get(a.taskId, ALICE)).toEqual(claimed[0]);
      // The rest: c only (held is held, done is finished).
      const rest = await store.claim("w2", { limit: 10, leaseMs: 1000 });
      expect(rest.map((t) => t.taskId)).toEqual([c.taskId]);
      expect(rest[0]!.execution).toMatchObject({ holder: "w2", fencingToken: 1, attempt: 1 });
      expect(await store.claim("w3", { limit: 10, leaseMs: 1000 })).toEqual([]);
      expect(held.execution.holder).toBe("w0");
    });

    it("claims only the tools asked for, nothing for none, and a cancel-requested task too", async () => {
      const slow = await store.create(newTask(), ALICE);
      const fast = await store.create(
        newTask({ request: { toolName: "fast", arguments: {} } }),
        ALICE,
      );
      await store.requestCancel(fast.taskId, ALICE);
      expect(await store.claim("w", { limit: 5, leaseMs: 100, toolNames: [] })).toEqual([]);
      expect(await store.claim("w", { limit: 0, leaseMs: 100 })).toEqual([]);
      const got = await store.claim("w", { limit: 5, leaseMs: 100, toolNames: ["fast", "x"] });
      expect(got.map((t) => t.taskId)).toEqual([fast.taskId]);
      expect(got[0]!.cancelRequestedAt).not.toBeNull();
      const other = await store.claim("w", { limit: 5, leaseMs: 100, toolNames: ["slow"] });
      expect(other.map((t) => t.taskId)).toEqual([slow.taskId]);
      await rejectsWith(store.claim("", { limit: 1, leaseMs: 100 }), "invalid_task");
      await rejectsWith(store.claim("w", { limit: 1, leaseMs: 0 }), "invalid_task");
    });

    it("fenced writes apply for the holding run only; unfenced writes as before", async () => {
      const t = await store.create(newTask({ lease: { holder: "w1", durationMs: 1000 } }), ALICE);
      const run = fenced(ALICE, t);
      const stale = { ...ALICE, fence: { holder: "w1", fencingToken: 0 } };
      const other = { ...ALICE, fence: { holder: "w2", fencingToken: 1 } };
      for (const scope of [stale, other]) {
        await rejectsWith(store.setStatusMessage(t.taskId, scope, "x"), "lease_lost");
        await rejectsWith(
          store.requireInput(t.taskId, scope, { q: { method: "elicitation/create" } }),
          "lease_lost",
        );
        await rejectsWith(store.takeInputResponses(t.taskId, scope), "lease_lost");
        await rejectsWith(store.complete(t.taskId, scope, {}), "lease_lost");
        await rejectsWith(store.fail(t.taskId, scope, { code: 1, message: "m" }), "lease_lost");
        await rejectsWith(store.markCancelled(t.taskId, scope), "lease_lost");
        await rejectsWith(store.requeue(t.taskId, scope, "again"), "lease_lost");
        expect(await store.renewLease(t.taskId, scope, 1000)).toBe(false);
        expect(await store.releaseLease(t.taskId, scope)).toBe(false);
      }
      await rejectsWith(store.complete(t.taskId, fenced(BOB, t), {}), "not_found_or_unauthorized");
      await rejectsWith(store.complete("missing", run, {}), "not_found_or_unauthorized");
      expect((await store.get(t.taskId, ALICE)).version).toBe(1);

      expect((await store.setStatusMessage(t.taskId, run, "1/2")).statusMessage).toBe("1/2");
      expect((await store.takeInputResponses(t.taskId, run)).responses).toEqual({});
      const done = await store.complete(t.taskId, run, { ok: true });
      expect(done.execution).toMatchObject({ holder: null, leaseExpiresAt: null, fencingToken: 1 });
      expect(await store.get(t.taskId, ALICE)).toEqual(done);
      // Terminal comes first: invalid_transition, for the old run and for any other.
      await rejectsWith(store.complete(t.taskId, run, {}), "invalid_transition");
      await rejectsWith(store.setStatusMessage(t.taskId, stale, "x"), "invalid_transition");
      expect(await store.renewLease(t.taskId, run, 1000)).toBe(false);

      const free = await store.create(newTask(), ALICE);
      expect((await store.setStatusMessage(free.taskId, ALICE, "unfenced")).version).toBe(2);
      await rejectsWith(store.renewLease(free.taskId, ALICE, 1000), "invalid_task");
    });

    it("terminal writes sent together each keep their own scope, fence and answer", async () => {
      // Issued in one turn, these leave as one settle statement (see write-batcher.ts);
      // every row must come out as if written alone.
      const held = await Promise.all(
        Array.from({ length: 7 }, () =>
          store.create(newTask({ lease: { holder: "w1", durationMs: 5000 } }), ALICE),
        ),
      );
      const [ok, failing, cancelled, stale, foreign, raced, done] = held as TaskRecord[];
      const bobs = await store.create(newTask(), BOB);
      const unfenced = await store.create(newTask(), ALICE);
      await store.complete(done!.taskId, fenced(ALICE, done!), { before: true });
      events.length = 0;
      const outcomes = await Promise.allSettled([
        store.complete(ok!.taskId, fenced(ALICE, ok!), { n: 1 }, "all good"),
        store.fail(failing!.taskId, fenced(ALICE, failing!), { code: 7, message: "boom" }),
        store.markCancelled(cancelled!.taskId, fenced(ALICE, cancelled!)),
        store.complete(stale!.taskId, { ...ALICE, fence: { holder: "w1", fencingToken: 0 } }, {}),
        store.complete(foreign!.taskId, fenced(BOB, foreign!), {}),
        // Two endings of one task in the same batch: exactly one of them stands.
        store.complete(raced!.taskId, fenced(ALICE, raced!), { first: true }),
        store.markCancelled(raced!.taskId, ALICE),
        store.complete(done!.taskId, fenced(ALICE, done!), { again: true }),
        store.complete(bobs.taskId, ALICE, {}),
        store.complete(unfenced.taskId, ALICE, { plain: "yes" }),
      ]);
      const value = (i: number) => (outcomes[i] as PromiseFulfilledResult<TaskRecord>).value;
      const code = (i: number) => {
        const o = outcomes[i] as PromiseSettledResult<TaskRecord>;
        if (o.status === "fulfilled") return "fulfilled";
        return ["lease_lost", "not_found_or_unauthorized", "invalid_transition"].find((c) =>
          isTaskError(o.reason, c as never),
        );
      };
      expect(value(0)).toMatchObject({ status: "completed", statusMessage: "all good" });
      expect(value(0).outcome).toEqual({ kind: "result", result: { n: 1 } });
      expect(value(1)).toMatchObject({ status: "failed", statusMessage: "boom" });
      expect(value(1).outcome).toEqual({ kind: "error", error: { code: 7, message: "boom" } });
      expect(value(2).status).toBe("cancelled");
      expect(value(2).cancelRequestedAt).toBe(clock.now());
      expect(code(3)).toBe("lease_lost");
      expect(code(4)).toBe("not_found_or_unauthorized");
      expect([code(5), code(6)].sort()).toEqual(["fulfilled", "invalid_transition"]);
      expect(code(7)).toBe("invalid_transition");
      expect(code(8)).toBe("not_found_or_unauthorized");
      expect(value(9).outcome).toEqual({ kind: "result", result: { plain: "yes" } });
      // What each caller got is what is stored, and the refused writes changed nothing.
      for (const i of [0, 1, 2, 9])
        expect(await store.get(value(i).taskId, ALICE)).toEqual(value(i));
      expect(await store.get(stale!.taskId, ALICE)).toEqual(stale);
      expect(await store.get(foreign!.taskId, ALICE)).toEqual(foreign);
      expect(await store.get(bobs.taskId, BOB)).toEqual(bobs);
      const winner = value(code(5) === "fulfilled" ? 5 : 6);
      expect(await store.get(raced!.taskId, ALICE)).toEqual(winner);
      expect((await store.get(done!.taskId, ALICE)).outcome).toEqual({
        kind: "result",
        result: { before: true },
      });
      // One status_changed event per task that ended.
      const ended = (await seen()).filter(([kind]) => kind === "status_changed");
      expect(ended).toHaveLength(5);
    });

    it("a claim under an owner limit sent while endings wait for their batch runs after them, in their round trip, and takes the places they free", () =>
      claimRidesWithEndings(store));

    it("a claim that rode with a batch of endings the database refused is sent alone", async () => {
      const lease = { holder: "w1", durationMs: 5000 };
      const [refused, accepted] = await Promise.all(
        [1, 2].map(() => store.create(newTask({ lease }), ALICE)),
      );
      const queued = await store.create(newTask(), BOB);
      // The database refuses to end `refused` (a trigger of this test's own).
      await store.query(`CREATE FUNCTION "${openedSchema}".refuse() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
          IF NEW.id = '${refused!.taskId}' AND NEW.status = 'completed' THEN
            RAISE EXCEPTION 'refused by the test';
          END IF;
          RETURN NEW;
        END $$`);
      await store.query(`CREATE TRIGGER refuse BEFORE UPDATE ON "${openedSchema}".mcp_tasks
        FOR EACH ROW EXECUTE FUNCTION "${openedSchema}".refuse()`);
      const outcomes = await Promise.allSettled([
        store.complete(refused!.taskId, fenced(ALICE, refused!), {}),
        store.complete(accepted!.taskId, fenced(ALICE, accepted!), {}),
        store.claim("w2", { limit: 4, leaseMs: 5000, maxRunningPerOwner: 2 }),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(["rejected", "fulfilled", "fulfilled"]);
      // Bob's task, under his limit whatever Alice's endings did, was claimed all the same.
      const claimed = (outcomes[2] as PromiseFulfilledResult<TaskRecord[]>).value;
      expect(claimed.map((c) => c.taskId)).toEqual([queued.taskId]);
      expect((await store.get(refused!.taskId, ALICE)).status).toBe("working");
      expect((await store.get(accepted!.taskId, ALICE)).status).toBe("completed");
    });

    it("renewing a lease is bookkeeping: a new deadline, no version, no event", async () => {
      const t = await store.create(newTask({ lease: { holder: "w1", durationMs: 1000 } }), ALICE);
      await seen();
      clock.advance(700);
      expect(await store.renewLease(t.taskId, fenced(ALICE, t), 2000)).toBe(true);
      const after = await store.get(t.taskId, ALICE);
      expect(after).toEqual({
        ...t,
        execution: { ...t.execution, leaseExpiresAt: clock.now() + 2000 },
      });
      expect(await seen()).toEqual([]);
      expect(await store.renewLease("missing", fenced(ALICE, t), 2000)).toBe(false);
    });

    it("releasing hands the task back at once, the attempt not counted, its questions dropped", async () => {
      const t = await store.create(newTask({ lease: { holder: "w1", durationMs: 1000 } }), ALICE);
      const run = fenced(ALICE, t);
      await store.requireInput(t.taskId, run, { q: { method: "elicitation/create" } });
      await store.submitInput(t.taskId, ALICE, { q: { answer: 1 } });
      await store.requireInput(t.taskId, run, { r: { method: "elicitation/create" } });
      await seen();
      clock.advance(10);
      expect(await store.releaseLease(t.taskId, run)).toBe(true);
      expect(await seen()).toEqual([["queued", "working", 5]]);
      const back = await store.get(t.taskId, ALICE);
      expect(back).toMatchObject({
        status: "working",
        statusMessage: "Queued: handed back by a stopping worker",
        inputRequests: {},
        inputResponses: {},
        inputAnswers: { q: { answer: 1 } },
        answeredInputKeys: ["q"],
        lastUpdatedAt: clock.now(),
        version: 5,
      });
      expect(back.execution).toMatchObject({
        attempt: 0,
        holder: null,
        fencingToken: 1,
        leaseExpiresAt: null,
        availableAt: null,
      });
      expect(await store.releaseLease(t.taskId, run)).toBe(false);
      const [again] = await store.claim("w2", { limit: 1, leaseMs: 1000 });
      expect(again!.execution).toMatchObject({ attempt: 1, fencingToken: 2, holder: "w2" });
      expect(again!.inputAnswers).toEqual({ q: { answer: 1 } });
    });

    it("requeue counts the attempt and waits for the backoff (none with a backoff of 0)", async () => {
      const t = await store.create(
        newTask({
          lease: { holder: "w1", durationMs: 1000 },
          execution: { maxAttempts: 3, backoffMs: 500 },
        }),
        ALICE,
      );
      await seen();
      const back = await store.requeue(t.taskId, fenced(ALICE, t), "Retrying");
      expect(await seen()).toEqual([["queued", "working", 2]]);
      expect(back.execution).toMatchObject({
        attempt: 1,
        holder: null,
        leaseExpiresAt: null,
        availableAt: clock.now() + 500,
      });
      expect(back.statusMessage).toBe("Retrying");
      expect(await store.get(t.taskId, ALICE)).toEqual(back);
      clock.advance(499);
      expect(await store.claim("w2", { limit: 1, leaseMs: 1000 })).toEqual([]);
      clock.advance(1);
      const [second] = await store.claim("w2", { limit: 1, leaseMs: 1000 });
      expect(second!.execution).toMatchObject({ attempt: 2, fencingToken: 2, availableAt: null });

      const quick = await store.create(
        newTask({ lease: { holder: "w1", durationMs: 1000 }, execution: { backoffMs: 0 } }),
        ALICE,
      );
      const requeued = await store.requeue(quick.taskId, fenced(ALICE, quick), null);
      expect(requeued.execution.availableAt).toBeNull();
      expect(await store.claim("w3", { limit: 5, leaseMs: 1000 })).toHaveLength(1);
    });

    it("recovers orphans as core's recoverOrphan does: requeued while attempts remain, else failed", async () => {
      const retried = await store.create(
        newTask({
          lease: { holder: "w1", durationMs: 1000 },
          execution: { maxAttempts: 2, backoffMs: 250 },
        }),
        ALICE,
      );
      const last = await store.create(newTask({ lease: { holder: "w1", durationMs: 1000 } }), BOB);
      const live = await store.create(newTask({ lease: { holder: "w1", durationMs: 5000 } }), BOB);
      await store.requireInput(last.taskId, BOB, { q: { method: "elicitation/create" } });
      await seen();
      clock.advance(999);
      expect(await store.recoverOrphans()).toEqual({
        requeued: 0,
        failed: 0,
        failedTasks: [],
        cancelled: 0,
        cancelledTasks: [],
      });
      clock.advance(1);
      const lastBefore = await store.get(last.taskId, BOB);
      const sweep = await store.recoverOrphans();
      expect(sweep).toMatchObject({ requeued: 1, failed: 1 });
      expect((await seen()).sort()).toEqual([
        ["queued", "working", 2],
        ["status_changed", "failed", 3],
      ]);
      const r = await store.get(retried.taskId, ALICE);
      expect(r).toEqual(recoverOrphan(retried, clock.now()));
      expect(r.statusMessage).toBe(retryingMessage("the worker was lost", 2, 2));
      expect(r.execution.availableAt).toBe(clock.now() + 250);
      const f = await store.get(last.taskId, BOB);
      expect(f).toEqual(recoverOrphan(lastBefore, clock.now()));
      expect(f.outcome).toEqual({ kind: "error", error: WORKER_LOST_ERROR });
      // The sweep hands back the task it failed, as stored (read back through the full row).
      expect(sweep.failedTasks).toEqual([f]);
      expect((await store.get(live.taskId, BOB)).status).toBe("working");
      expect(await store.recoverOrphans()).toEqual({
        requeued: 0,
        failed: 0,
        failedTasks: [],
        cancelled: 0,
        cancelledTasks: [],
      });

      // The second run is lost too: no attempt left.
      clock.advance(250);
      const [run2] = await store.claim("w2", { limit: 5, leaseMs: 100 });
      expect(run2!.execution).toMatchObject({ attempt: 2, fencingToken: 2 });
      clock.advance(100);
      const again = await store.recoverOrphans({ limit: 1 });
      const failed = await store.get(retried.taskId, ALICE);
      expect(failed.status).toBe("failed");
      expect(again).toEqual({
        requeued: 0,
        failed: 1,
        failedTasks: [failed],
        cancelled: 0,
        cancelledTasks: [],
      });
    });

    it("keeps every answer in inputAnswers; a stale run cannot drain a new run's responses", async () => {
      const t = await store.create(newTask({ lease: { holder: "w1", durationMs: 100 } }), ALICE);
      const run1 = fenced(ALICE, t);
      await store.requireInput(t.taskId, run1, {
        a: { method: "elicitation/create" },
        b: { method: "elicitation/create" },
      });
      const partial = await store.submitInput(t.taskId, ALICE, { a: { v: 1 }, zz: { v: 0 } });
      expect(partial.task.inputAnswers).toEqual({ a: { v: 1 } });
      await store.submitInput(t.taskId, ALICE, { b: { v: 2 } });
      expect((await store.takeInputResponses(t.taskId, run1)).responses).toEqual({
        a: { v: 1 },
        b: { v: 2 },
      });
      clock.advance(100);
      await store.recoverOrphans();
      expect((await store.get(t.taskId, ALICE)).status).toBe("failed");
      const u = await store.create(newTask({ lease: { holder: "w1", durationMs: 100 } }), ALICE);
      await store.requireInput(u.taskId, fenced(ALICE, u), { a: { method: "x" } });
      expect(await store.releaseLease(u.taskId, fenced(ALICE, u))).toBe(true);
      const [run2] = await store.claim("w2", { limit: 1, leaseMs: 1000 });
      await store.requireInput(u.taskId, fenced(ALICE, run2!), { c: { method: "x" } });
      await store.submitInput(u.taskId, ALICE, { c: { v: 3 } });
      await rejectsWith(store.takeInputResponses(u.taskId, fenced(ALICE, u)), "lease_lost");
      expect((await store.takeInputResponses(u.taskId, fenced(ALICE, run2!))).responses).toEqual({
        c: { v: 3 },
      });
    });
  });
}

// The script that carries endings and a claim reads every statement's rows: each driver
// returns them its own way.
describe("queue (node-postgres Pool)", () => {
  it("a claim sent while endings wait for their batch takes the places they free", async () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    const schema = freshSchemaName("q");
    schemas.push(schema);
    try {
      await migrate(pool, { schema });
      const store = await createTaskStore({ client: pool, schema });
      try {
        await claimRidesWithEndings(store);
      } finally {
        await store.close();
      }
    } finally {
      await pool.end();
    }
  });
});
