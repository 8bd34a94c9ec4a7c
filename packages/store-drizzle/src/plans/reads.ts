import type { PlanContext } from "./context.js";
import { BY_ID, type ById, cols, inScope, live, nowOf } from "./fragments.js";
import { type Placeholders, plan, type Statement } from "./plan.js";

/** The input of `list`: one page of an owner's tasks in creation order. */
export interface ListInput {
  readonly ownerKey: string;
  /** Whether the page also merges in the unowned tasks (a second ordered scan). */
  readonly withUnowned: boolean;
  /** The `seq` the page starts after. */
  readonly after: number;
  readonly now: number | null;
  /** Statuses to keep, comma-separated, or null for all. */
  readonly statuses: string | null;
  readonly limit: number;
}

/** The input of `listNewest`: one page of an owner's tasks, newest first. */
export interface NewestInput {
  readonly ownerKey: string;
  readonly withUnowned: boolean;
  /** The `seq` the page starts before. */
  readonly before: number;
  readonly now: number | null;
  readonly statuses: string | null;
  readonly limit: number;
  /** Tool names to keep (a JSON array), or null for all. */
  readonly tools: string | null;
}

/** The input of `listNewestAcrossOwners`: {@link NewestInput} for every owner. */
export type AcrossOwnersInput = Omit<NewestInput, "ownerKey" | "withUnowned">;

/** The input of `getMany`: the gets of one moment, each in its own scope. */
export interface GetManyInput {
  /** The gets, a JSON array (see {@link getBatchJson}). */
  readonly gets: string;
}

/**
 * `getMany`'s `gets`: each with `i` its position in the batch, `id`, `o` the scope's owner
 * key, `u` whether the scope includes unowned tasks, and `n` its injected clock's time (ms)
 * or null for the database clock.
 */
export function getBatchJson(gets: readonly ById[]): string {
  const json = gets.map(
    ({ id, ownerKey, includeUnowned, now }, i) =>
      `{"i":${i},"id":${JSON.stringify(id)},"o":${JSON.stringify(ownerKey)},"u":${includeUnowned},"n":${now ?? "null"}}`,
  );
  return `[${json.join(",")}]`;
}

/** The input of `getAcrossOwners`: the operator's read, whoever owns the task. */
export interface GetAcrossOwnersInput {
  readonly id: string;
  readonly now: number | null;
}

const LIST = ["ownerKey", "after", "now", "statuses", "limit"] as const;
const NEWEST = ["ownerKey", "before", "now", "statuses", "limit", "tools"] as const;

