import { createHash } from "node:crypto";
import { taskErrors } from "@mcp-tasks/core/store";
import type { Statement } from "./plan.js";
import { LOCAL_PLAN_SETTINGS } from "./settings.js";

/*
 * A statement run after the claim lock, in one implicit transaction sent in one round trip
 * (a script, see `Executor.script`), so the statement sees every claim committed before it
 * got the lock. One round trip, not a transaction of four: under load each round trip also
 * waits for this process's event loop. The statement is a server-side prepared statement
 * (made on the connection the first time it runs there) executed with its parameters as
 * literals, with a generic plan: planning it on every claim cost ~1.5 ms inside the lock.
 * That plan is made without sequential scans, whatever connection runs it: planned while the
 * table was small, the claim's update scanned the whole table (3 ms at 6,000 rows, inside
 * the lock) until autoanalyze replaced the plan. Claims with an owner limit and creates that
 * may claim under one go this way, so they run one at a time across the cluster.
 */

/**
 * One statement's locked scripts: `prepared` assumes the connection has prepared the
 * statement already (it has, after its first run there), `preparing` prepares it first when
 * it has not. Checking in every script cost ~0.25 ms of the server's time per claim (an
 * anonymous PL/pgSQL block is compiled on every run), so `prepared` is sent first: it sets
 * the plan settings, takes the lock and runs the statement; where the statement is missing,
 * `EXECUTE` fails, the lock goes with the transaction, and `preparing` follows, on whichever
 * connection the pool lends, and so do the statement's next runs for a while (see
 * `PREPARING_SWEEP` in `statement-runner.ts`), until every connection has it. `prepared`
 * does not look the statement up first: `pg_prepared_statements` copies the text of every
 * statement the connection has prepared, and with that lookup an empty claim took 0.56–0.64
 * ms instead of 0.42–0.58 ms, inside the lock (p50, `bench/locked-claim.bench.mjs`).
 */
export interface LockedScript {
  readonly prepared: string;
  /** Built only when needed: it carries the statement's whole text. */
  preparing(): string;
}

/** A statement's server-side prepared statement: its name, and the block that makes it. */
interface Prepared {
  readonly name: string;
  /** A block that prepares it where the connection has not. */
  readonly prepare: string;
}

/** Builds the locked scripts of one table's statements. */
export class LockedScripts {
  /**
   * The statement that takes the claim lock (an advisory lock keyed by the table's name),
   * with the plan settings of the statements after it.
   */
  readonly #lockStatement: string;
  /** Each statement's prepared statement, by text (a handful: claims, creates, endings). */
  readonly #prepared = new Map<string, Prepared>();

  constructor(table: string) {
    // On any connection (yours included): generic plans, and the store's plan settings
    // (`settings.ts`: index scans only, no JIT compilation inside the lock).
    this.#lockStatement = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true),
  ${LOCAL_PLAN_SETTINGS},
  pg_advisory_xact_lock(hashtext(${sqlLiteral(table)}::text));
`;
  }

  /**
   * `statement` as scripts that take the claim lock first; their last result is the
   * statement's rows. Where the statement is missing, EXECUTE fails and the lock goes with
   * the implicit transaction (so a connection's first run of it waits for the lock twice:
   * rare, against a lookup on every run).
   */
  script(statement: Statement): LockedScript {
    const { name, prepare } = this.#preparedOf(statement.text);
    const prepared = `${this.#lockStatement}EXECUTE ${name}${argumentsOf(statement)}`;
    return { prepared, preparing: () => `${prepare}${prepared}` };
  }

  /**
   * `before`, then `statement`, both after the claim lock, in one transaction; the scripts'
   * last two results are their rows. `before` runs under the lock too: a write that waited
   * for the lock would hold its rows meanwhile (the usage counters, say), which a statement
   * holding the lock may wait for, a deadlock; taken first, the lock comes before any row.
   */
  scriptAfter(before: Statement, statement: Statement): LockedScript {
    const first = this.#preparedOf(before.text);
    const second = this.#preparedOf(statement.text);
    const prepared = `${this.#lockStatement}EXECUTE ${first.name}${argumentsOf(before)};
EXECUTE ${second.name}${argumentsOf(statement)}`;
    return { prepared, preparing: () => `${first.prepare}${second.prepare}${prepared}` };
  }

  /** The prepared statement of `text`: built once per statement. */
  #preparedOf(text: string): Prepared {
    let prepared = this.#prepared.get(text);
    if (prepared === undefined) {
      // Not `statementName`: a statement that also runs without the lock (a create, say)
      // is prepared by the driver under that name, which PREPARE here would then take
      // (node-postgres refuses to prepare it again, 42P05; PGlite's cache closes it first).
      const name = `mcp_tasks_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
      const prepare = `DO $prepare$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_prepared_statements WHERE name = '${name}') THEN
    EXECUTE ${dollarQuoted(`PREPARE ${name} AS ${text}`)};
  END IF;
END $prepare$;
`;
      prepared = { name, prepare };
      this.#prepared.set(text, prepared);
    }
    return prepared;
  }
}

/** A statement's values as the argument list of its EXECUTE. */
function argumentsOf(statement: Statement): string {
  return `(${statement.values.map(sqlLiteral).join(", ")})`;
}

/**
 * A value as an SQL literal, for a script: NULL, a finite number, a boolean, or text as an
 * escape-string literal (`E'…'`, read the same whatever `standard_conforming_strings`
 * says). Text holding U+0000 is refused (core refuses it before any store; JSON text carries
 * it escaped).
 */
function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw taskErrors.invalidTask("a number must be finite");
    return String(value);
  }
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  const text = String(value);
  if (text.includes("\u0000")) throw taskErrors.invalidTask("text must not contain U+0000");
  return `E'${text.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

/** `text` as a dollar-quoted literal, with a tag it does not contain. */
function dollarQuoted(text: string): string {
  let tag = "q";
  while (text.includes(`$${tag}$`)) tag += "q";
  return `$${tag}$${text}$${tag}$`;
}
