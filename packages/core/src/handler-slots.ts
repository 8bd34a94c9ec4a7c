/**
 * The runner's handler slots: which runs are on this node, which of them hold a slot of
 * `concurrency` (their handler runs), and which wait for input without one.
 */

import { ownerKey } from "./owner.js";
import type { Run } from "./run.js";
import type { RunSlots } from "./run-collaborators.js";

/** The runs of one runner, and the slots they hold. */
export class HandlerSlots implements RunSlots {
  /** Most handlers running at once. */
  readonly concurrency: number;
  /** Of one owner's runs waiting for input, most that hold no slot. */
  readonly #maxParkedPerOwner: number;
  /** Told when a slot came free. */
  readonly #freed: () => void;
  /**
   * Every run on this node that has not finished. Runs, not task ids: this node may hold a
   * later attempt of a task while an earlier one still stores its (fenced-out) outcome, e.g.
   * after a database restart, and one run must never stop or free the other.
   */
  readonly runs = new Set<Run>();
  /**
   * The runs whose handler is still running: they hold a slot of `concurrency`. A run whose
   * handler has returned only stores its outcome (one store write): it no longer holds a
   * slot, so the next task starts during that round trip.
   */
  readonly #slotHolders = new Set<Run>();
  /**
   * The runs whose handler waits for input and holds no slot, by owner key: at most
   * `maxParkedPerOwner` per owner (a waiting run beyond it keeps its slot).
   */
  readonly #parkedByOwner = new Map<string, Set<Run>>();
  /** All parked runs, over every owner. */
  #parkedCount = 0;
  /**
   * How many of {@link runs} each owner has (parked or not), kept as runs come and go so
   * that a create's cap check costs O(1); owners with none are left out.
   */
  readonly #runsByOwner = new Map<string, number>();
  /** The most handlers that ran at once. */
  peakRunning = 0;

  constructor(concurrency: number, maxParkedPerOwner: number, freed: () => void) {
    this.concurrency = concurrency;
    this.#maxParkedPerOwner = maxParkedPerOwner;
    this.#freed = freed;
  }

  /** Handlers running now. */
  get running(): number {
    return this.#slotHolders.size;
  }

  /**
   * Tasks this node may take on now, before any are reserved: free handler slots, but no
   * more than keep the runs storing their outcome (which hold no slot) within
   * `concurrency`, so a slow store cannot make tasks pile up here.
   */
  get free(): number {
    const freeSlots = this.concurrency - this.#slotHolders.size;
    // Running plus settling runs stay within twice the concurrency (parked ones aside).
    const underSettlingCap = 2 * this.concurrency - (this.runs.size - this.#parkedCount);
    return Math.min(freeSlots, underSettlingCap);
  }

  /**
   * The runs of one owner here that its running limit counts, as the store counts them:
   * every run holding the task's lease (its handler running, or its outcome being stored),
   * except the parked ones. At most the store's count: the store also sees other nodes.
   */
  countedFor(key: string): number {
    return (this.#runsByOwner.get(key) ?? 0) - (this.#parkedByOwner.get(key)?.size ?? 0);
  }

  /** A run starts (each run once): it holds a slot. */
  add(run: Run): void {
    this.runs.add(run);
    const key = ownerKey(run.owner);
    this.#runsByOwner.set(key, (this.#runsByOwner.get(key) ?? 0) + 1);
    this.#slotHolders.add(run);
    this.peakRunning = Math.max(this.peakRunning, this.#slotHolders.size);
  }

  /** A run is over (its outcome stored or given up). */
  remove(run: Run): void {
    if (this.runs.delete(run)) {
      const key = ownerKey(run.owner);
      const left = (this.#runsByOwner.get(key) ?? 1) - 1;
      if (left > 0) this.#runsByOwner.set(key, left);
      else this.#runsByOwner.delete(key);
    }
    this.#slotHolders.delete(run);
    this.#unpark(run);
  }

  /** A run's handler returned (its outcome is being stored): its slot is free. */
  handlerReturned(run: Run): void {
    if (this.#slotHolders.delete(run)) this.#freed();
  }

  /**
   * A handler parked on a question gives its slot up while its owner has fewer than
   * `maxParkedPerOwner` parked runs here (the store counts the same way cluster-wide); it
   * takes a slot again when it goes on, even past `concurrency` for a moment (claims wait
   * until the runs are back under it).
   */
  waitingForInput(run: Run, waiting: boolean): void {
    if (!waiting) {
      if (this.#unpark(run) && this.runs.has(run)) this.#slotHolders.add(run);
      return;
    }
    if (!this.#slotHolders.has(run)) return;
    const key = ownerKey(run.owner);
    let parked = this.#parkedByOwner.get(key);
    if ((parked?.size ?? 0) >= this.#maxParkedPerOwner) return;
    if (parked === undefined) {
      parked = new Set();
      this.#parkedByOwner.set(key, parked);
    }
    parked.add(run);
    this.#parkedCount += 1;
    this.#slotHolders.delete(run);
    this.#freed();
  }

  /** Takes a run out of the parked ones; true when it was parked. */
  #unpark(run: Run): boolean {
    const key = ownerKey(run.owner);
    const parked = this.#parkedByOwner.get(key);
    if (parked === undefined || !parked.delete(run)) return false;
    this.#parkedCount -= 1;
    if (parked.size === 0) this.#parkedByOwner.delete(key);
    return true;
  }
}
