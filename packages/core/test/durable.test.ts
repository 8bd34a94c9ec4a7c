import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import {
  ManualClock,
  type Owner,
  owner,
  QUEUED_OWNER_LIMIT_MESSAGE,
  queuedAheadMessage,
  RunStoppedError,
  type TaskContext,
  type TaskRecord,
  TaskRunner,
  type TaskRunnerOptions,
  TaskService,
  type ToolDefinition,
} from "../src/index.js";
import {
  CANCELLED_WITHOUT_RUN_MESSAGE,
  type OwnerScope,
  ownerScope,
  taskErrors,
} from "../src/store-api.js";
import { ReferenceTaskStore } from "./support/reference-store.js";

const alice = owner({ principalId: "alice" });
const era = "2026-07-28" as const;

const runners: TaskRunner[] = [];
afterEach(async () => {
  for (const runner of runners.splice(0)) {
    runner.stopClaiming();
    runner.abortAll();
    await runner.drain();
  }
});

/** One node: a service and a runner over a shared store, with fast scans for tests. */
function node(store: ReferenceTaskStore, options: Partial<TaskRunnerOptions> = {}) {
  const service = new TaskService({ store, waitRecheckMs: 20 });
  const runner = new TaskRunner({
    service,
    settleRetryMs: 1,
    scanIntervalMs: 10,
    recheckMs: 20,
    onError: () => {},
    // These tests are about one node's slots; the per-owner cap has tests of its own.
    maxRunningPerOwner: Number.POSITIVE_INFINITY,
    ...options,
  });
  runners.push(runner);
  return { service, runner };
}

function tool(name: string, run: ToolDefinition["run"], execution?: ToolDefinition["execution"]) {
  return {
    name,
    inputSchema: { type: "object" },
    taskMode: "optional",
    run,
    ...(execution !== undefined && { execution }),
  } satisfies ToolDefinition;
}

/**
 * How long a check that something does *not* happen watches for it: several of the
 * runners' scans (`scanIntervalMs` 10 above), the most a wrong claim would wait. A negative
 * check has no signal to wait for; a slow machine only makes it weaker, never flaky.
 */
const SEVERAL_SCANS_MS = 50;

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await read();
    if (done(value)) return value;
    await sleep(10);
  }
  throw new Error("timed out");
}

/** A promise plus its resolver, to hold a handler at a known point. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/** The store as a node sees it when no change notification reaches it (only re-reads do). */
function withoutChangeFeed(store: ReferenceTaskStore): ReferenceTaskStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === "watch") return () => () => {};
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * A store that records, create by create, whether the runner asked it for a lease (on
 * PostgreSQL: whether the create went under the claim lock).
 */
function leaseRecording(store: ReferenceTaskStore): boolean[] {
  const leased: boolean[] = [];
  const create = store.create.bind(store);
  store.create = (task, scope) => {
    leased.push(task.lease !== undefined);
    return create(task, scope);
  };
  return leased;
}

/** A store that records, claim by claim, how many tasks each brought back. */
function claimRecording(store: ReferenceTaskStore): number[] {
  const claims: number[] = [];
  const claim = store.claim.bind(store);
  store.claim = async (holder, options) => {
    const claimed = await claim(holder, options);
    claims.push(claimed.length);
    return claimed;
  };
  return claims;
}

/**
 * The store with claims held in flight: claim `n` (counted from 0) waits for `holdFor(n)`,
 * when that gives a promise, before it claims. `counts` says how many were sent and how
 * many came back.
 */
