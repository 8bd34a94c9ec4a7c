// The store's plans on a connection: its statements find their rows through indexes even when
// their plans were made while the table was nearly empty (a fresh deployment): a generic plan
// cached then is kept by the connection until autoanalyze replaces it, and one with a
// sequential scan read the whole table on every claim and every ending (3 ms at 6,000 rows,
// inside the claim lock). And the claim lock's statements are prepared once per connection,
// and a count a statement reads in several places is made once.
import { owner, queuedAheadMessage } from "@mcp-tasks/core";
import {
  executionPolicy,
  type NewTask,
  type OwnerScope,
  ownerScope,
  payloadBytes,
} from "@mcp-tasks/core/store";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { postgresExecutor } from "../src/executor.js";
import { createPostgresTaskStore } from "../src/index.js";
import type { PlanContext } from "../src/plans/context.js";
import { createBatchJson, newTaskJson } from "../src/plans/create.js";
import { buildPlans } from "../src/plans/index.js";
import { Reachability } from "../src/reachability.js";
import { StatementRunner } from "../src/statement-runner.js";
import { DATABASE_URL, dropSchemas, freshSchemaName, migrateSchema, newTask } from "./helpers.js";

const ALICE = ownerScope(owner({ principalId: "alice" }), { requireOwner: false }) as OwnerScope;

