import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createIdGenerator,
  ManualClock,
  owner,
  type TaskChange,
  type TaskLease,
} from "../index.js";
import { type LeasingTaskStore, type NewTask, type OwnerScope, ownerScope } from "../store-api.js";

/** What a leasing store factory is handed by the lease contract suite. */
export interface LeaseContractStoreOptions {
  /** The store must take every timestamp, expiry and lease deadline from this clock. */
  readonly clock: ManualClock;
}

/** Makes a fresh, empty leasing store for one test. */
export type LeaseContractStoreFactory = (
  options: LeaseContractStoreOptions,
) => LeasingTaskStore | Promise<LeasingTaskStore>;

const ALICE: OwnerScope = ownerScope(owner({ principalId: "alice", tenantId: "acme" }), {
  requireOwner: false,
})!;
const BOB: OwnerScope = ownerScope(owner({ principalId: "bob", tenantId: "acme" }), {
  requireOwner: false,
})!;

const NODE_A = "node-a";
const NODE_B = "node-b";
const DAY = 24 * 60 * 60 * 1000;

/**
 * The lease contract of {@link LeasingTaskStore}: a running task whose lease ran out (its
 * node died, or gave the lease up) is failed by `failOrphans` with a "worker lost" JSON-RPC
 * error, exactly once, while tasks with a live lease, tasks without a lease and finished
 * tasks are left alone. Run it next to `describeTaskStoreContract`.
 */
