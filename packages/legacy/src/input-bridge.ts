import {
  type InputRequest,
  isTaskError,
  isTerminal,
  type Owner,
  type TaskRecord,
  type TaskService,
} from "@mcp-tasks/core";
import { JSONRPC, LegacyRpcError } from "./errors.js";
import { withRelatedTask } from "./projection.js";
import { SIDE_REQUEST_CAPABILITY, SIDE_REQUEST_METHODS, type SideRequestMethod } from "./wire.js";

/** A server-to-client request as a channel sends it. */
export interface SideRequest {
  readonly method: SideRequestMethod;
  readonly params: Record<string, unknown>;
}

/**
 * One way to reach a client: the SSE stream of an in-flight `tasks/result`, or the
 * session's standalone (GET) stream. `send` resolves with the client's result, rejects
 * with a {@link LegacyRpcError} when the client answered with a JSON-RPC error, and with
 * anything else when the request could not be delivered or answered (stream gone, timeout).
 */
export interface DeliveryChannel {
  readonly kind: "tasks/result" | "session";
  /** Client capabilities declared in `initialize`, gating which side requests are used. */
  readonly clientCapabilities: Readonly<Record<string, unknown>> | undefined;
  /** Aborted when the channel goes away; in-flight requests are then released. */
  readonly signal: AbortSignal;
  send(request: SideRequest, signal: AbortSignal): Promise<Record<string, unknown>>;
}

type Listener = (taskId: string) => void;

/**
 * Who is serving which task's input on this node: the open `tasks/result` channels per
 * task, and which input key is in flight on which channel, so that a key is sent at most
 * once per channel and is not sent again while a live channel still waits for its answer.
 */
export class InputRegistry {
  readonly #resultChannels = new Map<string, Set<DeliveryChannel>>();
  readonly #inFlight = new Map<string, Map<string, DeliveryChannel>>();
  readonly #listeners = new Set<Listener>();

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
  onChange(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(taskId: string): void {
    for (const listener of [...this.#listeners]) listener(taskId);
  }
}

function isSideRequestMethod(method: string): method is SideRequestMethod {
  return (SIDE_REQUEST_METHODS as readonly string[]).includes(method);
}

/**
 * Delivers one task's pending input requests over one channel, each key at most once, as
 * real `elicitation/create` / `sampling/createMessage` / `roots/list` requests carrying
 * `_meta["io.modelcontextprotocol/related-task"]`, and maps each answer back with
 * `submitInput`.
 *
 * - A result answers the key.
 * - A JSON-RPC error answer is submitted as `{ error: { code, message, data? } }` under
 *   the key: the client did answer (e.g. it refused), and the handler decides what that
 *   means for the task.
 * - A delivery failure (stream closed, timeout) releases the key for another channel.
 * - A request the client cannot take (method not a 2025-11-25 side request, or a
 *   capability it did not declare in `initialize`) fails the task with `-32603`, since no
 *   channel of that client could ever answer it.
 */
export class InputPump {
  readonly #service: TaskService;
  readonly #registry: InputRegistry;
  readonly #owner: Owner;
  readonly #taskId: string;
  readonly #channel: DeliveryChannel;
  readonly #sent = new Set<string>();

  constructor(
    service: TaskService,
    registry: InputRegistry,
    owner: Owner,
    taskId: string,
    channel: DeliveryChannel,
  ) {
    this.#service = service;
    this.#registry = registry;
    this.#owner = owner;
    this.#taskId = taskId;
    this.#channel = channel;
  }

  /** Sends what `record` still waits for and this channel has not sent yet. */
  offer(record: TaskRecord): void {
    if (this.#channel.signal.aborted || record.status !== "input_required") return;
    for (const [key, request] of Object.entries(record.inputRequests)) {
      if (this.#sent.has(key)) continue;
      const blocked = this.#unsupported(request);
      if (blocked !== undefined) {
        this.#sent.add(key);
        void this.#failTask(blocked);
        continue;
      }
      if (!this.#registry.claim(this.#taskId, key, this.#channel)) continue;
      this.#sent.add(key);
      void this.#deliver(key, request as InputRequest & { method: SideRequestMethod });
    }
  }

  #unsupported(request: InputRequest): string | undefined {
    if (!isSideRequestMethod(request.method)) {
      return `Input request ${request.method} cannot be sent to a 2025-11-25 client`;
    }
    const capability = SIDE_REQUEST_CAPABILITY[request.method];
    if (this.#channel.clientCapabilities?.[capability] === undefined) {
      return `The task needs ${request.method}, but the client did not declare the '${capability}' capability`;
    }
    return undefined;
  }

  async #deliver(
    key: string,
    request: InputRequest & { method: SideRequestMethod },
  ): Promise<void> {
    const signal = this.#channel.signal;
    let response: Record<string, unknown>;
    try {
      response = await this.#channel.send(
        {
          method: request.method,
          params: {
            ...request.params,
            _meta: withRelatedTask(request.params?._meta, this.#taskId),
          },
        },
        signal,
      );
    } catch (error) {
      if (error instanceof LegacyRpcError && !signal.aborted) {
        response = { error: error.toJSON() };
      } else {
        this.#registry.release(this.#taskId, key, this.#channel);
        return;
      }
    }
    try {
      await this.#service.submitInput(this.#owner, this.#taskId, { [key]: response });
    } catch (error) {
      // The task ended or vanished meanwhile: the answer has nobody to go to.
      if (!isTaskError(error)) throw error;
    }
  }

  async #failTask(message: string): Promise<void> {
    try {
      await this.#service.fail(this.#owner, this.#taskId, {
        code: JSONRPC.INTERNAL_ERROR,
        message,
      });
    } catch (error) {
      if (!isTaskError(error)) throw error;
    }
  }
}

/**
 * Re-reads a task on every change-feed event (coalescing bursts) and hands each fresh
 * record to `onRecord`; stops at a terminal status, when the task disappears, or on
 * `stop()`.
 */
export function followTask(
  service: TaskService,
  owner: Owner,
  taskId: string,
  onRecord: (record: TaskRecord) => void,
  onGone?: () => void,
): { refresh(): void; stop(): void } {
  let reading = false;
  let again = false;
  let stopped = false;
  const refresh = (): void => {
    if (stopped) return;
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    void (async () => {
      try {
        do {
          again = false;
          let record: TaskRecord;
          try {
            record = await service.get(owner, taskId);
          } catch (error) {
            if (isTaskError(error, "not_found_or_unauthorized")) {
              stop();
              onGone?.();
              return;
            }
            // Transient store trouble: the next change (or refresh) retries.
            return;
          }
          if (stopped) return;
          onRecord(record);
          if (isTerminal(record.status)) {
            stop();
            return;
          }
        } while (again && !stopped);
      } finally {
        reading = false;
      }
    })();
  };
  const unsubscribe = service.watch(() => refresh(), taskId);
  const stop = (): void => {
    stopped = true;
    unsubscribe();
  };
  return { refresh, stop };
}
