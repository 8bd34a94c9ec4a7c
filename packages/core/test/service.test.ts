import { describe, expect, it } from "vitest";
import {
  ANONYMOUS,
  ManualClock,
  owner,
  type TaskRecord,
  TaskService,
  type TaskStore,
} from "../src/index.js";
import type { OwnerScope } from "../src/store-api.js";
import { ReferenceTaskStore } from "./support/reference-store.js";

const alice = owner({ principalId: "alice", tenantId: "acme" });
const bob = owner({ principalId: "bob", tenantId: "acme" });
const request = { toolName: "slow_compute", arguments: { seconds: 1 } };
const DAY = 86_400_000;

function setup(options: Partial<ConstructorParameters<typeof TaskService>[0]> = {}) {
  const clock = new ManualClock();
  const store = new ReferenceTaskStore({ clock });
  const service = new TaskService({ store, ...options });
  return { clock, store, service };
}

/** A store that ignores owners entirely: the service must still not leak. */
function leaky(inner: TaskStore): TaskStore {
  const god: OwnerScope = { owner: ANONYMOUS, ownerKey: "", includeUnowned: true };
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const fixed = args.map((a) =>
          typeof a === "object" && a !== null && "ownerKey" in a
            ? scopeIgnoringOwner(a as OwnerScope)
            : a,
        );
        return value.apply(target, fixed);
      };
    },
  });
  function scopeIgnoringOwner(scope: OwnerScope): OwnerScope {
    // Keep the owner for creates; match every row on reads.
    return new Proxy(scope, {
      get: (t, p) =>
        p === "ownerKey" || p === "includeUnowned" ? Reflect.get(god, p) : Reflect.get(t, p),
    });
  }
}

