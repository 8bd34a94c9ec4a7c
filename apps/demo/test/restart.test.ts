import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  DATABASE_URL,
  dropSchema,
  killAll,
  metricsUrl,
  schemaName,
  startProcess,
} from "./helpers/process.js";
import { pollTask, rpc } from "./helpers/wire.js";

const TOKEN = "alice-token";
const COMMON = [
  "--port",
  "0",
  "--tokens",
  `${TOKEN}=alice@acme`,
  "--lease-ms",
  "1000",
  "--sweep-ms",
  "200",
];

interface StoreCase {
  name: string;
  args(): string[];
  cleanup(): Promise<void>;
}

function pgliteCase(): StoreCase {
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-demo-restart-"));
  return {
    name: "pglite",
    args: () => ["--store", "pglite", "--data-dir", dir],
    async cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresCase(): StoreCase {
  const schema = schemaName("demo_restart");
  return {
    name: "postgres",
    args: () => ["--store", "postgres", "--database-url", DATABASE_URL, "--schema", schema],
    cleanup: () => dropSchema(schema),
  };
}

async function createTask(url: string, args: Record<string, unknown>): Promise<string> {
  const created = await rpc(
    url,
    "tools/call",
    { name: "slow_compute", arguments: args },
    { token: TOKEN },
  );
  const taskId = created.body?.result?.taskId;
  if (typeof taskId !== "string") throw new Error(`no task: ${JSON.stringify(created.body)}`);
  return taskId;
}

describe.each([
  ["pglite", pgliteCase],
  ["postgres", postgresCase],
])("restart on the %s store", (_name, make) => {
  const store = make();
  afterEach(async () => {
    await killAll();
  });
  afterAll(async () => {
    await killAll();
    await store.cleanup();
  });

  it("keeps tasks across kill -9, and fails the dead node's running task as orphaned", async () => {
    const first = await startProcess([...store.args(), ...COMMON]);
    const finished = await createTask(first.url, { seconds: 0, label: "before" });
    expect((await pollTask(first.url, finished, TOKEN)).status).toBe("completed");
    const running = await createTask(first.url, { seconds: 600, label: "long" });
    await pollTask(first.url, running, TOKEN, (t) =>
      String(t.statusMessage).startsWith("Computing"),
    );
    expect(await first.kill("SIGKILL")).toBeNull();

    const second = await startProcess([...store.args(), ...COMMON]);
    const kept = await rpc(second.url, "tasks/get", { taskId: finished }, { token: TOKEN });
    expect(kept.body?.result).toMatchObject({
      taskId: finished,
      status: "completed",
      result: { content: [{ type: "text", text: "Computed before in 0s" }] },
    });
    // Nobody renews the dead node's lease: once it ran out, the sweep fails the task.
    const orphan = await pollTask(second.url, running, TOKEN);
    expect(orphan).toMatchObject({ status: "failed", error: { code: -32603 } });
    expect(JSON.stringify(orphan.error)).toContain("Worker lost");
    expect(await second.kill("SIGTERM")).toBe(0);
  });
});

describe("SIGTERM on a leasing store", () => {
  const schema = schemaName("demo_sigterm");
  afterAll(async () => {
    await killAll();
    await dropSchema(schema);
  });

  it("hands unfinished tasks back to the queue, so the next node runs them at once", async () => {
    const args = [
      "--store",
      "postgres",
      "--schema",
      schema,
      ...COMMON.slice(0, 4),
      "--lease-ms",
      "600000",
    ];
    const first = await startProcess(args, { env: { DATABASE_URL } });
    const running = await createTask(first.url, { seconds: 600, label: "long" });
    await pollTask(first.url, running, TOKEN, (t) =>
      String(t.statusMessage).startsWith("Computing"),
    );
    expect(await first.kill("SIGTERM")).toBe(0);
    // A ten-minute lease, yet the next node runs the task right away: it was handed back
    // (not failed, not cancelled), and the hand-back did not use up its only attempt.
    const second = await startProcess(args, { env: { DATABASE_URL } });
    const rerun = await pollTask(second.url, running, TOKEN, (t) =>
      String(t.statusMessage).startsWith("Computing"),
    );
    expect(rerun.status).toBe("working");
    const metrics = await (await fetch(metricsUrl(second.url))).text();
    expect(metrics).toMatch(/^mcp_tasks_runs_started_total 1$/m);
    expect(await second.kill("SIGTERM")).toBe(0);
  });
});
