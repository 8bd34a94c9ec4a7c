// Gets of one turn leave as one statement (see `get-batching.ts`), and each is answered as
// if it had been sent alone: in its own scope, at its own time, missing and foreign tasks
// alike "not found". On PostgreSQL and on PGlite, each with the statements it runs counted.
import { PGlite } from "@electric-sql/pglite";
import { ANONYMOUS, owner, type TaskRecord } from "@mcp-tasks/core";
import { type OwnerScope, ownerScope } from "@mcp-tasks/core/store";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import {
  createPGliteTaskStore,
  createPostgresTaskStore,
  type DrizzleTaskStore,
} from "../src/index.js";
import { DATABASE_URL, dropSchemas, freshSchemaName, migrateSchema, newTask } from "./helpers.js";

const scope = (o: ReturnType<typeof owner>, requireOwner: boolean) =>
  ownerScope(o, { requireOwner }) as OwnerScope;
const ALICE = scope(owner({ principalId: "alice" }), true);
const ALICE_WITH_UNOWNED = scope(owner({ principalId: "alice" }), false);
const BOB = scope(owner({ principalId: "bob" }), true);
const UNOWNED = scope(ANONYMOUS, false);

/**
 * A store, with a count of the statements it has sent so far, less the notifications that
 * the after-commit mode sends on their own (see `feed.ts`).
 */
interface Counted {
  readonly store: DrizzleTaskStore;
  statements(): number;
}

const counter = () => {
  let sent = 0;
  return {
    count: (text: string) => {
      if (!text.includes("pg_notify")) sent++;
    },
    sent: () => sent,
  };
};

const schemas: string[] = [];
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await dropSchemas(schemas);
});

const backends: [string, (now: () => number) => Promise<Counted>][] = [
  [
    "PostgreSQL",
    async (now) => {
      const schema = freshSchemaName("gb");
      schemas.push(schema);
      await migrateSchema(schema);
      const sent = counter();
      const sql = postgres(DATABASE_URL, {
        max: 2,
        onnotice: () => {},
        debug: (_, text) => sent.count(text),
      });
      closers.push(() => sql.end({ timeout: 5 }));
      const store = await createPostgresTaskStore({ sql, schema, clock: { now } });
      closers.push(() => store.close());
      return { store, statements: sent.sent };
    },
  ],
  [
    "PGlite",
    async (now) => {
      const db = new PGlite();
      closers.push(() => db.close());
      // The store's statements run as prepared statements of the instance, each sent as one
      // buffer that starts with a Bind ('B'); buffers that prepare one start otherwise (see
      // `pglite-statements.ts`).
      let sent = 0;
      const send = db.execProtocolStream.bind(db);
      db.execProtocolStream = ((...args: Parameters<typeof send>) => {
        if (args[0][0] === 0x42) sent++;
        return send(...args);
      }) as typeof db.execProtocolStream;
      const store = await createPGliteTaskStore({
        client: db,
        schema: freshSchemaName("gb"),
        migrate: true,
        clock: { now },
      });
      closers.push(() => store.close());
      return { store, statements: () => sent };
    },
  ],
];

/** A get's answer, comparable: the record, or the error's code. */
async function answer(get: Promise<TaskRecord>): Promise<TaskRecord | string> {
  try {
    return await get;
  } catch (error) {
    return `error: ${(error as { code?: string }).code ?? String(error)}`;
  }
}

describe.each(backends)("gets of one turn (%s)", (_, open) => {
  it("leave as one statement, each answered as it would be alone", async () => {
    let time = Date.UTC(2026, 0, 1);
    const { store, statements } = await open(() => time);
    await store.create(newTask("a1"), ALICE);
    await store.create(newTask("a2"), ALICE);
    await store.create(newTask("b1"), BOB);
    await store.create(newTask("u1"), UNOWNED);
    await store.create({ ...newTask("soon"), ttlMs: 1_000 }, ALICE);
    await store.complete("soon", ALICE, { content: [] });
    time += 1_000; // "soon" has expired (its ttl counts from its creation once it ended)
    const gets: [string, OwnerScope][] = [
      ["a1", ALICE],
      ["a2", ALICE],
      ["b1", ALICE], // foreign
      ["b1", BOB],
      ["a1", ALICE], // asked twice in one turn
      ["u1", ALICE_WITH_UNOWNED],
      ["u1", ALICE], // unowned, outside a scope that requires an owner
      ["soon", ALICE], // expired
      ["nowhere", ALICE], // missing
    ];

    const before = statements();
    const together = await Promise.all(gets.map(([id, s]) => answer(store.get(id, s))));
    expect(statements() - before).toBe(1);

    const alone: (TaskRecord | string)[] = [];
    for (const [id, s] of gets) alone.push(await answer(store.get(id, s)));
    expect(together).toEqual(alone);
    const found = together.map((a) => (typeof a === "string" ? a : a.taskId));
    const missing = "error: not_found_or_unauthorized";
    expect(found).toEqual(["a1", "a2", missing, "b1", "a1", "u1", missing, missing, missing]);
  });

  it("each see every write that returned before they were asked for", async () => {
    const { store } = await open(() => Date.now());
    const ids = Array.from({ length: 20 }, (_, i) => `w${i}`);
    await Promise.all(ids.map((id) => store.create(newTask(id), ALICE)));
    await Promise.all(
      ids.map(async (id, i) => {
        const message = `step ${i}`;
        await store.setStatusMessage(id, ALICE, message);
        expect((await store.get(id, ALICE)).statusMessage).toBe(message);
        await store.complete(id, ALICE, { content: [] });
        expect((await store.get(id, ALICE)).status).toBe("completed");
      }),
    );
  });
});
