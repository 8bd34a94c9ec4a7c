import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactUrl } from "../src/store.js";
import {
  DATABASE_URL,
  type DemoProcess,
  dropSchema,
  killAll,
  schemaName,
  startProcess,
} from "./helpers/process.js";
import { pollTask, rpc } from "./helpers/wire.js";

const TOKEN = "alice-token";
const TOKENS = `${TOKEN}=alice@acme,bob-token=bob@acme`;

/**
 * Two demo OS processes on different ports, one PostgreSQL schema: one service for
 * 2026-07-28 clients. Tasks run on the node that created them; every other operation may
 * arrive at either node, and reaches the running handler through the store's change feed.
 */
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("two demo nodes on one PostgreSQL database", () => {
  const schema = schemaName("demo_two_nodes");
  let a: DemoProcess;
  let b: DemoProcess;

  beforeAll(async () => {
    const args = ["--store", "postgres", "--port", "0", "--schema", schema, "--tokens", TOKENS];
    const env = { DATABASE_URL };
    // Started one after the other: concurrent migrations are safe too, but the order keeps
    // the start-up output readable.
    a = await startProcess(args, { env });
    b = await startProcess(args, { env });
  });
  afterAll(async () => {
    await killAll();
    await dropSchema(schema);
  });

  it("listen on different ports with the postgres store and both eras", () => {
    expect(a.url).not.toBe(b.url);
    for (const node of [a, b]) {
      expect(node.out()).toMatch(
        new RegExp(
          `store: postgres ${escapeRegExp(redactUrl(DATABASE_URL))} schema=${schema}; eras: 2026-07-28, 2025-11-25`,
        ),
      );
    }
  });

  it("reads, answers and completes on B a task created and run on A", async () => {
    const created = await rpc(
      a.url,
      "tools/call",
      { name: "confirm_delete", arguments: { filename: "shared.txt" } },
      { token: TOKEN },
    );
    expect(created.body?.result).toMatchObject({ resultType: "task", status: "working" });
    const taskId = created.body?.result?.taskId as string;
    const waiting = await pollTask(b.url, taskId, TOKEN, (t) => t.status === "input_required");
    expect(waiting.inputRequests).toHaveProperty("confirm");
    const updated = await rpc(
      b.url,
      "tasks/update",
      { taskId, inputResponses: { confirm: { action: "accept", content: { confirm: true } } } },
      { token: TOKEN },
    );
    expect(updated.body?.result).toMatchObject({ resultType: "complete" });
    // A's handler received B's answer through the store and completed the task.
    const done = await pollTask(b.url, taskId, TOKEN);
    expect(done).toMatchObject({
      status: "completed",
      result: { content: [{ type: "text", text: "Deleted shared.txt" }] },
    });
    expect(
      (await rpc(a.url, "tasks/get", { taskId }, { token: TOKEN })).body?.result,
    ).toMatchObject({
      status: "completed",
    });
  });

  it("cancels through B a task whose handler runs on A, and A's handler stops", async () => {
    const created = await rpc(
      a.url,
      "tools/call",
      { name: "generate_report", arguments: { topic: "two nodes", sections: 20 } },
      { token: TOKEN },
    );
    const taskId = created.body?.result?.taskId as string;
    expect(taskId).toBeTruthy();
    // B sees A's handler making progress.
    const running = await pollTask(b.url, taskId, TOKEN, (t) =>
      String(t.statusMessage ?? "").startsWith("Writing section 2"),
    );
    expect(running.status).toBe("working");
    const cancel = await rpc(b.url, "tasks/cancel", { taskId }, { token: TOKEN });
    expect(cancel.body?.result).toMatchObject({ resultType: "complete" });
    // Cooperative cancellation: the task only becomes `cancelled` once the handler on A
    // stopped on its signal (a handler that finished first would leave it `completed`).
    const ended = await pollTask(a.url, taskId, TOKEN);
    expect(ended.status).toBe("cancelled");
    expect(String(ended.statusMessage ?? "")).not.toContain("Finished");
    // Another owner sees nothing on either node.
    for (const node of [a, b]) {
      const denied = await rpc(node.url, "tasks/get", { taskId }, { token: "bob-token" });
      expect(denied.body?.error?.code).toBe(-32602);
    }
  });

  it("stops both nodes cleanly on SIGTERM", async () => {
    expect(await a.kill("SIGTERM")).toBe(0);
    expect(await b.kill("SIGTERM")).toBe(0);
  });
});
