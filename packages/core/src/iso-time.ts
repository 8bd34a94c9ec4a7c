/** Recent {@link isoTime} answers: every poll of a task formats the same two timestamps. */
const ISO_TIMES = new Map<number, string>();
const ISO_TIMES_MAX = 4096;

/**
 * Epoch milliseconds as the ISO 8601 string both eras' wire formats carry. Memoized: a
 * task's `createdAt` and `lastUpdatedAt` are formatted again on every poll, and
 * `Date#toISOString` is a noticeable part of answering one (the memo is bounded, dropped
 * whole when full; it holds only pure results, so it is safe to share).
 */
export function isoTime(ms: number): string {
  let text = ISO_TIMES.get(ms);
  if (text === undefined) {
    text = new Date(ms).toISOString();
    if (ISO_TIMES.size >= ISO_TIMES_MAX) ISO_TIMES.clear();
    ISO_TIMES.set(ms, text);
  }
  return text;
}
