import { availableParallelism } from "node:os";
import type { Tracer } from "@opentelemetry/api";
import { ChangeFeed } from "./change-feed.js";
import { isTaskError } from "./errors.js";
import { type OwnerLimits, validateOwnerLimits } from "./fairness.js";
import { createIdGenerator } from "./ids.js";
import { type Owner, ownerKey } from "./owner.js";
import { Run, type RunHost, RunStoppedError } from "./run.js";
import type { CreateTaskInput, TaskService } from "./service.js";
import type { Unsubscribe } from "./store.js";
import type { TaskRecord } from "./task.js";
import type { TaskHandler, TaskProgress, TaskProgressListener } from "./task-context.js";
import { executionPolicyOf, type ToolDefinition } from "./tool.js";
import { isTerminal } from "./transitions.js";

/**
 * Most claim statements one runner has in flight at once: a second one takes the slots that
 * came free while the first was out (a single claim at a time left a third of the slots idle
 * under load); more would only add statements.
 */
const MAX_CLAIMS_IN_FLIGHT = 2;
/** A claim beside one in flight waits for at least `concurrency / this` free slots. */
const CLAIM_BATCH_DIVISOR = 8;
/** The longest delay `setTimeout` takes (a longer one would fire at once). */
const MAX_TIMER_MS = 2_147_483_647;

/** What {@link TaskRunner.start} needs: the task to create, named by its tool. */
export interface StartTaskInput extends CreateTaskInput {
  /**
   * Runs this task here instead of the registered tool of `request.toolName`. Only this
   * node knows a closure: if the task is re-run elsewhere (its worker was lost), that node
   * runs the registered tool. Prefer registering tools.
   */
  readonly handler?: TaskHandler;
}

/** What a runner has done since it started, for metrics. */
export interface RunnerStats {
  /** Tasks this node claimed from the queue (created-and-claimed ones not included). */
  readonly claimed: number;
  /** Runs started here (claimed from the queue or at creation). */
  readonly started: number;
  /** Runs stopped because another run took the task over (this run's lease was lost). */
  readonly superseded: number;
  /** Runs handed back to the queue on shutdown. */
  readonly handedBack: number;
  /** Handlers running now. */
  readonly running: number;
  /** The most handlers that ran at once. */
  readonly peakRunning: number;
}