export function describeLeasingStoreContract(
  name: string,
  makeStore: LeaseContractStoreFactory,
): void {
  describe(`LeasingTaskStore contract: ${name}`, () => {
    let clock: ManualClock;
    let store: LeasingTaskStore;
    const ids = createIdGenerator();

    beforeEach(async () => {
      clock = new ManualClock(Date.UTC(2026, 6, 28, 12));
      store = await makeStore({ clock });
    });

    afterEach(async () => {
      await store.close();
    });

    function newTask(lease?: TaskLease, overrides: Partial<NewTask> = {}): NewTask {
      return {
        taskId: ids(),
        era: "2026-07-28",
        request: { toolName: "slow_compute", arguments: {} },
        ttlMs: 60_000,
        ttlAnchor: "terminal",
        pollIntervalMs: 500,
        ...(lease !== undefined && { lease }),
        ...overrides,
      };
    }

    const lease = (durationMs = 1000, holder = NODE_A): TaskLease => ({ holder, durationMs });

    it("fails a running task whose lease ran out, with a worker-lost error", async () => {
      const t = await store.create(newTask(lease(1000)), ALICE);
      clock.advance(999);
      expect(await store.failOrphans()).toBe(0);
      expect((await store.get(t.taskId, ALICE)).status).toBe("working");
      clock.advance(1);
      expect(await store.failOrphans()).toBe(1);
      const failed = await store.get(t.taskId, ALICE);
      expect(failed.status).toBe("failed");
      expect(failed.version).toBe(t.version + 1);
      expect(failed.lastUpdatedAt).toBe(clock.now());
      expect(failed.expiresAt).toBe(clock.now() + 60_000);
      expect(failed.outcome?.kind).toBe("error");
      const error = failed.outcome?.kind === "error" ? failed.outcome.error : undefined;
      expect(error?.code).toBe(-32603);
      expect(error?.message).toMatch(/worker lost/i);
      expect(await store.failOrphans()).toBe(0);
    });

    it("fails an orphan in input_required too", async () => {
      const t = await store.create(newTask(lease(1000)), ALICE);
      await store.requireInput(t.taskId, ALICE, { q: { method: "elicitation/create" } });
      clock.advance(1000);
      expect(await store.failOrphans()).toBe(1);
      const failed = await store.get(t.taskId, ALICE);
      expect(failed.status).toBe("failed");
      expect(failed.inputRequests).toEqual({});
    });

    it("never orphans a task created without a lease", async () => {
      const t = await store.create(newTask(), ALICE);
      clock.advance(10 * DAY);
      expect(await store.failOrphans()).toBe(0);
      expect((await store.get(t.taskId, ALICE)).status).toBe("working");
    });

    it("renewing keeps the task alive; the holder renews, others are refused", async () => {
      const t = await store.create(newTask(lease(1000)), ALICE);
      for (let i = 0; i < 5; i++) {
        clock.advance(800);
        expect(await store.renewLease(t.taskId, ALICE, NODE_A, 1000)).toBe(true);
        expect(await store.failOrphans()).toBe(0);
      }
      expect(await store.renewLease(t.taskId, ALICE, NODE_B, 1000)).toBe(false);
      clock.advance(999);
      expect(await store.failOrphans()).toBe(0);
      clock.advance(1);
      expect(await store.failOrphans()).toBe(1);
    });

    it("renewing does not change the task record", async () => {
      const t = await store.create(newTask(lease(1000)), ALICE);
      clock.advance(10);
      expect(await store.renewLease(t.taskId, ALICE, NODE_A, 5000)).toBe(true);
      expect(await store.get(t.taskId, ALICE)).toEqual(t);
    });

    it("renewing an unleased running task takes the lease", async () => {
      const t = await store.create(newTask(), ALICE);
      expect(await store.renewLease(t.taskId, ALICE, NODE_B, 1000)).toBe(true);
      expect(await store.renewLease(t.taskId, ALICE, NODE_A, 1000)).toBe(false);
      clock.advance(1000);
      expect(await store.failOrphans()).toBe(1);
    });

    it("renewing resolves false for a finished, missing or foreign task", async () => {
      const t = await store.create(newTask(lease(1000)), ALICE);
      expect(await store.renewLease(t.taskId, BOB, NODE_A, 1000)).toBe(false);
      expect(await store.renewLease("missing-task", ALICE, NODE_A, 1000)).toBe(false);
      await store.complete(t.taskId, ALICE, {});
      expect(await store.renewLease(t.taskId, ALICE, NODE_A, 1000)).toBe(false);
    });

    it("a finished task is never orphaned, however long its lease is gone", async () => {
      const t = await store.create(newTask(lease(1000), { ttlMs: null }), ALICE);
      await store.complete(t.taskId, ALICE, { content: [] });
      clock.advance(DAY);
      expect(await store.failOrphans()).toBe(0);
      expect((await store.get(t.taskId, ALICE)).status).toBe("completed");
    });

    it("releasing the lease makes the task an orphan at once", async () => {
      const t = await store.create(newTask(lease(60_000)), ALICE);
      await store.releaseLease(t.taskId, ALICE, NODE_B); // not the holder: no effect
      expect(await store.failOrphans()).toBe(0);
      await store.releaseLease(t.taskId, ALICE, NODE_A);
      expect(await store.failOrphans()).toBe(1);
      expect((await store.get(t.taskId, ALICE)).status).toBe("failed");
    });

    it("failOrphans honours its limit", async () => {
      for (let i = 0; i < 5; i++) await store.create(newTask(lease(100)), ALICE);
      await store.create(newTask(lease(10_000)), ALICE);
      clock.advance(100);
      expect(await store.failOrphans({ limit: 2 })).toBe(2);
      expect(await store.failOrphans({ limit: 2 })).toBe(2);
      expect(await store.failOrphans()).toBe(1);
      expect(await store.failOrphans()).toBe(0);
    });

    it("concurrent sweeps fail each orphan exactly once", async () => {
      for (let i = 0; i < 12; i++) await store.create(newTask(lease(100)), ALICE);
      clock.advance(100);
      const counts = await Promise.all(
        Array.from({ length: 6 }, () => store.failOrphans({ limit: 3 })),
      );
      const rest = await store.failOrphans();
      expect(counts.reduce((a, b) => a + b, 0) + rest).toBe(12);
    });

    it("an orphan's failure is reported on the change feed", async () => {
      const t = await store.create(newTask(lease(100)), ALICE);
      const events: TaskChange[] = [];
      const stop = store.watch((e) => events.push(e), t.taskId);
      clock.advance(100);
      await store.failOrphans();
      for (let i = 0; i < 100 && events.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      stop();
      expect(events.map((e) => [e.kind, e.status, e.version])).toEqual([
        ["status_changed", "failed", t.version + 1],
      ]);
    });

    it("a worker may not finish a task after it was declared lost", async () => {
      const t = await store.create(newTask(lease(100)), ALICE);
      clock.advance(100);
      await store.failOrphans();
      await expect(store.complete(t.taskId, ALICE, {})).rejects.toMatchObject({
        code: "invalid_transition",
      });
      expect(await store.renewLease(t.taskId, ALICE, NODE_A, 100)).toBe(false);
    });
  });
}
