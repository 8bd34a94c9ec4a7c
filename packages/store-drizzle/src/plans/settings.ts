/*
 * The planner settings every statement of the store runs with, whatever the connection: for
 * the whole session on the store's own PostgreSQL pools (`postgres.ts`), and for their own
 * transaction by the statements under the claim lock (`locked.ts`) and by every statement
 * on PGlite (`pglite-statements.ts`).
 *
 * - `enable_seqscan = off`: every statement finds its rows through an index, so its cost
 *   does not grow with the table. A plan cached while the table was small would otherwise
 *   scan it whole on every claim and ending until autoanalyze replaced it, and PGlite has no
 *   autoanalyze.
 * - `jit = off`: the planner overestimates the generic plans of the claims and endings once
 *   the table holds many finished tasks (a claim at 100,000 rows: cost 640,000 against
 *   `jit_above_cost`'s 100,000), and compiling one took ~0.8 s of CPU on every run, inside
 *   the claim lock. The store's statements are short index lookups.
 */
export const PLAN_SETTINGS: Readonly<Record<string, string>> = {
  enable_seqscan: "off",
  jit: "off",
};

/** {@link PLAN_SETTINGS} as `set_config` calls for the current transaction (a select list). */
export const LOCAL_PLAN_SETTINGS = Object.entries(PLAN_SETTINGS)
  .map(([name, value]) => `set_config('${name}', '${value}', true)`)
  .join(", ");
