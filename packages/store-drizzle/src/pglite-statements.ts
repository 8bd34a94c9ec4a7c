import { type PGlite, parse, protocol } from "@electric-sql/pglite";
import { isNotPrepared, isStaleStatement } from "./errors.js";
import type { Query, Row } from "./executor.js";
import { statementName } from "./names.js";
import { LOCAL_PLAN_SETTINGS } from "./plans/settings.js";

/*
 * The store's statements on PGlite as named prepared statements, as postgres.js and
 * node-postgres send them to a PostgreSQL server. PGlite's `query` parses, describes and
 * plans its text afresh on every call, in six protocol messages; a prepared statement is
 * parsed once and then runs as one message buffer. On the scale bench that made creates 3–4 ×,
 * gets and completions about 2 × as fast (BENCHMARKS.md).
 *
 * Each run sets the store's plan settings (`plans/settings.ts`) for its own implicit
 * transaction first, as the store's PostgreSQL pools set them for their whole sessions: a
 * prepared statement keeps the generic plan it got while the table was small, and PGlite has
 * no autoanalyze to replace it, so a plan that scans the table would scan it on every run for
 * good (the completions ran at half their rate that way). Your instance's own settings are
 * untouched.
 *
 * PGlite's exported protocol serializer, `execProtocolStream` and `parseResults` do the work;
 * as `query` does, a run first calls `_checkReady` and holds the instance's two exclusive
 * sections (methods its class declares, though underscored), so it never runs inside
 * someone's transaction.
 */

type BackendMessage = Parameters<typeof parse.parseResults>[0][number];

/** One statement prepared on one PGlite instance. */
interface Prepared {
  readonly name: string;
  /** Each parameter's type, as PostgreSQL inferred it: how its value is serialized. */
  readonly parameterTypes: readonly number[];
  /** The statement's row description (none when it returns no rows), for `parseResults`. */
  readonly rowDescription: BackendMessage | undefined;
}

/** The prepared statements of one PGlite instance, shared by every store on it. */
interface Instance {
  readonly byText: Map<string, Prepared>;
  /** Whether {@link SETTINGS_STATEMENT} is prepared on the instance. */
  settingsPrepared: boolean;
}

/** The statement each run starts with: the plan settings, for its transaction only. */
const SETTINGS_STATEMENT = {
  name: "mcp_tasks_plan_settings",
  text: `SELECT ${LOCAL_PLAN_SETTINGS}`,
};

/** The messages that run {@link SETTINGS_STATEMENT}: the same for every run, built once. */
const RUN_SETTINGS = concat([
  protocol.serialize.bind({ statement: SETTINGS_STATEMENT.name }),
  protocol.serialize.execute({}),
]);

/**
 * Statements prepared per instance at most. The store's texts are fixed, a few dozen per
 * table, but stores opened and closed on one instance (a schema each) leave theirs behind:
 * past this many, the instance's statements are all deallocated and prepared anew as used.
 */
const MAX_PREPARED = 512;

const instances = new WeakMap<PGlite, Instance>();

/**
 * The executor's `query` on `db`: each text prepared once per instance (so two stores on one
 * instance share the statements) and executed after the plan settings, in one implicit
 * transaction. A statement found deallocated or stale is prepared again, once.
 */
export function preparedQuery(db: PGlite): Query {
  let instance = instances.get(db);
  if (instance === undefined) {
    instance = { byText: new Map(), settingsPrepared: false };
    instances.set(db, instance);
  }
  const state = instance;
  return async (text, params) => {
    await db._checkReady();
    // As `db.query` runs: after any transaction in progress, one statement at a time.
    return db._runExclusiveTransaction(() =>
      db._runExclusiveQuery(async () => {
        let rows: Row[];
        try {
          rows = await execute(db, await preparedOf(db, state, text), params);
        } catch (error) {
          if (isNotPrepared(error)) {
            // Deallocated by someone else (a `DEALLOCATE ALL`): forget them all.
            state.byText.clear();
            state.settingsPrepared = false;
          } else if (isStaleStatement(error)) {
            await forget(db, state, text);
          } else throw error;
          rows = await execute(db, await preparedOf(db, state, text), params);
        }
        await db.syncToFs();
        return rows;
      }),
    );
  };
}

