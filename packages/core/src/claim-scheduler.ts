/**
 * When a runner claims queued tasks, and how many: claims are woken by signs of queued
 * work (the change feed, a periodic scan, a retry backoff ending, a freed slot under a
 * per-owner cap) and sized to the free handler slots, with up to two claim statements in
 * flight at once.
 */

import { isTaskError } from "./errors.js";
import type { OwnerLimits } from "./fairness.js";
import type { HandlerSlots } from "./handler-slots.js";
import { type Owner, ownerKey } from "./owner.js";
import type { TaskService } from "./service.js";
import type { Unsubscribe } from "./store.js";
import type { TaskRecord } from "./task.js";
import type { TaskHandler } from "./task-context.js";
import type { ToolDefinition } from "./tool.js";

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
/**
 * Most owners {@link ClaimScheduler} remembers as having queued tasks, and as held at their
 * cap elsewhere; beyond it the one seen longest ago is forgotten (its runs' ends then keep
 * no place, see `runEnded`; its creates ask for a lease again).
 */
const MAX_OWNERS_SEEN_QUEUED = 4096;
/**
 * Most queued tasks {@link ClaimScheduler} keeps as heard of between two scans; beyond it,
 * every run's end under a cap wakes claiming until the next scan.
 */
const MAX_TASKS_HEARD_QUEUED = 65_536;

/** Drops the first-inserted (oldest) owner of `owners` once it holds more than the bound. */
function forgetOldest(owners: Map<string, number> | Set<string>): void {
  if (owners.size <= MAX_OWNERS_SEEN_QUEUED) return;
  const oldest = owners.keys().next();
  if (oldest.done !== true) owners.delete(oldest.value);
}

/** What a {@link ClaimScheduler} claims for. */
export interface ClaimSchedulerOptions {
  readonly service: TaskService;
  /** This worker's name: the lease holder of the tasks it claims. */
  readonly holder: string;
  readonly leaseMs: number;
  /** How often to recover orphans and claim without a notification. */
  readonly scanIntervalMs: number;
  readonly ownerLimits: OwnerLimits;
  readonly slots: HandlerSlots;
  /** The tools this node runs, by name: claims take tasks of these only. */
  readonly tools: ReadonlyMap<string, ToolDefinition>;
  /** Starts the run of a claimed task. */
  launch(record: TaskRecord, handler: TaskHandler): void;
  onError(error: unknown, taskId: string): void;
}

