/** The longest a demo job may work. */
const MAX_SECONDS = 3600;

/** The `seconds` argument of the demo's timed jobs, as JSON Schema. */
export const secondsProperty = {
  type: "number",
  minimum: 0,
  maximum: MAX_SECONDS,
  description: "How long to work",
} as const;

/** `args.seconds` clamped to 0…3600 (default 1; anything not a number counts as 0). */
export function secondsOf(args: Readonly<Record<string, unknown>>): number {
  return Math.min(Math.max(Number(args.seconds ?? 1) || 0, 0), MAX_SECONDS);
}
