import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createIdGenerator,
  DEFAULT_EXECUTION_POLICY,
  type ExecutionPolicy,
  isTaskError,
  ManualClock,
  type OrphanSweep,
  owner,
  QUEUED_OWNER_LIMIT_MESSAGE,
  queuedAheadMessage,
  type TaskRecord,
  type TaskStatus,
  type TaskStore,
} from "../index.js";
import {
  CANCELLED_WITHOUT_RUN_MESSAGE,
  claimTask,
  HANDED_BACK_MESSAGE,
  INTENT_FROM,
  MAX_LEASE_HOLDER_LENGTH,
  type NewTask,
  type OwnerScope,
  ownerScope,
  recoverOrphan,
  requeueTask,
  retryingMessage,
  type TaskQueueStore,
  WORKER_LOST_ERROR,
  WORKER_LOST_REASON,
} from "../store-api.js";
import type { ContractSuiteOptions } from "./contract.js";
import { collectChanges, expectTaskError, TASK_STATUSES } from "./helpers.js";

/** What a queue store factory is handed by the queue contract suite. */
export interface QueueContractStoreOptions {
  /** The store must take every timestamp, lease deadline and backoff from this clock. */
  readonly clock: ManualClock;
}

/** Makes a fresh, empty queue store for one test. */
export type QueueContractStoreFactory = (
  options: QueueContractStoreOptions,
) => TaskQueueStore | Promise<TaskQueueStore>;

function scopeOf(parts: Parameters<typeof owner>[0]): OwnerScope {
  const scope = ownerScope(owner(parts), { requireOwner: false });
  if (!scope) throw new Error("test bug: empty scope");
  return scope;
}

const ALICE = scopeOf({ principalId: "alice", tenantId: "acme" });
const BOB = scopeOf({ principalId: "bob", tenantId: "acme" });
const ANON = scopeOf({});

const NODE_A = "node-a";
const NODE_B = "node-b";
/** The lease of the runs in these tests, unless a test says otherwise. */
const LEASE = 30_000;
const DAY = 24 * 60 * 60 * 1000;

/** What a sweep that found no orphan says. */
const NO_ORPHANS: OrphanSweep = {
  requeued: 0,
  failed: 0,
  failedTasks: [],
  cancelled: 0,
  cancelledTasks: [],
};

/** The writes a run makes, each carrying the run's fence in its scope. */
type FencedWrite = (store: TaskStore, taskId: string, scope: OwnerScope) => Promise<unknown>;

const FENCED_WRITES: Record<string, FencedWrite> = {
  complete: (s, id, sc) => s.complete(id, sc, { content: [] }),
  fail: (s, id, sc) => s.fail(id, sc, { code: -32603, message: "boom" }),
  requireInput: (s, id, sc) => s.requireInput(id, sc, { late: { method: "elicitation/create" } }),
  setStatusMessage: (s, id, sc) => s.setStatusMessage(id, sc, "halfway"),
  markCancelled: (s, id, sc) => s.markCancelled(id, sc),
  takeInputResponses: (s, id, sc) => s.takeInputResponses(id, sc),
  requeue: (s, id, sc) => (s as TaskQueueStore).requeue(id, sc, "once more"),
};

/** The fenced writes that are state-machine intents (and so refuse a finished task). */
const INTENT_WRITES = [
  "complete",
  "fail",
  "requireInput",
  "setStatusMessage",
  "markCancelled",
  "requeue",
];

/**
 * The queue contract of {@link TaskQueueStore}, run next to `describeTaskStoreContract`:
 * the task table is the queue. Covers `claim` (oldest first across owners, limits, tool
 * filters, backoff, no double claim), fencing (every write of a run names its holder and
 * fencing token; a superseded run's writes are refused with `lease_lost`), lease renewal
 * and hand-back, requeue with backoff, orphan recovery, the answers a re-run inherits and
 * the `queued` / `claimed` change events.
 *
 * @example
 * ```ts
 * describeQueueStoreContract("my store", ({ clock }) => new MyStore({ clock }));
 * ```
 */