/** The claiming of one runner. */
export class ClaimScheduler {
  readonly #o: ClaimSchedulerOptions;
  #claiming = false;
  #unwatch: Unsubscribe | undefined;
  #scanner: NodeJS.Timeout | undefined;
  /** Claim statements in flight. */
  #claimsInFlight = 0;
  /** Slots asked for by the claims in flight and by tasks being created to run here. */
  #reservedSlots = 0;
  /** Of {@link #reservedSlots}, the slots of tasks being created to run here. */
  #creatingSlots = 0;
  /**
   * Of {@link #creatingSlots}, how many each owner's creates hold (owner key; owners with
   * none left out): they count against the owner's cap like its runs here.
   */
  readonly #creatingByOwner = new Map<string, number>();
  /**
   * Creates in flight of tasks whose owner's cap this node's runs hold (see
   * {@link createsQueued}), and of their `queued` changes how many came: no sign of work
   * this node can claim.
   */
  #ownQueuedExpected = 0;
  #ownQueuedSeen = 0;
  /** A wake-up came while no further claim could start: look again when one returns. */
  #wokenDuringClaims = false;
  /**
   * The last claim came back short and nothing has been queued since: a freed slot alone
   * does not send another claim (it would find nothing), a sign of queued work does.
   */
  #queueSeenEmpty = false;
  /** The last claim to return found fewer tasks than it asked for. */
  #lastClaimShort = true;
  /** A wake-up is due at the end of this turn of the event loop (see {@link wake}). */
  #wakeScheduled = false;
  /** Signs of queued work so far (see {@link workMayBeQueued}): a claim compares before and after. */
  #queuedWorkSignals = 0;
  /** When retry backoffs of tasks this node requeued end (`performance.now()` times, sorted). */
  #retryWakeTimes: number[] = [];
  /** Wakes claiming at the first of {@link #retryWakeTimes}. */
  #retryWakeTimer: NodeJS.Timeout | undefined;
  /** Claim statements started so far. */
  #claimsStarted = 0;
  /**
   * Runs that ended here under a per-owner cap, by owner key, with how many claims had
   * started when each ended: until a claim started after it returns, the freed place under
   * the owner's cap is that claim's (see {@link roomForCreate}).
   */
  #endedRuns: { readonly key: string; readonly claimsStarted: number }[] = [];
  /**
   * Owners (keys) whose tasks were created queued behind the place an ended run freed, their
   * `queued` changes taken for no sign of work (see {@link createsQueued}): the claim that
   * takes that place may have started before such a task was created, and missed it. Once
   * no claim is in flight they are looked at again.
   */
  readonly #createdBehindEndedRuns = new Set<string>();
  /**
   * Owners (keys) that may have queued tasks, as far as this node has seen (under a
   * per-owner cap only): a create of theirs came back queued here, or a claim took some of
   * their tasks. Each with the number of the last claim that may not have seen them: a
   * short claim started after it, for a place one of their runs freed, that took none of
   * their tasks found none it could take, and forgets them. Only these owners' runs keep
   * their freed place for a claim when they end (see {@link runEnded}).
   */
  readonly #seenQueued = new Map<string, number>();
  /**
   * Owners (keys) the store found at their cap when this node had room for them: a create
   * of theirs that asked for a lease came back queued, the cap held by runs elsewhere (other
   * nodes, or a lost worker whose lease has not run out yet). Until a place may have come
   * free, their next creates ask for no lease and their `queued` changes wake no claim (see
   * {@link #placeMayHaveFreed}). Under such an owner's flood each create went under
   * PostgreSQL's claim lock and each `queued` change sent a claim that came back empty.
   */
  readonly #heldElsewhere = new Set<string>();
  /**
   * Under a per-owner cap, the tasks of this node's tools heard of as queued (their `queued`
   * changes, from any node) and not yet heard of as claimed, ended or deleted; emptied by
   * every periodic scan, which claims anyway (so that a change heard out of order, a claim's
   * before the task's `queued`, keeps no task here for long). While it is empty, and the
   * owner of a run that ends has nothing queued as far as this node has seen, the run's end
   * sends no claim: there is no queued task it could free a place for. Owners within their
   * cap had every run's end wake claiming, and the claims came back empty (one for about
   * every five tasks under load); on PostgreSQL each held back the creates behind the claim
   * lock (see `BENCHMARKS.md`).
   */
  readonly #queuedHeard = new Set<string>();
  /** More tasks were heard of as queued than {@link #queuedHeard} keeps, since the last scan. */
  #queuedHeardOverflowed = false;
  /** Tasks claimed from the queue so far. */
  claimed = 0;

  constructor(options: ClaimSchedulerOptions) {
    this.#o = options;
  }

  /** True while this node claims queued tasks. */
  get claiming(): boolean {
    return this.#claiming;
  }

