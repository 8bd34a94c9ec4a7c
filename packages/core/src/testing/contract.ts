import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createIdGenerator,
  DEFAULT_EXECUTION_POLICY,
  isTaskError,
  ManualClock,
  type Owner,
  owner,
  type TaskError,
  type TaskRecord,
  type TaskStatus,
  type TaskStore,
  type TraceContext,
} from "../index.js";
import {
  encodeCursor,
  INTENT_FROM,
  type NewTask,
  type OwnerScope,
  ownerKey,
  ownerScope,
  payloadBytes,
  supportsQueue,
  type UsageAudit,
} from "../store-api.js";
import { collectChanges, expectTaskError, TASK_STATUSES } from "./helpers.js";

/** What a store factory is handed by the contract suite. */
export interface ContractStoreOptions {
  /** The store must take every timestamp from this clock. */
  readonly clock: ManualClock;
  /** Global bound; `undefined` for none. */
  readonly maxTasks?: number;
  /** Per-owner bound; `undefined` for none. */
  readonly maxTasksPerOwner?: number;
  /**
   * Per-owner bound on stored payload bytes (core's `taskPayloadBytes`: arguments, outcome,
   * input answers); `undefined` for none.
   */
  readonly maxBytesPerOwner?: number;
  /** The largest page the store hands out. */
  readonly maxPageSize: number;
}

/** Makes a fresh, empty store for one test. */
export type ContractStoreFactory = (
  options: ContractStoreOptions,
) => TaskStore | Promise<TaskStore>;

/** Tuning for stores whose change feed crosses a network. */
export interface ContractSuiteOptions {
  /** How long to wait for a change-feed event; default 2000 ms. */
  readonly watchTimeoutMs?: number;
  /** How many writers race in the concurrency tests; default 50. */
  readonly concurrency?: number;
  /**
   * Reads a store's quota usage counters next to a recount of its tasks (a store method such
   * as `auditUsage()`). When given, the suite checks that they agree after random creates,
   * answers, endings, expiries, deletions (and, on a queue, orphan recoveries), sequential
   * and concurrent.
   */
  readonly auditUsage?: (store: TaskStore) => Promise<UsageAudit>;
}

/** A small seeded random generator (mulberry32), so that a failing run can be repeated. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The errors a random write may meet (a full quota, a task that ended or expired). */
const EXPECTED_RANDOM_ERRORS = new Set([
  "store_full",
  "invalid_transition",
  "not_found_or_unauthorized",
  "lease_lost",
]);

const ALICE = owner({ principalId: "alice", tenantId: "acme" });
const BOB = owner({ principalId: "bob", tenantId: "acme" });
const ALICE_OTHER_TENANT = owner({ principalId: "alice", tenantId: "globex" });
const ALICE_OTHER_AUDIENCE = owner({ principalId: "alice", tenantId: "acme", audience: "api" });
const ANON = owner({});

const OPEN = { requireOwner: false };
const CLOSED = { requireOwner: true };

function scopeOf(o: Owner, policy = OPEN): OwnerScope {
  const scope = ownerScope(o, policy);
  if (!scope) throw new Error("test bug: empty scope");
  return scope;
}

const ALICE_SCOPE = scopeOf(ALICE);

const DAY = 24 * 60 * 60 * 1000;

/**
 * The store contract suite. Every store in this repository runs it, and so can anyone who
 * writes a store: `describeTaskStoreContract("my store", (opts) => new MyStore(opts))`.
 * Each test gets a fresh store from `makeStore`; the store must use `opts.clock` for time.
 */