/** Settings of a {@link TaskRunner}. */
export interface TaskRunnerOptions {
  readonly service: TaskService;
  /**
   * The tools this node runs, by name. A claimed task runs the handler registered for its
   * `request.toolName`; the facades register theirs too ({@link TaskRunner.register}).
   */
  readonly tools?: readonly ToolDefinition[];
  /** Told about outcomes that could not be stored after retries; default `console.error`. */
  readonly onError?: (error: unknown, taskId: string) => void;
  /**
   * Attempts to store an outcome while the store is unavailable; default 10 (with the
   * default delays, about 20 s: a database restart or failover, not just a blip).
   */
  readonly settleAttempts?: number;
  /**
   * First retry delay, doubled each attempt up to 5 s; default 100 ms. Also the first wait
   * before a run's own writes (status messages, input requests, lease renewals) are tried
   * again while the store is unavailable: those are retried, doubling up to 1 s, for as long
   * as the run holds its lease, so the handler does not hear of an outage it outlives.
   */
  readonly settleRetryMs?: number;
  /**
   * Every running task is re-read this often in case a change notification was lost (e.g.
   * across a database reconnect), so a cancel request or an answer is never missed for
   * good. Default 30 000 ms; 0 disables.
   */
  readonly recheckMs?: number;
  /**
   * This worker's lease on the tasks it runs: `holder` names it (unique per process;
   * default a random `worker-<pid>-<id>`), the lease lasts `durationMs` (default 30 s) and
   * is renewed every `renewEveryMs` (default a third of it). A task whose lease runs out
   * (the node died or stalled) is re-run elsewhere or failed "Worker lost". A run whose
   * lease runs out because no renewal got through (the store stayed unavailable) stops
   * (its handler's signal aborts with a `RunStoppedError` `lease_expired`), and its task
   * is recovered the same way.
   */
  readonly lease?: {
    readonly holder?: string;
    readonly durationMs?: number;
    readonly renewEveryMs?: number;
  };
  /**
   * Whether this node claims and runs queued tasks (needs a queue store); default true.
   * An HTTP-only node sets `false`: it creates tasks, workers elsewhere run them.
   */
  readonly claim?: boolean;
  /**
   * Most handlers running at once on this node; default 16 per CPU core. A run whose
   * handler has returned and which is only storing its outcome does not count (up to as
   * many again may be doing so), and slots asked for by a claim in flight do.
   */
  readonly concurrency?: number;
  /**
   * Most tasks one owner may have running at once across every node sharing the store
   * (the cap is enforced by the store's claim, atomically, so nodes together never exceed
   * it); a task created to run at once is created queued when its owner is at it. Default:
   * a quarter of `concurrency`, at least 1, so that one owner cannot take a shared node's
   * workers from everyone else. `Infinity` for no cap (a single-tenant server).
   */
  readonly maxRunningPerOwner?: number;
  /**
   * Of one owner's tasks waiting for input (a handler parked in `ctx.requireInput`), this
   * many hold no handler slot and do not count against `maxRunningPerOwner`; beyond it, a
   * waiting task holds its slot and counts as running. Default `concurrency`, or no limit
   * when `maxRunningPerOwner` is `Infinity`. `Infinity` for no limit.
   */
  readonly maxWaitingPerOwner?: number;
  /**
   * How often to look for claimable tasks and recover orphans even without a change
   * notification (which wakes claiming at once); default 500 ms. A dead worker's task is
   * re-run at most this long after its lease ran out (lease + 0.5 s by default), for two
   * cheap statements per interval (the orphan sweep on the lease index, and a claim).
   */
  readonly scanIntervalMs?: number;
  /**
   * Where the run spans (`mcp.task.run`, one per attempt) go; default the service's tracer.
   */
  readonly tracer?: Tracer;
}

/**
 * Runs tool handlers as tasks, era-neutrally. On a queue store (see `TaskQueueStore`) it is
 * a worker: a task is created queued (or claimed at once by this node when it has room),
 * claimed by any node with the tool, run under a renewed lease and a fence, and re-run
 * elsewhere when its worker is lost, as its tool's policy allows. Cancellation of either
 * style reaches the handler through `ctx.signal`, woken by the store's change feed, so a
 * request that arrives on another node works too:
 *
 * - immediate (`TaskService.cancelNow`, the 2025-11-25 era): the task is `cancelled` before
 *   the caller hears back; whatever the handler returns later is discarded.
 * - cooperative (`TaskService.requestCancel`, the 2026-07-28 era): the task ends `cancelled`
 *   if the handler stops on its signal (throws), or keeps the handler's outcome if that
 *   came first.
 */
