import { spawnSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { ManualClock, owner, type TaskRecord } from "@mcp-tasks/core";
import {
  isClaimable,
  isOrphaned,
  type NewTask,
  type OwnerScope,
  ownerScope,
} from "@mcp-tasks/core/store";
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

describe("MemoryTaskStore queue", () => {
  const lease = (holder: string, durationMs: number) => ({ lease: { holder, durationMs } });
  const fenced = (t: TaskRecord): OwnerScope => ({
    ...scope,
    fence: { holder: t.execution.holder!, fencingToken: t.execution.fencingToken },
  });

  it("recovers orphans in its built-in sweep", async () => {
    const clock = new ManualClock();
    const store = new MemoryTaskStore({ clock, sweepIntervalMs: 5 });
    const t = await store.create({ ...task(), ...lease("node-a", 1000) }, scope);
    clock.advance(1000);
    for (let i = 0; i < 400 && (await store.get(t.taskId, scope)).status === "working"; i++) {
      await sleep(5);
    }
    expect((await store.get(t.taskId, scope)).status).toBe("failed");
    await store.close();
  });

  it("finds an orphan whose lease was renewed many times exactly once, at its last deadline", async () => {
    const clock = new ManualClock();
    const store = new MemoryTaskStore({ clock, sweepIntervalMs: 0 });
    const t = await store.create({ ...task(), ...lease("node-a", 100) }, scope);
    for (let i = 0; i < 1000; i++) {
      clock.advance(50);
      expect(await store.renewLease(t.taskId, fenced(t), 100)).toBe(true);
      if (i % 100 === 0) {
        expect(await store.recoverOrphans()).toEqual({
          requeued: 0,
          failed: 0,
          failedTasks: [],
          cancelled: 0,
          cancelledTasks: [],
        });
      }
    }
    expect(await store.renewLease(t.taskId, fenced(t), 10)).toBe(true); // shortened
    clock.advance(10);
    const sweep = await store.recoverOrphans();
    expect(sweep).toMatchObject({ requeued: 0, failed: 1 });
    expect(sweep.failedTasks.map((f) => [f.taskId, f.status])).toEqual([[t.taskId, "failed"]]);
    expect(sweep.failedTasks[0]).toEqual(await store.get(t.taskId, scope));
    expect(await store.recoverOrphans()).toEqual({
      requeued: 0,
      failed: 0,
      failedTasks: [],
      cancelled: 0,
      cancelledTasks: [],
    });
    await store.close();
  });

  it("claims a task whose backoff ended even if the clock went back meanwhile", async () => {
    const clock = new ManualClock(10_000);
    const store = new MemoryTaskStore({ clock, sweepIntervalMs: 0 });
    const t = await store.create(
      { ...task(), ...lease("node-a", 1000), execution: { maxAttempts: 2, backoffMs: 0 } },
      scope,
    );
    await store.requeue(t.taskId, fenced(t), "again");
    clock.set(5_000);
    expect((await store.claim("node-b", { limit: 5, leaseMs: 100 })).map((x) => x.taskId)).toEqual([
      t.taskId,
    ]);
    await store.close();
  });

  // ~0.5 s on an idle machine: a timeout of its own, so a loaded two-core CI machine (load
  // average 10) cannot fail it on the 5 s default.
  it("agrees with a scan of every task over a long random run", async () => {
    const clock = new ManualClock();
    const store = new MemoryTaskStore({
      clock,
      sweepIntervalMs: 0,
      maxTasksPerOwner: 100_000,
    });
    const anon = ownerScope(owner({}), { requireOwner: false })!;
    const tools = ["a", "b", "c"];
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return (seed >>> 16) % n;
    };
    const pick = <T>(xs: readonly T[]): T | undefined => xs[rand(Math.max(1, xs.length))];
    const scopeOf = (t: TaskRecord) => (t.owner.principalId === null ? anon : scope);
    const runOf = (t: TaskRecord): OwnerScope => ({
      ...scopeOf(t),
      fence: { holder: t.execution.holder!, fencingToken: t.execution.fencingToken },
    });
    /** Every task, in creation order, by paging (the scope sees its own and the unowned). */
    const all = async (): Promise<TaskRecord[]> => {
      const out: TaskRecord[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.list(scope, { limit: 100, ...(cursor && { cursor }) });
        out.push(...page.tasks);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return out;
    };
    let claims = 0;
    let recovered = 0;
    for (let step = 0; step < 3000; step++) {
      const tasks = await all();
      const running = tasks.filter((t) => t.status === "working" || t.status === "input_required");
      const held = running.filter((t) => t.execution.holder !== null);
      const waiting = running.filter((t) => t.execution.holder === null);
      const op = rand(12);
      if (op <= 2) {
        const input: NewTask = {
          ...task(null),
          request: { toolName: tools[rand(3)]!, arguments: {} },
          execution: { maxAttempts: 1 + rand(3), backoffMs: [0, 30, 200][rand(3)]! },
          ...(rand(3) === 0 && lease(`n${rand(3)}`, 20 + rand(200))),
        };
        await store.create(input, rand(4) === 0 ? anon : scope);
      } else if (op <= 4) {
        const wanted = rand(3) === 0 ? [tools[rand(3)]!, tools[rand(3)]!] : undefined;
        const limit = rand(5);
        const candidates = tasks
          .filter((t) => isClaimable(t, clock.now()))
          .filter((t) => wanted === undefined || wanted.includes(t.request.toolName));
        // The fair order: the owner with the fewest working tasks first, ties to creation
        // order; returned in creation order.
        const ownerOf = (t: TaskRecord) => t.owner.principalId ?? "";
        const working = new Map<string, number>();
        for (const t of held) {
          if (t.status === "working") working.set(ownerOf(t), (working.get(ownerOf(t)) ?? 0) + 1);
        }
        const picked = new Set<TaskRecord>();
        while (picked.size < limit) {
          let best: TaskRecord | undefined;
          for (const t of candidates) {
            if (picked.has(t)) continue;
            const n = working.get(ownerOf(t)) ?? 0;
            if (best === undefined || n < (working.get(ownerOf(best)) ?? 0)) best = t;
          }
          if (best === undefined) break;
          picked.add(best);
          working.set(ownerOf(best), (working.get(ownerOf(best)) ?? 0) + 1);
        }
        const expected = candidates.filter((t) => picked.has(t)).map((t) => t.taskId);
        const got = await store.claim(`n${rand(3)}`, {
          limit,
          leaseMs: 20 + rand(200),
          ...(wanted && { toolNames: wanted }),
        });
        expect(got.map((t) => t.taskId)).toEqual(expected);
        claims += got.length;
      } else if (op === 5) {
        const t = pick(held);
        if (t) expect(await store.renewLease(t.taskId, runOf(t), 10 + rand(200))).toBe(true);
      } else if (op === 6) {
        const t = pick(held);
        if (t) expect(await store.releaseLease(t.taskId, runOf(t))).toBe(true);
      } else if (op === 7) {
        const t = pick(held);
        if (t) await store.requeue(t.taskId, runOf(t), "again");
      } else if (op === 8) {
        const t = pick(held);
        if (t) await store.complete(t.taskId, runOf(t), {});
        const w = pick(waiting);
        if (w && rand(2) === 0) await store.markCancelled(w.taskId, scopeOf(w));
      } else if (op === 9) {
        const t = pick(tasks);
        if (t && rand(2) === 0) await store.delete(t.taskId, scopeOf(t));
      } else if (op === 10) {
        const limit = 1 + rand(4);
        const orphans = tasks.filter((t) => isOrphaned(t, clock.now())).length;
        const sweep = await store.recoverOrphans({ limit });
        expect(sweep.requeued + sweep.failed).toBe(Math.min(limit, orphans));
        expect(sweep.failedTasks.length).toBe(sweep.failed);
        for (const f of sweep.failedTasks) expect(f.status).toBe("failed");
        recovered += sweep.requeued + sweep.failed;
      } else {
        clock.advance(rand(60));
      }
    }
    // The run exercised every path, not just creation.
    expect(claims).toBeGreaterThan(100);
    expect(recovered).toBeGreaterThan(20);
    await store.close();
  }, 60_000);
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

  it("by default keeps a client creating a task a second for an hour, and bounds its bytes", async () => {
    const clock = new ManualClock(0);
    const store = new MemoryTaskStore({ clock, sweepIntervalMs: 0 });
    // One task a second, each finished at once and kept for the 1 h ttl: 3 600 held.
    for (let i = 0; i < 3_600; i++) {
      const t = await store.create(task(3_600_000), scope);
      await store.complete(t.taskId, scope, {});
      clock.advance(1_000);
    }
    expect(store.size).toBe(3_600);
    // 64 MiB per owner by default: 63 arguments of 1 MiB fit beside them, the 64th does not.
    const mib = { blob: "x".repeat(1024 * 1024 - 11) };
    for (let i = 0; i < 63; i++) {
      await store.create({ ...task(), request: { toolName: "x", arguments: mib } }, scope);
    }
    await expect(
      store.create({ ...task(), request: { toolName: "x", arguments: mib } }, scope),
    ).rejects.toMatchObject({ code: "store_full", quota: { quota: "maxBytesPerOwner" } });
    await store.close();
  });
});
