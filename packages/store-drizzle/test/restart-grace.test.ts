import { owner } from "@mcp-tasks/core";
import { type OwnerScope, ownerScope } from "@mcp-tasks/core/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RestartableEmbeddedPostgres, startEmbedded } from "../../../scripts/postgres.mjs";
import { createPostgresTaskStore, type DrizzleTaskStore, migrate } from "../src/index.js";
import { newTask, sleep } from "./helpers.js";

/**
 * A PostgreSQL restart costs a running task no attempt (issue #23 §3): while the server was
 * away no worker could renew its leases, so for `restartGraceMs` after it started no lease
 * counts as run out, and the worker that is alive renews (or stores its outcome) first. On a
 * private server of this test's own, which it restarts.
 */
const SCOPE = ownerScope(owner({ principalId: "alice" }), { requireOwner: false }) as OwnerScope;
const HOLDER = "node-a";
const SCHEMA = "restart_grace";

/** A task of tool `job` created claimed by {@link HOLDER} for `leaseMs`. */
function leasedTask(taskId: string, leaseMs: number) {
  return {
    ...newTask(taskId),
    request: { toolName: "job", arguments: {} },
    execution: { maxAttempts: 3, backoffMs: 0, retryOnError: false, deadlineMs: null },
    lease: { holder: HOLDER, durationMs: leaseMs },
  };
}

describe("leases across a PostgreSQL restart", () => {
  let pg: RestartableEmbeddedPostgres;
  const stores: DrizzleTaskStore[] = [];
  /** A store on the private server; the grace long enough that the test does not race it. */
  async function open(restartGraceMs: number): Promise<DrizzleTaskStore> {
    const store = await createPostgresTaskStore({
      url: pg.url,
      schema: SCHEMA,
      restartGraceMs,
      operationTimeoutMs: 5_000,
    });
    stores.push(store);
    return store;
  }
  /** Retries `call` while the restarted server is not yet reachable (bounded). */
  async function once<T>(call: () => Promise<T>): Promise<T> {
    for (let i = 0; ; i++) {
      try {
        return await call();
      } catch (error) {
        if (i >= 100) throw error;
        await sleep(100);
      }
    }
  }

  beforeAll(async () => {
    pg = await startEmbedded({ restartable: true });
    await migrate(pg.url, { schema: SCHEMA });
  }, 120_000);
  afterAll(async () => {
    for (const store of stores) await store.close().catch(() => {});
    await pg?.stop();
  }, 60_000);

  it("takes no task over from its holder while the server was away, then recovers as usual", async () => {
    const holder = await open(60_000);
    const sweeper = await open(60_000);
    const eager = await open(0);
    const created = await holder.create(leasedTask("t1", 300), SCOPE);
    const fenced: OwnerScope = {
      ...SCOPE,
      fence: { holder: HOLDER, fencingToken: created.execution.fencingToken },
    };
    // The server goes away for longer than the lease, and comes back.
    await pg.pause();
    await sleep(600);
    await pg.resume();

    // The lease ran out while nobody could renew it: no sweep takes the task over yet.
    expect(await once(() => sweeper.recoverOrphans())).toMatchObject({ requeued: 0, failed: 0 });
    // Its holder renews through its fence, and goes on.
    expect(await once(() => holder.renewLease("t1", fenced, 200))).toBe(true);
    const held = await holder.get("t1", SCOPE);
    expect(held.execution).toMatchObject({ holder: HOLDER, attempt: 1 });
    expect(held.status).toBe("working");

    // Without the grace the same expired lease is taken over, attempt counted.
    await sleep(400);
    expect(await once(() => eager.recoverOrphans())).toMatchObject({ requeued: 1 });
    const recovered = await holder.get("t1", SCOPE);
    expect(recovered.execution.holder).toBeNull();
    expect(await holder.renewLease("t1", fenced, 200)).toBe(false);
  }, 120_000);

  it("refuses a restartGraceMs that is not a whole number of ms", async () => {
    await expect(open(-1)).rejects.toThrow(TypeError);
    await expect(open(1.5)).rejects.toThrow(/restartGraceMs/);
  });
});
