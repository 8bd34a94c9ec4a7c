/**
 * A binary min-heap keyed by a number. Used for expiry, lease deadlines and the queue, so
 * that sweeping and claiming cost O(touched · log n) and never a scan of every task.
 */
export class MinHeap<T> {
  readonly #items: T[] = [];
  readonly #keys: number[] = [];

  get size(): number {
    return this.#items.length;
  }

  push(key: number, item: T): void {
    const items = this.#items;
    const keys = this.#keys;
    let i = items.length;
    items.push(item);
    keys.push(key);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (keys[parent]! <= key) break;
      items[i] = items[parent]!;
      keys[i] = keys[parent]!;
      i = parent;
    }
    items[i] = item;
    keys[i] = key;
  }

  /** The smallest key, or `undefined` when empty. */
  peekKey(): number | undefined {
    return this.#keys[0];
  }

  /** The item with the smallest key, or `undefined` when empty. */
  peek(): T | undefined {
    return this.#items[0];
  }

  pop(): T | undefined {
    const items = this.#items;
    const keys = this.#keys;
    if (items.length === 0) return undefined;
    const top = items[0];
    const lastItem = items.pop()!;
    const lastKey = keys.pop()!;
    const n = items.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= n) break;
        const right = left + 1;
        const child = right < n && keys[right]! < keys[left]! ? right : left;
        if (keys[child]! >= lastKey) break;
        items[i] = items[child]!;
        keys[i] = keys[child]!;
        i = child;
      }
      items[i] = lastItem;
      keys[i] = lastKey;
    }
    return top;
  }

  /** Keeps only the items `keep` accepts, in O(n) (a bottom-up rebuild). */
  retain(keep: (item: T) => boolean): void {
    const items = this.#items;
    const keys = this.#keys;
    let n = 0;
    for (let i = 0; i < items.length; i++) {
      if (!keep(items[i]!)) continue;
      items[n] = items[i]!;
      keys[n] = keys[i]!;
      n++;
    }
    items.length = n;
    keys.length = n;
    for (let i = (n >> 1) - 1; i >= 0; i--) this.#siftDown(i);
  }

  #siftDown(start: number): void {
    const items = this.#items;
    const keys = this.#keys;
    const n = items.length;
    const item = items[start]!;
    const key = keys[start]!;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && keys[right]! < keys[left]! ? right : left;
      if (keys[child]! >= key) break;
      items[i] = items[child]!;
      keys[i] = keys[child]!;
      i = child;
    }
    items[i] = item;
    keys[i] = key;
  }
}
