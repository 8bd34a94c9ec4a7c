import type { ClaimOptions, TaskRecord } from "@mcp-tasks/core";
import { claimTask, isClaimable, underRunningLimit } from "@mcp-tasks/core/store";
import type { ToolQueue } from "./queue.js";
import { runningOf } from "./queue-use.js";
import { dropQueue, enqueue, promoteDue } from "./ready-queues.js";
import { replaceRecord } from "./record-writes.js";
import type { Slot } from "./slot.js";
import type { StoreState } from "./store-state.js";

/** An owner a claim may serve: its queues of the wanted tools, its counted running tasks. */
interface ClaimCandidate {
  key: string;
  queues: ToolQueue<Slot>[];
  running: number;
}

/**
 * Claims up to `options.limit` queued tasks for `holder` (arguments already validated), one
 * at a time to the owner with the fewest running tasks, ties to the oldest queued task, so
 * one owner's backlog delays another owner's task by at most one claim. Owners at their
 * running limit are passed over. Returns the claimed tasks in creation order.
 * O(claimed · (owners + log n)).
 */
export function claimFairly(
  state: StoreState,
  holder: string,
  options: ClaimOptions,
): TaskRecord[] {
  const limit = options.limit >= 1 ? Math.floor(options.limit) : 0;
  const now = state.clock.now();
  promoteDue(state, now);
  const claimed: TaskRecord[] = [];
  if (limit === 0) return claimed;
  const owners = claimCandidates(state, options);
  while (claimed.length < limit && owners.length > 0) {
    // The owner with the fewest running tasks, ties to the oldest queued task; its oldest
    // task (a k-way merge of its tools' queues by creation sequence).
    let pick = -1;
    let pickQueue: ToolQueue<Slot> | undefined;
    let pickSeq = Number.POSITIVE_INFINITY;
    let pickRunning = Number.POSITIVE_INFINITY;
    for (let i = 0; i < owners.length; i++) {
      const owner = owners[i]!;
      if (owner.running > pickRunning) continue;
      for (const queue of owner.queues) {
        const seq = queue.peekSeq();
        if (seq === undefined) continue;
        if (owner.running < pickRunning || seq < pickSeq) {
          pick = i;
          pickQueue = queue;
          pickSeq = seq;
          pickRunning = owner.running;
        }
      }
    }
    if (pickQueue === undefined) break;
    const owner = owners[pick]!;
    const slot = pickQueue.pop()!;
    if (pickQueue.empty) dropQueue(state, owner.key, slot.record.request.toolName);
    if (!isClaimable(slot.record, now)) {
      // Only when the clock went back past its backoff: it waits again.
      enqueue(state, slot, false, state.clock.now());
      continue;
    }
    const next = claimTask(slot.record, holder, options.leaseMs, now);
    claimed.push(replaceRecord(state, slot, next, "claimed"));
    owner.running = runningOf(state, owner.key, options);
    const live = owner.queues.filter((q) => q.peekSeq() !== undefined);
    if (live.length === 0 || !underRunningLimit(owner.running, options)) owners.splice(pick, 1);
    else owner.queues = live;
  }
  return claimed.sort((a, b) => state.tasks.get(a.taskId)!.seq - state.tasks.get(b.taskId)!.seq);
}

/** The owners with queued work of the wanted tools and room under their running limit. */
function claimCandidates(state: StoreState, options: ClaimOptions): ClaimCandidate[] {
  const tools = options.toolNames === undefined ? null : new Set(options.toolNames);
  const owners: ClaimCandidate[] = [];
  for (const [key, byTool] of state.ready) {
    const queues: ToolQueue<Slot>[] = [];
    for (const [tool, queue] of byTool) {
      if (queue.peekSeq() === undefined) {
        // Only tasks that left without a claim (finished, deleted): forget the queue.
        if (queue.empty) dropQueue(state, key, tool);
      } else if (tools === null || tools.has(tool)) {
        queues.push(queue);
      }
    }
    const running = runningOf(state, key, options);
    if (queues.length > 0 && underRunningLimit(running, options)) {
      owners.push({ key, queues, running });
    }
  }
  return owners;
}
