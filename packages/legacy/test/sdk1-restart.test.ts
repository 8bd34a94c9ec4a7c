// The SDK 1.x drop-in across a server restart: the README's program
// (test/sdk1-readme-server.ts, the same text as the README's block) runs in a child process
// on PostgreSQL, is killed with SIGKILL while a task runs, and runs again on the same schema.
// The child imports this package by name, i.e. its built `dist` (the test task builds first).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { WORKER_LOST_ERROR } from "@mcp-tasks/core/store";
import { openScratchTaskStore, type ScratchTaskStore } from "@mcp-tasks/store-drizzle/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const PACKAGE_ROOT = new URL("../", import.meta.url);
// Inside the package (so it resolves the package's dependencies and, by name, the package
// itself) but outside `node_modules` (where a package cannot import itself); git-ignored.
const WORK_DIR = new URL(".mcp-tasks/", PACKAGE_ROOT);
const SCRIPT = new URL(`sdk1-restart-server-${process.pid}.mjs`, WORK_DIR);

/** The README program as JavaScript, with a 1.5 s lease so the test need not wait 30 s. */
async function writeServerScript(): Promise<void> {
  const source = await readFile(new URL("./sdk1-readme-server.ts", import.meta.url), "utf8");
  const shortLease = "sdkTaskOptions({ service, lease: { durationMs: 1500 } })";
  const program = source
    .replace('"../src/sdk-task-store.js"', '"@mcp-tasks/legacy/sdk-task-store"')
    .replace("sdkTaskOptions({ service })", shortLease);
  expect(program).toContain(shortLease);
  const { outputText } = ts.transpileModule(program, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  await mkdir(WORK_DIR, { recursive: true });
  await writeFile(SCRIPT, outputText);
}

interface ServerProcess {
  readonly url: URL;
  /** SIGKILL, and wait until the process is gone. */
  kill(): Promise<void>;
}

/** Starts the program and waits (bounded) for the URL it prints. */
async function startServer(schema: string): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, [fileURLToPath(SCRIPT)], {
    cwd: fileURLToPath(PACKAGE_ROOT),
    env: { ...process.env, DATABASE_URL, TASKS_SCHEMA: schema, PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    if (output.length < 100_000) output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  let url: string | undefined;
  for (let i = 0; i < 600 && alive() && url === undefined; i++) {
    url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
    if (url === undefined) await new Promise((resolve) => setTimeout(resolve, 25));
  }
  if (url === undefined) {
    child.kill("SIGKILL");
    throw new Error(`the README server did not start:\n${output}`);
  }
  return {
    url: new URL(url),
    async kill() {
      if (alive()) child.kill("SIGKILL");
      await exited;
    },
  };
}

describe("an SDK 1.x server on SdkTaskStore, killed and restarted on the same PostgreSQL schema", () => {
  let scratch: ScratchTaskStore;
  const servers: ServerProcess[] = [];
  const clients: Client[] = [];

  beforeAll(async () => {
    scratch = await openScratchTaskStore({ url: DATABASE_URL, prefix: "legacy_restart" });
    await writeServerScript();
  });
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await Promise.all(servers.map((s) => s.kill()));
    await rm(SCRIPT, { force: true });
    await scratch?.dispose();
  });

  async function connect(server: ServerProcess, token: string): Promise<Client> {
    const client = new Client({ name: "sdk1-client", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(server.url, {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    return client;
  }

  it("fails the task that was running 'Worker lost', and its owner still sees its tasks", async () => {
    const first = await startServer(scratch.schema);
    servers.push(first);
    const alice = await connect(first, "alice-token");

    // A task that finishes before the restart...
    let finishedId = "";
    for await (const message of alice.experimental.tasks.callToolStream(
      { name: "slow_report", arguments: { topic: "Q2", seconds: 0 } },
      CallToolResultSchema,
      { task: {} },
    )) {
      if (message.type === "taskCreated") finishedId = message.task.taskId;
    }
    // ...and one that is running when the process dies.
    const running = await alice.request(
      {
        method: "tools/call",
        params: { name: "slow_report", arguments: { topic: "Q3", seconds: 600 }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const runningId = running.task.taskId;
    expect((await alice.experimental.tasks.getTask(runningId)).status).toBe("working");

    await first.kill();
    const second = await startServer(scratch.schema);
    servers.push(second);
    const aliceAgain = await connect(second, "alice-token");

    // tasks/result waits for the task to end: the new process sweeps it once its lease
    // has run out, and the owner gets core's worker-lost error.
    // (Bounded: a task left `working` would hold it until the client gives up.)
    const lost = await aliceAgain.experimental.tasks
      .getTaskResult(runningId, CallToolResultSchema, { timeout: 30_000 })
      .catch((error: unknown) => error);
    expect(lost).toMatchObject({ code: WORKER_LOST_ERROR.code });
    expect(String((lost as Error).message)).toContain(WORKER_LOST_ERROR.message);
    const failed = await aliceAgain.experimental.tasks.getTask(runningId);
    expect(failed.status).toBe("failed");
    expect(failed.statusMessage).toBe(WORKER_LOST_ERROR.message);

    // The owner is the authenticated client, not the dead session: alice sees both tasks.
    const listed = (await aliceAgain.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
    expect(listed).toEqual(expect.arrayContaining([finishedId, runningId]));
    const report = await aliceAgain.experimental.tasks.getTaskResult(
      finishedId,
      CallToolResultSchema,
    );
    expect(report.content).toEqual([{ type: "text", text: "Report on Q2" }]);

    // Nobody else does.
    const bob = await connect(second, "bob-token");
    await expect(bob.experimental.tasks.getTask(finishedId)).rejects.toMatchObject({
      code: -32602,
    });
    expect((await bob.experimental.tasks.listTasks()).tasks).toEqual([]);

    // The restarted server runs new tasks as before.
    const messages = [];
    for await (const message of aliceAgain.experimental.tasks.callToolStream(
      { name: "slow_report", arguments: { topic: "Q4", seconds: 0 } },
      CallToolResultSchema,
      { task: {} },
    )) {
      messages.push(message);
    }
    const last = messages.at(-1);
    if (last?.type !== "result") throw new Error(`no result: ${JSON.stringify(last)}`);
    expect(last.result.content).toEqual([{ type: "text", text: "Report on Q4" }]);
  }, 60_000);
});