/** Calls `visit` on every node of a plan (EXPLAIN's JSON). */
function eachPlanNode(plan: unknown, visit: (node: Record<string, unknown>) => void): void {
  const walk = (node: Record<string, unknown>) => {
    visit(node);
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk((plan as [{ Plan: Record<string, unknown> }])[0].Plan);
}

/** The plan's node types, flattened (EXPLAIN's JSON). */
function nodeTypes(plan: unknown): string[] {
  const out: string[] = [];
  eachPlanNode(plan, (node) => {
    out.push(`${node["Node Type"]}${node["Relation Name"] ? ` on ${node["Relation Name"]}` : ""}`);
  });
  return out;
}

describe("the store's plans on a connection (PostgreSQL)", () => {
  const schemas: string[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    // The stores before the connections they were given.
    for (const close of closers.reverse()) await close();
    await dropSchemas(schemas);
  });
  /** A fresh, migrated schema, dropped at the end. */
  const migratedSchema = async () => {
    const schema = freshSchemaName("idx");
    schemas.push(schema);
    await migrateSchema(schema);
    return schema;
  };
  /** One connection, the application's, with the server's default settings. */
  const applicationConnection = () => {
    const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
    closers.push(() => sql.end({ timeout: 5 }));
    return sql;
  };

  /** A store on its own connections, over a fresh table of 40 tasks, analysed. */
  const smallTable = async () => {
    const schema = await migratedSchema();
    const store = await createPostgresTaskStore({
      url: DATABASE_URL,
      schema,
      poolSize: 1,
      readPoolSize: 0,
    });
    closers.push(() => store.close());
    for (let i = 0; i < 40; i++) await store.create(newTask(`t${i}`), ALICE);
    await store.query(`ANALYZE "${schema}".mcp_tasks`);
    return { schema, store };
  };
  /** The statement plans of a store on `schema` (no notifications; no bounds unless given). */
  const plansOf = (
    schema: string,
    bounds: PlanContext["bounds"] = {
      maxTasks: null,
      maxTasksPerOwner: null,
      maxBytesPerOwner: null,
    },
  ) =>
    buildPlans({
      table: `"${schema}"."mcp_tasks"`,
      usageTable: `"${schema}"."mcp_task_usage"`,
      notify: { channel: null, origin: "abcdefgh" },
      bounds,
      restartGraceMs: 0,
    });
  /**
   * The nodes of the plan `schema`'s create statement (`bounded`: with quotas) ran for
   * `tasks` of ALICE, as EXPLAIN ANALYZE tells (the tasks are created).
   */
  const createRun = async (
    store: { query(text: string, values: readonly unknown[]): Promise<Record<string, unknown>[]> },
    schema: string,
    tasks: NewTask[],
    bounded: boolean,
  ) => {
    const many = { maxTasks: 1e9, maxTasksPerOwner: 1e9, maxBytesPerOwner: 1e12 };
    const { create } = plansOf(schema, bounded ? many : undefined);
    const rows = tasks.map((task) =>
      newTaskJson(
        task,
        ALICE,
        JSON.stringify(task.request),
        executionPolicy(task.execution),
        payloadBytes(task.request.arguments),
        null,
      ),
    );
    const statement = create({ now: null, tasks: createBatchJson(rows) });
    const [row] = await store.query(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`,
      statement.values,
    );
    const nodes: Record<string, unknown>[] = [];
    eachPlanNode(row?.["QUERY PLAN"], (node) => nodes.push(node));
    return nodes;
  };

  it("on the store's own connections, an update by ids uses the primary key, even on a small table", async () => {
    const { schema, store } = await smallTable();
    // The ids as the batched statements pass them (a JSON array, so the planner cannot
    // count them): on a table this small a scan looks cheapest.
    const [row] = await store.query(
      `EXPLAIN (FORMAT JSON) UPDATE "${schema}".mcp_tasks SET version = version + 1
        WHERE id = ANY(ARRAY(SELECT jsonb_array_elements_text('["t1", "t2"]'::jsonb)))`,
    );
    const types = nodeTypes(row?.["QUERY PLAN"]);
    expect(types).toContain("ModifyTable on mcp_tasks");
    expect(types).not.toContain("Seq Scan on mcp_tasks");
  });

  it("on the store's own connections, the batched get finds its rows through the primary key, even on a small table", async () => {
    const { schema, store } = await smallTable();
    const { getMany } = plansOf(schema);
    const gets = ["t1", "t2"].map((id, i) => ({ i, id, o: ALICE.ownerKey, u: false, n: null }));
    // Custom-planned for these two ids, whatever the planner makes of the JSON.
    const [row] = await store.query(`EXPLAIN (FORMAT JSON) ${getMany.text}`, [
      JSON.stringify(gets),
    ]);
    const types = nodeTypes(row?.["QUERY PLAN"]);
    expect(JSON.stringify(row?.["QUERY PLAN"])).toContain('"Index Name":"mcp_tasks_pkey"');
    expect(types).not.toContain("Seq Scan on mcp_tasks");
  });

  it("on the application's connection, the claim's generic plan made on an empty table stays on the indexes", async () => {
    const schema = await migratedSchema();
    const sql = applicationConnection();
    const store = await createPostgresTaskStore({ sql, schema });
    closers.push(() => store.close());
    // A claim under an owner limit on the empty table: the locked script prepares its
    // statement on this connection, and its generic plan is made now.
    expect(await store.claim("w", { limit: 2, leaseMs: 60_000, maxRunningPerOwner: 4 })).toEqual(
      [],
    );
    await store.create(newTask("t1"), ALICE);
    const [prepared] = await sql<{ name: string }[]>`SELECT name FROM pg_prepared_statements
      WHERE statement LIKE '%WITH RECURSIVE%' AND name LIKE 'mcp_tasks_%'`;
    expect(prepared).toBeDefined();
    // The cached generic plan, as the next claim would run it.
    const plan = await sql.begin(async (tx) => {
      await tx.unsafe("SET LOCAL plan_cache_mode = force_generic_plan");
      return tx.unsafe(
        `EXPLAIN (FORMAT JSON) EXECUTE ${prepared!.name}('w', 60000, NULL, 2, 4, NULL, NULL, NULL)`,
      );
    });
    const types = nodeTypes(plan[0]?.["QUERY PLAN"]);
    expect(types).toContain("ModifyTable on mcp_tasks");
    expect(types).not.toContain("Seq Scan on mcp_tasks");
  });

  /**
   * Claims (a locked statement) on `sql`, through a runner that records what it sent each
   * time: `prepared` (assumed there), `missing` (assumed, and not there), or `preparing`.
   */
  const recordedClaims = (sql: postgres.Sql, schema: string) => {
    const exec = postgresExecutor(sql, new Reachability(10_000));
    const sent: ("prepared" | "missing" | "preparing")[] = [];
    const runner = new StatementRunner(
      {
        ...exec,
        script: async (text) => {
          if (text.startsWith("DO $prepare$")) {
            sent.push("preparing");
            return exec.script(text);
          }
          try {
            const rows = await exec.script(text);
            sent.push("prepared");
            return rows;
          } catch (error) {
            sent.push("missing");
            throw error;
          }
        },
      },
      5_000,
      `"${schema}"."mcp_tasks"`,
    );
    const plans = plansOf(schema);
    const claim = () =>
      runner.locked(
        "claim",
        plans.claim({
          holder: "w",
          leaseMs: 60_000,
          now: null,
          limit: 2,
          maxRunningPerOwner: 4,
          maxWaitingPerOwner: null,
          afterOwnerKey: null,
          afterToolName: null,
          tools: null,
        }),
      );
    return { sent, claim };
  };
  const count = (sent: readonly string[], what: string) => sent.filter((s) => s === what).length;

  /**
   * The rows of the task table a plan read (EXPLAIN ANALYZE's JSON): each node's rows out and
   * the rows its filter removed, over all its loops.
   */
  const taskRowsRead = (plan: unknown): number => {
    let rows = 0;
    eachPlanNode(plan, (node) => {
      if (node["Relation Name"] !== "mcp_tasks") return;
      const loops = Number(node["Actual Loops"] ?? 1);
      const out = Number(node["Actual Rows"] ?? 0);
      const removed = Number(node["Rows Removed by Filter"] ?? 0);
      rows += (out + removed) * loops;
    });
    return rows;
  };

  it("a claim does not read the queued tasks of tools its node does not run", async () => {
    const schema = await migratedSchema();
    const store = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 4 });
    closers.push(() => store.close());
    // Alice's backlog of tool `x`, which this node does not run, then one task of its tool `y`.
    const backlog = 2_000;
    for (let i = 0; i < backlog; i += 200) {
      await Promise.all(
        Array.from({ length: 200 }, (_, j) =>
          store.create(
            { ...newTask(`x${i + j}`), request: { toolName: "x", arguments: {} } },
            ALICE,
          ),
        ),
      );
    }
    await store.create({ ...newTask("y1"), request: { toolName: "y", arguments: {} } }, ALICE);
    await store.query(`ANALYZE "${schema}".mcp_tasks`);
    const claim = plansOf(schema).claim({
      holder: "w",
      leaseMs: 60_000,
      now: null,
      limit: 4,
      maxRunningPerOwner: 4,
      maxWaitingPerOwner: null,
      afterOwnerKey: null,
      afterToolName: null,
      tools: JSON.stringify(["y"]),
    });
    const sql = applicationConnection();
    // Run as the store runs it: a generic plan.
    const plan = await sql.begin(async (tx) => {
      await tx.unsafe("SET LOCAL plan_cache_mode = force_generic_plan");
      return tx.unsafe(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${claim.text}`,
        claim.values as postgres.ParameterOrJSON<never>[],
      );
    });
    expect((await store.get("y1", ALICE)).execution.holder).toBe("w");
    // A probe per queue, not a read of the backlog (read row by row, it was all 2,000).
    expect(taskRowsRead(plan[0]?.["QUERY PLAN"])).toBeLessThan(50);
  });

  // The planner's estimates of the claims and endings grow with the table (a claim at
  // 100,000 rows, most of them finished: cost 640,000, over jit_above_cost's 100,000), and a
  // JIT compilation then took ~0.8 s of CPU on every run, inside the claim lock.
  it("the store's own connections compile no statement with JIT", async () => {
    const { store } = await smallTable();
    expect(await store.query("SELECT current_setting('jit') AS jit")).toEqual([{ jit: "off" }]);
  });

  it("on the application's connection, a locked statement runs without JIT, and the connection keeps its setting", async () => {
    const schema = await migratedSchema();
    const sql = applicationConnection();
    const [before] = await sql<{ jit: string }[]>`SELECT current_setting('jit') AS jit`;
    expect(before?.jit).toBe("on"); // the server's default, which the store must not rely on
    const runner = new StatementRunner(
      postgresExecutor(sql, new Reachability(10_000)),
      5_000,
      `"${schema}"."mcp_tasks"`,
    );
    const rows = await runner.locked("probe", {
      text: "SELECT current_setting('jit') AS jit, $1::int AS n",
      values: [1],
    });
    expect(rows).toEqual([{ jit: "off", n: 1 }]);
    const [after] = await sql<{ jit: string }[]>`SELECT current_setting('jit') AS jit`;
    expect(after?.jit).toBe("on");
  });

  it("a locked statement is sent assuming it is prepared, and prepares it only where it is not", async () => {
    const schema = await migratedSchema();
    const sql = applicationConnection();
    const { sent, claim } = recordedClaims(sql, schema);
    // Missing at first: prepared, and for a while prepared first wherever it runs.
    for (let i = 0; i < 40; i++) expect(await claim()).toEqual([]);
    expect(sent.slice(0, 3)).toEqual(["missing", "preparing", "preparing"]);
    expect(sent.at(-1)).toBe("prepared");
    expect(count(sent, "missing")).toBe(1);
    // The connection forgot it (a pooler's reset, say): prepared again, and missed once.
    await sql.unsafe("DEALLOCATE ALL");
    sent.length = 0;
    for (let i = 0; i < 40; i++) expect(await claim()).toEqual([]);
    expect(sent.slice(0, 2)).toEqual(["missing", "preparing"]);
    expect(count(sent, "missing")).toBe(1);
    expect(sent.at(-1)).toBe("prepared");
  });

  it("on a pool, a connection that lacks a locked statement gets it: claims stop missing it", async () => {
    const schema = await migratedSchema();
    const connections = 4;
    const sql = postgres(DATABASE_URL, { max: connections, onnotice: () => {} });
    closers.push(() => sql.end({ timeout: 5 }));
    // Every connection open and idle: postgres.js lends them in turn.
    await Promise.all(Array.from({ length: connections }, () => sql`SELECT pg_sleep(0.05)`));
    const { sent, claim } = recordedClaims(sql, schema);
    // One claim at a time. The retry after a miss went to the next connection in turn, which
    // may have had the statement already, and the one that lacked it kept lacking it: half
    // of these claims missed.
    for (let i = 0; i < 40; i++) expect(await claim()).toEqual([]);
    expect(count(sent, "missing")).toBeGreaterThanOrEqual(1);
    expect(count(sent, "missing")).toBeLessThanOrEqual(2);
    expect(sent.slice(-connections)).toEqual(Array(connections).fill("prepared"));
  });

  it("a create reads the usage counters of its own owners only, however many owners have counters, without statistics", async () => {
    const schema = await migratedSchema();
    const store = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 1 });
    closers.push(() => store.close());
    // 200 owners' counters, every stripe, in a table never analysed (a fresh deployment
    // filling up): the planner takes the batch for 100 owners and the table for small.
    // Before, it read every counter on every create: 3,200 rows for a batch of one owner.
    await store.query(
      `INSERT INTO "${schema}".mcp_task_usage (owner_key, stripe, tasks, bytes)
        SELECT 'owner-' || g, s, 1, 10 FROM generate_series(1, 200) AS g, generate_series(0, 15) AS s`,
      [],
    );
    const nodes = await createRun(store, schema, [newTask("a1"), newTask("a2")], true);
    const usageReads = nodes.filter(
      (node) => node["Relation Name"] === "mcp_task_usage" && node["Node Type"] !== "ModifyTable",
    );
    expect(usageReads.length).toBeGreaterThan(0);
    // At most every stripe of the batch's one owner and of the total: 32 rows.
    for (const node of usageReads) {
      expect(Number(node["Actual Rows"]) * Number(node["Actual Loops"])).toBeLessThanOrEqual(32);
    }
  });

  it("a create queued under an owner limit counts the tasks queued ahead of it once", async () => {
    const schema = await migratedSchema();
    const store = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 1 });
    closers.push(() => store.close());
    const limited = (id: string): NewTask => ({
      ...newTask(id),
      ownerLimits: { maxRunningPerOwner: 2 },
    });
    // Five queued (no lease asked), none running: a sixth waits behind them, its owner under
    // its limit, so its message counts them ("5 ahead of you").
    for (let i = 0; i < 5; i++) {
      const created = await store.create(limited(`q${i}`), ALICE);
      expect(created.execution.holder).toBeNull();
    }
    const nodes = await createRun(store, schema, [limited("q5")], false);
    const aheadCounts = nodes.filter(
      (node) =>
        node["Index Name"] === "mcp_tasks_claim_owner_idx" && Number(node["Actual Loops"]) > 0,
    );
    // Before, the count ran twice: once to compare with the limit of 100, once for the
    // message.
    expect(aheadCounts).toHaveLength(1);
    expect((await store.get("q5", ALICE))?.statusMessage).toBe(queuedAheadMessage(5));
  });

  it("a claim counts each owner's running tasks once", async () => {
    const schema = await migratedSchema();
    const store = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 1 });
    closers.push(() => store.close());
    // Two running (leased at creation), five queued.
    for (let i = 0; i < 2; i++) {
      await store.create(
        { ...newTask(`r${i}`), lease: { holder: "w0", durationMs: 60_000 } },
        ALICE,
      );
    }
    for (let i = 0; i < 5; i++) await store.create(newTask(`q${i}`), ALICE);
    const statement = plansOf(schema).claim({
      holder: "w1",
      leaseMs: 60_000,
      now: null,
      limit: 8,
      maxRunningPerOwner: 8,
      maxWaitingPerOwner: null,
      tools: null,
      afterOwnerKey: null,
      afterToolName: null,
    });
    const [row] = await store.query(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`,
      statement.values,
    );
    let counts = 0;
    eachPlanNode(row?.["QUERY PLAN"], (node) => {
      if (node["Index Name"] === "mcp_tasks_running_owner_idx") {
        counts += Number(node["Actual Loops"]);
      }
    });
    // Before, the owner's count ran for the filter, for its queue's limit and for each of
    // the five picked rows: seven times.
    expect(counts).toBe(1);
    expect((await store.get("q4", ALICE))?.execution.holder).toBe("w1");
  });
});
