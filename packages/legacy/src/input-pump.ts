import {
  type InputRequest,
  isTaskError,
  type Owner,
  RpcError,
  type TaskRecord,
  type TaskService,
} from "@mcp-tasks/core";
import { ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { DeliveryChannel } from "./delivery-channel.js";
import type { InputRegistry } from "./input-registry.js";
import { withRelatedTask } from "./projection.js";
import { isSideRequestMethod, SIDE_REQUEST_CAPABILITY, type SideRequestMethod } from "./wire.js";

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
      if (error instanceof RpcError && !signal.aborted) {
        response = { error: error.toJSON() };
      } else {
        this.#registry.release(this.#taskId, key, this.#channel);
        return;
      }
    }
    try {
      await this.#service.submitInput(this.#owner, this.#taskId, { [key]: response });
    } catch (error) {
      if (!isTaskError(error)) throw error;
      // The store refused the answer: past the owner's byte quota, or a value it cannot hold
      // (U+0000 in PostgreSQL's jsonb). The client cannot send it again on this side
      // request, so the task fails saying why instead of waiting forever.
      if (error.code === "store_full") await this.#failTask(error.message);
      else if (error.code === "invalid_task") {
        await this.#failTask(
          `The answer to input request ${key} could not be stored: ${error.message}`,
        );
      }
      // Otherwise the task ended or vanished meanwhile: the answer has nobody to go to.
    }
  }

  async #failTask(message: string): Promise<void> {
    try {
      await this.#service.fail(this.#owner, this.#taskId, {
        code: ProtocolErrorCode.InternalError,
        message,
      });
    } catch (error) {
      if (!isTaskError(error)) throw error;
    }
  }
}
