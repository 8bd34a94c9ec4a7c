import { spawnSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { ManualClock, owner } from "@mcp-tasks/core";
import { type NewTask, ownerScope } from "@mcp-tasks/core/store";
import { describe, expect, it } from "vitest";
import { MemoryTaskStore } from "../src/index.js";

const scope = ownerScope(owner({ principalId: "alice" }), { requireOwner: false })!;
let n = 0;
const task = (ttlMs: number | null = 30 * 86_400_000): NewTask => ({
  taskId: `t${++n}`,
  era: "2026-07-28",
  request: { toolName: "x", arguments: {} },
  ttlMs,
  ttlAnchor: "creation",
  pollIntervalMs: null,
});

const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

describe("MemoryTaskStore specifics", () => {
  it("keeps no timer per task: one unref'd sweeper at most", async () => {
    const before = timers();
    const store = new MemoryTaskStore({ sweepIntervalMs: 60_000, maxTasksPerOwner: 5000 });
    for (let i = 0; i < 2000; i++) {
      const t = await store.create(task(), scope);
      if (i % 2 === 0) await store.complete(t.taskId, scope, {});
    }
    expect(timers() - before).toBeLessThanOrEqual(1);
    await store.close();
    expect(timers()).toBe(before);
  });

  it("never keeps the process alive, even with 30-day ttls", () => {
    const dist = fileURLToPath(new URL("../dist/index.js", import.meta.url));
    const script = `
      const { MemoryTaskStore } = await import(${JSON.stringify(dist)});
      const store = new MemoryTaskStore();
      const scope = { owner: { principalId: "a", tenantId: null, audience: null }, ownerKey: "k", includeUnowned: true };
      for (let i = 0; i < 100; i++) {
        const t = await store.create({ taskId: "t" + i, era: "2025-11-25", request: { toolName: "x", arguments: {} },
          ttlMs: 30 * 86400000, ttlAnchor: "creation", pollIntervalMs: null }, scope);
        if (i % 2) await store.complete(t.taskId, scope, {});
      }
      console.log("created", store.size);
    `;
    // The bound here is the test's failure mode, not a measurement: a store holding the
    // event loop open would run into it.
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      timeout: 20_000,
    });
    expect(run.error).toBeUndefined();
    expect(run.status).toBe(0);
    expect(run.stdout.toString()).toContain("created 100");
  });

  it("sweeps expired tasks in the background", async () => {
    const clock = new ManualClock();
    const store = new MemoryTaskStore({ clock, sweepIntervalMs: 5 });
    const t = await store.create(task(1000), scope);
    await store.complete(t.taskId, scope, {});
    clock.advance(1000);
    for (let i = 0; i < 400 && store.size > 0; i++) await sleep(5);
    expect(store.size).toBe(0);
    await store.close();
  });

  it("makes room by sweeping expired tasks before refusing a create", async () => {
    const clock = new ManualClock();
    const store = new MemoryTaskStore({ clock, maxTasks: 1, sweepIntervalMs: 0 });
    const t = await store.create(task(10), scope);
    await store.complete(t.taskId, scope, {});
    clock.advance(10);
    await store.create(task(), scope);
    expect(store.size).toBe(1);
  });

  it("answers store_unavailable once closed", async () => {
    const store = new MemoryTaskStore();
    const t = await store.create(task(), scope);
    await store.close();
    await expect(store.get(t.taskId, scope)).rejects.toMatchObject({ code: "store_unavailable" });
    await expect(store.create(task(), scope)).rejects.toMatchObject({ code: "store_unavailable" });
    expect(await store.cleanupExpired()).toBe(0);
  });

  it("delivers change events after the write returns, in commit order", async () => {
    const store = new MemoryTaskStore({ sweepIntervalMs: 0 });
    const t = await store.create(task(), scope);
    const seen: number[] = [];
    store.watch((c) => {
      seen.push(c.version);
      // Re-entering the store from a listener must not reorder later events.
      if (c.version === 2) void store.setStatusMessage(t.taskId, scope, "from listener");
    }, t.taskId);
    const write = store.setStatusMessage(t.taskId, scope, "a");
    expect(seen).toEqual([]);
    await write;
    await store.setStatusMessage(t.taskId, scope, "b");
    await sleep(0);
    expect(seen).toEqual([2, 3, 4]);
    await store.close();
  });

  it("compacts an owner's index after many deletions without losing order", async () => {
    const store = new MemoryTaskStore({ sweepIntervalMs: 0, maxTasksPerOwner: 10_000 });
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) ids.push((await store.create(task(), scope)).taskId);
    for (let i = 0; i < 300; i++) if (i % 10 !== 0) await store.delete(ids[i]!, scope);
    const page = await store.list(scope, { limit: 100 });
    expect(page.tasks.map((t) => t.taskId)).toEqual(ids.filter((_, i) => i % 10 === 0));
  });
});

describe("README", () => {
  it("shows the quick-start example verbatim, and the example runs", async () => {
    const { readFileSync } = await import("node:fs");
    const example = readFileSync(new URL("../examples/quickstart.mjs", import.meta.url), "utf8");
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    expect(readme).toContain(example);
    const run = spawnSync(
      process.execPath,
      [fileURLToPath(new URL("../examples/quickstart.mjs", import.meta.url))],
      {
        timeout: 20_000,
      },
    );
    expect(run.status).toBe(0);
    expect(run.stdout.toString()).toContain("bob: not_found_or_unauthorized");
    expect(run.stdout.toString()).toContain('"text":"answer: accept"');
  });
});