export function describeTaskStoreContract(
  name: string,
  makeStore: ContractStoreFactory,
  suiteOptions: ContractSuiteOptions = {},
): void {
  const watchTimeoutMs = suiteOptions.watchTimeoutMs ?? 2000;
  const concurrency = suiteOptions.concurrency ?? 50;

  describe(`TaskStore contract: ${name}`, () => {
    let clock: ManualClock;
    let store: TaskStore;
    const opened: TaskStore[] = [];
    const ids = createIdGenerator();

    async function open(overrides: Partial<ContractStoreOptions> = {}): Promise<TaskStore> {
      const s = await makeStore({ clock, maxPageSize: 100, ...overrides });
      opened.push(s);
      return s;
    }

    beforeEach(async () => {
      clock = new ManualClock(Date.UTC(2026, 6, 28, 12));
      store = await open();
    });

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    function newTask(overrides: Partial<NewTask> = {}): NewTask {
      return {
        taskId: ids(),
        era: "2026-07-28",
        request: { toolName: "slow_compute", arguments: { seconds: 1, label: "x" } },
        ttlMs: 60_000,
        ttlAnchor: "creation",
        pollIntervalMs: 500,
        ...overrides,
      };
    }

    async function create(
      overrides: Partial<NewTask> = {},
      scope: OwnerScope = ALICE_SCOPE,
      s: TaskStore = store,
    ): Promise<TaskRecord> {
      return s.create(newTask(overrides), scope);
    }

    const expectError = expectTaskError;

    /** Brings a new task owned by Alice into `status`. */
    async function taskIn(
      status: TaskStatus,
      scope: OwnerScope = ALICE_SCOPE,
    ): Promise<TaskRecord> {
      const t = await create({}, scope);
      switch (status) {
        case "working":
          return t;
        case "input_required":
          return store.requireInput(t.taskId, scope, { confirm: { method: "elicitation/create" } });
        case "completed":
          return store.complete(t.taskId, scope, { content: [] });
        case "failed":
          return store.fail(t.taskId, scope, { code: -32603, message: "boom" });
        case "cancelled":
          return store.markCancelled(t.taskId, scope);
      }
    }

    describe("create and get", () => {
      it("creates a working task at version 1 with the store clock's timestamps", async () => {
        const t = await create({ statusMessage: "queued" });
        expect(t.status).toBe("working");
        expect(t.version).toBe(1);
        expect(t.createdAt).toBe(clock.now());
        expect(t.lastUpdatedAt).toBe(clock.now());
        expect(t.statusMessage).toBe("queued");
        expect(t.expiresAt).toBeNull();
        expect(t.cancelRequestedAt).toBeNull();
        expect(t.outcome).toBeNull();
        expect(t.inputRequests).toEqual({});
        expect(t.inputResponses).toEqual({});
        expect(t.answeredInputKeys).toEqual([]);
        expect(t.inputAnswers).toEqual({});
        expect(t.execution).toEqual({
          ...DEFAULT_EXECUTION_POLICY,
          attempt: 0,
          holder: null,
          fencingToken: 0,
          leaseExpiresAt: null,
          availableAt: null,
        });
      });

      it("round-trips every field exactly, including all three owner parts", async () => {
        const scope = scopeOf(ALICE_OTHER_AUDIENCE);
        const input = newTask({
          era: "2025-11-25",
          request: { toolName: "greet", arguments: { name: "Zoë", nested: { n: [1, 2, null] } } },
          ttlMs: null,
          ttlAnchor: "terminal",
          pollIntervalMs: null,
          execution: { maxAttempts: 4, backoffMs: 2500, retryOnError: true, deadlineMs: 90_000 },
        });
        const created = await store.create(input, scope);
        const read = await store.get(input.taskId, scope);
        expect(read).toEqual(created);
        expect(read.taskId).toBe(input.taskId);
        expect(read.owner).toEqual(ALICE_OTHER_AUDIENCE);
        expect(read.era).toBe("2025-11-25");
        expect(read.request).toEqual(input.request);
        expect(read.ttlMs).toBeNull();
        expect(read.ttlAnchor).toBe("terminal");
        expect(read.pollIntervalMs).toBeNull();
        expect(read.execution).toMatchObject({
          maxAttempts: 4,
          backoffMs: 2500,
          retryOnError: true,
          deadlineMs: 90_000,
        });
      });

      it("keeps the trace context given at creation through every change", async () => {
        const traceContext = {
          traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
          tracestate: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
        };
        const t = await create({ traceContext });
        expect(t.traceContext).toEqual(traceContext);
        const parentOnly = await create({
          traceContext: { traceparent: traceContext.traceparent },
        });
        expect(parentOnly.traceContext).toEqual({ traceparent: traceContext.traceparent });
        await store.requireInput(t.taskId, ALICE_SCOPE, {
          confirm: { method: "elicitation/create" },
        });
        await store.submitInput(t.taskId, ALICE_SCOPE, { confirm: { action: "accept" } });
        await store.complete(t.taskId, ALICE_SCOPE, { content: [] });
        expect((await store.get(t.taskId, ALICE_SCOPE)).traceContext).toEqual(traceContext);
        expect((await store.list(ALICE_SCOPE, { limit: 10 })).tasks[0]?.traceContext).toEqual(
          traceContext,
        );
        expect((await create()).traceContext).toBeNull();
        expect((await create({ traceContext: null })).traceContext).toBeNull();
      });

      it("drops an invalid trace context instead of failing or storing it", async () => {
        const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        const invalid = [
          "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01", // uppercase
          "00-00000000000000000000000000000000-00f067aa0ba902b7-01", // zero trace id
          "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", // zero parent id
          "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // version ff
          `${valid}-extra`, // version 00 with more fields
          "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", // no flags
          "'; DROP TABLE tasks; --",
          "",
        ];
        for (const traceparent of invalid) {
          const t = await create({ traceContext: { traceparent } });
          expect(t.traceContext).toBeNull();
          expect((await store.get(t.taskId, ALICE_SCOPE)).traceContext).toBeNull();
        }
        // Not even the right shape: a client's value is never trusted.
        const odd = { traceparent: 42 } as unknown as TraceContext;
        expect((await create({ traceContext: odd })).traceContext).toBeNull();
        // A bad tracestate alone is dropped; the traceparent is kept.
        const t = await create({ traceContext: { traceparent: valid, tracestate: "bad key=1" } });
        expect(t.traceContext).toEqual({ traceparent: valid });
        expect((await store.get(t.taskId, ALICE_SCOPE)).traceContext).toEqual({
          traceparent: valid,
        });
      });

      it("keeps ttls beyond 2^31-1 ms (no timer overflow)", async () => {
        const t = await create({ ttlMs: 30 * DAY });
        clock.advance(1);
        expect((await store.get(t.taskId, ALICE_SCOPE)).ttlMs).toBe(30 * DAY);
        await store.complete(t.taskId, ALICE_SCOPE, {});
        clock.advance(29 * DAY);
        expect(await store.cleanupExpired()).toBe(0);
        expect((await store.get(t.taskId, ALICE_SCOPE)).status).toBe("completed");
      });

      it("refuses a second task with the same id, even for another owner", async () => {
        const t = await create();
        await expectError(create({ taskId: t.taskId }), "already_exists");
        await expectError(create({ taskId: t.taskId }, scopeOf(BOB)), "already_exists");
        expect((await store.get(t.taskId, ALICE_SCOPE)).version).toBe(1);
      });

      it("refuses malformed tasks with invalid_task", async () => {
        await expectError(create({ taskId: "" }), "invalid_task");
        await expectError(create({ ttlMs: 0 }), "invalid_task");
        await expectError(create({ ttlMs: -5 }), "invalid_task");
        await expectError(create({ pollIntervalMs: 1.5 }), "invalid_task");
        await expectError(create({ request: { toolName: "", arguments: {} } }), "invalid_task");
        await expectError(create({ execution: { maxAttempts: 0 } }), "invalid_task");
        await expectError(create({ execution: { maxAttempts: 1.5 } }), "invalid_task");
        await expectError(create({ execution: { backoffMs: -1 } }), "invalid_task");
        await expectError(create({ execution: { deadlineMs: 0 } }), "invalid_task");
      });

      it("reports a missing task as not_found_or_unauthorized", async () => {
        await expectError(store.get("no-such-task", ALICE_SCOPE), "not_found_or_unauthorized");
      });
    });

    describe("one rule for text: no store keeps U+0000", () => {
      const NUL = "\u0000";
      /** Refused with invalid_task, in words that name the character and where it is. */
      async function expectUnstorable(promise: Promise<unknown>, where: RegExp): Promise<void> {
        const error = await expectError(promise, "invalid_task");
        expect(error.message).toContain("U+0000");
        expect(error.message).toMatch(where);
        // The store's own words never reach the caller (e.g. PostgreSQL's "escape sequence").
        expect(error.message).not.toMatch(/database|escape sequence|byte sequence|json/i);
      }

      it("refuses a new task holding U+0000 anywhere, and keeps nothing of it", async () => {
        const tries: Array<[Partial<NewTask>, RegExp]> = [
          [{ request: { toolName: "t", arguments: { text: `a${NUL}b` } } }, /arguments\/text/],
          [{ request: { toolName: "t", arguments: { [`k${NUL}`]: 1 } } }, /arguments\/k/],
          [{ request: { toolName: "t", arguments: { deep: [{ x: [NUL] }] } } }, /deep\/0\/x\/0/],
          [{ request: { toolName: `t${NUL}`, arguments: {} } }, /toolName/],
          [{ statusMessage: `s${NUL}` }, /status message/],
        ];
        for (const [overrides, where] of tries) {
          const input = newTask(overrides);
          await expectUnstorable(store.create(input, ALICE_SCOPE), where);
          await expectError(store.get(input.taskId, ALICE_SCOPE), "not_found_or_unauthorized");
        }
        await expectUnstorable(create({ taskId: `id${NUL}` }), /task id/);
        const nulOwner = scopeOf(owner({ principalId: `mal${NUL}lory`, tenantId: "acme" }));
        await expectUnstorable(create({}, nulOwner), /principalId/);
        expect((await store.list(ALICE_SCOPE, { limit: 50 })).tasks).toEqual([]);
      });

      it("refuses every write holding U+0000 and leaves the task as it was", async () => {
        const t = await taskIn("input_required");
        const pending = Object.keys(t.inputRequests)[0] as string;
        const writes: Array<[() => Promise<unknown>, RegExp]> = [
          [
            () => store.complete(t.taskId, ALICE_SCOPE, { content: [{ type: "text", text: NUL }] }),
            /result/,
          ],
          [() => store.complete(t.taskId, ALICE_SCOPE, { content: [] }, NUL), /status message/],
          [() => store.fail(t.taskId, ALICE_SCOPE, { code: -32603, message: `x${NUL}` }), /error/],
          [() => store.markCancelled(t.taskId, ALICE_SCOPE, NUL), /status message/],
          [() => store.setStatusMessage(t.taskId, ALICE_SCOPE, `half${NUL}way`), /status message/],
          [
            () =>
              store.requireInput(t.taskId, ALICE_SCOPE, {
                more: { method: "elicitation/create", params: { message: NUL } },
              }),
            /input requests/,
          ],
          [
            () =>
              store.submitInput(t.taskId, ALICE_SCOPE, {
                [pending]: { action: "accept", content: { name: NUL } },
              }),
            /input responses/,
          ],
        ];
        for (const [write, where] of writes) await expectUnstorable(write(), where);
        expect(await store.get(t.taskId, ALICE_SCOPE)).toEqual(t);
      });

      it("reads a task id holding U+0000 as a missing task", async () => {
        const t = await create();
        const id = `${t.taskId}${NUL}`;
        await expectError(store.get(id, ALICE_SCOPE), "not_found_or_unauthorized");
        await expectError(store.requestCancel(id, ALICE_SCOPE), "not_found_or_unauthorized");
        await expectError(store.delete(id, ALICE_SCOPE), "not_found_or_unauthorized");
        expect((await store.get(t.taskId, ALICE_SCOPE)).cancelRequestedAt).toBeNull();
      });

      it("lets a caller whose identity holds U+0000 see only what its scope includes", async () => {
        const own = await create();
        const unowned = await create({}, scopeOf(ANON));
        const nulCaller = scopeOf(owner({ principalId: `mal${NUL}lory` }));
        await expectError(store.get(own.taskId, nulCaller), "not_found_or_unauthorized");
        expect((await store.get(unowned.taskId, nulCaller)).taskId).toBe(unowned.taskId);
        const page = await store.list(nulCaller, { limit: 50 });
        expect(page.tasks.map((task) => task.taskId)).toEqual([unowned.taskId]);
      });
    });

    describe("state machine", () => {
      type Op = "complete" | "fail" | "requireInput" | "markCancelled" | "setStatusMessage";
      const ops: Record<Op, (t: TaskRecord) => Promise<TaskRecord>> = {
        complete: (t) =>
          store.complete(t.taskId, ALICE_SCOPE, { content: [{ type: "text", text: "ok" }] }),
        fail: (t) => store.fail(t.taskId, ALICE_SCOPE, { code: -32000, message: "nope" }),
        requireInput: (t) =>
          store.requireInput(t.taskId, ALICE_SCOPE, {
            [`k${t.version}`]: { method: "elicitation/create" },
          }),
        markCancelled: (t) => store.markCancelled(t.taskId, ALICE_SCOPE),
        setStatusMessage: (t) => store.setStatusMessage(t.taskId, ALICE_SCOPE, "halfway"),
      };
      const resulting: Record<Op, TaskStatus | "same"> = {
        complete: "completed",
        fail: "failed",
        requireInput: "input_required",
        markCancelled: "cancelled",
        setStatusMessage: "same",
      };
      // The statuses each intent may start from come from core's table (INTENT_FROM), so a
      // change there is one edit that every store must follow to pass.
      for (const from of TASK_STATUSES) {
        for (const op of Object.keys(ops) as Op[]) {
          const active = INTENT_FROM[op].includes(from);
          const to = resulting[op] === "same" ? from : resulting[op];
          const title = active
            ? `${op} moves ${from} → ${to}, bumping version and lastUpdatedAt`
            : `${op} on a ${from} task is an invalid_transition and changes nothing`;
          it(title, async () => {
            const before = await taskIn(from);
            clock.advance(1000);
            if (active) {
              const after = await ops[op](before);
              expect(after.status).toBe(to);
              expect(after.version).toBe(before.version + 1);
              expect(after.lastUpdatedAt).toBe(clock.now());
              expect(await store.get(before.taskId, ALICE_SCOPE)).toEqual(after);
            } else {
              await expectError(ops[op](before), "invalid_transition");
              expect(await store.get(before.taskId, ALICE_SCOPE)).toEqual(before);
            }
          });
        }
      }

      it("input_required → working once every outstanding request is answered", async () => {
        const t = await taskIn("input_required");
        const { task } = await store.submitInput(t.taskId, ALICE_SCOPE, {
          confirm: { action: "accept" },
        });
        expect(task.status).toBe("working");
      });

      it("keeps a tool result with isError: true as a completed result", async () => {
        const t = await create();
        const done = await store.complete(t.taskId, ALICE_SCOPE, {
          content: [{ type: "text", text: "bad input" }],
          isError: true,
        });
        expect(done.status).toBe("completed");
        expect(done.outcome).toEqual({
          kind: "result",
          result: { content: [{ type: "text", text: "bad input" }], isError: true },
        });
      });

      it("stores a JSON-RPC error as the outcome of a failed task", async () => {
        const t = await create();
        const done = await store.fail(t.taskId, ALICE_SCOPE, {
          code: -32050,
          message: "upstream down",
          data: { retryAfter: 5 },
        });
        expect(done.status).toBe("failed");
        expect(done.outcome).toEqual({
          kind: "error",
          error: { code: -32050, message: "upstream down", data: { retryAfter: 5 } },
        });
        expect(done.statusMessage).toBe("upstream down");
      });

      it("keeps the status message given with a terminal transition", async () => {
        const t = await create({ statusMessage: "50%" });
        const done = await store.complete(t.taskId, ALICE_SCOPE, {}, "all done");
        expect(done.statusMessage).toBe("all done");
        const c = await create();
        expect(
          (await store.markCancelled(c.taskId, ALICE_SCOPE, "user gave up")).statusMessage,
        ).toBe("user gave up");
      });

      it("clears outstanding input requests when the task ends", async () => {
        const t = await taskIn("input_required");
        const done = await store.complete(t.taskId, ALICE_SCOPE, {});
        expect(done.inputRequests).toEqual({});
      });

      it("setStatusMessage changes only the message (and version, lastUpdatedAt)", async () => {
        const t = await taskIn("input_required");
        clock.advance(5);
        const after = await store.setStatusMessage(t.taskId, ALICE_SCOPE, "waiting for you");
        expect(after).toEqual({
          ...t,
          statusMessage: "waiting for you",
          version: t.version + 1,
          lastUpdatedAt: clock.now(),
        });
        expect(
          (await store.setStatusMessage(t.taskId, ALICE_SCOPE, null)).statusMessage,
        ).toBeNull();
      });
    });

    describe("cancellation: request vs acknowledgement", () => {
      it("requestCancel records the time and leaves the status alone", async () => {
        const t = await taskIn("input_required");
        clock.advance(10);
        const after = await store.requestCancel(t.taskId, ALICE_SCOPE);
        expect(after.status).toBe("input_required");
        expect(after.cancelRequestedAt).toBe(clock.now());
        expect(after.version).toBe(t.version + 1);
      });

      it("requestCancel is idempotent: the first request's time is kept", async () => {
        const t = await create();
        const first = await store.requestCancel(t.taskId, ALICE_SCOPE);
        clock.advance(10);
        const second = await store.requestCancel(t.taskId, ALICE_SCOPE);
        expect(second).toEqual(first);
      });

      for (const status of ["completed", "failed", "cancelled"] as const) {
        it(`requestCancel on a ${status} task is a no-op, not an error`, async () => {
          const t = await taskIn(status);
          expect(await store.requestCancel(t.taskId, ALICE_SCOPE)).toEqual(t);
        });
      }

      it("a task with a cancel request may still complete (cooperative cancel)", async () => {
        const t = await create();
        await store.requestCancel(t.taskId, ALICE_SCOPE);
        const done = await store.complete(t.taskId, ALICE_SCOPE, { content: [] });
        expect(done.status).toBe("completed");
        expect(done.cancelRequestedAt).not.toBeNull();
      });

      it("markCancelled without a prior request records the request time too", async () => {
        const t = await create();
        clock.advance(7);
        const cancelled = await store.markCancelled(t.taskId, ALICE_SCOPE);
        expect(cancelled.cancelRequestedAt).toBe(clock.now());
        const other = await create();
        const requested = await store.requestCancel(other.taskId, ALICE_SCOPE);
        clock.advance(7);
        const acknowledged = await store.markCancelled(other.taskId, ALICE_SCOPE);
        expect(acknowledged.cancelRequestedAt).toBe(requested.cancelRequestedAt);
      });

      it("markCancelled acknowledges a request and sticks", async () => {
        const t = await create();
        await store.requestCancel(t.taskId, ALICE_SCOPE);
        const cancelled = await store.markCancelled(t.taskId, ALICE_SCOPE);
        expect(cancelled.status).toBe("cancelled");
        expect(cancelled.outcome).toBeNull();
        await expectError(store.complete(t.taskId, ALICE_SCOPE, {}), "invalid_transition");
        expect((await store.get(t.taskId, ALICE_SCOPE)).status).toBe("cancelled");
      });
    });

    describe("input ledger", () => {
      it("requireInput stores requests under their keys and enters input_required", async () => {
        const t = await create();
        const after = await store.requireInput(
          t.taskId,
          ALICE_SCOPE,
          {
            a: { method: "elicitation/create", params: { message: "Name?" } },
            b: { method: "sampling/createMessage", params: { maxTokens: 5 } },
          },
          "need input",
        );
        expect(after.status).toBe("input_required");
        expect(after.statusMessage).toBe("need input");
        expect(after.inputRequests).toEqual({
          a: { method: "elicitation/create", params: { message: "Name?" } },
          b: { method: "sampling/createMessage", params: { maxTokens: 5 } },
        });
      });

      it("requireInput while input_required adds to the outstanding requests", async () => {
        const t = await taskIn("input_required");
        const after = await store.requireInput(t.taskId, ALICE_SCOPE, {
          more: { method: "elicitation/create" },
        });
        expect(Object.keys(after.inputRequests).sort()).toEqual(["confirm", "more"]);
      });

      it("refuses an empty batch of input requests", async () => {
        const t = await create();
        await expectError(store.requireInput(t.taskId, ALICE_SCOPE, {}), "invalid_task");
      });

      it("never reuses a key: outstanding, received or answered keys are refused", async () => {
        const t = await taskIn("input_required");
        const again = { confirm: { method: "elicitation/create" } };
        await expectError(store.requireInput(t.taskId, ALICE_SCOPE, again), "invalid_task");
        await store.submitInput(t.taskId, ALICE_SCOPE, { confirm: { action: "accept" } });
        await expectError(store.requireInput(t.taskId, ALICE_SCOPE, again), "invalid_task");
        await store.takeInputResponses(t.taskId, ALICE_SCOPE);
        await expectError(store.requireInput(t.taskId, ALICE_SCOPE, again), "invalid_task");
        expect((await store.get(t.taskId, ALICE_SCOPE)).status).toBe("working");
      });

      it("accepts partial answers and stays input_required until all are in", async () => {
        const t = await create();
        await store.requireInput(t.taskId, ALICE_SCOPE, {
          a: { method: "elicitation/create" },
          b: { method: "elicitation/create" },
        });
        const first = await store.submitInput(t.taskId, ALICE_SCOPE, { a: { action: "accept" } });
        expect(first.acceptedKeys).toEqual(["a"]);
        expect(first.task.status).toBe("input_required");
        expect(Object.keys(first.task.inputRequests)).toEqual(["b"]);
        const second = await store.submitInput(t.taskId, ALICE_SCOPE, { b: { action: "decline" } });
        expect(second.acceptedKeys).toEqual(["b"]);
        expect(second.task.status).toBe("working");
        expect(second.task.inputRequests).toEqual({});
        expect(second.task.inputResponses).toEqual({
          a: { action: "accept" },
          b: { action: "decline" },
        });
        expect([...second.task.answeredInputKeys].sort()).toEqual(["a", "b"]);
      });

      it("ignores unknown and already-answered keys", async () => {
        const t = await create();
        await store.requireInput(t.taskId, ALICE_SCOPE, {
          a: { method: "elicitation/create" },
          b: { method: "elicitation/create" },
        });
        const r1 = await store.submitInput(t.taskId, ALICE_SCOPE, { a: { v: 1 }, bogus: { v: 9 } });
        expect(r1.acceptedKeys).toEqual(["a"]);
        const r2 = await store.submitInput(t.taskId, ALICE_SCOPE, { a: { v: 2 }, bogus: { v: 9 } });
        expect(r2.acceptedKeys).toEqual([]);
        expect(r2.task).toEqual(r1.task);
        expect(r2.task.inputResponses).toEqual({ a: { v: 1 } });
        expect((await store.get(t.taskId, ALICE_SCOPE)).version).toBe(r1.task.version);
      });

      it("a finished task accepts no input", async () => {
        const t = await taskIn("input_required");
        await store.complete(t.taskId, ALICE_SCOPE, {});
        const r = await store.submitInput(t.taskId, ALICE_SCOPE, { confirm: { action: "accept" } });
        expect(r.acceptedKeys).toEqual([]);
        expect(r.task.status).toBe("completed");
      });

      it("takeInputResponses hands each response over exactly once", async () => {
        const t = await taskIn("input_required");
        await store.submitInput(t.taskId, ALICE_SCOPE, { confirm: { action: "accept" } });
        const first = await store.takeInputResponses(t.taskId, ALICE_SCOPE);
        expect(first.responses).toEqual({ confirm: { action: "accept" } });
        expect(first.task.inputResponses).toEqual({});
        const second = await store.takeInputResponses(t.taskId, ALICE_SCOPE);
        expect(second.responses).toEqual({});
        expect((await store.get(t.taskId, ALICE_SCOPE)).inputResponses).toEqual({});
      });

      it("inputAnswers keeps every accepted answer for the task's lifetime, taken or not", async () => {
        const t = await create();
        await store.requireInput(t.taskId, ALICE_SCOPE, {
          a: { method: "elicitation/create" },
          b: { method: "elicitation/create" },
        });
        const first = await store.submitInput(t.taskId, ALICE_SCOPE, {
          a: { action: "accept" },
          stray: { action: "ignored" },
        });
        expect(first.task.inputAnswers).toEqual({ a: { action: "accept" } });
        const taken = await store.takeInputResponses(t.taskId, ALICE_SCOPE);
        expect(taken.task.inputResponses).toEqual({});
        expect(taken.task.inputAnswers).toEqual({ a: { action: "accept" } });
        // A late second answer to an answered key is ignored, in the ledger too.
        await store.submitInput(t.taskId, ALICE_SCOPE, { a: { action: "decline" } });
        await store.submitInput(t.taskId, ALICE_SCOPE, { b: { n: 2 } });
        await store.takeInputResponses(t.taskId, ALICE_SCOPE);
        await store.requireInput(t.taskId, ALICE_SCOPE, { c: { method: "elicitation/create" } });
        await store.submitInput(t.taskId, ALICE_SCOPE, { c: { n: 3 } });
        const done = await store.complete(t.taskId, ALICE_SCOPE, {});
        const expected = { a: { action: "accept" }, b: { n: 2 }, c: { n: 3 } };
        expect(done.inputAnswers).toEqual(expected);
        expect((await store.get(t.taskId, ALICE_SCOPE)).inputAnswers).toEqual(expected);
      });
    });

    describe("owner scoping", () => {
      const strangers: [string, Owner][] = [
        ["another principal of the same tenant", BOB],
        ["the same principal in another tenant", ALICE_OTHER_TENANT],
        ["the same principal for another audience", ALICE_OTHER_AUDIENCE],
        ["an anonymous caller", ANON],
      ];
      type Attempt = (s: TaskStore, id: string, scope: OwnerScope) => Promise<unknown>;
      const attempts: Record<string, Attempt> = {
        get: (s, id, sc) => s.get(id, sc),
        complete: (s, id, sc) => s.complete(id, sc, {}),
        fail: (s, id, sc) => s.fail(id, sc, { code: 1, message: "x" }),
        requireInput: (s, id, sc) =>
          s.requireInput(id, sc, { z: { method: "elicitation/create" } }),
        setStatusMessage: (s, id, sc) => s.setStatusMessage(id, sc, "x"),
        requestCancel: (s, id, sc) => s.requestCancel(id, sc),
        markCancelled: (s, id, sc) => s.markCancelled(id, sc),
        submitInput: (s, id, sc) => s.submitInput(id, sc, { confirm: { action: "accept" } }),
        takeInputResponses: (s, id, sc) => s.takeInputResponses(id, sc),
        delete: (s, id, sc) => s.delete(id, sc),
      };

      for (const [who, stranger] of strangers) {
        for (const [op, attempt] of Object.entries(attempts)) {
          it(`${op} by ${who} on Alice's task: not_found_or_unauthorized, task unchanged`, async () => {
            const t = await taskIn("input_required");
            const before = await store.get(t.taskId, ALICE_SCOPE);
            const foreign = await expectError(
              attempt(store, t.taskId, scopeOf(stranger)),
              "not_found_or_unauthorized",
            );
            const missing = await expectError(
              attempt(store, "missing-id", scopeOf(stranger)),
              "not_found_or_unauthorized",
            );
            // Missing and foreign look the same: only the echoed id differs.
            expect(foreign.message.replace(t.taskId, "ID")).toBe(
              missing.message.replace("missing-id", "ID"),
            );
            expect(await store.get(t.taskId, ALICE_SCOPE)).toEqual(before);
          });
        }
        it(`list by ${who} does not show Alice's tasks`, async () => {
          await create();
          await create();
          const page = await store.list(scopeOf(stranger), { limit: 100 });
          expect(page.tasks).toEqual([]);
        });
      }

      it("an unowned task is visible to anonymous and owned callers when unowned tasks are open", async () => {
        const t = await create({}, scopeOf(ANON));
        expect(t.owner).toEqual(ANON);
        expect((await store.get(t.taskId, scopeOf(ANON))).taskId).toBe(t.taskId);
        expect((await store.get(t.taskId, scopeOf(BOB))).taskId).toBe(t.taskId);
        const bobList = await store.list(scopeOf(BOB), { limit: 10 });
        expect(bobList.tasks.map((x) => x.taskId)).toEqual([t.taskId]);
        await store.requestCancel(t.taskId, scopeOf(BOB));
      });

      it("an unowned task is visible to nobody under requireOwner", async () => {
        const t = await create({}, scopeOf(ANON));
        await expectError(store.get(t.taskId, scopeOf(BOB, CLOSED)), "not_found_or_unauthorized");
        await expectError(
          store.requestCancel(t.taskId, scopeOf(BOB, CLOSED)),
          "not_found_or_unauthorized",
        );
        expect((await store.list(scopeOf(BOB, CLOSED), { limit: 10 })).tasks).toEqual([]);
      });

      it("an owner sees its own tasks and the open unowned ones in one listing", async () => {
        const a1 = await create();
        const u = await create({}, scopeOf(ANON));
        await create({}, scopeOf(BOB));
        const a2 = await create();
        const page = await store.list(ALICE_SCOPE, { limit: 10 });
        expect(page.tasks.map((t) => t.taskId)).toEqual([a1.taskId, u.taskId, a2.taskId]);
        const closed = await store.list(scopeOf(ALICE, CLOSED), { limit: 10 });
        expect(closed.tasks.map((t) => t.taskId)).toEqual([a1.taskId, a2.taskId]);
      });

      it("owner keys are exact: parts never run into each other", async () => {
        const tricky1 = owner({ principalId: "a|b", tenantId: "c" });
        const tricky2 = owner({ principalId: "a", tenantId: "b|c" });
        expect(ownerKey(tricky1)).not.toBe(ownerKey(tricky2));
        const t = await create({}, scopeOf(tricky1));
        await expectError(store.get(t.taskId, scopeOf(tricky2)), "not_found_or_unauthorized");
        const empty = owner({ principalId: "", tenantId: null });
        await expectError(store.get(t.taskId, scopeOf(empty)), "not_found_or_unauthorized");
      });
    });

    describe("concurrency", () => {
      it(`of ${concurrency} racing terminal writes to one task, exactly one wins`, async () => {
        const t = await taskIn("input_required");
        const writes = Array.from({ length: concurrency }, (_, i) => {
          switch (i % 3) {
            case 0:
              return store.complete(t.taskId, ALICE_SCOPE, {
                content: [{ type: "text", text: `w${i}` }],
              });
            case 1:
              return store.fail(t.taskId, ALICE_SCOPE, { code: -32000, message: `w${i}` });
            default:
              return store.markCancelled(t.taskId, ALICE_SCOPE, `w${i}`);
          }
        });
        const settled = await Promise.allSettled(writes);
        const won = settled.filter(
          (r) => r.status === "fulfilled",
        ) as PromiseFulfilledResult<TaskRecord>[];
        const lost = settled.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
        expect(won).toHaveLength(1);
        for (const r of lost) expect(isTaskError(r.reason, "invalid_transition")).toBe(true);
        const final = await store.get(t.taskId, ALICE_SCOPE);
        expect(final).toEqual(won[0]!.value);
        expect(final.version).toBe(t.version + 1);
      });

      it("racing answers to one key are accepted once", async () => {
        const t = await taskIn("input_required");
        const results = await Promise.all(
          Array.from({ length: concurrency }, (_, i) =>
            store.submitInput(t.taskId, ALICE_SCOPE, { confirm: { n: i } }),
          ),
        );
        expect(results.filter((r) => r.acceptedKeys.length === 1)).toHaveLength(1);
        const final = await store.get(t.taskId, ALICE_SCOPE);
        expect(final.version).toBe(t.version + 1);
        expect(final.answeredInputKeys).toEqual(["confirm"]);
      });

      it("racing drains hand each response to exactly one taker", async () => {
        const t = await create();
        const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
        await store.requireInput(
          t.taskId,
          ALICE_SCOPE,
          Object.fromEntries(keys.map((k) => [k, { method: "elicitation/create" }])),
        );
        const submits = keys.map((k) => store.submitInput(t.taskId, ALICE_SCOPE, { [k]: { k } }));
        const takes = Array.from({ length: 20 }, () =>
          store.takeInputResponses(t.taskId, ALICE_SCOPE),
        );
        await Promise.all(submits);
        const taken = (await Promise.all(takes)).flatMap((r) => Object.keys(r.responses));
        const rest = Object.keys((await store.takeInputResponses(t.taskId, ALICE_SCOPE)).responses);
        expect([...taken, ...rest].sort()).toEqual([...keys].sort());
      });

      it("concurrent status messages each bump the version once", async () => {
        const t = await create();
        await Promise.all(
          Array.from({ length: concurrency }, (_, i) =>
            store.setStatusMessage(t.taskId, ALICE_SCOPE, `m${i}`),
          ),
        );
        expect((await store.get(t.taskId, ALICE_SCOPE)).version).toBe(1 + concurrency);
      });
    });

    describe("ttl and expiry", () => {
      it("never expires a running task, however long past its ttl", async () => {
        const t = await create({ ttlMs: 1000 });
        clock.advance(10 * DAY);
        expect(await store.cleanupExpired()).toBe(0);
        expect((await store.get(t.taskId, ALICE_SCOPE)).status).toBe("working");
        await store.requireInput(t.taskId, ALICE_SCOPE, { q: { method: "elicitation/create" } });
        clock.advance(10 * DAY);
        expect(await store.cleanupExpired()).toBe(0);
        expect((await store.get(t.taskId, ALICE_SCOPE)).expiresAt).toBeNull();
      });

      it("anchor creation: a task finished after its ttl ran out is gone at once", async () => {
        const t = await create({ ttlMs: 1000, ttlAnchor: "creation" });
        clock.advance(400);
        const done = await store.complete(t.taskId, ALICE_SCOPE, {});
        expect(done.expiresAt).toBe(t.createdAt + 1000);
        clock.advance(599);
        expect((await store.get(t.taskId, ALICE_SCOPE)).status).toBe("completed");
        clock.advance(1);
        await expectError(store.get(t.taskId, ALICE_SCOPE), "not_found_or_unauthorized");
        expect(await store.cleanupExpired()).toBe(1);
      });

      it("anchor terminal: a finished task is kept for ttl after it finished", async () => {
        const t = await create({ ttlMs: 1000, ttlAnchor: "terminal" });
        clock.advance(5000);
        const done = await store.fail(t.taskId, ALICE_SCOPE, { code: -1, message: "x" });
        expect(done.expiresAt).toBe(clock.now() + 1000);
        clock.advance(999);
        expect(await store.cleanupExpired()).toBe(0);
        expect((await store.get(t.taskId, ALICE_SCOPE)).status).toBe("failed");
        clock.advance(1);
        expect(await store.cleanupExpired()).toBe(1);
        await expectError(store.get(t.taskId, ALICE_SCOPE), "not_found_or_unauthorized");
      });

      it("an unlimited ttl is never swept", async () => {
        const t = await create({ ttlMs: null });
        await store.markCancelled(t.taskId, ALICE_SCOPE);
        clock.advance(3650 * DAY);
        expect(await store.cleanupExpired()).toBe(0);
        expect((await store.get(t.taskId, ALICE_SCOPE)).expiresAt).toBeNull();
      });

      it("expired tasks drop out of listings before any sweep", async () => {
        const keep = await create({ ttlMs: 10_000 });
        const gone = await create({ ttlMs: 1000 });
        await store.complete(gone.taskId, ALICE_SCOPE, {});
        clock.advance(1000);
        const page = await store.list(ALICE_SCOPE, { limit: 10 });
        expect(page.tasks.map((t) => t.taskId)).toEqual([keep.taskId]);
      });

      it("cleanupExpired honours its limit and reports counts", async () => {
        for (let i = 0; i < 5; i++) {
          const t = await create({ ttlMs: 100 });
          await store.complete(t.taskId, ALICE_SCOPE, {});
        }
        const alive = await create({ ttlMs: 100 });
        clock.advance(100);
        expect(await store.cleanupExpired({ limit: 2 })).toBe(2);
        expect(await store.cleanupExpired({ limit: 2 })).toBe(2);
        expect(await store.cleanupExpired()).toBe(1);
        expect(await store.cleanupExpired()).toBe(0);
        expect((await store.get(alive.taskId, ALICE_SCOPE)).status).toBe("working");
      });
    });

    describe("listing and pagination", () => {
      it("pages through every task once, oldest first, and ends without a cursor", async () => {
        const created: string[] = [];
        for (let i = 0; i < 23; i++) {
          created.push((await create()).taskId);
          clock.advance(1);
        }
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page: Awaited<ReturnType<TaskStore["list"]>> = await store.list(ALICE_SCOPE, {
            limit: 5,
            ...(cursor !== undefined && { cursor }),
          });
          expect(page.tasks.length).toBeLessThanOrEqual(5);
          seen.push(...page.tasks.map((t) => t.taskId));
          cursor = page.nextCursor;
          pages++;
        } while (cursor !== undefined && pages < 20);
        expect(seen).toEqual(created);
        expect(pages).toBeLessThanOrEqual(6);
      });

      it("tasks created in the same millisecond keep their creation order", async () => {
        const created: string[] = [];
        for (let i = 0; i < 10; i++) created.push((await create()).taskId);
        const page = await store.list(ALICE_SCOPE, { limit: 100 });
        expect(page.tasks.map((t) => t.taskId)).toEqual(created);
      });

      it("a cursor stays valid when tasks are inserted and deleted, even its own", async () => {
        const ids0: string[] = [];
        for (let i = 0; i < 6; i++) ids0.push((await create()).taskId);
        const first = await store.list(ALICE_SCOPE, { limit: 3 });
        expect(first.tasks.map((t) => t.taskId)).toEqual(ids0.slice(0, 3));
        expect(first.nextCursor).toBeDefined();
        await store.delete(ids0[2]!, ALICE_SCOPE); // the task the cursor points after
        await store.delete(ids0[4]!, ALICE_SCOPE);
        const late = (await create()).taskId;
        const second = await store.list(ALICE_SCOPE, { limit: 10, cursor: first.nextCursor! });
        expect(second.tasks.map((t) => t.taskId)).toEqual([ids0[3], ids0[5], late]);
      });

      it("rejects malformed cursors with invalid_cursor", async () => {
        for (const cursor of [
          "",
          "garbage",
          "c1.!!",
          "c1.",
          encodeCursor("not-a-number"),
          "x".repeat(5000),
        ]) {
          await expectError(store.list(ALICE_SCOPE, { limit: 5, cursor }), "invalid_cursor");
        }
      });

      it("clamps the page size to the store maximum", async () => {
        const small = await open({ maxPageSize: 4 });
        for (let i = 0; i < 6; i++) await create({}, ALICE_SCOPE, small);
        const page = await small.list(ALICE_SCOPE, { limit: 1000 });
        expect(page.tasks).toHaveLength(4);
        expect(page.nextCursor).toBeDefined();
      });

      it("filters by status, and pages through the filtered set", async () => {
        const wanted: string[] = [];
        for (let i = 0; i < 9; i++) {
          const t = await create();
          if (i % 3 === 0) {
            await store.complete(t.taskId, ALICE_SCOPE, {});
            wanted.push(t.taskId);
          }
        }
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let guard = 0; guard < 10; guard++) {
          const page = await store.list(ALICE_SCOPE, {
            limit: 2,
            statuses: ["completed"],
            ...(cursor !== undefined && { cursor }),
          });
          for (const t of page.tasks) expect(t.status).toBe("completed");
          seen.push(...page.tasks.map((t) => t.taskId));
          cursor = page.nextCursor;
          if (cursor === undefined) break;
        }
        expect(seen).toEqual(wanted);
        const two = await store.list(ALICE_SCOPE, {
          limit: 100,
          statuses: ["completed", "working"],
        });
        expect(two.tasks).toHaveLength(9);
      });
    });

    describe("newest-first listing (listNewest, and across owners for operators)", () => {
      async function pages(
        read: (cursor: string | undefined) => ReturnType<TaskStore["listNewest"]>,
      ): Promise<string[]> {
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let guard = 0; guard < 30; guard++) {
          const page = await read(cursor);
          seen.push(...page.tasks.map((t) => t.taskId));
          cursor = page.nextCursor;
          if (cursor === undefined) return seen;
        }
        throw new Error("listing did not end");
      }

      it("pages through every task once, newest first, and ends without a cursor", async () => {
        const created: string[] = [];
        for (let i = 0; i < 13; i++) {
          created.push((await create()).taskId);
          if (i % 2 === 0) clock.advance(1); // some share a millisecond
        }
        const seen = await pages((cursor) =>
          store.listNewest(ALICE_SCOPE, { limit: 4, ...(cursor !== undefined && { cursor }) }),
        );
        expect(seen).toEqual([...created].reverse());
      });

      it("a cursor stays valid when tasks are created and deleted, even its own", async () => {
        const made: string[] = [];
        for (let i = 0; i < 6; i++) made.push((await create()).taskId);
        const first = await store.listNewest(ALICE_SCOPE, { limit: 3 });
        expect(first.tasks.map((t) => t.taskId)).toEqual([made[5], made[4], made[3]]);
        await store.delete(made[3]!, ALICE_SCOPE);
        await store.delete(made[1]!, ALICE_SCOPE);
        await create(); // newer than the cursor: not on later pages
        const second = await store.listNewest(ALICE_SCOPE, {
          limit: 10,
          cursor: first.nextCursor!,
        });
        expect(second.tasks.map((t) => t.taskId)).toEqual([made[2], made[0]]);
        expect(second.nextCursor).toBeUndefined();
      });

      it("filters by status and by tool, and pages through the filtered set", async () => {
        const wanted: string[] = [];
        for (let i = 0; i < 12; i++) {
          const toolName = i % 2 === 0 ? "slow_compute" : "confirm_delete";
          const t = await create({ request: { toolName, arguments: {} } });
          if (i % 3 === 0) await store.complete(t.taskId, ALICE_SCOPE, {});
          if (i % 3 === 0 && toolName === "confirm_delete") wanted.push(t.taskId);
        }
        const seen = await pages((cursor) =>
          store.listNewest(ALICE_SCOPE, {
            limit: 1,
            statuses: ["completed"],
            toolNames: ["confirm_delete"],
            ...(cursor !== undefined && { cursor }),
          }),
        );
        expect(seen).toEqual([...wanted].reverse());
        const tools = await store.listNewest(ALICE_SCOPE, {
          limit: 100,
          toolNames: ["slow_compute", "confirm_delete"],
        });
        expect(tools.tasks).toHaveLength(12);
        const none = await store.listNewest(ALICE_SCOPE, { limit: 100, toolNames: ["nope"] });
        expect(none.tasks).toHaveLength(0);
      });

      it("listNewest is owner-scoped; across owners it shows every owner's tasks", async () => {
        const a = await create();
        const b = await create({}, scopeOf(BOB));
        const u = await create({}, scopeOf(ANON));
        const mine = await store.listNewest(ALICE_SCOPE, { limit: 100 });
        expect(mine.tasks.map((t) => t.taskId)).toEqual([u.taskId, a.taskId]);
        const closed = await store.listNewest(scopeOf(ALICE, CLOSED), { limit: 100 });
        expect(closed.tasks.map((t) => t.taskId)).toEqual([a.taskId]);
        const bobs = await store.listNewest(scopeOf(BOB, CLOSED), { limit: 100 });
        expect(bobs.tasks.map((t) => t.taskId)).toEqual([b.taskId]);
        const all = await pages((cursor) =>
          store.listNewestAcrossOwners({ limit: 2, ...(cursor !== undefined && { cursor }) }),
        );
        expect(all).toEqual([u.taskId, b.taskId, a.taskId]);
        const page = await store.listNewestAcrossOwners({ limit: 100 });
        expect(page.tasks.map((t) => t.owner)).toEqual([ANON, BOB, ALICE]);
      });

      it("getAcrossOwners reads any owner's task; missing and expired ones are not found", async () => {
        const b = await create({ ttlMs: 1000 }, scopeOf(BOB));
        expect((await store.getAcrossOwners(b.taskId)).owner).toEqual(BOB);
        await store.complete(b.taskId, scopeOf(BOB), {});
        clock.advance(5000);
        await expectError(store.getAcrossOwners(b.taskId), "not_found_or_unauthorized");
        await expectError(store.getAcrossOwners("missing"), "not_found_or_unauthorized");
        const list = await store.listNewestAcrossOwners({ limit: 100 });
        expect(list.tasks.map((t) => t.taskId)).not.toContain(b.taskId);
      });

      it("rejects malformed cursors with invalid_cursor", async () => {
        for (const cursor of ["", "garbage", "c1.!!", encodeCursor("x"), "x".repeat(5000)]) {
          await expectError(store.listNewest(ALICE_SCOPE, { limit: 5, cursor }), "invalid_cursor");
          await expectError(store.listNewestAcrossOwners({ limit: 5, cursor }), "invalid_cursor");
        }
      });

      it("clamps the page size to the store maximum", async () => {
        const small = await open({ maxPageSize: 4 });
        for (let i = 0; i < 6; i++) await create({}, ALICE_SCOPE, small);
        const page = await small.listNewestAcrossOwners({ limit: 1000 });
        expect(page.tasks).toHaveLength(4);
        expect(page.nextCursor).toBeDefined();
      });
    });

    describe("bounds", () => {
      it("refuses tasks beyond maxTasks with store_full, and accepts again after a delete", async () => {
        const s = await open({ maxTasks: 3 });
        const first = await create({}, ALICE_SCOPE, s);
        await create({}, scopeOf(BOB), s);
        await create({}, scopeOf(ANON), s);
        await expectError(create({}, scopeOf(ALICE_OTHER_TENANT), s), "store_full");
        await s.delete(first.taskId, ALICE_SCOPE);
        await create({}, scopeOf(ALICE_OTHER_TENANT), s);
      });

      it("refuses tasks beyond maxTasksPerOwner for that owner only", async () => {
        const s = await open({ maxTasksPerOwner: 2 });
        await create({}, ALICE_SCOPE, s);
        await create({}, ALICE_SCOPE, s);
        await expectError(create({}, ALICE_SCOPE, s), "store_full");
        await create({}, scopeOf(BOB), s);
        await create({}, scopeOf(ALICE_OTHER_AUDIENCE), s);
      });

      it("store_full names the quota that was hit, in its message and its quota field", async () => {
        const total = await open({ maxTasks: 1 });
        await create({}, ALICE_SCOPE, total);
        const t = (await expectError(create({}, scopeOf(BOB), total), "store_full")) as TaskError;
        expect(t.quota).toEqual({ quota: "maxTasks", limit: 1 });
        expect(t.message).toContain("maxTasks");
        const own = await open({ maxTasksPerOwner: 1 });
        await create({}, ALICE_SCOPE, own);
        const o = (await expectError(create({}, ALICE_SCOPE, own), "store_full")) as TaskError;
        expect(o.quota).toEqual({ quota: "maxTasksPerOwner", limit: 1 });
        expect(o.message).toContain("maxTasksPerOwner");
      });

      it("expired tasks do not count against the bounds", async () => {
        const s = await open({ maxTasks: 2, maxTasksPerOwner: 2 });
        const a = await create({ ttlMs: 100 }, ALICE_SCOPE, s);
        await create({}, ALICE_SCOPE, s);
        await s.complete(a.taskId, ALICE_SCOPE, {});
        clock.advance(100);
        await create({}, ALICE_SCOPE, s);
      });
    });

    const auditUsage = suiteOptions.auditUsage;
    if (auditUsage !== undefined) {
      describe("quota usage counters", () => {
        const SCOPES = [ALICE_SCOPE, scopeOf(BOB), scopeOf(ANON)];
        const argsOf = (bytes: number) => ({ b: "x".repeat(Math.max(0, bytes - 8)) });

        /** The counters agree with a recount of the tasks, owner by owner. */
        async function expectCountersExact(s: TaskStore): Promise<void> {
          const { counters, recount } = await auditUsage!(s);
          expect(counters).toEqual(recount);
        }

        /** Runs a write that may meet one of the expected refusals; anything else fails. */
        async function tolerate(write: () => Promise<unknown>): Promise<void> {
          try {
            await write();
          } catch (error) {
            if (!(isTaskError(error) && EXPECTED_RANDOM_ERRORS.has(error.code))) throw error;
          }
        }

        /** One random write on `s`, on one of `made` (tasks created so far) or a new one. */
        function randomWrite(
          s: TaskStore,
          random: () => number,
          made: { taskId: string; scope: OwnerScope }[],
        ): () => Promise<unknown> {
          const scope = SCOPES[Math.floor(random() * SCOPES.length)]!;
          const t = made.length === 0 ? undefined : made[Math.floor(random() * made.length)]!;
          const bytes = 8 + Math.floor(random() * 300);
          const op = Math.floor(random() * (supportsQueue(s) ? 9 : 8));
          if (op <= 1 || t === undefined) {
            const task = newTask({
              request: { toolName: "t", arguments: argsOf(bytes) },
              ttlMs: 50 + Math.floor(random() * 400),
            });
            return () =>
              s.create(task, scope).then(() => {
                made.push({ taskId: task.taskId, scope });
              });
          }
          switch (op) {
            case 2:
              return () => s.complete(t.taskId, t.scope, argsOf(bytes));
            case 3:
              return () => s.fail(t.taskId, t.scope, { code: -32000, message: "m".repeat(bytes) });
            case 4: {
              const key = `q${Math.floor(random() * 1e9)}`;
              return () =>
                s
                  .requireInput(t.taskId, t.scope, { [key]: { method: "elicitation/create" } })
                  .then(() => s.submitInput(t.taskId, t.scope, { [key]: argsOf(bytes) }));
            }
            case 5:
              return () => s.markCancelled(t.taskId, t.scope);
            case 6:
              return () => s.delete(t.taskId, t.scope);
            case 7:
              return async () => {
                clock.advance(Math.floor(random() * 150));
                await s.cleanupExpired({ limit: 1 + Math.floor(random() * 5) });
              };
            default:
              // A run that is lost: claimed with a short lease, then recovered (requeued or
              // failed "Worker lost", whose error counts).
              return async () => {
                if (!supportsQueue(s)) return;
                await s.claim("lost-worker", { limit: 2, leaseMs: 20 });
                clock.advance(25);
                await s.recoverOrphans();
              };
          }
        }

        it("agree with a recount after random creates, answers, endings, expiries and deletions", async () => {
          const s = await open({ maxTasks: 40, maxTasksPerOwner: 18, maxBytesPerOwner: 2500 });
          const random = seededRandom(20);
          const made: { taskId: string; scope: OwnerScope }[] = [];
          for (let step = 1; step <= 240; step++) {
            await tolerate(randomWrite(s, random, made));
            if (step % 40 === 0) await expectCountersExact(s);
          }
          clock.advance(DAY);
          await s.cleanupExpired();
          await expectCountersExact(s);
          // Everything ended and expired, or was deleted: only running tasks remain counted.
          const { counters } = await auditUsage(s);
          let running = 0;
          for (const { taskId, scope } of made) {
            try {
              const t = await s.get(taskId, scope);
              if (t.status === "working" || t.status === "input_required") running++;
            } catch (error) {
              if (!isTaskError(error, "not_found_or_unauthorized")) throw error;
            }
          }
          expect(counters.tasks).toBe(running);
        });

        it("agree with a recount after concurrent writers", async () => {
          const s = await open({ maxTasks: 10 * concurrency, maxBytesPerOwner: 100 * concurrency });
          const random = seededRandom(7);
          const made: { taskId: string; scope: OwnerScope }[] = [];
          for (let round = 0; round < 4; round++) {
            const writes = Array.from({ length: concurrency }, () => randomWrite(s, random, made));
            await Promise.all(writes.map((w) => tolerate(w)));
            await expectCountersExact(s);
          }
        });
      });
    }

    describe("byte quota (maxBytesPerOwner)", () => {
      const LIMIT = 1000;
      /** Arguments of exactly `bytes` payload bytes (UTF-8 of their JSON), `bytes` >= 8. */
      const argsOf = (bytes: number) => {
        // {"b":"…"} is 8 bytes around the string; "é" is 2 bytes in UTF-8, so the measure
        // must be UTF-8 bytes, not UTF-16 units.
        const wide = Math.min(10, Math.floor((bytes - 8) / 2));
        return { b: "é".repeat(wide) + "x".repeat(bytes - 8 - 2 * wide) };
      };
      const sized = (bytes: number) => ({
        request: { toolName: "slow_compute", arguments: argsOf(bytes) },
      });

      /**
       * Proves the owner has exactly `room` bytes left: a task of `room` bytes fits, one of
       * 2 more bytes does not; the probe task is removed again.
       */
      async function expectRoom(s: TaskStore, scope: OwnerScope, room: number): Promise<void> {
        const probe = await create(sized(room), scope, s);
        await expectError(
          create({ request: { toolName: "t", arguments: {} } }, scope, s),
          "store_full",
        );
        await s.delete(probe.taskId, scope);
      }

      it("refuses arguments past the owner's quota, exactly at the boundary, naming the quota", async () => {
        const s = await open({ maxBytesPerOwner: LIMIT });
        await create(sized(600), ALICE_SCOPE, s);
        const error = (await expectError(
          create(sized(401), ALICE_SCOPE, s),
          "store_full",
        )) as TaskError;
        expect(error.quota).toEqual({ quota: "maxBytesPerOwner", limit: LIMIT });
        expect(error.message).toContain("maxBytesPerOwner");
        await create(sized(400), ALICE_SCOPE, s);
        await expectError(create(sized(8), ALICE_SCOPE, s), "store_full");
        // Per owner: the other owners, anonymous included, each have their own quota.
        await create(sized(LIMIT), scopeOf(BOB), s);
        await create(sized(LIMIT), scopeOf(ALICE_OTHER_TENANT), s);
        await create(sized(LIMIT), scopeOf(ANON), s);
        await expectError(create(sized(8), scopeOf(ANON), s), "store_full");
        // A task bigger than the whole quota is refused outright.
        const fresh = await open({ maxBytesPerOwner: LIMIT });
        await expectError(create(sized(LIMIT + 1), ALICE_SCOPE, fresh), "store_full");
        await expectRoom(fresh, ALICE_SCOPE, LIMIT);
      });

      it("a refused create stores nothing and costs nothing", async () => {
        const s = await open({ maxBytesPerOwner: LIMIT });
        const refused = newTask(sized(LIMIT + 1));
        await expectError(s.create(refused, ALICE_SCOPE), "store_full");
        await expectError(s.get(refused.taskId, ALICE_SCOPE), "not_found_or_unauthorized");
        expect((await s.list(ALICE_SCOPE, { limit: 10 })).tasks).toEqual([]);
        await expectRoom(s, ALICE_SCOPE, LIMIT);
      });

      it("results and errors count once stored; an outcome is stored even past the quota", async () => {
        const s = await open({ maxBytesPerOwner: LIMIT });
        const a = await create(sized(100), ALICE_SCOPE, s);
        await s.complete(a.taskId, ALICE_SCOPE, argsOf(300));
        const b = await create(sized(100), ALICE_SCOPE, s);
        await s.fail(b.taskId, ALICE_SCOPE, { code: -32000, message: "m".repeat(100) });
        const errorBytes = payloadBytes({ code: -32000, message: "m".repeat(100) });
        await expectRoom(s, ALICE_SCOPE, LIMIT - 500 - errorBytes);
        // A run's outcome is never refused (that would lose finished work): it is kept and
        // counted, and new tasks wait until there is room again.
        const c = await create(sized(LIMIT - 500 - errorBytes), ALICE_SCOPE, s);
        const done = await s.complete(c.taskId, ALICE_SCOPE, argsOf(700));
        expect(done.outcome).toEqual({ kind: "result", result: argsOf(700) });
        await expectError(create(sized(8), ALICE_SCOPE, s), "store_full");
        await s.delete(c.taskId, ALICE_SCOPE);
        await expectRoom(s, ALICE_SCOPE, LIMIT - 500 - errorBytes);
        // Cancelling stores no outcome.
        const d = await create(sized(100), ALICE_SCOPE, s);
        await s.requestCancel(d.taskId, ALICE_SCOPE);
        await s.markCancelled(d.taskId, ALICE_SCOPE);
        await expectRoom(s, ALICE_SCOPE, LIMIT - 600 - errorBytes);
      });

      it("input answers count, are refused past the quota, and leave the task unchanged then", async () => {
        const s = await open({ maxBytesPerOwner: LIMIT });
        const t = await create(sized(100), ALICE_SCOPE, s);
        await s.requireInput(t.taskId, ALICE_SCOPE, {
          q1: { method: "elicitation/create" },
          q2: { method: "elicitation/create" },
        });
        // Answers to keys that are not outstanding are ignored, and cost nothing.
        await s.submitInput(t.taskId, ALICE_SCOPE, { other: argsOf(5000) });
        const first = await s.submitInput(t.taskId, ALICE_SCOPE, { q1: argsOf(400) });
        expect(first.acceptedKeys).toEqual(["q1"]);
        await expectRoom(s, ALICE_SCOPE, LIMIT - 500);
        const refused = (await expectError(
          s.submitInput(t.taskId, ALICE_SCOPE, { q2: argsOf(501) }),
          "store_full",
        )) as TaskError;
        expect(refused.quota).toEqual({ quota: "maxBytesPerOwner", limit: LIMIT });
        const after = await s.get(t.taskId, ALICE_SCOPE);
        expect(after.status).toBe("input_required");
        expect(Object.keys(after.inputRequests)).toEqual(["q2"]);
        expect(Object.keys(after.inputAnswers)).toEqual(["q1"]);
        // Draining the answers changes nothing: they stay on the task for its lifetime.
        await s.takeInputResponses(t.taskId, ALICE_SCOPE);
        const last = await s.submitInput(t.taskId, ALICE_SCOPE, { q2: argsOf(500) });
        expect(last.acceptedKeys).toEqual(["q2"]);
        expect(last.task.status).toBe("working");
        await s.takeInputResponses(t.taskId, ALICE_SCOPE);
        await expectError(create(sized(8), ALICE_SCOPE, s), "store_full");
        await s.markCancelled(t.taskId, ALICE_SCOPE);
        await s.delete(t.taskId, ALICE_SCOPE);
        await expectRoom(s, ALICE_SCOPE, LIMIT);
      });

      it("expired tasks give their bytes back, swept or not", async () => {
        const s = await open({ maxBytesPerOwner: LIMIT });
        const t = await create({ ...sized(600), ttlMs: 100 }, ALICE_SCOPE, s);
        await s.complete(t.taskId, ALICE_SCOPE, argsOf(300));
        await expectError(create(sized(101), ALICE_SCOPE, s), "store_full");
        clock.advance(100);
        await expectRoom(s, ALICE_SCOPE, LIMIT);
        await s.cleanupExpired();
        await expectRoom(s, ALICE_SCOPE, LIMIT);
      });

      it("stays exact through concurrent writers", async () => {
        const big = 100 * concurrency;
        const s = await open({ maxBytesPerOwner: 3 * big });
        const made = await Promise.all(
          Array.from({ length: concurrency }, () => create(sized(100), ALICE_SCOPE, s)),
        );
        await Promise.all(
          made.map((t, i) =>
            i % 2 === 0
              ? s.complete(t.taskId, ALICE_SCOPE, argsOf(50))
              : s
                  .requireInput(t.taskId, ALICE_SCOPE, { q: { method: "elicitation/create" } })
                  .then(() => s.submitInput(t.taskId, ALICE_SCOPE, { q: argsOf(50) })),
          ),
        );
        // Concurrent deletes of half the tasks give exactly their bytes back.
        await Promise.all(
          made.filter((_, i) => i % 4 < 2).map((t) => s.delete(t.taskId, ALICE_SCOPE)),
        );
        const kept = made.filter((_, i) => i % 4 >= 2).length;
        await expectRoom(s, ALICE_SCOPE, 3 * big - kept * 150);
      });
    });

    describe("delete", () => {
      it("removes a task whatever its status", async () => {
        const t = await taskIn("input_required");
        await store.delete(t.taskId, ALICE_SCOPE);
        await expectError(store.get(t.taskId, ALICE_SCOPE), "not_found_or_unauthorized");
        await expectError(store.delete(t.taskId, ALICE_SCOPE), "not_found_or_unauthorized");
        expect((await store.list(ALICE_SCOPE, { limit: 10 })).tasks).toEqual([]);
      });
    });

    describe("change feed", () => {
      const collect = (s: TaskStore, taskId?: string) => collectChanges(s, watchTimeoutMs, taskId);

      it("reports each change of a watched task with its kind, status and version", async () => {
        const t = await create();
        const feed = collect(store, t.taskId);
        await store.setStatusMessage(t.taskId, ALICE_SCOPE, "1/2");
        await store.requireInput(t.taskId, ALICE_SCOPE, { q: { method: "elicitation/create" } });
        await store.submitInput(t.taskId, ALICE_SCOPE, { q: { action: "accept" } });
        await store.takeInputResponses(t.taskId, ALICE_SCOPE);
        await store.requestCancel(t.taskId, ALICE_SCOPE);
        await store.markCancelled(t.taskId, ALICE_SCOPE);
        await store.delete(t.taskId, ALICE_SCOPE);
        await feed.atLeast(7);
        feed.stop();
        expect(feed.events.map((e) => [e.kind, e.status, e.version])).toEqual([
          ["status_message", "working", 2],
          ["input_requested", "input_required", 3],
          ["input_submitted", "working", 4],
          ["input_taken", "working", 5],
          ["cancel_requested", "working", 6],
          ["status_changed", "cancelled", 7],
          ["deleted", "cancelled", 7],
        ]);
        for (const e of feed.events) expect(e.taskId).toBe(t.taskId);
      });

      it("a watch on all tasks sees creations and changes of every owner", async () => {
        const feed = collect(store);
        const a = await create();
        const b = await create({}, scopeOf(BOB));
        await store.complete(b.taskId, scopeOf(BOB), {});
        // A task queue also reports each task created without a worker as queued.
        const queue = supportsQueue(store);
        const expected = [
          [a.taskId, "created"],
          ...(queue ? [[a.taskId, "queued"]] : []),
          [b.taskId, "created"],
          ...(queue ? [[b.taskId, "queued"]] : []),
          [b.taskId, "status_changed"],
        ];
        await feed.atLeast(expected.length);
        feed.stop();
        expect(feed.events.map((e) => [e.taskId, e.kind])).toEqual(expected);
      });

      it("a per-task watch hears nothing about other tasks, and nothing after unsubscribe", async () => {
        const t = await create();
        const other = await create();
        const feed = collect(store, t.taskId);
        await store.setStatusMessage(other.taskId, ALICE_SCOPE, "x");
        await store.setStatusMessage(t.taskId, ALICE_SCOPE, "y");
        await feed.atLeast(1);
        feed.stop();
        await store.setStatusMessage(t.taskId, ALICE_SCOPE, "z");
        const marker = collect(store, t.taskId);
        await store.setStatusMessage(t.taskId, ALICE_SCOPE, "after");
        await marker.atLeast(1);
        marker.stop();
        expect(feed.events.map((e) => e.version)).toEqual([2]);
      });

      it("no-op writes (repeated cancel request, ignored input) report nothing", async () => {
        const t = await create();
        await store.requestCancel(t.taskId, ALICE_SCOPE);
        const feed = collect(store, t.taskId);
        await store.requestCancel(t.taskId, ALICE_SCOPE);
        await store.submitInput(t.taskId, ALICE_SCOPE, { nothing: {} });
        await store.takeInputResponses(t.taskId, ALICE_SCOPE);
        await store.setStatusMessage(t.taskId, ALICE_SCOPE, "real");
        await feed.atLeast(1);
        feed.stop();
        expect(feed.events.map((e) => e.kind)).toEqual(["status_message"]);
      });
    });
  });
}
