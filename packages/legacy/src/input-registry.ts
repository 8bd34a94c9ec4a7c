import type { DeliveryChannel } from "./delivery-channel.js";

/**
 * Who is serving which task's input on this node: the open `tasks/result` channels per
 * task, and which input key is in flight on which channel, so that a key is sent at most
 * once per channel and is not sent again while a live channel still waits for its answer.
 */
export class InputRegistry {
  readonly #resultChannels = new Map<string, Set<DeliveryChannel>>();
  readonly #inFlight = new Map<string, Map<string, DeliveryChannel>>();
  readonly #listeners = new Set<(taskId: string) => void>();

  /** Open `tasks/result` channels for a task. */
  resultChannels(taskId: string): number {
    return this.#resultChannels.get(taskId)?.size ?? 0;
  }

  openResultChannel(taskId: string, channel: DeliveryChannel): () => void {
    let set = this.#resultChannels.get(taskId);
    if (!set) {
      set = new Set();
      this.#resultChannels.set(taskId, set);
    }
    set.add(channel);
    return () => {
      const current = this.#resultChannels.get(taskId);
      current?.delete(channel);
      if (current?.size === 0) this.#resultChannels.delete(taskId);
      this.#emit(taskId);
    };
  }

  /** Takes `key` for `channel`; false while another live channel has it in flight. */
  claim(taskId: string, key: string, channel: DeliveryChannel): boolean {
    let keys = this.#inFlight.get(taskId);
    const holder = keys?.get(key);
    if (holder !== undefined && holder !== channel && !holder.signal.aborted) return false;
    if (!keys) {
      keys = new Map();
      this.#inFlight.set(taskId, keys);
    }
    keys.set(key, channel);
    return true;
  }

  /** Gives `key` back (delivery failed or the channel closed), and tells the others. */
  release(taskId: string, key: string, channel: DeliveryChannel): void {
    const keys = this.#inFlight.get(taskId);
    if (keys?.get(key) !== channel) return;
    keys.delete(key);
    if (keys.size === 0) this.#inFlight.delete(taskId);
    this.#emit(taskId);
  }

  /** Forgets a finished task's keys. */
  forget(taskId: string): void {
    this.#inFlight.delete(taskId);
  }

  /** Told whenever a task's channels or claims change, so idle channels can step in. */
  onChange(listener: (taskId: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(taskId: string): void {
    for (const listener of [...this.#listeners]) listener(taskId);
  }
}
