import { MinHeap } from "./heap.js";

/**
 * A place of one task in a {@link LazyHeap}. Entries are never removed from the middle of
 * a heap: an entry that no longer stands for the task is marked dead and dropped when it
 * reaches the top (or when dead entries outnumber live ones, in one rebuild).
 */
export class HeapEntry<T> {
  readonly item: T;
  key = 0;
  dead = false;
  home: LazyHeap<T> | null = null;

  constructor(item: T) {
    this.item = item;
  }

  /** Marks the entry dead in whichever heap holds it. Harmless when already dead. */
  kill(): void {
    if (this.dead) return;
    this.dead = true;
    this.home?.noteDeath();
  }
}

/** A min-heap of {@link HeapEntry}s with lazy deletion and bounded garbage. */
export class LazyHeap<T> {
  readonly #heap = new MinHeap<HeapEntry<T>>();
  #dead = 0;

  /** Entries held, dead ones included. */
  get size(): number {
    return this.#heap.size;
  }

  push(key: number, entry: HeapEntry<T>): void {
    entry.key = key;
    entry.home = this;
    this.#heap.push(key, entry);
  }

  /** The smallest key of a live entry (dropping dead entries on top), or `undefined`. */
  peekKey(): number | undefined {
    this.#dropDeadTop();
    return this.#heap.peekKey();
  }

  /** Removes and returns the live entry with the smallest key. */
  pop(): HeapEntry<T> | undefined {
    this.#dropDeadTop();
    const entry = this.#heap.pop();
    if (entry !== undefined) entry.home = null;
    return entry;
  }

  /** @internal Called by {@link HeapEntry.kill}. */
  noteDeath(): void {
    this.#dead++;
    // Rebuild once garbage outweighs the live entries: amortised O(1) per death, and a
    // heap nobody pops (a tool no worker serves) never grows beyond twice its live size.
    if (this.#dead > 64 && this.#dead * 2 > this.#heap.size) {
      this.#heap.retain((entry) => !entry.dead);
      this.#dead = 0;
    }
  }

  #dropDeadTop(): void {
    while (this.#dead > 0) {
      const top = this.#heap.peek();
      if (top === undefined || !top.dead) return;
      this.#heap.pop();
      this.#dead--;
    }
  }
}

/** What a {@link ToolQueue} needs of a stored task. */
export interface Queueable<T> {
  /** Creation sequence: the queue's order. */
  readonly seq: number;
  /** The task's place in its queue: {@link FRESH}, a heap entry, or `null` when not queued. */
  queueMark: QueueMark<T> | null;
}

/** Marks a task waiting in its queue's creation-order list since it was created. */
export const FRESH: unique symbol = Symbol("fresh");

/** A queued task's place: the creation-order list, or an entry in a heap. */
export type QueueMark<T> = typeof FRESH | HeapEntry<T>;

/**
 * The claimable tasks of one tool in creation order. Tasks created queued (most of them)
 * join a plain list, which creation keeps in order at the cost of one array slot each;
 * tasks that come back (requeued, handed back, recovered) join a min-heap keyed by their
 * creation sequence. `pop` merges the two. Tasks that leave without being claimed
 * (finished, deleted, delayed) are skipped lazily, and both parts are rebuilt once such
 * garbage outweighs the live tasks.
 */
export class ToolQueue<T extends Queueable<T>> {
  #list: (T | undefined)[] = [];
  #head = 0;
  #listDead = 0;
  readonly #heap = new LazyHeap<T>();

  /** True when nothing, live or dead, is held any more. */
  get empty(): boolean {
    return this.#head === this.#list.length && this.#heap.size === 0;
  }

  /** A task created queued: it is the youngest, so it goes to the end of the list. */
  append(item: T): void {
    item.queueMark = FRESH;
    this.#list.push(item);
  }

  /** A task back in the queue: it takes its place by creation sequence. */
  reenter(item: T): HeapEntry<T> {
    const entry = new HeapEntry(item);
    item.queueMark = entry;
    this.#heap.push(item.seq, entry);
    return entry;
  }

  /** Moves an entry popped from another heap (a backoff that ended) into this queue. */
  adopt(entry: HeapEntry<T>): void {
    entry.item.queueMark = entry;
    this.#heap.push(entry.item.seq, entry);
  }

  /** A task of the list left the queue without being claimed (its mark is no longer FRESH). */
  noteListDeath(): void {
    this.#listDead++;
    const live = this.#list.length - this.#head - this.#listDead;
    if (this.#listDead > 64 && this.#listDead > live) {
      this.#list = this.#list.slice(this.#head).filter((x) => x?.queueMark === FRESH);
      this.#head = 0;
      this.#listDead = 0;
    }
  }

  /** The creation sequence of the oldest queued task, or `undefined`. */
  peekSeq(): number | undefined {
    this.#dropDeadHead();
    const fromList = this.#list[this.#head]?.seq;
    const fromHeap = this.#heap.peekKey();
    if (fromList === undefined) return fromHeap;
    return fromHeap === undefined || fromList < fromHeap ? fromList : fromHeap;
  }

  /** Removes and returns the oldest queued task (its mark cleared), or `undefined`. */
  pop(): T | undefined {
    this.#dropDeadHead();
    const first = this.#list[this.#head];
    const heapKey = this.#heap.peekKey();
    let item: T | undefined;
    if (first !== undefined && (heapKey === undefined || first.seq < heapKey)) {
      this.#list[this.#head++] = undefined;
      item = first;
      this.#trimHead();
    } else {
      item = this.#heap.pop()?.item;
    }
    if (item !== undefined) item.queueMark = null;
    return item;
  }

  #dropDeadHead(): void {
    while (this.#listDead > 0 && this.#head < this.#list.length) {
      const first = this.#list[this.#head];
      if (first?.queueMark === FRESH) return;
      this.#list[this.#head++] = undefined;
      this.#listDead--;
    }
    this.#trimHead();
  }

  #trimHead(): void {
    if (this.#head === this.#list.length) {
      this.#list = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#list.length) {
      this.#list = this.#list.slice(this.#head);
      this.#head = 0;
    }
  }
}