export class TaskRunner {
  readonly service: TaskService;
  /** This worker's name: the lease holder of the tasks it runs. */
  readonly holder: string;
  /** Most handlers running at once. */
  readonly concurrency: number;
  /** The per-owner limits this runner's claims and creations apply (see the options). */
  readonly ownerLimits: OwnerLimits;
  readonly #tools = new Map<string, ToolDefinition>();
  /**
   * Every run on this node that has not finished. Runs, not task ids: this node may hold a
   * later attempt of a task while an earlier one still stores its (fenced-out) outcome, e.g.
   * after a database restart, and one run must never stop or free the other.
   */
  readonly #runs = new Set<Run>();
  /**
   * The runs whose handler is still running: they hold a slot of `concurrency`. A run whose
   * handler has returned only stores its outcome (one store write): it no longer holds a
   * slot, so the next task starts during that round trip (see {@link #room}).
   */
  readonly #busy = new Set<Run>();
  /**
   * The runs whose handler waits for input and holds no slot, by owner key: at most
   * `maxWaitingPerOwner` per owner (a waiting run beyond it keeps its slot).
   */
  readonly #parked = new Map<string, Set<Run>>();
  #parkedCount = 0;
  readonly #progress = new ChangeFeed<TaskProgress>((error, report) =>
    this.#onError(error, report.taskId),
  );
  readonly #onError: (error: unknown, taskId: string) => void;
  readonly #settleAttempts: number;
  readonly #settleRetryMs: number;
  readonly #host: RunHost;
  readonly #leaseMs: number;
  readonly #scanIntervalMs: number;
  #claiming = false;
  #unwatch: Unsubscribe | undefined;
  #scanner: NodeJS.Timeout | undefined;
  /** Claim statements in flight, and the slots they asked for (not yet running). */
  #claimsInFlight = 0;
  readonly #claims = new Set<Promise<void>>();
  #reserved = 0;
  /** Of {@link #reserved}, the slots of tasks being created to run here. */
  #creating = 0;
  /** A wake-up came while no further claim could start: look again when one returns. */
  #again = false;
  /**
   * The last claim came back short and nothing has been queued since: a freed slot alone
   * does not send another claim (it would find nothing), a sign of queued work does.
   */
  #drained = false;
  /** The last claim to return found fewer tasks than it asked for. */
  #lastClaimShort = true;
  /** Signs of queued work so far (see {@link #workMayBeQueued}). */
  #signals = 0;
  /** When retry backoffs of tasks this node requeued end (`performance.now()` times, sorted). */
  #backoffEnds: number[] = [];
  /** Wakes claiming at the first of {@link #backoffEnds}. */
  #backoffTimer: NodeJS.Timeout | undefined;
  readonly #stats = { claimed: 0, started: 0, superseded: 0, handedBack: 0, peakRunning: 0 };

  constructor(options: TaskRunnerOptions) {
    this.service = options.service;
    this.#onError = options.onError ?? ((error, taskId) => console.error(`task ${taskId}:`, error));
    this.#settleAttempts = options.settleAttempts ?? 10;
    this.#settleRetryMs = options.settleRetryMs ?? 100;
    this.holder =
      options.lease?.holder ?? `worker-${process.pid}-${createIdGenerator()().slice(0, 8)}`;
    this.#leaseMs = options.lease?.durationMs ?? 30_000;
    this.concurrency = options.concurrency ?? 16 * availableParallelism();
    this.#scanIntervalMs = options.scanIntervalMs ?? 500;
    if (!(Number.isSafeInteger(this.concurrency) && this.concurrency >= 1)) {
      throw new RangeError("concurrency must be a positive integer");
    }
    const maxRunning = options.maxRunningPerOwner ?? Math.max(1, Math.floor(this.concurrency / 4));
    // No running cap (a single-tenant server) means no per-owner limit at all, unless asked:
    // claims then need not count anything, so they run side by side without the claim lock.
    const maxWaiting =
      options.maxWaitingPerOwner ??
      (maxRunning === Number.POSITIVE_INFINITY ? Number.POSITIVE_INFINITY : this.concurrency);
    this.ownerLimits = {
      ...(maxRunning !== Number.POSITIVE_INFINITY && { maxRunningPerOwner: maxRunning }),
      ...(maxWaiting !== Number.POSITIVE_INFINITY && { maxWaitingPerOwner: maxWaiting }),
    };
    if ((this.ownerLimits.maxRunningPerOwner ?? 1) < 1) {
      throw new RangeError("maxRunningPerOwner must be a positive integer or Infinity");
    }
    validateOwnerLimits(this.ownerLimits);
    this.#host = {
      service: this.service,
      holder: this.holder,
      leaseMs: this.#leaseMs,
      renewEveryMs: options.lease?.renewEveryMs ?? Math.max(1, Math.floor(this.#leaseMs / 3)),
      recheckMs: options.recheckMs ?? 30_000,
      retryMs: this.#settleRetryMs,
      tracer: options.tracer ?? this.service.tracer,
      emitProgress: (report) => this.#progress.emit(report),
      countStop: (reason) => {
        if (reason === "superseded") this.#stats.superseded += 1;
        else if (reason === "handed_back") this.#stats.handedBack += 1;
      },
      reportError: (error, taskId) => this.#onError(error, taskId),
      handlerReturned: (run) => this.#freeSlot(run),
      waitingForInput: (run, waiting) => this.#waitingForInput(run, waiting),
      storeOutcome: (run, write) => this.#storeOutcome(run, write),
    };
    this.register(options.tools ?? []);
    if ((options.claim ?? true) && this.service.queues) this.#startClaiming();
  }

  /**
   * Adds tools this node can run. A name already registered must be the same definition
   * (the facades register the tools they serve; the app may have given them already).
   */
  register(tools: readonly ToolDefinition[]): void {
    for (const tool of tools) {
      const known = this.#tools.get(tool.name);
      if (known !== undefined && known !== tool) {
        throw new TypeError(`Duplicate tool name: ${tool.name}`);
      }
      this.#tools.set(tool.name, tool);
    }
    if (tools.length > 0) this.#workMayBeQueued();
  }

  /** True while this node claims queued tasks. */
  get claiming(): boolean {
    return this.#claiming;
  }

  /** True when this runner holds leases on the tasks it runs (a queue store). */
  get leasing(): boolean {
    return this.service.queues;
  }

  /** Counters since this runner started. */
  get stats(): RunnerStats {
    return { ...this.#stats, running: this.#busy.size };
  }

  /** How many handlers are running on this runner. */
  get active(): number {
    return this.#busy.size;
  }

  /**
   * Creates the task durably and returns it. On a queue store it is claimed by this node at
   * once when this node claims and has room (its handler starts in the background), and is
   * created queued otherwise, for whichever worker has room first. The execution policy is
   * the tool's (`ToolDefinition.execution`) unless `input.execution` says otherwise.
   */
  async start(caller: Owner, input: StartTaskInput): Promise<TaskRecord> {
    const tool = this.#tools.get(input.request.toolName);
    const handler = input.handler ?? tool?.run;
    const { handler: _closure, ...create } = input;
    const execution = input.execution ?? (tool ? executionPolicyOf(tool) : undefined);
    const queues = this.service.queues;
    if (!queues && handler === undefined) {
      throw new TypeError(`No handler for tool ${input.request.toolName}: register the tool`);
    }
    // Creation waits for nothing else (no claim in flight, no scan): see #roomForCreate.
    const runHere =
      handler !== undefined && (!queues || (this.#claiming && this.#roomForCreate() > 0));
    // The slot is this task's while it is created, so no claim takes it meanwhile.
    if (queues && runHere) {
      this.#reserved += 1;
      this.#creating += 1;
    }
    let record: TaskRecord;
    try {
      record = await this.service.create(caller, {
        ...create,
        ...(execution !== undefined && { execution }),
        ...(queues && runHere && { lease: { holder: this.holder, durationMs: this.#leaseMs } }),
        // The store creates it queued when its owner is at its limit, and says why it waits.
        ...(queues && { ownerLimits: this.ownerLimits }),
      });
    } finally {
      if (queues && runHere) {
        this.#reserved -= 1;
        this.#creating -= 1;
      }
    }
    // Created queued instead (its owner is at its limit): a claim takes it later.
    if (runHere && (!queues || record.execution.holder === this.holder)) {
      this.#launch(record, handler);
    }
    return record;
  }

  /**
   * Subscribes to the progress reports of one task (or of every task when `taskId` is
   * absent) run by this runner. Reports are not stored, so only this node hears them.
   */
  onProgress(listener: TaskProgressListener, taskId?: string): Unsubscribe {
    return this.#progress.watch(listener, taskId);
  }

  /** Resolves when the handler of `taskId` (if it runs here) has finished and settled. */
  async settled(taskId: string): Promise<void> {
    await Promise.all(
      [...this.#runs].filter((run) => run.taskId === taskId).map((run) => run.done),
    );
  }

  /** Resolves once every running handler has finished and its outcome is stored. */
  async drain(): Promise<void> {
    while (this.#runs.size > 0) {
      await Promise.all([...this.#runs].map((run) => run.done));
    }
  }

  /** Stops claiming queued tasks (e.g. on SIGTERM); running handlers go on. */
  stopClaiming(): void {
    this.#claiming = false;
    this.#unwatch?.();
    this.#unwatch = undefined;
    if (this.#scanner !== undefined) clearInterval(this.#scanner);
    this.#scanner = undefined;
    if (this.#backoffTimer !== undefined) clearTimeout(this.#backoffTimer);
    this.#backoffTimer = undefined;
    this.#backoffEnds = [];
  }

  /** Aborts every running handler's signal, e.g. on shutdown. */
  abortAll(reason?: unknown): void {
    for (const run of this.#runs) run.abort(reason);
  }

  /**
   * Hands every running task back to the queue (on shutdown, after the drain time): the
   * attempt does not count, and another node claims it at once. Their handlers are
   * aborted; whatever they return is discarded.
   */
  async releaseLeases(): Promise<void> {
    await Promise.all([...this.#runs].map((run) => run.handBack()));
  }

  /**
   * Graceful shutdown: stop claiming, let running handlers finish for up to `drainMs`,
   * then hand the rest back to the queue (queue stores) or cancel them (other stores).
   */
  async shutdown({ drainMs = 10_000 }: { drainMs?: number } = {}): Promise<void> {
    this.stopClaiming();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), drainMs);
    });
    try {
      if ((await Promise.race([this.drain(), timeout])) !== "timeout") return;
    } finally {
      clearTimeout(timer);
    }
    if (this.service.queues) {
      // Handed back: whatever the aborted handlers still do is fenced out, so nothing
      // waits for them (one that ignores its signal must not hold up the shutdown).
      await this.releaseLeases();
      return;
    }
    this.abortAll();
    await this.drain();
  }

  #launch(record: TaskRecord, handler: TaskHandler): void {
    const writer = this.service.queues
      ? this.service.forRun(record.owner, record.taskId, {
          holder: this.holder,
          fencingToken: record.execution.fencingToken,
        })
      : this.service.forRun(record.owner, record.taskId);
    const run = new Run(this.#host, record, handler, writer);
    this.#runs.add(run);
    this.#busy.add(run);
    this.#stats.started += 1;
    this.#stats.peakRunning = Math.max(this.#stats.peakRunning, this.#busy.size);
    run.done = run.execute().finally(() => {
      this.#runs.delete(run);
      this.#busy.delete(run);
      this.#unpark(run);
      // A slot came free: look for queued work. Under a per-owner cap, a short claim does
      // not mean the queue is empty (owners at their cap were left out), and this run's end
      // may have put its owner back under its cap: a sign of claimable work.
      if (this.ownerLimits.maxRunningPerOwner !== undefined) this.#workMayBeQueued();
      else this.#wake();
    });
  }

  #startClaiming(): void {
    this.#claiming = true;
    // Woken by the change feed: a task became claimable somewhere.
    this.#unwatch = this.service.watch((change) => {
      if (change.kind === "queued") this.#workMayBeQueued();
    });
    this.#scanner = setInterval(() => {
      // Also the fallback for a lost notification: claim whether or not it recovered any.
      void this.service.recoverOrphans({ limit: 100 }).then(
        () => this.#workMayBeQueued(),
        (error) => this.#onError(error, "*"),
      );
    }, this.#scanIntervalMs);
    this.#scanner.unref();
    this.#workMayBeQueued();
  }

  /** A task may have become claimable (queued, requeued, recovered, or a scan is due). */
  #workMayBeQueued(): void {
    this.#signals += 1;
    this.#drained = false;
    this.#wake();
  }

  /**
   * Claims for the free slots now. Claiming is pipelined: up to {@link MAX_CLAIMS_IN_FLIGHT}
   * claim statements may be in flight, each for slots nobody has asked for yet (running
   * handlers plus slots reserved by the claims in flight never exceed `concurrency`), so
   * slots that come free during a claim's round trip are claimed at once instead of waiting
   * for it to return. A further claim while one is in flight waits for a batch's worth of
   * free slots, so a stream of finishing runs does not turn into one statement per task.
   */
  #wake(): void {
    if (!this.#claiming || this.#tools.size === 0 || this.#drained) return;
    const room = this.#room();
    if (room <= 0) return; // a finishing run wakes claiming again
    const inFlight = this.#claimsInFlight;
    if (
      inFlight >= MAX_CLAIMS_IN_FLIGHT ||
      (inFlight > 0 && room < Math.ceil(this.concurrency / CLAIM_BATCH_DIVISOR))
    ) {
      this.#again = true;
      return;
    }
    const claim = this.#claim(room);
    this.#claims.add(claim);
    void claim.finally(() => this.#claims.delete(claim));
  }

  /**
   * Tasks this node may take on now: free handler slots, less those the claims in flight
   * asked for. Runs storing their outcome hold no slot, but at most `concurrency` of them
   * may be pending, so a slow store cannot make tasks pile up here.
   */
  #room(): number {
    const freeSlots = this.concurrency - this.#busy.size;
    // Running plus settling runs stay within twice the concurrency (parked ones aside).
    const underSettlingCap = 2 * this.concurrency - (this.#runs.size - this.#parkedCount);
    return Math.min(freeSlots, underSettlingCap) - this.#reserved;
  }

  /**
   * Slots a task created now may run in. Its creation does not wait for the claims in
   * flight: when the last claim found the queue empty (those in flight will likely come back
   * short too), it may take a slot one of them reserved, and a claim that then comes back
   * with more tasks than there is room for hands the extra ones back (see {@link #claim}).
   * Under a backlog (full claims) only unreserved slots count, and the task is queued.
   */
  #roomForCreate(): number {
    const room = this.#room();
    if (room > 0 || !this.#lastClaimShort) return room;
    const freeSlots = this.concurrency - this.#busy.size;
    const underSettlingCap = 2 * this.concurrency - (this.#runs.size - this.#parkedCount);
    return Math.min(freeSlots, underSettlingCap) - this.#creating;
  }

  /** Hands a claimed task that was never started back to the queue (see {@link #claim}). */
  #handBackUnstarted(record: TaskRecord): void {
    const writer = this.service.forRun(record.owner, record.taskId, {
      holder: this.holder,
      fencingToken: record.execution.fencingToken,
    });
    writer.releaseLease().catch((error) => this.#onError(error, record.taskId));
  }

  /** A run's handler returned (its outcome is being stored): its slot is free. */
  #freeSlot(run: Run): void {
    if (this.#busy.delete(run)) this.#wake();
  }

  /**
   * A handler parked on a question gives its slot up while its owner has fewer than
   * `maxWaitingPerOwner` parked runs here (the store counts the same way cluster-wide); it
   * takes a slot again when it goes on, even past `concurrency` for a moment (claims wait
   * until the runs are back under it).
   */
  #waitingForInput(run: Run, waiting: boolean): void {
    if (!waiting) {
      if (this.#unpark(run) && this.#runs.has(run)) this.#busy.add(run);
      return;
    }
    if (!this.#busy.has(run)) return;
    const key = ownerKey(run.owner);
    let parked = this.#parked.get(key);
    const limit = this.ownerLimits.maxWaitingPerOwner ?? Number.POSITIVE_INFINITY;
    if ((parked?.size ?? 0) >= limit) return;
    if (parked === undefined) {
      parked = new Set();
      this.#parked.set(key, parked);
    }
    parked.add(run);
    this.#parkedCount += 1;
    this.#busy.delete(run);
    this.#wake();
  }

  /** Takes a run out of the parked ones; true when it was parked. */
  #unpark(run: Run): boolean {
    const key = ownerKey(run.owner);
    const parked = this.#parked.get(key);
    if (parked === undefined || !parked.delete(run)) return false;
    this.#parkedCount -= 1;
    if (parked.size === 0) this.#parked.delete(key);
    return true;
  }

  async #claim(room: number): Promise<void> {
    this.#claimsInFlight += 1;
    this.#reserved += room;
    const signals = this.#signals;
    let claimed: TaskRecord[] = [];
    try {
      claimed = await this.service.claim(this.holder, {
        limit: room,
        leaseMs: this.#leaseMs,
        toolNames: [...this.#tools.keys()],
        ...this.ownerLimits,
      });
    } catch (error) {
      if (!isTaskError(error, "store_unavailable")) this.#onError(error, "*");
    } finally {
      this.#claimsInFlight -= 1;
      this.#reserved -= room;
    }
    this.#stats.claimed += claimed.length;
    // Creates may have taken slots this claim reserved (see #roomForCreate): the tasks that
    // no longer fit go back to the queue at once, their attempt not counted.
    let fits = Math.max(0, this.#room());
    for (const record of claimed) {
      const tool = this.#tools.get(record.request.toolName);
      if (tool === undefined) continue; // filtered by name: cannot happen
      if (fits-- > 0) this.#launch(record, tool.run);
      else this.#handBackUnstarted(record);
    }
    // A full batch: more may be waiting. A short one (or a failed one: the store is down)
    // found the queue empty, unless something was queued meanwhile.
    this.#lastClaimShort = claimed.length < room;
    if (claimed.length >= room) this.#drained = false;
    else if (this.#signals === signals) this.#drained = true;
    // Or a wake-up came while this claim was out.
    if (claimed.length >= room || this.#again) {
      this.#again = false;
      this.#wake();
    }
  }

  /**
   * Wakes claiming `delayMs` from now, when a task this node requeued with a retry backoff
   * becomes claimable; otherwise only the next periodic scan would notice it. Relative, so
   * the store's clock (the database's, or an injected one) need not match this process's.
   * At most `concurrency` wake-ups are pending; beyond that the scan catches the rest.
   */
  #wakeAfter(delayMs: number): void {
    if (!this.#claiming || this.#backoffEnds.length >= this.concurrency) return;
    const at = performance.now() + Math.min(Math.max(0, delayMs), MAX_TIMER_MS);
    const ends = this.#backoffEnds;
    let i = ends.length;
    while (i > 0 && (ends[i - 1] as number) > at) i--;
    ends.splice(i, 0, at);
    if (i === 0) this.#armBackoffTimer();
  }

  #armBackoffTimer(): void {
    if (this.#backoffTimer !== undefined) clearTimeout(this.#backoffTimer);
    this.#backoffTimer = undefined;
    const next = this.#backoffEnds[0];
    if (next === undefined) return;
    this.#backoffTimer = setTimeout(
      () => {
        const now = performance.now();
        while ((this.#backoffEnds[0] ?? Number.POSITIVE_INFINITY) <= now) this.#backoffEnds.shift();
        this.#armBackoffTimer();
        this.#workMayBeQueued();
      },
      Math.max(0, next - performance.now()),
    );
    this.#backoffTimer.unref();
  }

  /** Stores a run's outcome, retrying while the store is unavailable. */
  async #storeOutcome(run: Run, write: () => Promise<unknown>): Promise<void> {
    const { taskId } = run;
    let delay = this.#settleRetryMs;
    for (let attempt = 1; ; attempt++) {
      try {
        const written = await write();
        // Requeued for another attempt after a backoff: claim it when the backoff ends.
        const task = written as TaskRecord | undefined;
        if (task?.execution?.holder === null && task.execution.availableAt !== null) {
          if (!isTerminal(task.status)) this.#wakeAfter(task.execution.backoffMs);
        }
        return;
      } catch (error) {
        // Someone else ended the task first (an immediate cancel, or the task was removed),
        // or another run took it over: the late outcome is discarded, never written over.
        if (isTaskError(error, "invalid_transition")) return;
        if (isTaskError(error, "not_found_or_unauthorized")) return;
        if (isTaskError(error, "lease_lost")) {
          // This run only: a later attempt of the task may be running here meanwhile.
          run.abort(new RunStoppedError(taskId, "superseded"));
          return;
        }
        if (!isTaskError(error, "store_unavailable") || attempt >= this.#settleAttempts) {
          this.#onError(error, taskId);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, 5_000);
      }
    }
  }
}