/** `text`'s statement on the instance, prepared (with the plan settings) when it is not. */
async function preparedOf(db: PGlite, state: Instance, text: string): Promise<Prepared> {
  const known = state.byText.get(text);
  if (known !== undefined) return known;
  if (state.byText.size >= MAX_PREPARED) await forgetAll(db, state);
  // Each name is closed before it is prepared (closing a statement that does not exist is no
  // error): the instance may hold it already, prepared by another copy of this module, whose
  // cache this one does not see, or kept when this cache was emptied because one statement
  // was found deallocated. The plan settings' statement is prepared with the first.
  const settings = state.settingsPrepared
    ? []
    : [
        protocol.serialize.close({ type: "S", name: SETTINGS_STATEMENT.name }),
        protocol.serialize.parse(SETTINGS_STATEMENT),
      ];
  const name = statementName(text);
  const messages = await send(db, [
    ...settings,
    protocol.serialize.close({ type: "S", name }),
    protocol.serialize.parse({ name, text }),
    protocol.serialize.describe({ type: "S", name }),
    protocol.serialize.sync(),
  ]);
  state.settingsPrepared = true;
  const prepared: Prepared = {
    name,
    parameterTypes: parse.parseDescribeStatementResults(messages),
    rowDescription: messages.find((message) => message.name === "rowDescription"),
  };
  state.byText.set(text, prepared);
  return prepared;
}

/** Runs the plan settings, then `prepared` with `params`: one buffer, one transaction. */
async function execute(db: PGlite, prepared: Prepared, params: readonly unknown[]): Promise<Row[]> {
  const values = params.map((value, i) => {
    if (value === null || value === undefined) return null;
    const serialize = db.serializers[prepared.parameterTypes[i] ?? 0];
    return serialize ? serialize(value) : String(value);
  });
  const messages = await send(db, [
    RUN_SETTINGS,
    protocol.serialize.bind({ statement: prepared.name, values }),
    protocol.serialize.execute({}),
    protocol.serialize.sync(),
  ]);
  // The statement's own messages follow the settings' `CommandComplete`.
  const own = messages.slice(messages.findIndex((m) => m.name === "commandComplete") + 1);
  if (prepared.rowDescription !== undefined) own.unshift(prepared.rowDescription);
  return (parse.parseResults(own, db.parsers)[0]?.rows ?? []) as Row[];
}

/** Deallocates `text`'s statement on the instance, and forgets it. */
async function forget(db: PGlite, state: Instance, text: string): Promise<void> {
  const prepared = state.byText.get(text);
  if (prepared === undefined) return;
  state.byText.delete(text);
  await deallocate(db, [prepared.name]);
}

/** Deallocates every statement of the instance's cache, and forgets them. */
async function forgetAll(db: PGlite, state: Instance): Promise<void> {
  const names = [...state.byText.values()].map((prepared) => prepared.name);
  state.byText.clear();
  await deallocate(db, names);
}

/** Closes the named statements on the instance (closing one that does not exist is no error). */
function deallocate(db: PGlite, names: readonly string[]): Promise<BackendMessage[]> {
  return send(db, [
    ...names.map((name) => protocol.serialize.close({ type: "S", name })),
    protocol.serialize.sync(),
  ]);
}

/** Sends protocol messages as one buffer; throws the first error (PGlite ran them all). */
function send(db: PGlite, messages: Uint8Array[]): Promise<BackendMessage[]> {
  return db.execProtocolStream(concat(messages), { syncToFs: false });
}

/** The messages as one buffer. */
function concat(messages: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const message of messages) size += message.length;
  const buffer = new Uint8Array(size);
  let at = 0;
  for (const message of messages) {
    buffer.set(message, at);
    at += message.length;
  }
  return buffer;
}
