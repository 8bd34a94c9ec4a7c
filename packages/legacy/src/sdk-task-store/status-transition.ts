import { isTaskError, type Owner, type TaskRecord, type TaskService } from "@mcp-tasks/core";
import type { Task } from "@modelcontextprotocol/sdk/types.js";
import { INTERNAL_ERROR } from "./errors.js";

/**
 * Moves `current` to the status the SDK asked for, in the core's terms: `input_required` as
 * one pending input request (the SDK queues the real side request itself), `working` back
 * from it, `cancelled` as an immediate cancel, `completed`/`failed` without a result as an
 * empty result / a `-32603` error. Like the SDK's store, no message keeps the current one.
 */
export async function transitionTo(
  service: TaskService,
  caller: Owner,
  current: TaskRecord,
  status: Task["status"],
  message: string | undefined,
): Promise<void> {
  const taskId = current.taskId;
  const kept = message ?? current.statusMessage;
  switch (status) {
    case "input_required":
      if (current.status !== "input_required") {
        try {
          await service.requireInput(
            caller,
            taskId,
            { [`sdk-${current.version}`]: { method: "sdk/queued-request" } },
            message,
          );
          return;
        } catch (error) {
          // The SDK updates once per queued request, concurrently: a call that read the
          // same version lost the key to one that already made the task input_required.
          if (!isTaskError(error, "invalid_task")) throw error;
          if ((await service.get(caller, taskId)).status !== "input_required") throw error;
        }
      }
      if (message !== undefined) await service.setStatusMessage(caller, taskId, message);
      return;
    case "working":
      if (current.status === "input_required") {
        const answers = Object.fromEntries(
          Object.keys(current.inputRequests).map((key) => [key, {}]),
        );
        await service.submitInput(caller, taskId, answers);
        // Nobody takes these placeholder answers: drain them straight away.
        await service.takeInputResponses(caller, taskId);
      }
      if (message !== undefined) await service.setStatusMessage(caller, taskId, message);
      return;
    case "cancelled":
      try {
        await service.cancelNow(caller, taskId, kept);
      } catch (error) {
        // A worker may acknowledge the cancel between cancelNow's two writes.
        if (!isTaskError(error, "invalid_transition")) throw error;
        if ((await service.get(caller, taskId)).status !== "cancelled") throw error;
      }
      return;
    case "completed":
      await service.complete(caller, taskId, { content: [] }, kept);
      return;
    case "failed":
      await service.fail(
        caller,
        taskId,
        { code: INTERNAL_ERROR, message: message ?? "Task failed" },
        kept,
      );
      return;
  }
}
