import { describe, expect, it, vi } from "vitest";
import {
  owner,
  type TaskChangeListener,
  type TaskRecord,
  TaskService,
  type TaskStore,
} from "../src/index.js";
import { taskErrors } from "../src/store-api.js";
import { ReferenceTaskStore } from "./support/reference-store.js";

const alice = owner({ principalId: "alice" });
const bob = owner({ principalId: "bob" });
const request = { toolName: "t", arguments: {} };

/**
 * The reference store behind a switch: while `down`, every call throws
 * `store_unavailable` (what a store says when its database is unreachable) and change
 * notifications are lost, as they are across a real reconnect. `reads` counts `get`s.
 */
function flakyStore() {
  const inner = new ReferenceTaskStore();
  const state = { down: false, reads: 0 };
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      if (prop === "watch") {
        return (listener: TaskChangeListener, taskId?: string) =>
          target.watch((change) => {
            if (!state.down) listener(change);
          }, taskId);
      }
      return (...args: unknown[]) => {
        if (prop === "get") state.reads += 1;
        if (state.down) return Promise.reject(taskErrors.storeUnavailable("connection refused"));
        return value.apply(target, args);
      };
    },
  }) as TaskStore;
  return { inner, store, state };
}

async function collect(records: AsyncIterable<TaskRecord>): Promise<TaskRecord[]> {
  const out: TaskRecord[] = [];
  for await (const record of records) out.push(record);
  return out;
}

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
/** How long a condition may take to hold on a loaded two-core machine (it takes ~0.1 s idle). */
const SETTLE = { timeout: 10_000, interval: 5 };

describe("TaskService.follow", () => {
  it("yields the current record, then each change, and ends after the terminal one", async () => {
    const service = new TaskService({ store: new ReferenceTaskStore(), waitRecheckMs: 0 });
    const t = await service.create(alice, { era: "2026-07-28", request });
    const seen = collect(service.follow(alice, t.taskId));
    await tick();
    await service.setStatusMessage(alice, t.taskId, "half way");
    await tick();
    await service.complete(alice, t.taskId, { content: [] });
    const records = await seen;
    expect(records.map((r) => r.status)).toEqual(["working", "working", "completed"]);
    expect(records[1]?.statusMessage).toBe("half way");
    const versions = records.map((r) => r.version);
    expect([...versions].sort((a, b) => a - b)).toEqual(versions);
    expect(new Set(versions).size).toBe(versions.length);
  });

  it("coalesces a burst into one read and never yields a version twice", async () => {
    const { store, state } = flakyStore();
    const service = new TaskService({ store, waitRecheckMs: 0 });
    const t = await service.create(alice, { era: "2026-07-28", request });
    const records: TaskRecord[] = [];
    let release!: () => void;
    const busy = new Promise<void>((resolve) => {
      release = resolve;
    });
    const done = (async () => {
      for await (const record of service.follow(alice, t.taskId)) {
        records.push(record);
        // A slow consumer: the burst below lands while it is busy with the first record.
        if (records.length === 1) await busy;
      }
    })();
    await vi.waitFor(() => expect(records).toHaveLength(1), SETTLE);
    const readsBefore = state.reads;
    for (let i = 0; i < 20; i++) await service.setStatusMessage(alice, t.taskId, `step ${i}`);
    release();
    await service.complete(alice, t.taskId, { content: [] });
    await done;
    // 20 writes plus the terminal one, but only a handful of reads and records.
    expect(state.reads - readsBefore).toBeLessThan(8);
    expect(records.length).toBeLessThan(6);
    expect(records.at(-1)?.status).toBe("completed");
    const versions = records.map((r) => r.version);
    expect(new Set(versions).size).toBe(versions.length);
  });

  it("skips the first read and older versions when started after a known record", async () => {
    const { store, state } = flakyStore();
    const service = new TaskService({ store, waitRecheckMs: 0 });
    const t = await service.create(alice, { era: "2026-07-28", request });
    const seen = collect(service.follow(alice, t.taskId, { after: t }));
    await tick();
    expect(state.reads).toBe(0);
    await service.complete(alice, t.taskId, { content: [] });
    expect((await seen).map((r) => r.status)).toEqual(["completed"]);
  });

  it("reads only on the changes it is asked to wake on", async () => {
    const { store, state } = flakyStore();
    const service = new TaskService({ store, waitRecheckMs: 0 });
    const t = await service.create(alice, { era: "2026-07-28", request });
    const seen = collect(
      service.follow(alice, t.taskId, {
        after: t,
        wakeOn: (change) => change.kind !== "status_message",
      }),
    );
    for (let i = 0; i < 5; i++) await service.setStatusMessage(alice, t.taskId, `step ${i}`);
    await tick();
    expect(state.reads).toBe(0);
    await service.complete(alice, t.taskId, { content: [] });
    expect((await seen).map((r) => r.status)).toEqual(["completed"]);
    expect(state.reads).toBe(1);
  });

  it("throws not_found_or_unauthorized when the task is deleted, or is not the caller's", async () => {
    const service = new TaskService({ store: new ReferenceTaskStore(), waitRecheckMs: 0 });
    const t = await service.create(alice, { era: "2026-07-28", request });
    const following = collect(service.follow(alice, t.taskId));
    await tick();
    await service.delete(alice, t.taskId);
    await expect(following).rejects.toMatchObject({ code: "not_found_or_unauthorized" });
    const u = await service.create(alice, { era: "2026-07-28", request });
    await expect(collect(service.follow(bob, u.taskId))).rejects.toMatchObject({
      code: "not_found_or_unauthorized",
    });
  });

  it("throws the abort reason when its signal aborts, and stops watching", async () => {
    const store = new ReferenceTaskStore();
    const service = new TaskService({ store, waitRecheckMs: 0 });
    const t = await service.create(alice, { era: "2026-07-28", request });
    const controller = new AbortController();
    const following = collect(service.follow(alice, t.taskId, { signal: controller.signal }));
    await tick();
    controller.abort(new Error("client went away"));
    await expect(following).rejects.toThrow("client went away");
    // The subscription is gone: a later change reaches nobody.
    let heard = 0;
    const unsubscribe = store.watch(() => {
      heard += 1;
    });
    await service.complete(alice, t.taskId, { content: [] });
    unsubscribe();
    expect(heard).toBe(1);
  });

  it("keeps following through a store outage and delivers what happened meanwhile", async () => {
    const { inner, store, state } = flakyStore();
    const service = new TaskService({ store, waitRecheckMs: 50 });
    const t = await service.create(alice, { era: "2026-07-28", request });
    const records: TaskRecord[] = [];
    const done = (async () => {
      for await (const record of service.follow(alice, t.taskId)) records.push(record);
    })();
    await vi.waitFor(() => expect(records).toHaveLength(1), SETTLE);
    state.down = true;
    const readsAtOutage = state.reads;
    // Another node finishes the task while this one cannot reach the store: the change
    // notification is lost, and every re-read in the meantime fails.
    const scope = service.scope(alice);
    await inner.complete(t.taskId, scope, { content: [{ type: "text", text: "done" }] });
    // It keeps re-reading (every waitRecheckMs) through the outage, and yields nothing.
    await vi.waitFor(() => expect(state.reads).toBeGreaterThan(readsAtOutage + 2), SETTLE);
    expect(records.map((r) => r.status)).toEqual(["working"]);
    state.down = false;
    await done;
    expect(records.map((r) => r.status)).toEqual(["working", "completed"]);
  });

  it("rebuilds waitFor: it survives an outage too", async () => {
    const { store, state } = flakyStore();
    const service = new TaskService({ store, waitRecheckMs: 20 });
    const t = await service.create(alice, { era: "2026-07-28", request });
    const waiting = service.waitFor(alice, t.taskId, (x) => x.status === "completed");
    await vi.waitFor(() => expect(state.reads).toBeGreaterThan(0), SETTLE);
    state.down = true;
    const readsAtOutage = state.reads;
    // Its re-reads fail for a while (each waitRecheckMs)...
    await vi.waitFor(() => expect(state.reads).toBeGreaterThan(readsAtOutage + 2), SETTLE);
    state.down = false;
    await service.complete(alice, t.taskId, { content: [] });
    expect((await waiting).status).toBe("completed");
  });

  it("makes waitFor reject when the task ends without the condition holding", async () => {
    const service = new TaskService({ store: new ReferenceTaskStore(), waitRecheckMs: 0 });
    const t = await service.create(alice, { era: "2026-07-28", request });
    const waiting = service.waitFor(alice, t.taskId, (x) => x.status === "input_required");
    await service.fail(alice, t.taskId, { code: -32603, message: "boom" });
    await expect(waiting).rejects.toMatchObject({ code: "invalid_transition" });
  });
});