describe("TaskService", () => {
  it("mints a fresh 128-bit id, applies the ttl policy and the poll interval", async () => {
    const { service } = setup({
      ttl: { defaultTtlMs: 5000, maxTtlMs: 60_000 },
      pollIntervalMs: 250,
    });
    const a = await service.create(alice, { era: "2026-07-28", request });
    const b = await service.create(alice, { era: "2026-07-28", request, ttlMs: 10 * DAY });
    expect(a.taskId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(a.taskId).not.toBe(b.taskId);
    expect(a.ttlMs).toBe(5000);
    expect(b.ttlMs).toBe(60_000);
    expect(a.pollIntervalMs).toBe(250);
    expect(a.owner).toEqual(alice);
  });

  it("stamps the policy's ttl anchor on new tasks", async () => {
    const { service } = setup({ ttl: { anchor: "terminal" } });
    expect((await service.create(alice, { era: "2025-11-25", request })).ttlAnchor).toBe(
      "terminal",
    );
  });

  it("refuses anonymous callers under requireOwner, and hides unowned tasks from owners", async () => {
    const open = setup();
    const unowned = await open.service.create(ANONYMOUS, { era: "2026-07-28", request });
    const closed = new TaskService({ store: open.store, requireOwner: true });
    await expect(closed.create(ANONYMOUS, { era: "2026-07-28", request })).rejects.toMatchObject({
      code: "not_found_or_unauthorized",
    });
    await expect(closed.get(bob, unowned.taskId)).rejects.toMatchObject({
      code: "not_found_or_unauthorized",
    });
    expect((await open.service.get(bob, unowned.taskId)).taskId).toBe(unowned.taskId);
  });

  it("clamps page sizes to its maximum and applies its default", async () => {
    const { service } = setup({ maxPageSize: 3, defaultPageSize: 2 });
    for (let i = 0; i < 5; i++) await service.create(alice, { era: "2026-07-28", request });
    expect((await service.list(alice)).tasks).toHaveLength(2);
    expect((await service.list(alice, { limit: 1000 })).tasks).toHaveLength(3);
    expect((await service.list(alice, { limit: -4 })).tasks).toHaveLength(1);
  });

  describe("re-checks ownership on every row a (buggy) store returns", () => {
    async function withLeakyStore() {
      const { store } = setup();
      const service = new TaskService({ store: leaky(store) });
      const task = await service.create(alice, { era: "2026-07-28", request });
      return { service, task };
    }

    const calls: [string, (s: TaskService, id: string) => Promise<unknown>][] = [
      ["get", (s, id) => s.get(bob, id)],
      ["complete", (s, id) => s.complete(bob, id, {})],
      ["fail", (s, id) => s.fail(bob, id, { code: 1, message: "x" })],
      ["requireInput", (s, id) => s.requireInput(bob, id, { k: { method: "elicitation/create" } })],
      ["setStatusMessage", (s, id) => s.setStatusMessage(bob, id, "x")],
      ["requestCancel", (s, id) => s.requestCancel(bob, id)],
      ["markCancelled", (s, id) => s.markCancelled(bob, id)],
      ["cancelNow", (s, id) => s.cancelNow(bob, id)],
      ["submitInput", (s, id) => s.submitInput(bob, id, {})],
      ["takeInputResponses", (s, id) => s.takeInputResponses(bob, id)],
    ];
    for (const [name, call] of calls) {
      it(`${name}`, async () => {
        const { service, task } = await withLeakyStore();
        await expect(call(service, task.taskId)).rejects.toMatchObject({
          code: "not_found_or_unauthorized",
        });
      });
    }

    it("list", async () => {
      const { service, task } = await withLeakyStore();
      expect((await service.list(alice)).tasks.map((t) => t.taskId)).toEqual([task.taskId]);
      expect((await service.list(bob)).tasks).toEqual([]);
    });
  });

  it("cancelNow records the request and ends the task before returning", async () => {
    const { service } = setup();
    const t = await service.create(alice, { era: "2025-11-25", request });
    const cancelled = await service.cancelNow(alice, t.taskId);
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.cancelRequestedAt).not.toBeNull();
    await expect(service.cancelNow(alice, t.taskId)).rejects.toMatchObject({
      code: "invalid_transition",
    });
  });

  describe("waitFor", () => {
    it("wakes on the change feed, not by polling", async () => {
      const { service } = setup({ waitRecheckMs: 0 });
      const t = await service.create(alice, { era: "2025-11-25", request });
      const done = service.waitFor(alice, t.taskId, (x) => x.status === "completed");
      await service.setStatusMessage(alice, t.taskId, "still going");
      await service.complete(alice, t.taskId, { content: [] });
      const final: TaskRecord = await done;
      expect(final.status).toBe("completed");
    });

    it("resolves at once when the condition already holds", async () => {
      const { service } = setup({ waitRecheckMs: 0 });
      const t = await service.create(alice, { era: "2025-11-25", request });
      expect((await service.waitFor(alice, t.taskId, (x) => x.status === "working")).taskId).toBe(
        t.taskId,
      );
    });

    it("rejects with the abort reason when aborted", async () => {
      const { service } = setup({ waitRecheckMs: 0 });
      const t = await service.create(alice, { era: "2025-11-25", request });
      const controller = new AbortController();
      const waiting = service.waitFor(alice, t.taskId, () => false, { signal: controller.signal });
      controller.abort(new Error("client went away"));
      await expect(waiting).rejects.toThrow("client went away");
    });

    it("rejects with not_found_or_unauthorized when the task disappears", async () => {
      const { service } = setup({ waitRecheckMs: 0 });
      const t = await service.create(alice, { era: "2025-11-25", request });
      const waiting = service.waitFor(alice, t.taskId, () => false);
      await service.delete(alice, t.taskId);
      await expect(waiting).rejects.toMatchObject({ code: "not_found_or_unauthorized" });
    });

    it("never lets another owner wait on a task", async () => {
      const { service } = setup({ waitRecheckMs: 0 });
      const t = await service.create(alice, { era: "2025-11-25", request });
      await expect(service.waitFor(bob, t.taskId, () => true)).rejects.toMatchObject({
        code: "not_found_or_unauthorized",
      });
    });
  });
});