/** Reads: one task, and pages of tasks (keyset pagination on `seq`). */
export function readPlans({ table: T }: PlanContext) {
  const page = (
    p: Placeholders<ListInput>,
    ownerKey: string,
    key = "",
  ) => `SELECT${key} t.seq::float8 AS seq, ${cols("t")} FROM ${T} AS t
  WHERE t.owner_key = ${ownerKey} AND t.seq > ${p.after}::bigint
    AND (t.expires_at IS NULL OR t.expires_at > ${nowOf(p.now)})
    AND (${p.statuses}::text IS NULL OR t.status = ANY(string_to_array(${p.statuses}::text, ',')))
  ORDER BY t.seq LIMIT ${p.limit}::bigint`;
  const listOwn = plan<ListInput>(LIST, (p) => page(p, `${p.ownerKey}::text`));
  // Two ordered index scans merged (Merge Append), rather than an OR that would force a
  // sort. The merge key is the bigint seq itself: ordering by its float8 copy would not
  // match the scans' order and the planner would sort.
  const listWithUnowned = plan<ListInput>(
    LIST,
    (
      p,
    ) => `SELECT * FROM ((${page(p, `${p.ownerKey}::text`, " t.seq AS k,")}) UNION ALL (${page(p, "''", " t.seq AS k,")})) AS p
  ORDER BY p.k LIMIT ${p.limit}::bigint`,
  );

  // Newest first, for consoles. The owner's scan walks mcp_tasks_owner_seq_idx backwards;
  // the filters are applied on the way.
  const newestFilters = (p: Placeholders<AcrossOwnersInput>) =>
    `t.seq < ${p.before}::bigint
    AND (t.expires_at IS NULL OR t.expires_at > ${nowOf(p.now)})
    AND (${p.statuses}::text IS NULL OR t.status = ANY(string_to_array(${p.statuses}::text, ',')))
    AND (${p.tools}::text IS NULL OR t.tool_name = ANY(ARRAY(SELECT jsonb_array_elements_text(${p.tools}::text::jsonb))))`;
  const newest = (
    p: Placeholders<NewestInput>,
    ownerKey: string,
    key = "",
  ) => `SELECT${key} t.seq::float8 AS seq, ${cols("t")} FROM ${T} AS t
  WHERE t.owner_key = ${ownerKey} AND ${newestFilters(p)}
  ORDER BY t.seq DESC LIMIT ${p.limit}::bigint`;
  const newestOwn = plan<NewestInput>(NEWEST, (p) => newest(p, `${p.ownerKey}::text`));
  const newestWithUnowned = plan<NewestInput>(
    NEWEST,
    (
      p,
    ) => `SELECT * FROM ((${newest(p, `${p.ownerKey}::text`, " t.seq AS k,")}) UNION ALL (${newest(p, "''", " t.seq AS k,")})) AS p
  ORDER BY p.k DESC LIMIT ${p.limit}::bigint`,
  );

  return {
    /** One task in the scope, unless expired. */
    get: plan<ById>(
      BY_ID,
      (p) =>
        `SELECT ${cols("t")} FROM ${T} AS t WHERE t.id = ${p.id} AND ${inScope(p)} AND ${live(p)}`,
    ),
    /**
     * Several gets in one statement (the store batches them; see `get-batching.ts`): each
     * row is `get`'s for its own id, scope and time, with `i` its position in the batch; a
     * get that finds nothing returns no row. The ids also reach the table as an array, so the
     * rows are found through the primary key whatever the planner makes of the JSON.
     */
    getMany: plan<GetManyInput>(
      ["gets"],
      (p) => `SELECT v.i, ${cols("t")}
  FROM jsonb_to_recordset(${p.gets}::text::jsonb) AS v(i integer, id text, o text, u boolean, n float8)
  JOIN ${T} AS t ON t.id = v.id
  WHERE t.id = ANY(ARRAY(SELECT x ->> 'id' FROM jsonb_array_elements(${p.gets}::text::jsonb) AS x))
    AND (t.owner_key = v.o OR (v.u AND t.owner_key = ''))
    AND (t.expires_at IS NULL OR t.expires_at > ${nowOf("v.n")})`,
    ),
    list: (input: ListInput): Statement =>
      input.withUnowned ? listWithUnowned(input) : listOwn(input),
    listNewest: (input: NewestInput): Statement =>
      input.withUnowned ? newestWithUnowned(input) : newestOwn(input),
    /**
     * The operator's view, every owner. No index on seq alone: a top-N sort over the live
     * rows, which is fine for an operator's occasional page (no migration for it).
     */
    listNewestAcrossOwners: plan<AcrossOwnersInput>(
      ["before", "now", "statuses", "limit", "tools"],
      (p) => `SELECT t.seq::float8 AS seq, ${cols("t")} FROM ${T} AS t
  WHERE ${newestFilters(p)}
  ORDER BY t.seq DESC LIMIT ${p.limit}::bigint`,
    ),
    getAcrossOwners: plan<GetAcrossOwnersInput>(
      ["id", "now"],
      (p) =>
        `SELECT ${cols("t")} FROM ${T} AS t WHERE t.id = ${p.id} AND (t.expires_at IS NULL OR t.expires_at > ${nowOf(p.now)})`,
    ),
  };
}