  /** Whether claims go out: this node claims, and has tools to claim tasks of. */
  get #claimsGoOut(): boolean {
    return this.#claiming && this.#o.tools.size > 0;
  }

  /** Starts claiming: woken by the change feed, and by a periodic scan. */
  start(): void {
    const { service } = this.#o;
    this.#claiming = true;
    // Woken by the change feed: a task became claimable somewhere.
    this.#unwatch = service.watch((change) => {
      if (change.kind !== "queued") {
        // A task left `working` or was deleted: a run anywhere may have freed a place.
        if (
          change.kind === "deleted" ||
          (change.kind === "status_changed" && change.status !== "working")
        ) {
          this.#queuedHeard.delete(change.taskId);
          this.#placeMayHaveFreed();
        } else if (change.kind === "claimed") {
          this.#queuedHeard.delete(change.taskId);
        }
        return;
      }
      // A task of a tool this node does not run: no claim of this node can take it.
      const mine = change.toolName === undefined || this.#o.tools.has(change.toolName);
      if (mine) this.#heardQueued(change.taskId);
      // This node's own create of a task whose owner's cap its runs hold: no claim can take
      // it yet (see createsQueued). Counted whatever the task's tool, as such a create may
      // be of any tool.
      if (this.#ownQueuedExpected > this.#ownQueuedSeen) this.#ownQueuedSeen += 1;
      else if (mine) this.workMayBeQueued();
    });
    this.#scanner = setInterval(() => {
      // A lost notification may have hidden a freed place too: look again at every owner.
      this.#heldElsewhere.clear();
      this.#forgetQueuedHeard();
      // Also the fallback for a lost notification: claim whether or not it recovered any.
      void service.recoverOrphans({ limit: 100 }).then(
        () => this.workMayBeQueued(),
        (error) => this.#o.onError(error, "*"),
      );
    }, this.#o.scanIntervalMs);
    this.#scanner.unref();
    this.workMayBeQueued();
  }

  /** Stops claiming; claims in flight still launch what they bring back. */
  stop(): void {
    this.#claiming = false;
    this.#unwatch?.();
    this.#unwatch = undefined;
    if (this.#scanner !== undefined) clearInterval(this.#scanner);
    this.#scanner = undefined;
    if (this.#retryWakeTimer !== undefined) clearTimeout(this.#retryWakeTimer);
    this.#retryWakeTimer = undefined;
    this.#retryWakeTimes = [];
    this.#endedRuns = [];
    this.#createdBehindEndedRuns.clear();
    this.#seenQueued.clear();
    this.#forgetQueuedHeard();
    this.#heldElsewhere.clear();
  }

  /** A task may have become claimable (queued, requeued, recovered, or a scan is due). */
  workMayBeQueued(): void {
    this.#queuedWorkSignals += 1;
    this.#queueSeenEmpty = false;
    this.wake();
  }

  /**
   * A run of `owner` ended: its slot is free. Under a per-owner cap, a short claim does not
   * mean the queue is empty (owners at their cap were left out), and this run's end may
   * have put its owner back under its cap: a sign of claimable work, unless no task is
   * queued as far as this node has heard (see {@link #queuedHeard}) and the owner had
   * none (see {@link #seenQueued}). When the owner may have queued tasks, the place the run
   * freed under the cap is the next claim's, so those tasks run first. Otherwise a task of
   * the owner created meanwhile takes the place at once: kept for a claim that finds
   * nothing, it waited for that claim and the next one, at any load.
   */
  runEnded(owner: Owner): void {
    if (this.#o.ownerLimits.maxRunningPerOwner === undefined) {
      this.wake();
      return;
    }
    const key = ownerKey(owner);
    this.#heldElsewhere.delete(key);
    // Only while claims go out: nothing else would free the place again.
    const ownerMayHaveQueued = this.#seenQueued.has(key);
    if (this.#claimsGoOut && ownerMayHaveQueued) {
      this.#endedRuns.push({ key, claimsStarted: this.#claimsStarted });
    }
    if (ownerMayHaveQueued || this.#queuedHeard.size > 0 || this.#queuedHeardOverflowed) {
      this.workMayBeQueued();
    } else {
      this.wake();
    }
  }

  /** Forgets the tasks heard of as queued, and that there were more (see {@link #queuedHeard}). */
  #forgetQueuedHeard(): void {
    this.#queuedHeard.clear();
    this.#queuedHeardOverflowed = false;
  }

  /** A task of this node's tools was heard of as queued (see {@link #queuedHeard}). */
  #heardQueued(taskId: string): void {
    if (this.#o.ownerLimits.maxRunningPerOwner === undefined || this.#queuedHeardOverflowed) {
      return;
    }
    if (this.#queuedHeard.size < MAX_TASKS_HEARD_QUEUED) this.#queuedHeard.add(taskId);
    else this.#queuedHeardOverflowed = true;
  }

  /**
   * A task of `owner` was created queued (see {@link runEnded}); `leaseRefused`: it asked
   * for a lease, so the store found the owner at its cap, held by runs this node does not
   * count (see {@link #heldElsewhere}).
   */
  createdQueued(owner: Owner, leaseRefused: boolean): void {
    if (!this.#claiming) return;
    const key = ownerKey(owner);
    this.#seenQueuedAt(key, this.#claimsStarted);
    if (leaseRefused && this.#o.ownerLimits.maxRunningPerOwner !== undefined) {
      // Re-inserted, so the set's first entry is the one marked longest ago.
      this.#heldElsewhere.delete(key);
      this.#heldElsewhere.add(key);
      forgetOldest(this.#heldElsewhere);
    }
  }

  /**
   * A run somewhere may have freed a place (a task left `working`, or was deleted): the
   * owners held at their cap elsewhere may have room again. Their tasks created queued
   * meanwhile woke no claim here, so this wakes one.
   */
  #placeMayHaveFreed(): void {
    if (this.#heldElsewhere.size === 0) return;
    this.#heldElsewhere.clear();
    this.workMayBeQueued();
  }

  /** The owner with key `key` may have queued tasks that claims up to `claim` missed. */
  #seenQueuedAt(key: string, claim: number): void {
    if (this.#o.ownerLimits.maxRunningPerOwner === undefined) return;
    const known = this.#seenQueued.get(key);
    // Re-inserted, so the map's first entry is the one seen longest ago.
    this.#seenQueued.delete(key);
    this.#seenQueued.set(key, Math.max(claim, known ?? claim));
    forgetOldest(this.#seenQueued);
  }

  /**
   * What the claim numbered `started` saw: more may be queued of the owners it took tasks
   * of. When it came back short (`short`), an owner whose freed place it was sent for (see
   * {@link runEnded}) and that it took none of had nothing it could take. Other owners it
   * took none of tell nothing: they may have been at their cap in the store.
   */
  #claimSaw(started: number, claimed: readonly TaskRecord[], short: boolean): void {
    const took = new Set<string>();
    for (const record of claimed) took.add(ownerKey(record.owner));
    if (short) {
      for (const run of this.#endedRuns) {
        const seen = this.#seenQueued.get(run.key);
        if (
          run.claimsStarted < started &&
          seen !== undefined &&
          seen < started &&
          !took.has(run.key)
        ) {
          this.#seenQueued.delete(run.key);
        }
      }
    }
    for (const key of took) {
      this.#seenQueuedAt(key, started);
      this.#heldElsewhere.delete(key);
    }
  }

  /**
   * Claims for the free slots now. Claiming is pipelined: up to {@link MAX_CLAIMS_IN_FLIGHT}
   * claim statements may be in flight, each for slots nobody has asked for yet (running
   * handlers plus slots reserved by the claims in flight never exceed `concurrency`), so
   * slots that come free during a claim's round trip are claimed at once instead of waiting
   * for it to return. A further claim while one is in flight waits for a batch's worth of
   * free slots, so a stream of finishing runs does not turn into one statement per task.
   * Wake-ups of one turn of the event loop make one: the runs of a batch of endings end in
   * the same turn, and a claim for each took all the cap they freed with the first and came
   * back empty with the others, each under PostgreSQL's claim lock.
   */
  wake(): void {
    if (this.#wakeScheduled) return;
    this.#wakeScheduled = true;
    setImmediate(() => {
      this.#wakeScheduled = false;
      this.#wakeNow();
    });
  }

  #wakeNow(): void {
    if (!this.#claimsGoOut || this.#queueSeenEmpty) return;
    const room = this.#room();
    const inFlight = this.#claimsInFlight;
    if (room <= 0) {
      // The slots the claims in flight asked for come free again when they return short:
      // look again then (the claim may have missed what woke this). Otherwise a finishing
      // run wakes claiming again.
      if (inFlight > 0) this.#wokenDuringClaims = true;
      return;
    }
    if (
      inFlight >= MAX_CLAIMS_IN_FLIGHT ||
      (inFlight > 0 && room < Math.ceil(this.#o.slots.concurrency / CLAIM_BATCH_DIVISOR))
    ) {
      this.#wokenDuringClaims = true;
      return;
    }
    void this.#claim(room);
  }

  /** Tasks this node may take on now: free slots, less those already asked for. */
  #room(): number {
    return this.#o.slots.free - this.#reservedSlots;
  }

  /**
   * Slots a task created now may run in. Its creation does not wait for the claims in
   * flight: when the last claim found the queue empty (those in flight will likely come back
   * short too), it may take a slot one of them reserved, and a claim that then comes back
   * with more tasks than there is room for hands the extra ones back (see {@link #claim}).
   * Under a backlog (full claims) only unreserved slots count, and the task is queued.
   *
   * None when this node alone already runs the owner's limit of tasks, its creates in
   * flight that asked for a lease included, or when the store last found the owner at its
   * cap (see {@link #heldElsewhere}): the store would create the task queued anyway,
   * and asking it for a lease would only serialise the create with the claims (on
   * PostgreSQL, under the claim lock) to find that out.
   *
   * A run of the owner that ended here counts too (when the owner may have queued tasks, see
   * {@link runEnded}), until a claim sent after its end returns, when the task is one a
   * claim can take (`claimable`: its tool is registered here): that claim takes the place it
   * freed, for the oldest of the owner's queued tasks. Asking for a lease meanwhile, a
   * create would take that place ahead of them, and under one owner's flood most such
   * creates lost the race to the claim and came back queued anyway, each after the claim
   * lock.
   */
  roomForCreate(owner: Owner, claimable: boolean): number {
    const key = ownerKey(owner);
    if (this.#heldElsewhere.has(key) || this.#atCapHere(key, true, claimable)) return 0;
    const room = this.#room();
    if (room > 0 || !this.#lastClaimShort) return room;
    return this.#o.slots.free - this.#creatingSlots;
  }

  /**
   * Whether this node alone already runs the limit of tasks of the owner with key `key`
   * (`withCreates`: its creates in flight that asked for a lease included; `withEndedRuns`:
   * the places its ended runs freed, which claims sent after those ends take). The store
   * counts at least the runs and the creates.
   */
  #atCapHere(key: string, withCreates: boolean, withEndedRuns = false): boolean {
    const cap = this.#o.ownerLimits.maxRunningPerOwner;
    if (cap === undefined) return false;
    const creating = withCreates ? (this.#creatingByOwner.get(key) ?? 0) : 0;
    let ended = 0;
    if (withEndedRuns) for (const run of this.#endedRuns) if (run.key === key) ended += 1;
    return this.#o.slots.countedFor(key) + creating + ended >= cap;
  }

  /**
   * Holds a slot for a task of `owner` being created to run here, so no claim takes it
   * meanwhile and the owner's next creates count it; the returned function gives it up (the
   * task runs, or was created queued).
   */
  reserveForCreate(owner: Owner): () => void {
    const key = ownerKey(owner);
    this.#reservedSlots += 1;
    this.#creatingSlots += 1;
    this.#creatingByOwner.set(key, (this.#creatingByOwner.get(key) ?? 0) + 1);
    return () => {
      this.#reservedSlots -= 1;
      this.#creatingSlots -= 1;
      const left = (this.#creatingByOwner.get(key) ?? 1) - 1;
      if (left > 0) this.#creatingByOwner.set(key, left);
      else this.#creatingByOwner.delete(key);
    };
  }

  /**
   * A task of `owner` is being created queued. When this node's runs alone hold the owner's
   * cap, or the store last found the owner at its cap (see {@link #heldElsewhere}), its own
   * `queued` change will wake no claim: no claim can take the task before one of the
   * owner's runs ends, and that end wakes claiming (see {@link runEnded} and
   * {@link #placeMayHaveFreed}). Under one owner's flood of creates, such claims were most
   * of them, each under PostgreSQL's claim lock. The same holds when the owner's runs here
   * and the places its ended runs freed fill the cap (for a task a claim can take,
   * `claimable`): a claim sent after those ends takes the places, for the owner's oldest
   * queued tasks. A claim woken by the change instead mostly came back empty, the places
   * taken. But that claim may have started before this task was created, and missed it:
   * once no claim is in flight, the owner is looked at again (see
   * {@link #recheckCreatedBehindEndedRuns}).
   *
   * The returned function, if any, is called once the create has returned or failed.
   * Changes are not told apart: one from elsewhere that comes first is taken for this one,
   * which then counts instead; a create that failed wakes claiming, for any it stood in for.
   */
  createsQueued(owner: Owner, claimable: boolean): ((failed: boolean) => void) | undefined {
    if (!this.#claiming) return undefined;
    const key = ownerKey(owner);
    const atCap = this.#heldElsewhere.has(key) || this.#atCapHere(key, false);
    if (!atCap && !(claimable && this.#atCapHere(key, false, true))) return undefined;
    this.#ownQueuedExpected += 1;
    return (failed) => {
      this.#ownQueuedExpected -= 1;
      if (this.#ownQueuedSeen > 0) this.#ownQueuedSeen -= 1;
      if (failed) this.workMayBeQueued();
      else if (!atCap) {
        this.#createdBehindEndedRuns.add(key);
        if (this.#claimsInFlight === 0) this.#recheckCreatedBehindEndedRuns();
      }
    };
  }

  /**
   * Wakes claiming when an owner with tasks created behind its ended runs' places (see
   * {@link createsQueued}) is under its cap here, the places its ended runs freed and its
   * creates in flight counted: the claims for those places came back without taking them
   * all, so they may have missed its tasks. Called when no claim is in flight.
   */
  #recheckCreatedBehindEndedRuns(): void {
    let underCap = false;
    for (const key of this.#createdBehindEndedRuns) {
      if (!this.#atCapHere(key, true, true)) underCap = true;
    }
    this.#createdBehindEndedRuns.clear();
    if (underCap) this.workMayBeQueued();
  }

  async #claim(room: number): Promise<void> {
    const o = this.#o;
    this.#claimsInFlight += 1;
    this.#reservedSlots += room;
    const started = ++this.#claimsStarted;
    const signalsBefore = this.#queuedWorkSignals;
    let claimed: TaskRecord[] = [];
    try {
      claimed = await o.service.claim(o.holder, {
        limit: room,
        leaseMs: o.leaseMs,
        toolNames: [...o.tools.keys()],
        ...o.ownerLimits,
      });
      if (o.ownerLimits.maxRunningPerOwner !== undefined) {
        this.#claimSaw(started, claimed, claimed.length < room);
      }
    } catch (error) {
      if (!isTaskError(error, "store_unavailable")) o.onError(error, "*");
    } finally {
      this.#claimsInFlight -= 1;
      this.#reservedSlots -= room;
      // The places freed by runs that ended before this claim started were its to take.
      if (this.#endedRuns.length > 0) {
        this.#endedRuns = this.#endedRuns.filter((run) => run.claimsStarted >= started);
      }
    }
    this.claimed += claimed.length;
    // Creates may have taken slots this claim reserved (see roomForCreate): the tasks that
    // no longer fit go back to the queue at once, their attempt not counted. Only slots
    // taken count (running handlers, creates in flight), not another claim's reservation:
    // that is a guess at what it brings back, sized to every free slot whatever the owner
    // limits allow, and it checks again when it returns. Counted, it sent back tasks of a
    // node with every slot free.
    let fits = Math.max(0, this.#o.slots.free - this.#creatingSlots);
    for (const record of claimed) {
      const tool = o.tools.get(record.request.toolName);
      if (tool === undefined) continue; // filtered by name: cannot happen
      if (fits-- > 0) o.launch(record, tool.run);
      else this.#handBackUnstarted(record);
    }
    // A full batch: more may be waiting. A short one (or a failed one: the store is down)
    // found the queue empty, unless something was queued meanwhile.
    this.#lastClaimShort = claimed.length < room;
    if (claimed.length >= room) this.#queueSeenEmpty = false;
    else if (this.#queuedWorkSignals === signalsBefore) this.#queueSeenEmpty = true;
    // Or a wake-up came while this claim was out.
    if (claimed.length >= room || this.#wokenDuringClaims) {
      this.#wokenDuringClaims = false;
      this.wake();
    }
    if (this.#claimsInFlight === 0 && this.#createdBehindEndedRuns.size > 0) {
      this.#recheckCreatedBehindEndedRuns();
    }
  }

  /** Hands a claimed task that was never started back to the queue (see {@link #claim}). */
  #handBackUnstarted(record: TaskRecord): void {
    const writer = this.#o.service.forRun(record.owner, record.taskId, {
      holder: this.#o.holder,
      fencingToken: record.execution.fencingToken,
    });
    writer.releaseLease().catch((error) => this.#o.onError(error, record.taskId));
  }

  /**
   * Wakes claiming `delayMs` from now, when a task this node requeued with a retry backoff
   * becomes claimable; otherwise only the next periodic scan would notice it. Relative, so
   * the store's clock (the database's, or an injected one) need not match this process's.
   * At most `concurrency` wake-ups are pending; beyond that the scan catches the rest.
   */
  wakeAfter(delayMs: number): void {
    if (!this.#claiming || this.#retryWakeTimes.length >= this.#o.slots.concurrency) return;
    const at = performance.now() + Math.min(Math.max(0, delayMs), MAX_TIMER_MS);
    const times = this.#retryWakeTimes;
    let i = times.length;
    while (i > 0 && (times[i - 1] as number) > at) i--;
    times.splice(i, 0, at);
    if (i === 0) this.#armRetryWakeTimer();
  }

  #armRetryWakeTimer(): void {
    if (this.#retryWakeTimer !== undefined) clearTimeout(this.#retryWakeTimer);
    this.#retryWakeTimer = undefined;
    const next = this.#retryWakeTimes[0];
    if (next === undefined) return;
    this.#retryWakeTimer = setTimeout(
      () => {
        const now = performance.now();
        const times = this.#retryWakeTimes;
        while ((times[0] ?? Number.POSITIVE_INFINITY) <= now) times.shift();
        this.#armRetryWakeTimer();
        this.workMayBeQueued();
      },
      Math.max(0, next - performance.now()),
    );
    this.#retryWakeTimer.unref();
  }
}
