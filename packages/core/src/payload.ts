import type { InputResponse, TaskOutcome, TaskRecord } from "./task.js";

/**
 * Payload accounting for the per-owner byte quota (`maxBytesPerOwner`). A task's payload is
 * what a client (or its tool) makes the store keep until the ttl: the request's arguments,
 * the outcome (result or error) and every input answer. The measure is the UTF-8 length of
 * each value's `JSON.stringify` text, so every store counts the same bytes for the same task
 * (a SQL store computes it here and stores the number, never from its own JSON rendering).
 * It is additive (arguments + outcome + each answer), so a store can keep a running total
 * per task and per owner and add to it as each payload arrives.
 */

const NON_ASCII = /[\u0080-\uffff]/;

/** The UTF-8 byte length of a string, without allocating an encoded copy. */
export function utf8Length(text: string): number {
  // Most payloads are ASCII: one native scan answers them.
  if (!NON_ASCII.test(text)) return text.length;
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      // A surrogate pair is 4 bytes for 2 UTF-16 units.
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 2;
        i++;
      } else bytes += 2;
    } else bytes += 2;
  }
  return bytes;
}

/** The payload bytes of one JSON value (0 for `undefined`, which is not stored). */
export function payloadBytes(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : utf8Length(text);
}

/** The payload bytes of a task's outcome (0 when it has none, e.g. cancelled). */
export function outcomeBytes(outcome: TaskOutcome | null): number {
  if (outcome === null) return 0;
  return payloadBytes(outcome.kind === "result" ? outcome.result : outcome.error);
}

/** The payload bytes of some input answers: the sum over their keys. */
export function answerBytes(answers: Readonly<Record<string, InputResponse>>): number {
  let total = 0;
  for (const key of Object.keys(answers)) total += payloadBytes(answers[key]);
  return total;
}

/**
 * The payload bytes a stored task holds: its arguments, its outcome and its input answers.
 * What a store counts against the owner's `maxBytesPerOwner` while the task is kept.
 */
export function taskPayloadBytes(
  task: Pick<TaskRecord, "request" | "outcome" | "inputAnswers">,
): number {
  return (
    payloadBytes(task.request.arguments) +
    outcomeBytes(task.outcome) +
    answerBytes(task.inputAnswers)
  );
}
