import type { InputRequest, InputResponse, Owner, TaskContext } from "@mcp-tasks/core";

/**
 * Thrown by a synchronous run's `requireInput` when the answers are not in the request: the
 * facade turns it into an ephemeral `input_required` result, and the client retries the
 * call with `inputResponses` (multi-round-trip requests). The handler re-runs from the top
 * on the retry, and gets the same keys, so it must be deterministic up to that point.
 */
export class InputRequiredSignal extends Error {
  override readonly name = "InputRequiredSignal";
  readonly inputRequests: Readonly<Record<string, InputRequest>>;

  constructor(inputRequests: Readonly<Record<string, InputRequest>>) {
    super("Input required");
    this.inputRequests = inputRequests;
  }
}

/**
 * The {@link TaskContext} of a tool answered synchronously (no task): the signal is the
 * request's, status messages and progress go nowhere, and `requireInput` is served by multi-round-trip
 * requests from `inputResponses`.
 */
export function syncTaskContext(
  caller: Owner,
  signal: AbortSignal,
  inputResponses: Readonly<Record<string, unknown>>,
): TaskContext {
  const used = new Set<string>();
  return {
    taskId: "",
    owner: caller,
    signal,
    attempt: 1,
    worker: "",
    // This era sends no progress for tool calls answered in one response.
    reportProgress() {},
    async requireInput(requests) {
      signal.throwIfAborted();
      const keyed: Record<string, InputRequest> = {};
      const answers: Record<string, InputResponse> = {};
      const missing: Record<string, InputRequest> = {};
      for (const [name, request] of Object.entries(requests)) {
        let key = name;
        for (let n = 2; used.has(key); n++) key = `${name}-${n}`;
        used.add(key);
        keyed[key] = request;
        const answer = inputResponses[key];
        if (typeof answer === "object" && answer !== null && !Array.isArray(answer)) {
          answers[name] = answer as InputResponse;
        } else {
          missing[key] = request;
        }
      }
      if (Object.keys(missing).length > 0) throw new InputRequiredSignal(missing);
      return answers;
    },
    async setStatusMessage() {},
  };
}
