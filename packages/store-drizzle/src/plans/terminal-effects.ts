import { TERMINAL_EFFECTS, type TerminalEffect } from "@mcp-tasks/core/store";
import { msInterval } from "./fragments.js";

/** When a task ending at `n.now` may be removed (core's `expiryOnTerminal`). */
const EXPIRY = `CASE WHEN t.ttl_anchor = 'creation' THEN t.created_at ELSE n.now END + ${msInterval("t.ttl_ms")}`;

/*
 * Core's terminal effects (`TERMINAL_EFFECTS`) as the columns each one writes and the value
 * it writes there, for a row `t` ending at `n.now`. The record is typed by core's list, so an
 * effect added in core does not compile here until this store writes it; every statement
 * that ends a task takes its SETs from here.
 */
const ENDED: Readonly<
  Record<TerminalEffect, readonly (readonly [column: string, value: string])[]>
> = {
  startRetention: [["expires_at", EXPIRY]],
  dropInputRequests: [["input_requests", "'{}'::jsonb"]],
  releaseExecution: [
    ["lease_holder", "NULL"],
    ["lease_expires_at", "NULL"],
    ["available_at", "NULL"],
  ],
};

/** Every column an ending writes, with its value, in core's effect order. */
export const ENDED_COLUMNS = TERMINAL_EFFECTS.flatMap((effect) => ENDED[effect]);

/** The SETs of a statement whose every row ends. */
export const TERMINAL_SETS = ENDED_COLUMNS.map(([column, value]) => `${column} = ${value}`).join(
  ", ",
);

/**
 * The SETs of a statement that ends only the rows where `ending` holds. Each ended column
 * takes its terminal value there and, elsewhere, the value `otherwise` names for it. Every
 * ended column must be named, and only those: a new effect then fails when the plan is
 * made (when the store opens) instead of leaving a column as it was.
 */
export function terminalSetsWhen(ending: string, otherwise: Readonly<Record<string, string>>) {
  const named = Object.keys(otherwise);
  const columns = ENDED_COLUMNS.map(([column]) => column);
  const stray = named.filter((column) => !columns.includes(column));
  const missing = columns.filter((column) => !named.includes(column));
  if (stray.length > 0 || missing.length > 0) {
    throw new Error(
      `terminalSetsWhen needs a value for exactly the ended columns (missing: ${missing.join(", ") || "none"}; not ended: ${stray.join(", ") || "none"})`,
    );
  }
  return ENDED_COLUMNS.map(([column, value]) => {
    const other = otherwise[column] as string;
    return other === value
      ? `${column} = ${value}`
      : `${column} = CASE WHEN ${ending} THEN ${value} ELSE ${other} END`;
  }).join(",\n    ");
}

/**
 * The SETs of a statement that ends the rows where `ending` holds and puts the others back
 * in the queue, claimable at `availableAt` (core's `requeueTask`: the questions go, no run
 * holds the task, its retention has not started).
 */
export function endedOrRequeuedSets(ending: string, availableAt: string): string {
  return terminalSetsWhen(ending, {
    expires_at: "t.expires_at",
    input_requests: "'{}'::jsonb",
    lease_holder: "NULL",
    lease_expires_at: "NULL",
    available_at: availableAt,
  });
}