function heldClaims(store: ReferenceTaskStore, holdFor: (n: number) => Promise<void> | undefined) {
  const counts = { sent: 0, returned: 0 };
  const held = new Proxy(store, {
    get(target, key) {
      if (key === "claim") {
        return async (...args: Parameters<ReferenceTaskStore["claim"]>) => {
          const hold = holdFor(counts.sent++);
          if (hold !== undefined) await hold;
          const claimed = await target.claim(...args);
          counts.returned++;
          return claimed;
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: held, counts };
}

/** A tool `name` (default `job`) whose runs wait until `hold` opens. */
function heldJob(name = "job") {
  const hold = gate();
  const job = tool(name, async () => {
    await hold.opened;
    return text("ok");
  });
  return { hold, job };
}

/** The store scope of `who`'s own requests. */
function ownerScopeOf(who: Owner): OwnerScope {
  const scope = ownerScope(who, { requireOwner: false });
  if (scope === null) throw new Error("test bug: no scope");
  return scope;
}

const text = (value: string) => ({ content: [{ type: "text", text: value }] });
const never = (signal: AbortSignal) =>
  new Promise<never>((_, reject) =>
    signal.addEventListener("abort", () => reject(signal.reason), { once: true }),
  );

/** The store as seen through a database link that can be cut (every call fails meanwhile). */
function cuttable(store: ReferenceTaskStore) {
  const link = { down: false, refused: 0 };
  const proxy = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      if (key === "watch" || key === "close") return value.bind(target);
      return (...args: unknown[]) => {
        if (link.down) {
          link.refused += 1;
          return Promise.reject(
            taskErrors.storeUnavailable(
              `${String(key)} could not reach PostgreSQL (ECONNRESET: read ECONNRESET)`,
            ),
          );
        }
        return value.apply(target, args);
      };
    },
  });
  return { link, store: proxy };
}

describe("durable execution", () => {
  it("queues a task created where nobody claims, and runs it by tool name on a worker", async () => {
    const store = new ReferenceTaskStore();
    const job = tool("job", (_args, ctx) => text(`${ctx.worker} attempt ${ctx.attempt}`));
    const http = node(store, { claim: false, tools: [job] });
    const created = await http.runner.start(alice, {
      era,
      request: { toolName: "job", arguments: {} },
    });
    expect(created.statusMessage).toBe(queuedAheadMessage(0));
    expect(created.execution.holder).toBeNull();
    await sleep(SEVERAL_SCANS_MS); // nobody claims it meanwhile
    expect((await http.service.get(alice, created.taskId)).status).toBe("working");
    const worker = node(store, { tools: [job], lease: { holder: "worker-1" } });
    const done = await until(
      () => worker.service.get(alice, created.taskId),
      (t) => t.status === "completed",
    );
    expect(done.outcome).toEqual({ kind: "result", result: text("worker-1 attempt 1") });
  });

  it("a worker sends no claim for the queued tasks of tools it does not run; one of its own tools wakes a claim", async () => {
    const store = new ReferenceTaskStore();
    const claims = claimRecording(store);
    const job = tool("job", () => text("ok"));
    const other = tool("other", () => text("ok"));
    const http = node(store, { claim: false, tools: [job, other] });
    // No periodic scans: claims go out only when something wakes them.
    const worker = node(store, { tools: [job], scanIntervalMs: 60_000 });
    await until(
      async () => claims.length,
      (n) => n === 1,
    ); // the first claim found the queue empty
    const start = (toolName: string) =>
      http.runner.start(alice, { era, request: { toolName, arguments: {} } });
    const others = [await start("other"), await start("other"), await start("other")];
    await sleep(SEVERAL_SCANS_MS);
    expect(claims).toEqual([0]);
    const mine = await start("job");
    await until(
      () => worker.service.get(alice, mine.taskId),
      (t) => t.status === "completed",
    );
    expect(claims).toEqual([0, 1]);
    for (const t of others) {
      expect((await http.service.get(alice, t.taskId)).execution.holder).toBeNull();
    }
  });

  it("never runs more than `concurrency` handlers at once; the rest wait queued", async () => {
    const store = new ReferenceTaskStore();
    let running = 0;
    let peak = 0;
    const job = tool("job", async () => {
      running += 1;
      peak = Math.max(peak, running);
      await sleep(20);
      running -= 1;
      return text("ok");
    });
    const { service, runner } = node(store, { tools: [job], concurrency: 2 });
    const tasks: TaskRecord[] = [];
    for (let i = 0; i < 10; i++) {
      tasks.push(await runner.start(alice, { era, request: { toolName: "job", arguments: {} } }));
    }
    // Each queued one says how many of the owner's tasks are ahead of it.
    expect(tasks.slice(2).map((t) => t.statusMessage)).toEqual(
      [0, 1, 2, 3, 4, 5, 6, 7].map(queuedAheadMessage),
    );
    for (const t of tasks) {
      await until(
        () => service.get(alice, t.taskId),
        (r) => r.status === "completed",
      );
    }
    expect(peak).toBe(2);
  });

  it("re-runs a lost worker's task elsewhere, keeps the answers given, and fences the old run", async () => {
    const clock = new ManualClock();
    const store = new ReferenceTaskStore({ clock });
    const oldRun: { ctx?: TaskContext; release?: () => void } = {};
    const job = tool(
      "job",
      async (_args, ctx) => {
        const { q } = await ctx.requireInput({ q: { method: "elicitation/create" } });
        if (ctx.worker === "a") {
          oldRun.ctx = ctx;
          // A stalls (it stops renewing its lease, then wakes up much later).
          await new Promise<void>((resolve) => {
            oldRun.release = resolve;
          });
          await ctx.setStatusMessage("a is still here");
          return text("a's result");
        }
        return text(`${ctx.worker} on attempt ${ctx.attempt} with ${JSON.stringify(q)}`);
      },
      { retry: { attempts: 3, backoffMs: 0 } },
    );
    const a = node(store, {
      tools: [job],
      lease: { holder: "a", durationMs: 1000, renewEveryMs: 3_600_000 },
    });
    const t = await a.runner.start(alice, { era, request: { toolName: "job", arguments: {} } });
    await until(
      () => a.service.get(alice, t.taskId),
      (r) => r.status === "input_required",
    );
    await a.service.submitInput(alice, t.taskId, { q: { action: "accept" } });
    await until(
      async () => oldRun.ctx,
      (ctx) => ctx !== undefined,
    );
    a.runner.stopClaiming();

    clock.advance(1001);
    const b = node(store, { tools: [job], lease: { holder: "b", durationMs: 1000 } });
    const done = await until(
      () => b.service.get(alice, t.taskId),
      (r) => r.status === "completed",
    );
    expect(done.outcome).toEqual({
      kind: "result",
      result: text('b on attempt 2 with {"action":"accept"}'),
    });
    // B never asked again: the re-run got the answer given to the first run.
    expect(done.answeredInputKeys).toEqual(["q"]);
    expect(done.execution).toMatchObject({ attempt: 2, fencingToken: 2, holder: null });

    // A wakes up: its writes are refused and its handler is told to stop.
    oldRun.release?.();
    await a.runner.drain();
    expect(oldRun.ctx?.signal.aborted).toBe(true);
    const after = await a.service.get(alice, t.taskId);
    expect(after.outcome).toEqual(done.outcome);
    expect(after.statusMessage).toBe(done.statusMessage);
  });

  it("fails a lost worker's task with Worker lost when its tool allows no retry", async () => {
    const clock = new ManualClock();
    const store = new ReferenceTaskStore({ clock });
    const job = tool("job", (_args, ctx) => never(ctx.signal));
    const a = node(store, {
      tools: [job],
      lease: { holder: "a", durationMs: 1000, renewEveryMs: 3_600_000 },
    });
    const t = await a.runner.start(alice, { era, request: { toolName: "job", arguments: {} } });
    a.runner.stopClaiming();
    clock.advance(1001);
    const b = node(store, { tools: [job], lease: { holder: "b" } });
    const failed = await until(
      () => b.service.get(alice, t.taskId),
      (r) => r.status === "failed",
    );
    expect(failed.outcome).toMatchObject({ kind: "error", error: { code: -32603 } });
    expect((failed.outcome as { error: { message: string } }).error.message).toMatch(
      /^Worker lost/,
    );
  });

  it("fails a run past its deadline, or retries it while attempts remain", async () => {
    const store = new ReferenceTaskStore();
    let runs = 0;
    const slow = tool("slow", (_args, ctx) => never(ctx.signal), { deadlineMs: 30 });
    const flaky = tool(
      "flaky",
      async (_args, ctx) => {
        runs += 1;
        if (ctx.attempt === 1) return never(ctx.signal);
        return text(`attempt ${ctx.attempt}`);
      },
      { deadlineMs: 30, retry: { attempts: 2, backoffMs: 0 } },
    );
    const { service, runner } = node(store, { tools: [slow, flaky] });
    const a = await runner.start(alice, { era, request: { toolName: "slow", arguments: {} } });
    const b = await runner.start(alice, { era, request: { toolName: "flaky", arguments: {} } });
    const failed = await until(
      () => service.get(alice, a.taskId),
      (r) => r.status === "failed",
    );
    expect(failed.outcome).toMatchObject({
      error: { code: -32603, message: "Deadline exceeded: a run may take at most 30 ms" },
    });
    const retried = await until(
      () => service.get(alice, b.taskId),
      (r) => r.status === "completed",
    );
    expect(retried.outcome).toEqual({ kind: "result", result: text("attempt 2") });
    expect(runs).toBe(2);
  });

  it("retries a thrown error only when the tool opts in", async () => {
    const store = new ReferenceTaskStore();
    const once = (name: string, onError: boolean) =>
      tool(
        name,
        (_args, ctx) => {
          if (ctx.attempt === 1) throw new Error("transient");
          return text(`attempt ${ctx.attempt}`);
        },
        { retry: { attempts: 3, backoffMs: 0, onError } },
      );
    const { service, runner } = node(store, { tools: [once("opt-in", true), once("no", false)] });
    const yes = await runner.start(alice, { era, request: { toolName: "opt-in", arguments: {} } });
    const no = await runner.start(alice, { era, request: { toolName: "no", arguments: {} } });
    const completed = await until(
      () => service.get(alice, yes.taskId),
      (r) => r.status === "completed",
    );
    expect(completed.outcome).toEqual({ kind: "result", result: text("attempt 2") });
    const failed = await until(
      () => service.get(alice, no.taskId),
      (r) => r.status === "failed",
    );
    expect(failed.outcome).toMatchObject({ error: { message: "transient" } });
  });

  it("creates without waiting for a claim in flight, and hands back claimed tasks that no longer fit", async () => {
    const store = new ReferenceTaskStore();
    // Two tasks already queued (created by a node that does not claim).
    const held = gate();
    const job = tool("job", async () => {
      await held.opened;
      return text("done");
    });
    const http = node(store, { claim: false, tools: [job] });
    const queued = [
      await http.runner.start(alice, { era, request: { toolName: "job", arguments: {} } }),
      await http.runner.start(alice, { era, request: { toolName: "job", arguments: {} } }),
    ];
    // The worker's first claim (both of its slots) is held in flight until released.
    const claimGate = gate();
    const slow = heldClaims(store, (n) => (n === 0 ? claimGate.opened : undefined));
    const worker = node(slow.store, { tools: [job], concurrency: 2, lease: { holder: "w" } });
    await until(
      async () => slow.counts.sent,
      (n) => n === 1,
    );
    // Both creates return while the claim is still out, and run here.
    const mine = [
      await worker.runner.start(alice, { era, request: { toolName: "job", arguments: {} } }),
      await worker.runner.start(alice, { era, request: { toolName: "job", arguments: {} } }),
    ];
    expect(mine.map((t) => t.execution.holder)).toEqual(["w", "w"]);
    expect(worker.runner.active).toBe(2);
    // The claim comes back with the two queued tasks: no room, so they go back to the queue
    // with their attempt uncounted, and the node never runs more than its concurrency.
    claimGate.open();
    for (const t of queued) {
      const back = await until(
        () => worker.service.get(alice, t.taskId),
        (r) => r.execution.holder === null && r.execution.fencingToken === 1,
      );
      expect(back.execution.attempt).toBe(0);
    }
    expect(worker.runner.stats.peakRunning).toBe(2);
    held.open();
    for (const t of [...mine, ...queued]) {
      await until(
        () => worker.service.get(alice, t.taskId),
        (r) => r.status === "completed",
      );
    }
    expect(worker.runner.stats.peakRunning).toBe(2);
  });

  it("runs what a claim brings back while the node has room, whatever another claim in flight reserved", async () => {
    const store = new ReferenceTaskStore();
    // Changes come without tool names, as from a node of an earlier version: a queued task of
    // a tool the worker does not run still sends it a claim, which comes back empty.
    const watch = store.watch.bind(store);
    store.watch = (listener, taskId) =>
      watch(({ toolName: _tool, ...change }) => listener(change), taskId);
    const first = heldJob("first");
    const rest = heldJob("rest");
    const later = heldJob("later");
    const queuedJob = heldJob("queued");
    // Every claim after the first waits in flight for its gate (X, A, B), then claims.
    const claimGates = [gate(), gate(), gate()];
    const claims = heldClaims(store, (n) => (n >= 1 ? claimGates[n - 1]?.opened : undefined));
    const claimsReach = (n: number) =>
      until(
        async () => claims.counts.sent,
        (sent) => sent === n,
      );
    // No periodic scans: claims go out only on the signals below.
    const worker = node(claims.store, {
      tools: [first.job, rest.job, later.job, queuedJob.job],
      concurrency: 8,
      scanIntervalMs: 60_000,
      lease: { holder: "w" },
    });
    const http = node(store, {
      claim: false,
      tools: [queuedJob.job, tool("other", () => text("-"))],
    });
    const start = (runner: TaskRunner, toolName: string) =>
      runner.start(alice, { era, request: { toolName, arguments: {} } });
    await claimsReach(1); // the first claim found the queue empty
    // Four runs here; a task of a tool this node does not run, its change naming no tool,
    // sends claim X (4 slots).
    const running = await Promise.all(
      ["first", "rest", "rest", "rest"].map((name) => start(worker.runner, name)),
    );
    await start(http.runner, "other");
    await claimsReach(2);
    // One run ends: claim A goes out beside X, for the slot it freed. Then the other three.
    first.hold.open();
    await claimsReach(3);
    rest.hold.open();
    for (const t of running) {
      await until(
        () => worker.service.get(alice, t.taskId),
        (r) => r.status === "completed",
      );
    }
    // X comes back empty; the next sign of queued work sends claim B, for the 7 slots A did
    // not ask for.
    claimGates[0]?.open();
    await until(
      async () => claims.counts.returned,
      (n) => n === 2,
    );
    await start(http.runner, "other");
    await claimsReach(4);
    const queued = await start(http.runner, "queued");
    // A create takes a slot (creates do not wait for claims): one handler runs, of 8.
    const mine = await start(worker.runner, "later");
    expect(mine.execution.holder).toBe("w");
    // A comes back with the queued task. Counting B's reservation as taken, the node had
    // no room for it and sent it back to the queue; it runs.
    claimGates[1]?.open();
    const claimed = await until(
      () => worker.service.get(alice, queued.taskId),
      (r) => r.execution.fencingToken === 1,
    );
    await sleep(SEVERAL_SCANS_MS);
    const after = await worker.service.get(alice, queued.taskId);
    expect([claimed.execution.holder, after.execution.holder]).toEqual(["w", "w"]);
    expect(worker.runner.active).toBe(2);
    claimGates[2]?.open();
    later.hold.open();
    queuedJob.hold.open();
    await until(
      () => worker.service.get(alice, queued.taskId),
      (r) => r.status === "completed",
    );
    expect((await worker.service.get(alice, queued.taskId)).execution.attempt).toBe(1);
  });

  it("hands running tasks back on shutdown, uncounted, and another worker runs them", async () => {
    const store = new ReferenceTaskStore();
    const job = tool(
      "job",
      async (_args, ctx) => {
        if (ctx.worker === "a") return never(ctx.signal);
        return text(`${ctx.worker} attempt ${ctx.attempt}`);
      },
      { retry: { attempts: 1 } },
    );
    const a = node(store, { tools: [job], lease: { holder: "a" } });
    const t = await a.runner.start(alice, { era, request: { toolName: "job", arguments: {} } });
    expect(t.execution.holder).toBe("a");
    await a.runner.shutdown({ drainMs: 20 });
    const queued = await a.service.get(alice, t.taskId);
    expect(queued.status).toBe("working");
    expect(queued.execution).toMatchObject({ holder: null, attempt: 0 });
    const b = node(store, { tools: [job], lease: { holder: "b" } });
    const done = await until(
      () => b.service.get(alice, t.taskId),
      (r) => r.status === "completed",
    );
    // The hand-back did not use up the only attempt.
    expect(done.outcome).toEqual({ kind: "result", result: text("b attempt 1") });
  });

  it("acknowledges a cancel requested while queued without running the handler", async () => {
    const store = new ReferenceTaskStore();
    let ran = false;
    const job = tool("job", () => {
      ran = true;
      return text("ran");
    });
    const http = node(store, { claim: false, tools: [job] });
    const t = await http.runner.start(alice, { era, request: { toolName: "job", arguments: {} } });
    await http.service.requestCancel(alice, t.taskId);
    const worker = node(store, { tools: [job] });
    const cancelled = await until(
      () => worker.service.get(alice, t.taskId),
      (r) => r.status === "cancelled",
    );
    expect(cancelled.status).toBe("cancelled");
    expect(ran).toBe(false);
  });

  describe("a recorded cancel request wins over a lost worker", () => {
    /** A tool whose handler ignores its signal until the test lets it go. */
    function deaf(name: string, execution?: ToolDefinition["execution"]) {
      const held = gate();
      const started = gate();
      const job = tool(
        name,
        async () => {
          started.open();
          await held.opened;
          return text("late");
        },
        execution,
      );
      return { job, release: held.open, started: started.opened };
    }

    it("a deadline overrun ends it cancelled, on its last attempt or with attempts left", async () => {
      const store = new ReferenceTaskStore();
      const last = deaf("last", { deadlineMs: 60 });
      const more = deaf("more", { deadlineMs: 60, retry: { attempts: 3, backoffMs: 0 } });
      const { service, runner } = node(store, { tools: [last.job, more.job] });
      try {
        for (const { job, started } of [last, more]) {
          const t = await runner.start(alice, {
            era,
            request: { toolName: job.name, arguments: {} },
          });
          await started;
          await service.requestCancel(alice, t.taskId);
          const ended = await until(
            () => service.get(alice, t.taskId),
            (r) => r.status !== "working",
          );
          expect(ended.status).toBe("cancelled");
          expect(ended.statusMessage).toBe(CANCELLED_WITHOUT_RUN_MESSAGE);
          // Not re-run: the first attempt is the only one.
          expect(ended.execution.attempt).toBe(1);
        }
      } finally {
        last.release();
        more.release();
      }
    });

    it("a shutdown hand-back ends it cancelled instead of queueing it again", async () => {
      const store = new ReferenceTaskStore();
      const { job, release, started } = deaf("job", { retry: { attempts: 3 } });
      const a = node(store, { tools: [job], lease: { holder: "a" } });
      try {
        const t = await a.runner.start(alice, { era, request: { toolName: "job", arguments: {} } });
        await started;
        await a.service.requestCancel(alice, t.taskId);
        await a.runner.shutdown({ drainMs: 20 });
        const ended = await a.service.get(alice, t.taskId);
        expect(ended.status).toBe("cancelled");
        expect(ended.execution).toMatchObject({ attempt: 1, holder: null });
      } finally {
        release();
      }
    });

    it("a worker lost after the request ends it cancelled, neither re-run nor Worker lost", async () => {
      for (const attempts of [1, 3]) {
        const clock = new ManualClock();
        const store = new ReferenceTaskStore({ clock });
        const { job, release, started } = deaf("job", { retry: { attempts, backoffMs: 0 } });
        // Node A hears nothing once its run started: it is as good as dead.
        const a = node(withoutChangeFeed(store), {
          tools: [job],
          recheckMs: 0,
          lease: { holder: "a", durationMs: 1000, renewEveryMs: 3_600_000 },
        });
        try {
          const t = await a.runner.start(alice, {
            era,
            request: { toolName: "job", arguments: {} },
          });
          await started;
          a.runner.stopClaiming();
          const client = new TaskService({ store });
          await client.requestCancel(alice, t.taskId);
          clock.advance(1001);
          const b = node(store, { tools: [job], lease: { holder: "b" } });
          const ended = await until(
            () => b.service.get(alice, t.taskId),
            (r) => r.status !== "working",
          );
          expect(ended.status).toBe("cancelled");
          expect(ended.outcome).toBeNull();
          expect(ended.execution.attempt).toBe(1);
        } finally {
          release();
        }
      }
    });
  });

  describe("runs ride out store outages", () => {
    it("a handler's status messages and input rounds wait out an outage shorter than the lease", async () => {
      const inner = new ReferenceTaskStore();
      const { link, store } = cuttable(inner);
      const during = gate();
      const job = tool("job", async (_args, ctx) => {
        link.down = true;
        during.open();
        await ctx.setStatusMessage("halfway");
        const { q } = await ctx.requireInput({ q: { method: "elicitation/create" } });
        return text(`answer ${JSON.stringify(q)}`);
      });
      const { runner } = node(store, {
        tools: [job],
        lease: { durationMs: 10_000, renewEveryMs: 5 },
      });
      const t = await runner.start(alice, { era, request: { toolName: "job", arguments: {} } });
      await during.opened;
      // Down long enough for several tries of the status message and of the renewals.
      await until(
        async () => link.refused,
        (n) => n >= 5,
      );
      link.down = false;
      const scope = ownerScopeOf(alice);
      const asked = await until(
        () => inner.get(t.taskId, scope),
        (r) => r.status === "input_required",
      );
      expect(asked.statusMessage).toBe("halfway");
      link.down = true;
      await until(
        async () => link.refused,
        (n) => n >= 10,
      );
      link.down = false;
      await inner.submitInput(t.taskId, scope, { q: { action: "accept" } });
      const done = await until(
        () => inner.get(t.taskId, scope),
        (r) => r.status !== "working" && r.status !== "input_required",
      );
      expect(done.status).toBe("completed");
      expect(done.outcome).toEqual({ kind: "result", result: text('answer {"action":"accept"}') });
      expect(done.execution.attempt).toBe(1);
    });

    it("a run whose lease runs out during an outage stops, and its task is re-run by its retry policy", async () => {
      const inner = new ReferenceTaskStore();
      const { link, store } = cuttable(inner);
      const firstRun: { signal?: AbortSignal; thrown?: unknown } = {};
      const job = tool(
        "job",
        async (_args, ctx) => {
          if (ctx.attempt === 1) {
            firstRun.signal = ctx.signal;
            link.down = true;
            try {
              await ctx.setStatusMessage("halfway");
            } catch (error) {
              firstRun.thrown = error;
              throw error;
            }
            return text("first run went on");
          }
          return text(`attempt ${ctx.attempt}`);
        },
        { retry: { attempts: 3, backoffMs: 0 } },
      );
      const { runner } = node(store, {
        tools: [job],
        lease: { durationMs: 150, renewEveryMs: 30 },
      });
      const t = await runner.start(alice, { era, request: { toolName: "job", arguments: {} } });
      // The database stays away past the run's lease.
      await until(
        async () => firstRun.thrown,
        (thrown) => thrown !== undefined,
      );
      expect(firstRun.thrown).toBeInstanceOf(RunStoppedError);
      expect((firstRun.thrown as RunStoppedError).reason).toBe("lease_expired");
      expect(firstRun.signal?.aborted).toBe(true);
      link.down = false;
      const scope = ownerScopeOf(alice);
      const done = await until(
        () => inner.get(t.taskId, scope),
        (r) => r.status !== "working",
      );
      // Not failed with the store's error: re-run as a lost worker's task would be.
      expect(done.status).toBe("completed");
      expect(done.outcome).toEqual({ kind: "result", result: text("attempt 2") });
      expect(done.execution.attempt).toBe(2);
    });
  });
  it("an earlier run's late, fenced-out outcome never stops a later run of the task on the same node", async () => {
    // After a database restart a node may claim attempt 2 of a task while its own attempt 1
    // is still trying to store an outcome: the refusal of that write (lease_lost) is attempt
    // 1's alone.
    const inner = new ReferenceTaskStore();
    const outcomes = { blocked: true, refused: 0 };
    const store = new Proxy(inner, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (typeof value !== "function") return value;
        if (key !== "complete") return value.bind(target);
        return async (...args: unknown[]) => {
          if (outcomes.blocked) {
            throw taskErrors.storeUnavailable("complete could not reach PostgreSQL (ECONNRESET)");
          }
          try {
            return await value.apply(target, args);
          } catch (error) {
            outcomes.refused += 1;
            throw error;
          }
        };
      },
    });
    const second = gate();
    const finish = gate();
    let secondSignal: AbortSignal | undefined;
    const job = tool(
      "job",
      async (_args, ctx) => {
        if (ctx.attempt === 1) return text("attempt 1");
        secondSignal = ctx.signal;
        second.open();
        await finish.opened;
        return text(`attempt ${ctx.attempt}`);
      },
      { retry: { attempts: 3, backoffMs: 0 } },
    );
    const { runner } = node(store, {
      tools: [job],
      settleAttempts: 1_000,
      lease: { durationMs: 100, renewEveryMs: 20 },
    });
    const t = await runner.start(alice, { era, request: { toolName: "job", arguments: {} } });
    // Attempt 1's outcome cannot be stored; its lease runs out and this node runs attempt 2.
    await second.opened;
    outcomes.blocked = false;
    await until(
      async () => outcomes.refused,
      (n) => n >= 1,
    );
    expect(secondSignal?.aborted).toBe(false);
    finish.open();
    const done = await until(
      () => inner.get(t.taskId, ownerScopeOf(alice)),
      (r) => r.status !== "working",
    );
    expect(done.outcome).toEqual({ kind: "result", result: text("attempt 2") });
    expect(done.execution.attempt).toBe(2);
  });

  it("a run that writes nothing also stops when no renewal gets through before its lease ends", async () => {
    const inner = new ReferenceTaskStore();
    const { link, store } = cuttable(inner);
    let stopped: unknown;
    const job = tool(
      "job",
      async (_args, ctx) => {
        if (ctx.attempt > 1) return text(`attempt ${ctx.attempt}`);
        link.down = true;
        await never(ctx.signal).catch((reason) => {
          stopped = reason;
        });
        link.down = false;
        return text("too late");
      },
      { retry: { attempts: 2, backoffMs: 0 } },
    );
    const { runner } = node(store, { tools: [job], lease: { durationMs: 150, renewEveryMs: 30 } });
    const t = await runner.start(alice, { era, request: { toolName: "job", arguments: {} } });
    const done = await until(
      () => inner.get(t.taskId, ownerScopeOf(alice)),
      (r) => r.status !== "working",
    );
    expect((stopped as RunStoppedError).reason).toBe("lease_expired");
    expect(done.outcome).toEqual({ kind: "result", result: text("attempt 2") });
  });

  it("stops a run cancelled outright (2025-11-25) as cancelled, not as taken over", async () => {
    // Woken by the change feed, and (with the feed silenced) by the next lease renewal.
    for (const silent of [false, true]) {
      const store = new ReferenceTaskStore();
      const reasons: unknown[] = [];
      const started = gate();
      const job = tool("job", async (_args, ctx) => {
        started.open();
        try {
          return await never(ctx.signal);
        } catch (reason) {
          reasons.push(reason);
          return text("too late");
        }
      });
      const workerStore = silent ? withoutChangeFeed(store) : store;
      const worker = node(workerStore as ReferenceTaskStore, {
        tools: [job],
        lease: { holder: "w", durationMs: 1000, renewEveryMs: 10 },
        recheckMs: 60_000,
      });
      const other = node(store, { claim: false, tools: [job] });
      const t = await worker.runner.start(alice, {
        era: "2025-11-25",
        request: { toolName: "job", arguments: {} },
      });
      await started.opened;
      expect((await other.service.cancelNow(alice, t.taskId)).status).toBe("cancelled");
      await until(
        async () => reasons.length,
        (n) => n > 0,
      );
      await worker.runner.settled(t.taskId);
      expect(reasons).toHaveLength(1);
      expect(reasons[0]).toMatchObject({
        name: "AbortError",
        message: `Task ${t.taskId} was cancelled`,
      });
      expect(worker.runner.stats.superseded).toBe(0);
      const final = await other.service.get(alice, t.taskId);
      expect(final).toMatchObject({ status: "cancelled", outcome: null });
    }
  });

  it("claims a requeued task when its retry backoff ends, without waiting for a scan", async () => {
    const store = new ReferenceTaskStore();
    const job = tool(
      "job",
      (_args, ctx) => {
        if (ctx.attempt === 1) throw new Error("transient");
        return text(`attempt ${ctx.attempt}`);
      },
      { retry: { attempts: 2, backoffMs: 30, onError: true } },
    );
    // No scan within the test: only the backoff's own wake-up can start attempt 2.
    const { service, runner } = node(store, { tools: [job], scanIntervalMs: 600_000 });
    const t = await runner.start(alice, { era, request: { toolName: "job", arguments: {} } });
    const done = await until(
      () => service.get(alice, t.taskId),
      (r) => r.status === "completed",
    );
    expect(done.outcome).toEqual({ kind: "result", result: text("attempt 2") });
  });

  it("keeps pipelined claims from two workers within each worker's concurrency", async () => {
    const store = new ReferenceTaskStore();
    const running = new Map<string, number>();
    const peak = new Map<string, number>();
    const job = tool("job", async (_args, ctx) => {
      const now = (running.get(ctx.worker) ?? 0) + 1;
      running.set(ctx.worker, now);
      peak.set(ctx.worker, Math.max(peak.get(ctx.worker) ?? 0, now));
      await sleep(ctx.attempt + (now % 3));
      running.set(ctx.worker, (running.get(ctx.worker) ?? 1) - 1);
      return text("ok");
    });
    const http = node(store, { claim: false, tools: [job] });
    node(store, { tools: [job], concurrency: 3, lease: { holder: "w1" } });
    node(store, { tools: [job], concurrency: 5, lease: { holder: "w2" } });
    const tasks: TaskRecord[] = [];
    for (let i = 0; i < 60; i++) {
      tasks.push(
        await http.runner.start(alice, { era, request: { toolName: "job", arguments: {} } }),
      );
    }
    for (const t of tasks) {
      await until(
        () => http.service.get(alice, t.taskId),
        (r) => r.status === "completed",
      );
    }
    expect(peak.get("w1") ?? 0).toBeLessThanOrEqual(3);
    expect(peak.get("w2") ?? 0).toBeLessThanOrEqual(5);
  });

  describe("fair share between owners", () => {
    const bob = owner({ principalId: "bob" });

    it("defaults to a quarter of the slots per owner; no running cap means no owner limit at all", () => {
      const service = new TaskService({ store: new ReferenceTaskStore() });
      const limits = (options: Partial<TaskRunnerOptions>) =>
        new TaskRunner({ service, concurrency: 16, claim: false, ...options }).ownerLimits;
      expect(limits({})).toEqual({ maxRunningPerOwner: 4, maxWaitingPerOwner: 16 });
      // A single-tenant server: claims count nothing (on PostgreSQL they skip the claim lock).
      expect(limits({ maxRunningPerOwner: Number.POSITIVE_INFINITY })).toEqual({});
      expect(
        limits({ maxRunningPerOwner: Number.POSITIVE_INFINITY, maxWaitingPerOwner: 3 }),
      ).toEqual({ maxWaitingPerOwner: 3 });
    });

    it("caps an owner's running tasks across nodes; another owner's task runs at once", async () => {
      const store = new ReferenceTaskStore();
      const hold = gate();
      let running = 0;
      let peak = 0;
      const job = tool("job", async (args) => {
        if (args.long !== true) return text("short");
        running += 1;
        peak = Math.max(peak, running);
        await hold.opened;
        running -= 1;
        return text("ok");
      });
      const limits = { tools: [job], concurrency: 8, maxRunningPerOwner: 2 };
      const a = node(store, { ...limits, lease: { holder: "a" } });
      const b = node(store, { ...limits, lease: { holder: "b" } });
      const flood: TaskRecord[] = [];
      for (let i = 0; i < 12; i++) {
        const runner = i % 2 === 0 ? a.runner : b.runner;
        flood.push(
          await runner.start(alice, {
            era,
            request: { toolName: "job", arguments: { long: true } },
          }),
        );
      }
      // Created at once on the creating node while Alice was under her cap, queued after.
      expect(flood.filter((t) => t.execution.holder !== null)).toHaveLength(2);
      expect(flood[2]?.statusMessage).toBe(QUEUED_OWNER_LIMIT_MESSAGE);
      const bobs = await b.runner.start(bob, { era, request: { toolName: "job", arguments: {} } });
      await until(
        () => b.service.get(bob, bobs.taskId),
        (t) => t.status === "completed",
      );
      await sleep(SEVERAL_SCANS_MS); // the cap still holds through a few scans
      expect(a.runner.active + b.runner.active).toBe(2);
      hold.open();
      for (const t of flood) {
        await until(
          () => a.service.get(alice, t.taskId),
          (r) => r.status === "completed",
        );
      }
      expect(peak).toBe(2);
    });

    it("a node already running its owner's cap creates the owner's next task queued, asking for no lease", async () => {
      const store = new ReferenceTaskStore();
      const leased = leaseRecording(store);
      const { hold, job } = heldJob();
      const ask = tool("ask", async (_args, ctx) => {
        await ctx.requireInput({ q: { method: "elicitation/create" } });
        return text("answered");
      });
      const { service, runner } = node(store, {
        tools: [job, ask],
        concurrency: 8,
        maxRunningPerOwner: 2,
        maxWaitingPerOwner: 1,
      });
      const start = (who: Owner, toolName: string) =>
        runner.start(who, { era, request: { toolName, arguments: {} } });
      // A run parked on a question does not count against the cap, here as in the store.
      const asking = await start(alice, "ask");
      await until(
        () => service.get(alice, asking.taskId),
        (t) => t.status === "input_required",
      );
      const first = [await start(alice, "job"), await start(alice, "job")];
      expect(first.map((t) => t.execution.holder)).toEqual([runner.holder, runner.holder]);
      const third = await start(alice, "job");
      expect(third.execution.holder).toBeNull();
      expect(third.statusMessage).toBe(QUEUED_OWNER_LIMIT_MESSAGE);
      // Another owner still runs at once.
      expect((await start(bob, "job")).execution.holder).toBe(runner.holder);
      expect(leased).toEqual([true, true, true, false, true]);
      hold.open();
      await until(
        () => service.get(alice, third.taskId),
        (t) => t.status === "completed",
      );
    });

    it("an owner at its cap here wakes no claim by its queued creates nor by its handlers' returns; its runs' ends do, once for runs that end together", async () => {
      const store = new ReferenceTaskStore();
      const claims = claimRecording(store);
      // Endings held: a run whose handler returned counts against the cap until it is stored.
      const endings = gate();
      const complete = store.complete.bind(store);
      store.complete = async (...args) => {
        await endings.opened;
        return complete(...args);
      };
      const { hold, job } = heldJob();
      // No periodic scans: claims go out only when something wakes them.
      const { service, runner } = node(store, {
        tools: [job],
        concurrency: 8,
        maxRunningPerOwner: 2,
        scanIntervalMs: 60_000,
      });
      const start = () => runner.start(alice, { era, request: { toolName: "job", arguments: {} } });
      await until(
        async () => claims.length,
        (n) => n === 1,
      ); // the first claim found the queue empty
      const running = [await start(), await start()];
      expect(running.map((t) => t.execution.holder)).toEqual([runner.holder, runner.holder]);
      const queued = [await start(), await start(), await start()];
      expect(queued.map((t) => t.execution.holder)).toEqual([null, null, null]);
      await sleep(SEVERAL_SCANS_MS);
      expect(claims).toEqual([0]);
      // The handlers return, their endings held: slots are free, the owner still at its cap.
      hold.open();
      await until(
        async () => runner.active,
        (n) => n === 0,
      );
      await sleep(SEVERAL_SCANS_MS);
      expect(claims).toEqual([0]);
      // Both runs end together: one claim takes two tasks; their ends bring the third.
      endings.open();
      for (const t of queued) {
        await until(
          () => service.get(alice, t.taskId),
          (r) => r.status === "completed",
        );
      }
      await sleep(SEVERAL_SCANS_MS);
      expect(claims).toEqual([0, 2, 1, 0]);
    });

    it("an owner whose cap another node's runs hold: once the store refuses a lease here, its next creates ask for none and wake no claim here, until a run ends", async () => {
      const store = new ReferenceTaskStore();
      const leased = leaseRecording(store);
      const { hold, job } = heldJob();
      // No periodic scans: claims go out only when something wakes them.
      const limits = {
        tools: [job],
        concurrency: 8,
        maxRunningPerOwner: 2,
        scanIntervalMs: 60_000,
      };
      const a = node(store, { ...limits, lease: { holder: "a" } });
      const bView = heldClaims(store, () => undefined);
      const b = node(bView.store, { ...limits, lease: { holder: "b" } });
      await until(
        async () => bView.counts.returned,
        (n) => n === 1,
      ); // b's first claim found the queue empty
      const start = (on: typeof a, who: Owner) =>
        on.runner.start(who, { era, request: { toolName: "job", arguments: {} } });
      const onA = [await start(a, alice), await start(a, alice)];
      expect(onA.map((t) => t.execution.holder)).toEqual(["a", "a"]);
      await sleep(SEVERAL_SCANS_MS);
      const claimsBefore = bView.counts.sent;
      // On b, Alice is under her cap: her first create asks for a lease, which the store
      // refuses (a holds her cap); that create's own `queued` change still wakes one claim.
      const onB: TaskRecord[] = [];
      for (let i = 0; i < 4; i++) onB.push(await start(b, alice));
      expect(onB.map((t) => t.execution.holder)).toEqual([null, null, null, null]);
      expect(leased.slice(2)).toEqual([true, false, false, false]);
      await sleep(SEVERAL_SCANS_MS);
      expect(bView.counts.sent).toBe(claimsBefore + 1);
      // Another owner's task still runs on b at once.
      expect((await start(b, bob)).execution.holder).toBe("b");
      hold.open();
      for (const t of onB) {
        await until(
          () => b.service.get(alice, t.taskId),
          (r) => r.status === "completed",
        );
      }
      // Her cap free again, her next create on b asks for a lease again, and runs there.
      const again = await start(b, alice);
      expect(leased.at(-1)).toBe(true);
      expect(again.execution.holder).toBe("b");
    });

    it("a run that ends on another node wakes claiming here for the tasks only this node runs, queued behind their owner's cap", async () => {
      const store = new ReferenceTaskStore();
      const { hold, job } = heldJob();
      const other = tool("other", async () => text("other"));
      const limits = { concurrency: 8, maxRunningPerOwner: 2, scanIntervalMs: 60_000 };
      const a = node(store, { ...limits, tools: [job], lease: { holder: "a" } });
      const b = node(store, { ...limits, tools: [other], lease: { holder: "b" } });
      const start = (on: typeof a, toolName: string) =>
        on.runner.start(alice, { era, request: { toolName, arguments: {} } });
      const onA = [await start(a, "job"), await start(a, "job")];
      expect(onA.map((t) => t.execution.holder)).toEqual(["a", "a"]);
      const onB = [await start(b, "other"), await start(b, "other"), await start(b, "other")];
      expect(onB.map((t) => t.execution.holder)).toEqual([null, null, null]);
      await sleep(SEVERAL_SCANS_MS);
      // a cannot run them; its runs' ends reach b through the change feed, not a scan.
      hold.open();
      for (const t of onB) {
        await until(
          () => b.service.get(alice, t.taskId),
          (r) => r.status === "completed",
        );
      }
    });

    /**
     * A node whose claims and creates can be held: `claimGate`, while armed, holds each claim
     * on its way to the store, and `returnGate` on its way back from it; `holdCreateOf(n)` holds the create of the task with argument
     * `n` on its way to the store until the returned function is called. The tool `job`
     * waits for `gateOf(n)`. The owner's cap is `maxRunningPerOwner`, and scans are too rare
     * to matter.
     */
    const heldClaimsAndCreates = (maxRunningPerOwner: number) => {
      const store = new ReferenceTaskStore();
      const held = {
        claimGate: null as ReturnType<typeof gate> | null,
        returnGate: null as ReturnType<typeof gate> | null,
        entered: 0,
        returned: 0,
      };
      const claim = store.claim.bind(store);
      store.claim = async (holder, options) => {
        held.entered += 1;
        await held.claimGate?.opened;
        try {
          const claimed = await claim(holder, options);
          await held.returnGate?.opened;
          return claimed;
        } finally {
          held.returned += 1;
        }
      };
      const createGates = new Map<number, ReturnType<typeof gate>>();
      const create = store.create.bind(store);
      store.create = async (task, scope) => {
        await createGates.get(Number(task.request.arguments?.n))?.opened;
        return create(task, scope);
      };
      const holdCreateOf = (n: number) => {
        const g = gate();
        createGates.set(n, g);
        return g.open;
      };
      const gates = new Map<number, ReturnType<typeof gate>>();
      const gateOf = (n: number) => {
        if (!gates.has(n)) gates.set(n, gate());
        return gates.get(n)!;
      };
      const job = tool("job", async (args) => {
        await gateOf(Number(args.n)).opened;
        return text("ok");
      });
      const { service, runner } = node(store, {
        tools: [job],
        concurrency: 8,
        maxRunningPerOwner,
        scanIntervalMs: 60_000,
      });
      const start = (n: number) =>
        runner.start(alice, { era, request: { toolName: "job", arguments: { n } } });
      return { store, held, holdCreateOf, gateOf, service, runner, start };
    };

    /**
     * Bob's task 101 running and 102 queued behind his cap of 1 (of `heldClaimsAndCreates`),
     * once the claim the queued one woke has returned: a queued task a run's end may free a
     * place for, so that the end wakes a claim.
     */
    const queuedBehindBobsCap = async (
      runner: TaskRunner,
      held: { readonly entered: number; readonly returned: number },
    ) => {
      const startBob = (n: number) =>
        runner.start(bob, { era, request: { toolName: "job", arguments: { n } } });
      const running = await startBob(101);
      expect(running.execution.holder).toBe(runner.holder);
      const queued = await startBob(102);
      expect(queued.execution.holder).toBeNull();
      await until(
        async () => held.returned === held.entered,
        (settled) => settled,
      );
      return [running, queued];
    };

    /** Lets Bob's tasks of {@link queuedBehindBobsCap} run and waits until they completed. */
    const bobsDone = async (
      service: TaskService,
      gateOf: (n: number) => { open: () => void },
      bobs: readonly TaskRecord[],
    ) => {
      gateOf(101).open();
      gateOf(102).open();
      for (const t of bobs) {
        await until(
          () => service.get(bob, t.taskId),
          (r) => r.status === "completed",
        );
      }
    };

    it("a task queued while a claim that asked for every free slot is out is claimed when that claim returns", async () => {
      const { held, gateOf, service, runner } = heldClaimsAndCreates(8);
      await until(
        async () => held.returned,
        (n) => n === 1,
      );
      const queue = (n: number) =>
        service.create(alice, { era, request: { toolName: "job", arguments: { n } } });
      // A claim takes the first task, and is held on its way back: it asked for every slot.
      held.returnGate = gate();
      const first = await queue(1);
      await until(
        async () => held.entered,
        (n) => n === 2,
      );
      // Queued meanwhile: no slot is left to claim it with until that claim returns.
      const second = await queue(2);
      await sleep(20);
      held.returnGate.open();
      // Nothing else would claim before the next scan (a minute away).
      for (const task of [first, second]) {
        await until(
          () => service.get(alice, task.taskId),
          (t) => t.execution.holder === runner.holder,
        );
      }
      gateOf(1).open();
      gateOf(2).open();
      await until(
        () => service.get(alice, second.taskId),
        (t) => t.status === "completed",
      );
    });

    it("a task created queued behind the place its owner's ended run freed wakes no claim of its own", async () => {
      const { held, holdCreateOf, gateOf, service, runner, start } = heldClaimsAndCreates(1);
      await until(
        async () => held.returned,
        (n) => n === 1,
      ); // the first claim found the queue empty
      const first = await start(1);
      const oldest = await start(2);
      expect([first, oldest].map((t) => t.execution.holder)).toEqual([runner.holder, null]);
      // The first run ends; the claim its end wakes is held on its way to the store.
      held.claimGate = gate();
      gateOf(1).open();
      await until(
        async () => held.entered,
        (n) => n === 2,
      );
      // A task created meanwhile is created queued (the freed place is that claim's), and
      // its create returns after the claim has taken the place for the oldest task.
      const releaseCreate = holdCreateOf(3);
      const creating = start(3);
      held.claimGate.open();
      await until(
        () => service.get(alice, oldest.taskId),
        (t) => t.execution.holder === runner.holder,
      );
      releaseCreate();
      const newest = await creating;
      expect(newest.execution.holder).toBeNull();
      // Its `queued` change sends no claim: the owner's cap is taken (one sent would come
      // back empty, after PostgreSQL's claim lock).
      await sleep(50);
      expect(held.entered).toBe(2);
      // The oldest task's end frees the place, and the newest task runs.
      gateOf(2).open();
      gateOf(3).open();
      await until(
        () => service.get(alice, newest.taskId),
        (t) => t.status === "completed",
      );
    });

    it("a task created behind the place its owner's ended run freed, missed by the claim for that place, runs when that claim returns", async () => {
      const { held, holdCreateOf, gateOf, service, runner, start } = heldClaimsAndCreates(1);
      await until(
        async () => held.returned,
        (n) => n === 1,
      );
      expect((await start(1)).execution.holder).toBe(runner.holder);
      // Queued behind the first run, then claimed at its end: the owner has had tasks queued.
      const second = await start(2);
      expect(second.execution.holder).toBeNull();
      gateOf(1).open();
      await until(
        () => service.get(alice, second.taskId),
        (t) => t.execution.holder === runner.holder,
      );
      const claims = held.entered;
      held.claimGate = gate();
      gateOf(2).open();
      await until(
        async () => held.entered,
        (n) => n === claims + 1,
      );
      // Created queued behind the freed place, but committed only after the claim for that
      // place has looked at the queue and found it empty.
      const releaseCreate = holdCreateOf(3);
      const creating = start(3);
      held.claimGate.open();
      await until(
        async () => held.returned,
        (n) => n === claims + 1,
      );
      releaseCreate();
      const task = await creating;
      expect(task.execution.holder).toBeNull();
      // The owner is under its cap and nothing else would claim before the next scan (a
      // minute away): the task runs now.
      await until(
        () => service.get(alice, task.taskId),
        (t) => t.execution.holder === runner.holder,
      );
      gateOf(3).open();
      await until(
        () => service.get(alice, task.taskId),
        (t) => t.status === "completed",
      );
    });

    it("a run's end keeps no place for a claim when its owner has had nothing queued: a task of the owner created meanwhile runs at once", async () => {
      const { held, gateOf, service, runner, start } = heldClaimsAndCreates(1);
      await until(
        async () => held.returned,
        (n) => n === 1,
      );
      expect((await start(1)).execution.holder).toBe(runner.holder);
      // Another owner's task queued behind its cap: a run's end now wakes a claim.
      const bobs = await queuedBehindBobsCap(runner, held);
      // The run ends; the claim its end wakes is held on its way to the store.
      held.claimGate = gate();
      const entered = held.entered;
      gateOf(1).open();
      await until(
        async () => held.entered,
        (n) => n === entered + 1,
      );
      // Nothing of the owner was ever queued: the freed place is not kept for that claim
      // (which will find nothing), and the new task takes it now.
      const next = await start(2);
      expect(next.execution.holder).toBe(runner.holder);
      held.claimGate.open();
      gateOf(2).open();
      await until(
        () => service.get(alice, next.taskId),
        (t) => t.status === "completed",
      );
      await bobsDone(service, gateOf, bobs);
    });

    it("once a claim finds none of an owner's tasks queued, the owner's run's end keeps no place for a claim", async () => {
      const { held, gateOf, service, runner, start } = heldClaimsAndCreates(1);
      await until(
        async () => held.returned,
        (n) => n === 1,
      );
      expect((await start(1)).execution.holder).toBe(runner.holder);
      const second = await start(2); // queued: the owner has had tasks queued
      expect(second.execution.holder).toBeNull();
      gateOf(1).open();
      await until(
        () => service.get(alice, second.taskId),
        (t) => t.execution.holder === runner.holder,
      );
      // The second run's end wakes a claim that finds nothing of the owner's.
      const claims = held.returned;
      gateOf(2).open();
      await until(
        async () => held.returned,
        (n) => n === claims + 1,
      );
      expect((await start(3)).execution.holder).toBe(runner.holder);
      // Another owner's task queued behind its cap: a run's end now wakes a claim.
      const bobs = await queuedBehindBobsCap(runner, held);
      held.claimGate = gate();
      const entered = held.entered;
      gateOf(3).open();
      await until(
        async () => held.entered,
        (n) => n === entered + 1,
      );
      // The owner has nothing queued since: the place the third run freed is the new task's.
      const next = await start(4);
      expect(next.execution.holder).toBe(runner.holder);
      held.claimGate.open();
      gateOf(4).open();
      await until(
        () => service.get(alice, next.taskId),
        (t) => t.status === "completed",
      );
      await bobsDone(service, gateOf, bobs);
    });

    it("under a cap, runs' ends send no claim while nothing is queued: owners within their cap get no empty claims", async () => {
      const store = new ReferenceTaskStore();
      const claims = claimRecording(store);
      const job = tool("job", () => text("ok"));
      // No periodic scans: claims go out only when something wakes them.
      const { service, runner } = node(store, {
        tools: [job],
        concurrency: 8,
        maxRunningPerOwner: 2,
        scanIntervalMs: 60_000,
      });
      await until(
        async () => claims.length,
        (n) => n === 1,
      ); // the first claim found the queue empty
      for (let i = 0; i < 6; i++) {
        for (const who of [alice, bob]) {
          const t = await runner.start(who, { era, request: { toolName: "job", arguments: {} } });
          expect(t.execution.holder).toBe(runner.holder);
          await until(
            () => service.get(who, t.taskId),
            (r) => r.status === "completed",
          );
        }
      }
      await sleep(SEVERAL_SCANS_MS);
      // Before, the runs' ends woke claims that came back empty: one more here, and one for
      // about every five tasks under the HTTP bench's load.
      expect(claims).toEqual([0]);
      // A task queued behind an owner's cap: the end of a run that frees a place claims it.
      const { hold, job: held } = heldJob("held");
      runner.register([held]);
      const startHeld = () =>
        runner.start(bob, { era, request: { toolName: "held", arguments: {} } });
      const running = [await startHeld(), await startHeld()];
      expect(running.map((t) => t.execution.holder)).toEqual([runner.holder, runner.holder]);
      const queued = await startHeld();
      expect(queued.execution.holder).toBeNull();
      hold.open();
      await until(
        () => service.get(bob, queued.taskId),
        (t) => t.status === "completed",
      );
      expect(claims.filter((n) => n > 0)).toEqual([1]);
    });

    it("the place a run's end frees under its owner's cap goes to the owner's oldest queued task, not to a create racing the claim", async () => {
      const { store, held, gateOf, service, runner, start } = heldClaimsAndCreates(2);
      const leased = leaseRecording(store);
      await until(
        async () => held.entered,
        (n) => n === 1,
      ); // the first claim found the queue empty
      const [first, second] = [await start(1), await start(2)];
      const oldest = await start(3);
      expect([first, second, oldest].map((t) => t.execution.holder)).toEqual([
        runner.holder,
        runner.holder,
        null,
      ]);
      // The first run ends; the claim its end wakes is held on its way to the store.
      held.claimGate = gate();
      gateOf(1).open();
      await until(
        async () => held.entered,
        (n) => n === 2,
      );
      // A create meanwhile: the owner is under its cap in the store, but the freed place is
      // the claim's. Without the claim lock's detour, it is created queued behind the oldest.
      const newest = await start(4);
      expect(newest.execution.holder).toBeNull();
      expect(leased).toEqual([true, true, false, false]);
      held.claimGate.open();
      await until(
        () => service.get(alice, oldest.taskId),
        (t) => t.execution.holder === runner.holder,
      );
      // The cap is held by the second task and the oldest queued one: the newest waits.
      expect((await service.get(alice, newest.taskId)).execution.holder).toBeNull();
      for (const n of [2, 3, 4]) gateOf(n).open();
      await until(
        () => service.get(alice, newest.taskId),
        (t) => t.status === "completed",
      );
    });

    it("an owner's creates in flight count against its cap: only those that fit ask for a lease", async () => {
      const store = new ReferenceTaskStore();
      const leased = leaseRecording(store);
      const { hold, job } = heldJob();
      const { runner } = node(store, { tools: [job], concurrency: 8, maxRunningPerOwner: 2 });
      const start = (who: Owner) =>
        runner.start(who, { era, request: { toolName: "job", arguments: {} } });
      // Started in one turn: none has been created when the next asks.
      const created = await Promise.all([start(alice), start(alice), start(alice), start(bob)]);
      expect(leased).toEqual([true, true, false, true]);
      expect(created.map((t) => t.execution.holder)).toEqual([
        runner.holder,
        runner.holder,
        null,
        runner.holder,
      ]);
      hold.open();
      await runner.drain();
    });

    it("a handler waiting for input holds no slot: another task runs meanwhile", async () => {
      const store = new ReferenceTaskStore();
      const ask = tool("ask", async (_args, ctx) => {
        const { q } = await ctx.requireInput({ q: { method: "elicitation/create" } });
        return text(JSON.stringify(q));
      });
      const job = tool("job", () => text("ok"));
      const { service, runner } = node(store, { tools: [ask, job], concurrency: 1 });
      const asking = await runner.start(alice, {
        era,
        request: { toolName: "ask", arguments: {} },
      });
      await until(
        () => service.get(alice, asking.taskId),
        (t) => t.status === "input_required",
      );
      expect(runner.active).toBe(0);
      const other = await runner.start(bob, { era, request: { toolName: "job", arguments: {} } });
      expect(other.execution.holder).toBe(runner.holder);
      await until(
        () => service.get(bob, other.taskId),
        (t) => t.status === "completed",
      );
      await service.submitInput(alice, asking.taskId, { q: { action: "accept" } });
      const done = await until(
        () => service.get(alice, asking.taskId),
        (t) => t.status === "completed",
      );
      expect(done.outcome).toMatchObject({ kind: "result" });
    });

    it("beyond maxWaitingPerOwner a waiting handler keeps its slot", async () => {
      const store = new ReferenceTaskStore();
      const ask = tool("ask", async (_args, ctx) => {
        await ctx.requireInput({ q: { method: "elicitation/create" } });
        return text("answered");
      });
      const { service, runner } = node(store, {
        tools: [ask],
        concurrency: 2,
        maxWaitingPerOwner: 1,
      });
      const tasks: TaskRecord[] = [];
      for (let i = 0; i < 2; i++) {
        tasks.push(await runner.start(alice, { era, request: { toolName: "ask", arguments: {} } }));
      }
      for (const t of tasks) {
        await until(
          () => service.get(alice, t.taskId),
          (r) => r.status === "input_required",
        );
      }
      expect(runner.active).toBe(1);
    });
  });
});