describe("TaskService.subscribe", () => {
  it("tells each newer record and the end; once stopped it tells nothing more", async () => {
    const { store, state } = flakyStore();
    const service = new TaskService({ store, waitRecheckMs: 0 });
    const t = await service.create(alice, { era: "2026-07-28", request });
    const told: string[] = [];
    const stopped: string[] = [];
    service.subscribe(alice, t.taskId, {
      record: (task) => void told.push(`${task.status}@${task.version}`),
      end: (failed) => void told.push(failed ? "failed" : "end"),
    });
    const stop = service.subscribe(
      alice,
      t.taskId,
      {
        record: (task) => void stopped.push(task.status),
        end: () => void stopped.push("end"),
      },
      { after: t },
    );
    await vi.waitFor(() => expect(told).toHaveLength(1), SETTLE);
    await service.setStatusMessage(alice, t.taskId, "half way");
    await vi.waitFor(() => expect(told).toHaveLength(2), SETTLE);
    expect(stopped).toEqual(["working"]);
    stop();
    const readsAfterStop = state.reads;
    await service.complete(alice, t.taskId, { content: [] });
    await vi.waitFor(() => expect(told.at(-1)).toBe("end"), SETTLE);
    expect(told).toEqual([
      `working@${t.version}`,
      `working@${t.version + 1}`,
      `completed@${t.version + 2}`,
      "end",
    ]);
    // Only the first subscription read the completed task; the stopped one heard nothing.
    expect(state.reads - readsAfterStop).toBe(1);
    expect(stopped).toEqual(["working"]);
  });

  it("ends, failed, with not_found_or_unauthorized when the task is deleted", async () => {
    const service = new TaskService({ store: new ReferenceTaskStore(), waitRecheckMs: 0 });
    const t = await service.create(alice, { era: "2026-07-28", request });
    const ended = new Promise<unknown>((resolve) => {
      service.subscribe(
        alice,
        t.taskId,
        { record: () => {}, end: (failed, error) => resolve(failed ? error : "no error") },
        { after: t },
      );
    });
    await service.delete(alice, t.taskId);
    await expect(ended).resolves.toMatchObject({ code: "not_found_or_unauthorized" });
  });
});
