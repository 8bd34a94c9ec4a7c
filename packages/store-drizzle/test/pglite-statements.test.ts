import { PGlite } from "@electric-sql/pglite";
import { owner } from "@mcp-tasks/core";
import { type OwnerScope, ownerScope } from "@mcp-tasks/core/store";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createPGliteTaskStore } from "../src/index.js";
import { preparedQuery } from "../src/pglite-statements.js";
import { PLAN_SETTINGS } from "../src/plans/settings.js";
import { freshSchemaName, newTask } from "./helpers.js";

// The store's statements on PGlite run as prepared statements of the instance, each after
// its own plan settings (src/pglite-statements.ts).
const db = new PGlite();
beforeAll(async () => {
  await db.waitReady;
  await db.exec("CREATE TABLE items (id int PRIMARY KEY, label text)");
});
afterAll(() => db.close());

const scope = (principalId: string) =>
  ownerScope(owner({ principalId }), { requireOwner: false }) as OwnerScope;

/** The instance's prepared statements made by the store (`mcp_tasks_<hash>`), by name. */
async function preparedNames(): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    "SELECT name FROM pg_prepared_statements WHERE name ~ '^mcp_tasks_[0-9a-f]{32}$' ORDER BY name",
  );
  return rows.map((row) => row.name);
}