export function describeQueueStoreContract(
  name: string,
  makeStore: QueueContractStoreFactory,
  suiteOptions: ContractSuiteOptions = {},
): void {
  const watchTimeoutMs = suiteOptions.watchTimeoutMs ?? 2000;
  const concurrency = suiteOptions.concurrency ?? 50;

  describe(`TaskQueueStore contract: ${name}`, () => {
    let clock: ManualClock;
    let store: TaskQueueStore;
    const ids = createIdGenerator();

    beforeEach(async () => {
      clock = new ManualClock(Date.UTC(2026, 6, 28, 12));
      store = await makeStore({ clock });
    });

    afterEach(async () => {
      await store.close();
    });

    function newTask(overrides: Partial<NewTask> = {}): NewTask {
      return {
        taskId: ids(),
        era: "2026-07-28",
        request: { toolName: "slow_compute", arguments: {} },
        ttlMs: 60_000,
        ttlAnchor: "terminal",
        pollIntervalMs: 500,
        ...overrides,
      };
    }

    /** A task created queued (no worker yet). */
    function queued(overrides: Partial<NewTask> = {}, scope = ALICE): Promise<TaskRecord> {
      return store.create(newTask(overrides), scope);
    }

    /** A task created claimed by `holder` (its first run, fencing token 1). */
    function held(
      overrides: Partial<NewTask> = {},
      scope = ALICE,
      holder = NODE_A,
      durationMs = LEASE,
    ): Promise<TaskRecord> {
      return store.create(newTask({ lease: { holder, durationMs }, ...overrides }), scope);
    }

    function policy(execution: Partial<ExecutionPolicy>): Partial<NewTask> {
      return { execution };
    }

    /** The scope a run writes with: the task owner's scope plus the run's fence. */
    function runOf(record: TaskRecord, scope = ALICE): OwnerScope {
      const { holder, fencingToken } = record.execution;
      if (holder === null) throw new Error(`test bug: task ${record.taskId} is not held`);
      return { ...scope, fence: { holder, fencingToken } };
    }

    async function claimAll(holder = NODE_A, leaseMs = LEASE): Promise<TaskRecord[]> {
      return store.claim(holder, { limit: 1000, leaseMs });
    }

    /** A task whose first run (node A, token 1) was superseded by a second (token 2). */
    async function superseded(secondHolder = NODE_B) {
      const first = await held();
      expect(await store.releaseLease(first.taskId, runOf(first))).toBe(true);
      const [second] = await store.claim(secondHolder, { limit: 1, leaseMs: LEASE });
      expect(second?.taskId).toBe(first.taskId);
      return { stale: runOf(first), current: runOf(second!), task: second! };
    }

    /** The ids and statuses of the tasks a sweep failed ("Worker lost"), in its order. */
    const failedOf = (sweep: OrphanSweep) => sweep.failedTasks.map((t) => [t.taskId, t.status]);

    const expectError = expectTaskError;
    const collect = (taskId?: string) => collectChanges(store, watchTimeoutMs, taskId);

    describe("creation", () => {
      it("a task created without a lease is queued: no holder, no attempt yet, token 0", async () => {
        const t = await queued();
        expect(t.execution).toEqual({
          ...DEFAULT_EXECUTION_POLICY,
          attempt: 0,
          holder: null,
          fencingToken: 0,
          leaseExpiresAt: null,
          availableAt: null,
        });
        expect(await store.get(t.taskId, ALICE)).toEqual(t);
      });

      it("a task created with a lease is claimed by its holder: attempt 1, token 1, lease from now", async () => {
        const custom = { maxAttempts: 3, backoffMs: 250, retryOnError: true, deadlineMs: 9000 };
        const t = await held({ execution: custom }, ALICE, NODE_B, 5000);
        expect(t.execution).toEqual({
          ...custom,
          attempt: 1,
          holder: NODE_B,
          fencingToken: 1,
          leaseExpiresAt: clock.now() + 5000,
          availableAt: null,
        });
        expect(await store.get(t.taskId, ALICE)).toEqual(t);
        expect(await claimAll()).toEqual([]);
      });
    });

    describe("claim", () => {
      it("claims queued tasks oldest first, across owners, each exactly as claimTask makes it", async () => {
        const a = await queued({}, ALICE);
        clock.advance(1);
        const b = await queued({}, BOB);
        const c = await queued({}, ANON); // same millisecond: creation order still holds
        const d = await queued({}, ALICE);
        clock.advance(10);
        const claimed = await store.claim(NODE_A, { limit: 10, leaseMs: 5000 });
        expect(claimed).toEqual([a, b, c, d].map((t) => claimTask(t, NODE_A, 5000, clock.now())));
        for (const t of claimed) {
          expect(t.version).toBe(2);
          expect(t.execution).toMatchObject({
            attempt: 1,
            holder: NODE_A,
            fencingToken: 1,
            leaseExpiresAt: clock.now() + 5000,
            availableAt: null,
          });
        }
        expect(await store.get(b.taskId, BOB)).toEqual(claimed[1]);
      });

      it(`takes a holder of up to ${MAX_LEASE_HOLDER_LENGTH} characters, in claims and creations; refuses longer or empty ones`, async () => {
        const longest = "w".repeat(MAX_LEASE_HOLDER_LENGTH);
        const tooLong = `${longest}w`;
        for (const holder of [tooLong, ""]) {
          await expectError(store.claim(holder, { limit: 1, leaseMs: LEASE }), "invalid_task");
          await expectError(held({}, ALICE, holder), "invalid_task");
        }
        const t = await queued();
        const [claimed] = await store.claim(longest, { limit: 1, leaseMs: LEASE });
        expect(claimed?.taskId).toBe(t.taskId);
        expect(claimed?.execution.holder).toBe(longest);
        expect(await store.renewLease(t.taskId, runOf(claimed!), LEASE)).toBe(true);
        const created = await held({}, ALICE, longest);
        expect(created.execution.holder).toBe(longest);
        expect(await store.get(created.taskId, ALICE)).toEqual(created);
      });

      it("claims at most limit tasks; the next claim goes on with the next oldest", async () => {
        const created: string[] = [];
        for (let i = 0; i < 5; i++) created.push((await queued()).taskId);
        const first = await store.claim(NODE_A, { limit: 2, leaseMs: LEASE });
        const second = await store.claim(NODE_B, { limit: 2, leaseMs: LEASE });
        const third = await store.claim(NODE_A, { limit: 2, leaseMs: LEASE });
        expect(first.map((t) => t.taskId)).toEqual(created.slice(0, 2));
        expect(second.map((t) => t.taskId)).toEqual(created.slice(2, 4));
        expect(third.map((t) => t.taskId)).toEqual(created.slice(4));
        expect(second.every((t) => t.execution.holder === NODE_B)).toBe(true);
        expect(await claimAll()).toEqual([]);
      });

      it("a limit of 0 claims nothing", async () => {
        const t = await queued();
        expect(await store.claim(NODE_A, { limit: 0, leaseMs: LEASE })).toEqual([]);
        expect(await store.get(t.taskId, ALICE)).toEqual(t);
      });

      it("claims only tasks of the given tools; the others wait for a worker that runs them", async () => {
        const tool = (toolName: string) => ({ request: { toolName, arguments: {} } });
        const a = await queued(tool("resize"));
        const b = await queued(tool("transcode"));
        const c = await queued(tool("ocr"));
        const d = await queued(tool("resize"));
        const mine = await store.claim(NODE_A, {
          limit: 10,
          leaseMs: LEASE,
          toolNames: ["resize", "ocr"],
        });
        expect(mine.map((t) => t.taskId)).toEqual([a.taskId, c.taskId, d.taskId]);
        expect(
          await store.claim(NODE_A, { limit: 10, leaseMs: LEASE, toolNames: ["nope"] }),
        ).toEqual([]);
        expect((await claimAll(NODE_B)).map((t) => t.taskId)).toEqual([b.taskId]);
      });

      it("an empty list of tools claims nothing", async () => {
        await queued();
        expect(await store.claim(NODE_A, { limit: 10, leaseMs: LEASE, toolNames: [] })).toEqual([]);
        expect(await claimAll()).toHaveLength(1);
      });

      it("never claims a held task, even one whose lease ran out (recoverOrphans' job)", async () => {
        const t = await held({}, ALICE, NODE_A, 1000);
        expect(await claimAll(NODE_B)).toEqual([]);
        clock.advance(10 * DAY);
        expect(await claimAll(NODE_B)).toEqual([]);
        expect((await store.get(t.taskId, ALICE)).execution.holder).toBe(NODE_A);
      });

      it("never claims a finished task", async () => {
        const done = await queued({ ttlMs: null });
        await store.complete(done.taskId, ALICE, {});
        const cancelled = await queued({ ttlMs: null });
        await store.markCancelled(cancelled.taskId, ALICE);
        expect(await claimAll()).toEqual([]);
      });

      it("never claims or recovers a deleted task", async () => {
        const gone = await queued();
        const lost = await held({}, ALICE, NODE_A, 100);
        const kept = await queued();
        await store.delete(gone.taskId, ALICE);
        await store.delete(lost.taskId, ALICE);
        clock.advance(100);
        expect(await store.recoverOrphans()).toEqual(NO_ORPHANS);
        expect((await claimAll()).map((t) => t.taskId)).toEqual([kept.taskId]);
      });

      it("claims a task with a cancel request: its worker acknowledges it", async () => {
        const t = await queued();
        const requested = await store.requestCancel(t.taskId, ALICE);
        const [claimed] = await claimAll();
        expect(claimed?.taskId).toBe(t.taskId);
        expect(claimed?.cancelRequestedAt).toBe(requested.cancelRequestedAt);
        const ack = await store.markCancelled(t.taskId, runOf(claimed!));
        expect(ack.status).toBe("cancelled");
        expect(ack.execution.holder).toBeNull();
      });

      it("a task back in the queue keeps its place: claimed before younger tasks", async () => {
        const old = await held(policy({ maxAttempts: 3, backoffMs: 0 }));
        const young = await queued();
        await store.requeue(old.taskId, runOf(old), "retry");
        const younger = await queued();
        expect((await claimAll()).map((t) => t.taskId)).toEqual([
          old.taskId,
          young.taskId,
          younger.taskId,
        ]);
      });

      it(`${concurrency} concurrent claims never hand out one task twice`, async () => {
        const created = new Set<string>();
        for (let i = 0; i < 30; i++) {
          created.add((await queued({}, i % 2 === 0 ? ALICE : BOB)).taskId);
        }
        const batches = await Promise.all(
          Array.from({ length: concurrency }, (_, i) =>
            store.claim(`node-${i}`, { limit: 2, leaseMs: LEASE }),
          ),
        );
        const claimed = batches.flat();
        expect(claimed.map((t) => t.taskId).sort()).toEqual([...created].sort());
        for (const t of claimed) expect(t.execution.fencingToken).toBe(1);
        expect(await claimAll()).toEqual([]);
      });

      it("fencing tokens grow with every claim; attempts count runs, not hand-backs", async () => {
        const t = await queued(policy({ maxAttempts: 5, backoffMs: 0 }));
        const [run1] = await claimAll(NODE_A);
        expect(run1!.execution).toMatchObject({ attempt: 1, fencingToken: 1 });
        await store.requeue(t.taskId, runOf(run1!), "again");
        const [run2] = await claimAll(NODE_B);
        expect(run2!.execution).toMatchObject({ attempt: 2, fencingToken: 2 });
        await store.releaseLease(t.taskId, runOf(run2!));
        const [run3] = await claimAll(NODE_A);
        expect(run3!.execution).toMatchObject({ attempt: 2, fencingToken: 3 });
      });
    });

    describe("fair share across owners", () => {
      const ids = (tasks: readonly TaskRecord[]) => tasks.map((t) => t.taskId);

      it("one owner's backlog delays another owner's new task by no more than one claim", async () => {
        const backlog: string[] = [];
        for (let i = 0; i < 30; i++) backlog.push((await queued({}, ALICE)).taskId);
        const bob = await queued({}, BOB);
        const first = await store.claim(NODE_A, { limit: 4, leaseMs: LEASE });
        // Bob's task goes in the first claim; Alice's oldest take the rest, oldest first.
        expect(ids(first)).toEqual([...backlog.slice(0, 3), bob.taskId]);
      });

      it("shares a claim out to the owner with the fewest running tasks first", async () => {
        await held({}, ALICE);
        await held({}, ALICE);
        await held({}, BOB);
        const a = await queued({}, ALICE);
        const b = await queued({}, BOB);
        const c = await queued({}, ANON);
        // Running: Alice 2, Bob 1, anonymous 0, so anonymous, then Bob, then Alice.
        expect(ids(await store.claim(NODE_A, { limit: 1, leaseMs: LEASE }))).toEqual([c.taskId]);
        expect(ids(await store.claim(NODE_A, { limit: 1, leaseMs: LEASE }))).toEqual([b.taskId]);
        expect(ids(await store.claim(NODE_A, { limit: 1, leaseMs: LEASE }))).toEqual([a.taskId]);
      });

      it("takes nothing of an owner at maxRunningPerOwner, across claims and holders", async () => {
        const limits = { maxRunningPerOwner: 2 };
        const alice: TaskRecord[] = [];
        for (let i = 0; i < 5; i++) alice.push(await queued({}, ALICE));
        const bob = await queued({}, BOB);
        const first = await store.claim(NODE_A, { limit: 10, leaseMs: LEASE, ...limits });
        expect(ids(first)).toEqual([alice[0]!.taskId, alice[1]!.taskId, bob.taskId]);
        expect(await store.claim(NODE_B, { limit: 10, leaseMs: LEASE, ...limits })).toEqual([]);
        // One of Alice's ends: one more of hers may run.
        await store.complete(alice[0]!.taskId, runOf(first[0]!), {});
        const next = await store.claim(NODE_B, { limit: 10, leaseMs: LEASE, ...limits });
        expect(ids(next)).toEqual([alice[2]!.taskId]);
        // Without the limit the rest is claimed.
        expect(ids(await claimAll())).toEqual([alice[3]!.taskId, alice[4]!.taskId]);
      });

      it(`${concurrency} concurrent claims never take an owner past maxRunningPerOwner`, async () => {
        for (let i = 0; i < 20; i++) await queued({}, ALICE);
        for (let i = 0; i < 20; i++) await queued({}, BOB);
        const batches = await Promise.all(
          Array.from({ length: concurrency }, (_, i) =>
            store.claim(`node-${i}`, { limit: 2, leaseMs: LEASE, maxRunningPerOwner: 3 }),
          ),
        );
        const claimed = batches.flat();
        expect(claimed.filter((t) => t.owner.principalId === "alice")).toHaveLength(3);
        expect(claimed.filter((t) => t.owner.principalId === "bob")).toHaveLength(3);
      });

      it("a task waiting for input counts as running only beyond maxWaitingPerOwner", async () => {
        const limits = { maxRunningPerOwner: 1, maxWaitingPerOwner: 1 };
        const tasks: TaskRecord[] = [];
        for (let i = 0; i < 4; i++) tasks.push(await queued({}, ALICE));
        const claim = () => store.claim(NODE_A, { limit: 10, leaseMs: LEASE, ...limits });
        const [first] = await claim();
        expect(first?.taskId).toBe(tasks[0]!.taskId);
        expect(await claim()).toEqual([]);
        // Parked on a question: within the waiting limit, it no longer counts.
        await store.requireInput(first!.taskId, runOf(first!), {
          q: { method: "elicitation/create" },
        });
        const [second] = await claim();
        expect(second?.taskId).toBe(tasks[1]!.taskId);
        // A second waiting task is beyond the waiting limit: it counts again.
        await store.requireInput(second!.taskId, runOf(second!), {
          q: { method: "elicitation/create" },
        });
        expect(await claim()).toEqual([]);
        // Answered, the first works again and counts; the second now waits within the limit.
        await store.submitInput(first!.taskId, ALICE, { q: { action: "accept", content: {} } });
        expect(await claim()).toEqual([]);
        await store.complete(first!.taskId, runOf(first!), {});
        expect(ids(await claim())).toEqual([tasks[2]!.taskId]);
      });

      it("a task created to run at once is created queued when its owner is at its limit", async () => {
        const ownerLimits = { maxRunningPerOwner: 1 };
        const running = await held({ ownerLimits }, ALICE);
        expect(running.execution.holder).toBe(NODE_A);
        const waiting = await held({ ownerLimits }, ALICE);
        expect(waiting.execution).toMatchObject({ holder: null, attempt: 0, fencingToken: 0 });
        expect(waiting.statusMessage).toBe(QUEUED_OWNER_LIMIT_MESSAGE);
        expect(await store.get(waiting.taskId, ALICE)).toEqual(waiting);
        // Another owner is not held back; an explicit message is kept.
        expect((await held({ ownerLimits }, BOB)).execution.holder).toBe(NODE_A);
        const told = await held({ ownerLimits, statusMessage: "Mine" }, ALICE);
        expect([told.execution.holder, told.statusMessage]).toEqual([null, "Mine"]);
      });

      it("concurrent creates that would run at once never take an owner past maxRunningPerOwner", async () => {
        // Sent together, so a store that groups creates sends them as one statement: each
        // must count the ones before it, not only the rows already stored.
        const ownerLimits = { maxRunningPerOwner: 3 };
        await held({ ownerLimits }, ALICE);
        const created = await Promise.all([
          ...Array.from({ length: 8 }, () => held({ ownerLimits }, ALICE)),
          ...Array.from({ length: 4 }, () => held({ ownerLimits }, BOB)),
        ]);
        const alice = created.slice(0, 8);
        expect(alice.filter((t) => t.execution.holder !== null)).toHaveLength(2);
        for (const t of alice.filter((t) => t.execution.holder === null)) {
          expect(t.statusMessage).toBe(QUEUED_OWNER_LIMIT_MESSAGE);
          expect(t.execution).toMatchObject({ attempt: 0, fencingToken: 0 });
        }
        expect(created.slice(8).filter((t) => t.execution.holder !== null)).toHaveLength(3);
        // What the stored rows say agrees with what the creates answered.
        for (const [i, t] of created.entries()) {
          const stored = await store.get(t.taskId, i < 8 ? ALICE : BOB);
          expect(stored.execution.holder).toBe(t.execution.holder);
        }
      });

      it("a task created queued under ownerLimits says how many of its owner's tasks are ahead", async () => {
        const ownerLimits = { maxRunningPerOwner: 5 };
        const a = await queued({ ownerLimits }, ALICE);
        const b = await queued({ ownerLimits }, ALICE);
        const c = await queued({ ownerLimits }, BOB);
        expect([a, b, c].map((t) => t.statusMessage)).toEqual([
          queuedAheadMessage(0),
          queuedAheadMessage(1),
          queuedAheadMessage(0),
        ]);
        expect(queuedAheadMessage(1)).toBe("Queued: 1 ahead of you");
        expect((await store.get(b.taskId, ALICE)).statusMessage).toBe(queuedAheadMessage(1));
        // Without ownerLimits nothing is said.
        expect((await queued({}, ALICE)).statusMessage).toBeNull();
      });

      it("refuses limits that are not non-negative integers", async () => {
        await expectError(
          store.claim(NODE_A, { limit: 1, leaseMs: LEASE, maxRunningPerOwner: -1 }),
          "invalid_task",
        );
        await expectError(queued({ ownerLimits: { maxWaitingPerOwner: 1.5 } }), "invalid_task");
      });
    });

    describe("fenced writes", () => {
      for (const [op, write] of Object.entries(FENCED_WRITES)) {
        it(`${op} by a superseded run is refused with lease_lost and changes nothing`, async () => {
          const { stale, current, task } = await superseded();
          await expectError(write(store, task.taskId, stale), "lease_lost");
          expect(await store.get(task.taskId, ALICE)).toEqual(task);
          await write(store, task.taskId, current);
        });

        it(`${op} by an older run of the same holder is refused: the token decides`, async () => {
          const { stale, current, task } = await superseded(NODE_A);
          expect(stale.fence?.holder).toBe(current.fence?.holder);
          await expectError(write(store, task.taskId, stale), "lease_lost");
          expect(await store.get(task.taskId, ALICE)).toEqual(task);
          await write(store, task.taskId, current);
        });

        it(`${op} by a run of a task back in the queue is refused with lease_lost`, async () => {
          const t = await held(policy({ maxAttempts: 2, backoffMs: 0 }));
          const requeued = await store.requeue(t.taskId, runOf(t), "retry");
          await expectError(write(store, t.taskId, runOf(t)), "lease_lost");
          expect(await store.get(t.taskId, ALICE)).toEqual(requeued);
        });

        it(`${op} with a fence naming the right token but another holder is refused`, async () => {
          const t = await held();
          const impostor: OwnerScope = { ...ALICE, fence: { holder: NODE_B, fencingToken: 1 } };
          await expectError(write(store, t.taskId, impostor), "lease_lost");
          expect(await store.get(t.taskId, ALICE)).toEqual(t);
        });
      }

      for (const op of INTENT_WRITES) {
        it(`${op} by the run of a finished task is an invalid_transition, not lease_lost`, async () => {
          const t = await held();
          const done = await store.complete(t.taskId, runOf(t), { content: [] });
          await expectError(FENCED_WRITES[op]!(store, t.taskId, runOf(t)), "invalid_transition");
          expect(await store.get(t.taskId, ALICE)).toEqual(done);
        });
      }

      it("takeInputResponses by the run of a finished task is lease_lost (no transition to refuse)", async () => {
        const t = await held();
        await store.markCancelled(t.taskId, ALICE); // a client's immediate cancel
        await expectError(store.takeInputResponses(t.taskId, runOf(t)), "lease_lost");
      });

      it("the current run's writes are applied and keep the task held", async () => {
        const t = await held();
        const run = runOf(t);
        const asked = await store.requireInput(t.taskId, run, {
          q: { method: "elicitation/create" },
        });
        expect(asked.execution).toEqual(t.execution);
        await store.submitInput(t.taskId, ALICE, { q: { action: "accept" } });
        const taken = await store.takeInputResponses(t.taskId, run);
        expect(taken.responses).toEqual({ q: { action: "accept" } });
        const noted = await store.setStatusMessage(t.taskId, run, "50%");
        expect(noted.execution.holder).toBe(NODE_A);
        const done = await store.complete(t.taskId, run, { content: [] });
        expect(done.status).toBe("completed");
        expect(done.execution).toMatchObject({
          holder: null,
          leaseExpiresAt: null,
          fencingToken: 1,
          attempt: 1,
        });
      });

      it("a run whose lease ran out keeps the task until the orphan is recovered", async () => {
        const t = await held({}, ALICE, NODE_A, 1000);
        clock.advance(5000);
        await store.setStatusMessage(t.taskId, runOf(t), "still here");
        expect(await store.renewLease(t.taskId, runOf(t), 1000)).toBe(true);
        clock.advance(1000);
        const sweep = await store.recoverOrphans();
        expect(sweep).toMatchObject({ requeued: 0, failed: 1 });
        expect(failedOf(sweep)).toEqual([[t.taskId, "failed"]]);
        await expectError(store.complete(t.taskId, runOf(t), {}), "invalid_transition");
      });

      it("client writes carry no fence and apply whoever holds the task", async () => {
        const t = await held();
        await store.requireInput(t.taskId, runOf(t), { q: { method: "elicitation/create" } });
        const answered = await store.submitInput(t.taskId, ALICE, { q: { ok: true } });
        expect(answered.acceptedKeys).toEqual(["q"]);
        const requested = await store.requestCancel(t.taskId, ALICE);
        expect(requested.execution.holder).toBe(NODE_A);
        const cancelled = await store.markCancelled(t.taskId, ALICE);
        expect(cancelled.status).toBe("cancelled");
        expect(cancelled.execution.holder).toBeNull();
        await expectError(store.complete(t.taskId, runOf(t), {}), "invalid_transition");
        expect(await store.renewLease(t.taskId, runOf(t), LEASE)).toBe(false);
      });

      it("of a run's completion racing the orphan sweep, exactly one takes effect", async () => {
        const tasks: TaskRecord[] = [];
        for (let i = 0; i < 10; i++) {
          tasks.push(await held(policy({ maxAttempts: 2, backoffMs: 0 }), ALICE, NODE_A, 100));
        }
        clock.advance(100);
        const [sweep, ...writes] = await Promise.all([
          store.recoverOrphans(),
          ...tasks.map((t) =>
            store.complete(t.taskId, runOf(t), { content: [] }).then(
              () => "completed",
              (error: unknown) => (isTaskError(error, "lease_lost") ? "lost" : String(error)),
            ),
          ),
        ]);
        const completed = writes.filter((w) => w === "completed").length;
        const lost = writes.filter((w) => w === "lost").length;
        expect(completed + lost).toBe(tasks.length);
        expect(sweep).toEqual({
          requeued: lost,
          failed: 0,
          failedTasks: [],
          cancelled: 0,
          cancelledTasks: [],
        });
        for (const t of tasks) {
          const now = await store.get(t.taskId, ALICE);
          expect(now.status === "completed" || now.execution.holder === null).toBe(true);
        }
      });
    });

    describe("owners", () => {
      it("a claimed record carries its real owner; the run writes as that owner", async () => {
        const a = await queued({}, ALICE);
        const b = await queued({}, BOB);
        const u = await queued({}, ANON);
        const claimed = await claimAll();
        expect(claimed.map((t) => t.owner)).toEqual([ALICE.owner, BOB.owner, ANON.owner]);
        await store.complete(b.taskId, runOf(claimed[1]!, BOB), {});
        await store.setStatusMessage(u.taskId, runOf(claimed[2]!, ANON), "unowned");
        await store.setStatusMessage(a.taskId, runOf(claimed[0]!, ALICE), "alice's");
      });

      it("the holder's fence opens nothing outside the caller's scope", async () => {
        const t = await held({}, ALICE);
        const asBob = runOf(t, BOB);
        await expectError(store.get(t.taskId, asBob), "not_found_or_unauthorized");
        await expectError(store.complete(t.taskId, asBob, {}), "not_found_or_unauthorized");
        await expectError(store.requeue(t.taskId, asBob, "x"), "not_found_or_unauthorized");
        await expectError(store.takeInputResponses(t.taskId, asBob), "not_found_or_unauthorized");
        expect(await store.renewLease(t.taskId, asBob, LEASE)).toBe(false);
        expect(await store.releaseLease(t.taskId, asBob)).toBe(false);
        expect((await store.list(BOB, { limit: 10 })).tasks).toEqual([]);
        expect(await store.get(t.taskId, ALICE)).toEqual(t);
      });
    });

    describe("renewLease", () => {
      it("extends the lease to leaseMs from now, without a version bump or an event", async () => {
        const t = await held({}, ALICE, NODE_A, 1000);
        const feed = collect(t.taskId);
        clock.advance(600);
        expect(await store.renewLease(t.taskId, runOf(t), 5000)).toBe(true);
        const after = await store.get(t.taskId, ALICE);
        expect(after).toEqual({
          ...t,
          execution: { ...t.execution, leaseExpiresAt: clock.now() + 5000 },
        });
        await store.setStatusMessage(t.taskId, runOf(t), "marker");
        await feed.atLeast(1);
        feed.stop();
        expect(feed.events.map((e) => [e.kind, e.version])).toEqual([
          ["status_message", t.version + 1],
        ]);
      });

      it("keeps a running task from being recovered as an orphan", async () => {
        const t = await held({}, ALICE, NODE_A, 1000);
        for (let i = 0; i < 5; i++) {
          clock.advance(800);
          expect(await store.renewLease(t.taskId, runOf(t), 1000)).toBe(true);
          expect(await store.recoverOrphans()).toEqual(NO_ORPHANS);
        }
        clock.advance(999);
        expect(await store.recoverOrphans()).toEqual(NO_ORPHANS);
        clock.advance(1);
        const sweep = await store.recoverOrphans();
        expect(sweep).toMatchObject({ requeued: 0, failed: 1 });
        expect(failedOf(sweep)).toEqual([[t.taskId, "failed"]]);
      });

      it("may shorten the lease: the new deadline is now + leaseMs, whatever came before", async () => {
        const t = await held({}, ALICE, NODE_A, 10_000);
        expect(await store.renewLease(t.taskId, runOf(t), 100)).toBe(true);
        clock.advance(100);
        const sweep = await store.recoverOrphans();
        expect(sweep).toMatchObject({ requeued: 0, failed: 1 });
        expect(failedOf(sweep)).toEqual([[t.taskId, "failed"]]);
      });

      it("resolves false for a superseded run, a queued, finished, missing or foreign task", async () => {
        const { stale, current, task } = await superseded();
        expect(await store.renewLease(task.taskId, stale, LEASE)).toBe(false);
        expect(await store.get(task.taskId, ALICE)).toEqual(task);
        expect(await store.renewLease("missing-task", current, LEASE)).toBe(false);
        expect(await store.renewLease(task.taskId, { ...BOB, fence: current.fence! }, LEASE)).toBe(
          false,
        );
        await store.releaseLease(task.taskId, current);
        expect(await store.renewLease(task.taskId, current, LEASE)).toBe(false);
        const done = await held();
        await store.complete(done.taskId, runOf(done), {});
        expect(await store.renewLease(done.taskId, runOf(done), LEASE)).toBe(false);
      });
    });

    describe("releaseLease", () => {
      it("hands the task back at once, its attempt not counted, for another worker to claim", async () => {
        const t = await held(policy({ maxAttempts: 1, backoffMs: 60_000 }));
        clock.advance(10);
        expect(await store.releaseLease(t.taskId, runOf(t))).toBe(true);
        const released = await store.get(t.taskId, ALICE);
        expect(released).toEqual(
          requeueTask(t, clock.now(), {
            countAttempt: false,
            backoffMs: 0,
            statusMessage: HANDED_BACK_MESSAGE,
          }),
        );
        expect(released.status).toBe("working");
        expect(released.version).toBe(t.version + 1);
        expect(released.execution).toMatchObject({
          attempt: 0,
          holder: null,
          leaseExpiresAt: null,
          availableAt: null,
          fencingToken: 1,
        });
        const [again] = await claimAll(NODE_B);
        expect(again?.execution).toMatchObject({ attempt: 1, fencingToken: 2, holder: NODE_B });
      });

      it("drops the run's open questions; their answers stay with the task", async () => {
        const t = await held();
        await store.requireInput(t.taskId, runOf(t), {
          a: { method: "elicitation/create" },
          b: { method: "elicitation/create" },
        });
        await store.submitInput(t.taskId, ALICE, { a: { action: "accept" } });
        expect(await store.releaseLease(t.taskId, runOf(t))).toBe(true);
        const released = await store.get(t.taskId, ALICE);
        expect(released.status).toBe("working");
        expect(released.inputRequests).toEqual({});
        expect(released.inputResponses).toEqual({});
        expect(released.inputAnswers).toEqual({ a: { action: "accept" } });
      });

      it("resolves false, changing nothing, when the run no longer holds the task", async () => {
        const { stale, current, task } = await superseded();
        expect(await store.releaseLease(task.taskId, stale)).toBe(false);
        expect(await store.get(task.taskId, ALICE)).toEqual(task);
        expect(await store.releaseLease("missing-task", current)).toBe(false);
        expect(await store.releaseLease(task.taskId, current)).toBe(true);
        expect(await store.releaseLease(task.taskId, current)).toBe(false);
        const done = await held();
        const completed = await store.complete(done.taskId, runOf(done), {});
        expect(await store.releaseLease(done.taskId, runOf(done))).toBe(false);
        expect(await store.get(done.taskId, ALICE)).toEqual(completed);
      });
    });

    describe("requeue", () => {
      // requeue's row of the intent × status matrix (the others are in the TaskStore
      // contract): the statuses it applies from are core's INTENT_FROM.requeue.
      for (const from of TASK_STATUSES) {
        const active = INTENT_FROM.requeue.includes(from);
        const title = active
          ? `requeue by the run of a ${from} task puts it back in the queue as core's requeueTask`
          : `requeue by the run of a ${from} task is an invalid_transition and changes nothing`;
        it(title, async () => {
          const t = await held(policy({ maxAttempts: 3, backoffMs: 0 }));
          const run = runOf(t);
          const moves: Record<TaskStatus, () => Promise<TaskRecord>> = {
            working: async () => t,
            input_required: () =>
              store.requireInput(t.taskId, run, { q: { method: "elicitation/create" } }),
            completed: () => store.complete(t.taskId, run, { content: [] }),
            failed: () => store.fail(t.taskId, run, { code: -32000, message: "no" }),
            cancelled: () => store.markCancelled(t.taskId, run),
          };
          const before = await moves[from]();
          expect(before.status).toBe(from);
          clock.advance(10);
          if (active) {
            const after = await store.requeue(t.taskId, run, "again");
            expect(after).toEqual(
              requeueTask(before, clock.now(), {
                countAttempt: true,
                backoffMs: 0,
                statusMessage: "again",
              }),
            );
            expect(await store.get(t.taskId, ALICE)).toEqual(after);
          } else {
            await expectError(store.requeue(t.taskId, run, "again"), "invalid_transition");
            expect(await store.get(t.taskId, ALICE)).toEqual(before);
          }
        });
      }

      it("counts the attempt and waits out the task's backoff", async () => {
        const t = await held(policy({ maxAttempts: 3, backoffMs: 5000 }));
        clock.advance(20);
        const requeued = await store.requeue(t.taskId, runOf(t), "Retrying after a timeout");
        expect(requeued).toEqual(
          requeueTask(t, clock.now(), {
            countAttempt: true,
            backoffMs: 5000,
            statusMessage: "Retrying after a timeout",
          }),
        );
        expect(requeued.execution).toMatchObject({
          attempt: 1,
          holder: null,
          leaseExpiresAt: null,
          availableAt: clock.now() + 5000,
        });
        expect(await store.get(t.taskId, ALICE)).toEqual(requeued);
        clock.advance(4999);
        expect(await claimAll(NODE_B)).toEqual([]);
        clock.advance(1);
        const [again] = await claimAll(NODE_B);
        expect(again?.execution).toMatchObject({
          attempt: 2,
          fencingToken: 2,
          holder: NODE_B,
          availableAt: null,
        });
      });

      it("a task waiting out its backoff does not hold up younger tasks", async () => {
        const t = await held(policy({ maxAttempts: 3, backoffMs: 1000 }));
        await store.requeue(t.taskId, runOf(t), "later");
        const young = await queued();
        expect((await claimAll()).map((x) => x.taskId)).toEqual([young.taskId]);
        clock.advance(1000);
        expect((await claimAll()).map((x) => x.taskId)).toEqual([t.taskId]);
      });

      it("with no backoff the task may be claimed at once", async () => {
        const t = await held(policy({ maxAttempts: 2, backoffMs: 0 }));
        const requeued = await store.requeue(t.taskId, runOf(t), null);
        expect(requeued.execution.availableAt).toBeNull();
        expect(requeued.statusMessage).toBeNull();
        expect((await claimAll()).map((x) => x.taskId)).toEqual([t.taskId]);
      });

      it("drops pending questions and untaken responses; answers survive in inputAnswers", async () => {
        const t = await held(policy({ maxAttempts: 2, backoffMs: 0 }));
        const run = runOf(t);
        await store.requireInput(t.taskId, run, { name: { method: "elicitation/create" } });
        await store.submitInput(t.taskId, ALICE, { name: { value: "Zoë" } });
        await store.takeInputResponses(t.taskId, run);
        await store.requireInput(t.taskId, run, {
          size: { method: "elicitation/create" },
          colour: { method: "elicitation/create" },
        });
        await store.submitInput(t.taskId, ALICE, { size: { value: "L" } }); // not taken
        const requeued = await store.requeue(t.taskId, run, "retry");
        expect(requeued.status).toBe("working");
        expect(requeued.inputRequests).toEqual({});
        expect(requeued.inputResponses).toEqual({});
        expect(requeued.inputAnswers).toEqual({ name: { value: "Zoë" }, size: { value: "L" } });
        // The next run asks again what was never answered, and gets the rest at once.
        const [next] = await claimAll(NODE_B);
        expect(next?.inputAnswers).toEqual(requeued.inputAnswers);
        const asked = await store.requireInput(t.taskId, runOf(next!), {
          colour: { method: "elicitation/create" },
        });
        expect(asked.status).toBe("input_required");
      });

      it("refuses a superseded run (lease_lost) and a finished task (invalid_transition)", async () => {
        const { stale, task } = await superseded();
        await expectError(store.requeue(task.taskId, stale, "x"), "lease_lost");
        const done = await held();
        await store.fail(done.taskId, runOf(done), { code: -1, message: "x" });
        await expectError(store.requeue(done.taskId, runOf(done), "x"), "invalid_transition");
      });
    });

    describe("recoverOrphans", () => {
      it("puts an orphan with attempts left back in the queue, after its backoff", async () => {
        const t = await held(policy({ maxAttempts: 2, backoffMs: 3000 }), ALICE, NODE_A, 1000);
        clock.advance(999);
        expect(await store.recoverOrphans()).toEqual(NO_ORPHANS);
        clock.advance(1);
        expect(await store.recoverOrphans()).toEqual({
          requeued: 1,
          failed: 0,
          failedTasks: [],
          cancelled: 0,
          cancelledTasks: [],
        });
        const recovered = await store.get(t.taskId, ALICE);
        expect(recovered).toEqual(recoverOrphan(t, clock.now()));
        expect(recovered.status).toBe("working");
        expect(recovered.statusMessage).toBe(retryingMessage(WORKER_LOST_REASON, 2, 2));
        expect(recovered.version).toBe(t.version + 1);
        expect(recovered.lastUpdatedAt).toBe(clock.now());
        expect(recovered.execution).toMatchObject({
          attempt: 1,
          holder: null,
          leaseExpiresAt: null,
          availableAt: clock.now() + 3000,
        });
        expect(await store.recoverOrphans()).toEqual(NO_ORPHANS);
        clock.advance(2999);
        expect(await claimAll(NODE_B)).toEqual([]);
        clock.advance(1);
        const [again] = await claimAll(NODE_B, 1000);
        expect(again?.execution).toMatchObject({ attempt: 2, fencingToken: 2 });
        // Lost again, on its last attempt: now it fails.
        clock.advance(1000);
        const sweep = await store.recoverOrphans();
        const lost = await store.get(t.taskId, ALICE);
        expect(lost.status).toBe("failed");
        expect(sweep).toEqual({
          requeued: 0,
          failed: 1,
          failedTasks: [lost],
          cancelled: 0,
          cancelledTasks: [],
        });
      });

      it("fails an orphan on its last attempt with the worker-lost error", async () => {
        const t = await held({}, ALICE, NODE_A, 1000);
        clock.advance(1000);
        const sweep = await store.recoverOrphans();
        const failed = await store.get(t.taskId, ALICE);
        // The sweep hands back each task it failed, exactly as stored after the write.
        expect(sweep).toEqual({
          requeued: 0,
          failed: 1,
          failedTasks: [failed],
          cancelled: 0,
          cancelledTasks: [],
        });
        expect(failed).toEqual(recoverOrphan(t, clock.now()));
        expect(failed.status).toBe("failed");
        expect(failed.outcome).toEqual({ kind: "error", error: WORKER_LOST_ERROR });
        expect(failed.statusMessage).toBe(WORKER_LOST_ERROR.message);
        expect(failed.expiresAt).toBe(clock.now() + 60_000);
        expect(failed.execution).toMatchObject({ holder: null, leaseExpiresAt: null });
        expect(await store.recoverOrphans()).toEqual(NO_ORPHANS);
      });

      it("recovers an orphan in input_required, dropping its questions", async () => {
        const t = await held(policy({ maxAttempts: 2 }), ALICE, NODE_A, 1000);
        await store.requireInput(t.taskId, runOf(t), { q: { method: "elicitation/create" } });
        clock.advance(1000);
        expect(await store.recoverOrphans()).toEqual({
          requeued: 1,
          failed: 0,
          failedTasks: [],
          cancelled: 0,
          cancelledTasks: [],
        });
        const recovered = await store.get(t.taskId, ALICE);
        expect(recovered.status).toBe("working");
        expect(recovered.inputRequests).toEqual({});
      });

      it("leaves live leases, queued tasks and finished tasks alone", async () => {
        const live = await held({}, ALICE, NODE_A, 10 * DAY);
        const waiting = await queued();
        const done = await held({ ttlMs: null }, ALICE, NODE_A, 1000);
        await store.complete(done.taskId, runOf(done), {});
        clock.advance(DAY);
        expect(await store.recoverOrphans()).toEqual(NO_ORPHANS);
        expect((await store.get(live.taskId, ALICE)).execution.holder).toBe(NODE_A);
        expect(await store.get(waiting.taskId, ALICE)).toEqual(waiting);
        expect((await store.get(done.taskId, ALICE)).status).toBe("completed");
      });

      it("counts requeued and failed orphans, lists the failed ones, and honours its limit", async () => {
        for (let i = 0; i < 3; i++) await held(policy({ maxAttempts: 2 }), ALICE, NODE_A, 100);
        const doomed: TaskRecord[] = [];
        for (let i = 0; i < 2; i++) doomed.push(await held({}, BOB, NODE_B, 100));
        await held({}, ALICE, NODE_A, 10_000);
        clock.advance(100);
        const first = await store.recoverOrphans({ limit: 2 });
        const second = await store.recoverOrphans({ limit: 2 });
        const third = await store.recoverOrphans({ limit: 2 });
        for (const sweep of [first, second]) expect(sweep.requeued + sweep.failed).toBe(2);
        expect(third.requeued + third.failed).toBe(1);
        expect(first.requeued + second.requeued + third.requeued).toBe(3);
        expect(first.failed + second.failed + third.failed).toBe(2);
        const listed = [first, second, third].flatMap((sweep) => {
          expect(sweep.failedTasks).toHaveLength(sweep.failed);
          return sweep.failedTasks;
        });
        expect(listed.map((t) => t.taskId).sort()).toEqual(doomed.map((t) => t.taskId).sort());
        for (const t of listed) {
          expect(t.status).toBe("failed");
          expect(t.outcome).toEqual({ kind: "error", error: WORKER_LOST_ERROR });
          expect(t.owner).toEqual(BOB.owner);
          expect(t.request.toolName).toBe("slow_compute");
          expect(t.execution).toMatchObject({ holder: null, leaseExpiresAt: null });
          expect(await store.get(t.taskId, BOB)).toEqual(t);
        }
        expect(await store.recoverOrphans()).toEqual(NO_ORPHANS);
      });

      it("concurrent sweeps recover each orphan exactly once", async () => {
        const doomed: string[] = [];
        for (let i = 0; i < 12; i++) {
          const t = await held(policy({ maxAttempts: i % 2 === 0 ? 1 : 2 }), ALICE, NODE_A, 100);
          if (i % 2 === 0) doomed.push(t.taskId);
        }
        clock.advance(100);
        const sweeps = await Promise.all(
          Array.from({ length: 6 }, () => store.recoverOrphans({ limit: 3 })),
        );
        sweeps.push(await store.recoverOrphans());
        const requeued = sweeps.reduce((n, s) => n + s.requeued, 0);
        const failed = sweeps.reduce((n, s) => n + s.failed, 0);
        expect({ requeued, failed }).toEqual({ requeued: 6, failed: 6 });
        const listed = sweeps.flatMap((s) => s.failedTasks.map((t) => t.taskId));
        expect(listed.sort()).toEqual(doomed.sort());
      });

      it("the lost run's writes are refused afterwards", async () => {
        const t = await held(policy({ maxAttempts: 2 }), ALICE, NODE_A, 100);
        clock.advance(100);
        await store.recoverOrphans();
        await expectError(store.complete(t.taskId, runOf(t), {}), "lease_lost");
        expect(await store.renewLease(t.taskId, runOf(t), LEASE)).toBe(false);
        expect(await store.releaseLease(t.taskId, runOf(t))).toBe(false);
      });
    });

    describe("a recorded cancel request wins over a lost worker", () => {
      /** A task held by node A whose cancellation was requested (not yet acknowledged). */
      async function cancelRequested(execution: Partial<ExecutionPolicy>, leaseMs = LEASE) {
        const t = await held(policy(execution), ALICE, NODE_A, leaseMs);
        clock.advance(5);
        const requested = await store.requestCancel(t.taskId, ALICE);
        expect(requested.cancelRequestedAt).toBe(clock.now());
        clock.advance(5);
        return requested;
      }

      /** `task` ended cancelled at `clock.now()` by the lost run, and is never claimed again. */
      async function expectCancelledForGood(task: TaskRecord, requested: TaskRecord) {
        expect(task.status).toBe("cancelled");
        expect(task.outcome).toBeNull();
        expect(task.statusMessage).toBe(CANCELLED_WITHOUT_RUN_MESSAGE);
        expect(task.cancelRequestedAt).toBe(requested.cancelRequestedAt);
        expect(task.lastUpdatedAt).toBe(clock.now());
        expect(task.expiresAt).toBe(clock.now() + 60_000);
        expect(task.version).toBe(requested.version + 1);
        expect(task.execution).toMatchObject({
          attempt: requested.execution.attempt,
          holder: null,
          leaseExpiresAt: null,
          availableAt: null,
        });
        expect(await store.get(task.taskId, ALICE)).toEqual(task);
        clock.advance(DAY);
        expect(await claimAll(NODE_B)).toEqual([]);
        expect(await store.recoverOrphans()).toEqual(NO_ORPHANS);
      }

      it("an orphan with attempts left ends cancelled, not requeued", async () => {
        const requested = await cancelRequested({ maxAttempts: 3, backoffMs: 0 }, 100);
        clock.advance(100);
        const sweep = await store.recoverOrphans();
        const ended = await store.get(requested.taskId, ALICE);
        expect(sweep).toEqual({ ...NO_ORPHANS, cancelled: 1, cancelledTasks: [ended] });
        expect(ended).toEqual(recoverOrphan(requested, clock.now()));
        await expectCancelledForGood(ended, requested);
      });

      it("an orphan on its last attempt ends cancelled, not failed Worker lost", async () => {
        const requested = await cancelRequested({ maxAttempts: 1 }, 100);
        clock.advance(100);
        const sweep = await store.recoverOrphans();
        const ended = await store.get(requested.taskId, ALICE);
        expect(sweep).toEqual({ ...NO_ORPHANS, cancelled: 1, cancelledTasks: [ended] });
        expect(ended.outcome).toBeNull();
        await expectCancelledForGood(ended, requested);
      });

      it("an orphan in input_required ends cancelled, its questions dropped", async () => {
        const t = await held(policy({ maxAttempts: 2 }), ALICE, NODE_A, 100);
        await store.requireInput(t.taskId, runOf(t), { q: { method: "elicitation/create" } });
        const requested = await store.requestCancel(t.taskId, ALICE);
        clock.advance(100);
        expect((await store.recoverOrphans()).cancelled).toBe(1);
        const ended = await store.get(t.taskId, ALICE);
        expect(ended.inputRequests).toEqual({});
        await expectCancelledForGood(ended, requested);
      });

      it("a hand-back (releaseLease) ends it cancelled instead of queueing it", async () => {
        const requested = await cancelRequested({ maxAttempts: 2 });
        expect(await store.releaseLease(requested.taskId, runOf(requested))).toBe(true);
        const ended = await store.get(requested.taskId, ALICE);
        expect(ended).toEqual(
          requeueTask(requested, clock.now(), {
            countAttempt: false,
            backoffMs: 0,
            statusMessage: HANDED_BACK_MESSAGE,
          }),
        );
        await expectCancelledForGood(ended, requested);
      });

      it("a run giving up for another attempt (requeue) ends it cancelled instead", async () => {
        const requested = await cancelRequested({ maxAttempts: 3, backoffMs: 1000 });
        const ended = await store.requeue(requested.taskId, runOf(requested), "Retrying");
        expect(ended).toEqual(
          requeueTask(requested, clock.now(), {
            countAttempt: true,
            backoffMs: 1000,
            statusMessage: "Retrying",
          }),
        );
        await expectCancelledForGood(ended, requested);
      });

      it("reports status_changed, not queued, for each way the run is lost", async () => {
        const orphan = await cancelRequested({ maxAttempts: 3 }, 100);
        const released = await cancelRequested({ maxAttempts: 3 });
        const requeued = await cancelRequested({ maxAttempts: 3 });
        const feed = collect();
        clock.advance(100);
        await store.recoverOrphans();
        await store.releaseLease(released.taskId, runOf(released));
        await store.requeue(requeued.taskId, runOf(requeued), "again");
        await feed.atLeast(3);
        feed.stop();
        expect(feed.seen()).toEqual([
          [orphan.taskId, "status_changed", "cancelled", orphan.version + 1],
          [released.taskId, "status_changed", "cancelled", released.version + 1],
          [requeued.taskId, "status_changed", "cancelled", requeued.version + 1],
        ]);
      });

      it("a superseded run still cannot end it (lease_lost), whatever was requested", async () => {
        const { stale, task } = await superseded();
        await store.requestCancel(task.taskId, ALICE);
        await expectError(store.requeue(task.taskId, stale, "x"), "lease_lost");
        expect(await store.releaseLease(task.taskId, stale)).toBe(false);
        expect((await store.get(task.taskId, ALICE)).status).toBe("working");
      });
    });

    describe("change feed", () => {
      it("a create without a lease reports created then queued, the queued change naming the tool; with a lease only created", async () => {
        const feed = collect();
        const a = await queued();
        const b = await held();
        await feed.atLeast(3);
        await store.setStatusMessage(b.taskId, runOf(b), "marker");
        await feed.atLeast(4);
        feed.stop();
        expect(feed.seen()).toEqual([
          [a.taskId, "created", "working", 1],
          [a.taskId, "queued", "working", 1],
          [b.taskId, "created", "working", 1],
          [b.taskId, "status_message", "working", 2],
        ]);
        // A worker that does not run the tool sends no claim for it (see `changeOf`).
        expect(feed.events.map((e) => e.toolName)).toEqual([
          undefined,
          a.request.toolName,
          undefined,
          undefined,
        ]);
      });

      it("claim reports claimed; requeue, release and a recovered orphan report queued", async () => {
        const t = await queued(policy({ maxAttempts: 3, backoffMs: 0 }));
        const feed = collect(t.taskId);
        const [run1] = await claimAll(NODE_A, 100);
        await store.requeue(t.taskId, runOf(run1!), "again");
        const [run2] = await claimAll(NODE_B, 100);
        await store.releaseLease(t.taskId, runOf(run2!));
        await claimAll(NODE_A, 100);
        clock.advance(100);
        await store.recoverOrphans();
        await feed.atLeast(6);
        feed.stop();
        expect(feed.events.map((e) => [e.kind, e.status, e.version])).toEqual([
          ["claimed", "working", 2],
          ["queued", "working", 3],
          ["claimed", "working", 4],
          ["queued", "working", 5],
          ["claimed", "working", 6],
          ["queued", "working", 7],
        ]);
      });

      it("an orphan failed for good reports status_changed", async () => {
        const t = await held({}, ALICE, NODE_A, 100);
        const feed = collect(t.taskId);
        clock.advance(100);
        await store.recoverOrphans();
        await feed.atLeast(1);
        feed.stop();
        expect(feed.events.map((e) => [e.kind, e.status, e.version])).toEqual([
          ["status_changed", "failed", t.version + 1],
        ]);
      });
    });
  });
}