describe("PGlite statements", () => {
  it("prepares a text once per instance, whichever query function runs it", async () => {
    const text = "SELECT $1::int + 1 AS next";
    const first = preparedQuery(db);
    const second = preparedQuery(db);
    expect(await first(text, [1])).toEqual([{ next: 2 }]);
    const after = await preparedNames();
    for (let i = 0; i < 10; i++) expect(await second(text, [i])).toEqual([{ next: i + 1 }]);
    expect(await preparedNames()).toEqual(after);
  });

  it("shares the instance's statements with another copy of this module", async () => {
    vi.resetModules();
    const copy = await import("../src/pglite-statements.js");
    const text = "SELECT $1::text || '!' AS loud";
    const mine = preparedQuery(db);
    const theirs = copy.preparedQuery(db);
    expect(await mine(text, ["a"])).toEqual([{ loud: "a!" }]);
    expect(await theirs(text, ["b"])).toEqual([{ loud: "b!" }]);
    expect(await mine(text, ["c"])).toEqual([{ loud: "c!" }]);
  });

  it("runs each statement with the store's plan settings, and leaves the instance's", async () => {
    const query = preparedQuery(db);
    const read = "SELECT current_setting($1) AS value";
    expect(Object.keys(PLAN_SETTINGS)).toContain("enable_seqscan");
    for (const [name, value] of Object.entries(PLAN_SETTINGS)) {
      const { rows: before } = await db.query<{ value: string }>(read, [name]);
      expect(await query(read, [name])).toEqual([{ value }]);
      const { rows: after } = await db.query<{ value: string }>(read, [name]);
      expect(after).toEqual(before);
    }
    const { rows } = await db.query(read, ["enable_seqscan"]);
    expect(rows).toEqual([{ value: "on" }]);
  });

  it("gives the store's endings a generic plan on the primary key", async () => {
    const schema = freshSchemaName("pgs");
    const store = await createPGliteTaskStore({ client: db, schema, migrate: true });
    try {
      const alice = scope("alice");
      // More than five runs: PostgreSQL then plans the ending once, for any parameters, on
      // the nearly empty table, and keeps that plan (PGlite has no autoanalyze to replace it).
      for (let i = 0; i < 8; i++) {
        const task = await store.create(newTask(`end-${i}`), alice);
        await store.complete(task.taskId, alice, { content: [] });
      }
      const { rows } = await db.query<{ name: string; generic_plans: number }>(
        `SELECT name, generic_plans::int FROM pg_prepared_statements
         WHERE statement LIKE $1 AND statement LIKE '%jsonb_to_recordset%'`,
        [`%UPDATE "${schema}"."mcp_tasks"%`],
      );
      const settle = rows.find((row) => row.generic_plans > 0);
      expect(settle).toBeDefined();
      const outcome = `[{"i":0,"id":"end-0","o":"x","u":false,"h":null,"f":null,"s":"completed","r":null,"e":null,"m":null,"b":0}]`;
      const plan = (
        await db.query<{ "QUERY PLAN": string }>(
          `EXPLAIN EXECUTE ${settle?.name}(NULL, '${outcome}')`,
        )
      ).rows
        .map((row) => row["QUERY PLAN"])
        .join("\n");
      // Made with sequential scans on, that plan scans the whole table on every ending.
      expect(plan).toContain("Index Scan on mcp_tasks_pkey");
      expect(plan).not.toContain("Seq Scan on mcp_tasks");
    } finally {
      await store.close();
    }
  });

  it("answers a refused statement with its error, and runs the next one", async () => {
    const query = preparedQuery(db);
    const insert = "INSERT INTO items (id, label) VALUES ($1, $2)";
    await query(insert, [1, "one"]);
    await expect(query(insert, [1, "again"])).rejects.toMatchObject({ code: "23505" });
    await expect(query("SELECT * FROM no_such_table", [])).rejects.toMatchObject({
      code: "42P01",
    });
    expect(await query("SELECT label FROM items WHERE id = $1", [1])).toEqual([{ label: "one" }]);
    // Nothing is left open: a command that cannot run in a transaction block runs.
    await db.exec("VACUUM items");
  });

  it("prepares again after the instance's statements were deallocated", async () => {
    const query = preparedQuery(db);
    const text = "SELECT count(*)::int AS n FROM items WHERE id >= $1";
    await query(text, [0]);
    await db.exec("DEALLOCATE ALL");
    expect(await query(text, [0])).toEqual([{ n: 1 }]);
  });

  it("prepares again when the statement's result type changed", async () => {
    const query = preparedQuery(db);
    await db.exec("CREATE TABLE widened (id int PRIMARY KEY)");
    await db.exec("INSERT INTO widened VALUES (1)");
    const text = "SELECT * FROM widened WHERE id = $1";
    expect(await query(text, [1])).toEqual([{ id: 1 }]);
    await db.exec("ALTER TABLE widened ADD COLUMN note text DEFAULT 'added'");
    expect(await query(text, [1])).toEqual([{ id: 1, note: "added" }]);
  });

  it("waits for a transaction in progress instead of running inside it", async () => {
    const query = preparedQuery(db);
    await db.exec("CREATE TABLE txn (id int PRIMARY KEY)");
    let letGo: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    let inside: Promise<unknown> | undefined;
    const transaction = db.transaction(async (tx) => {
      await tx.query("INSERT INTO txn VALUES (1)");
      inside = query("INSERT INTO txn VALUES ($1)", [2]);
      await held;
      await tx.rollback();
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    letGo();
    await transaction;
    await inside;
    const { rows } = await db.query<{ id: number }>("SELECT id FROM txn ORDER BY id");
    expect(rows).toEqual([{ id: 2 }]);
  });

  it("deallocates its statements and starts over past its bound", async () => {
    const query = preparedQuery(db);
    for (let i = 0; i < 520; i++) {
      expect(await query(`SELECT $1::int + ${i} AS n`, [1])).toEqual([{ n: i + 1 }]);
    }
    const names = await preparedNames();
    expect(names.length).toBeGreaterThan(0);
    expect(names.length).toBeLessThanOrEqual(512);
  });

  it("serves a store: a task reads back as created, and a foreign one looks missing", async () => {
    const store = await createPGliteTaskStore({
      client: db,
      schema: freshSchemaName("pgs"),
      migrate: true,
    });
    try {
      const request = { toolName: "t", arguments: { nested: [1, { a: null }], text: "é", n: 1.5 } };
      const created = await store.create({ ...newTask("typed-1"), request }, scope("alice"));
      expect(await store.get(created.taskId, scope("alice"))).toEqual(created);
      // A foreign task looks missing.
      await expect(store.get(created.taskId, scope("bob"))).rejects.toThrow("not found");
    } finally {
      await store.close();
    }
  });
});
