// OpenTelemetry traces across nodes: the SDK's in-memory exporter as the global provider
// (what `--otel` installs), two demo apps on one PostgreSQL schema — A serves MCP and claims
// nothing, B is the worker that runs the task — and one trace from the client's request
// through the creation on A and the run on B to completion; polls in their own traces,
// linked to it.
import type { TaskStore } from "@mcp-tasks/core";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DemoTracing, startTracing } from "../src/otel.js";
import { openStore } from "../src/store.js";
import { DATABASE_URL, dropSchema, schemaName } from "./helpers/process.js";
import { ALICE, startDemo, startDualDemo } from "./helpers/server.js";
import { legacyInitialize, pollTask, readResponse, rpc } from "./helpers/wire.js";

const exporter = new InMemorySpanExporter();
let tracing: DemoTracing;

beforeAll(() => {
  tracing = startTracing("off", { exporter });
});
afterAll(async () => {
  await tracing.shutdown();
});

/** A client's W3C traceparent: a fresh trace id and span id, sampled. */
function clientTrace(): { traceId: string; spanId: string; traceparent: string } {
  const hex = (n: number) =>
    Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join("");
  const traceId = hex(32);
  const spanId = hex(16);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** The finished spans matching `predicate`, waiting (bounded) until `count` have ended. */
async function spansWhere(
  predicate: (span: ReadableSpan) => boolean,
  count = 1,
): Promise<ReadableSpan[]> {
  for (let i = 0; i < 400; i++) {
    const found = exporter.getFinishedSpans().filter(predicate);
    if (found.length >= count) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`fewer than ${count} matching spans ended`);
}

const ofTask = (taskId: string, name: string) => (span: ReadableSpan) =>
  span.name === name && span.attributes["mcp.task.id"] === taskId;

describe("one trace across two nodes (PostgreSQL)", () => {
  const schema = schemaName("demo_tracing");
  const stores: TaskStore[] = [];
  let a: Awaited<ReturnType<typeof startDemo>>;
  let b: Awaited<ReturnType<typeof startDemo>>;

  beforeAll(async () => {
    const open = async () => {
      const opened = await openStore({ kind: "postgres", databaseUrl: DATABASE_URL, schema });
      stores.push(opened.store);
      return opened.store;
    };
    a = await startDemo({ store: await open(), role: "http", lease: { holder: "node-a" } });
    b = await startDemo({ store: await open(), role: "worker", lease: { holder: "node-b" } });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await Promise.all(stores.map((store) => store.close()));
    await dropSchema(schema);
  });

  it("creation on A, the run on B and its input round are one trace under the client's request", async () => {
    const client = clientTrace();
    const created = await rpc(
      a.url,
      "tools/call",
      {
        name: "confirm_delete",
        arguments: { filename: "traced.txt" },
        _meta: { traceparent: client.traceparent, tracestate: "demo=1" },
      },
      { token: ALICE },
    );
    expect(created.body?.result).toMatchObject({ resultType: "task" });
    const taskId = created.body?.result?.taskId as string;
    await pollTask(a.url, taskId, ALICE, (t) => t.status === "input_required");
    const answered = await rpc(
      a.url,
      "tasks/update",
      { taskId, inputResponses: { confirm: { action: "accept", content: { confirm: true } } } },
      { token: ALICE },
    );
    expect(answered.body?.result).toBeDefined();
    expect(await pollTask(a.url, taskId, ALICE)).toMatchObject({ status: "completed" });

    const [create] = await spansWhere(ofTask(taskId, "mcp.task.create"));
    const [run] = await spansWhere(ofTask(taskId, "mcp.task.run"));
    if (create === undefined || run === undefined) throw new Error("unreachable");

    // The creation: a child of the client's span, in the client's trace.
    expect(create.spanContext().traceId).toBe(client.traceId);
    expect(create.parentSpanContext?.spanId).toBe(client.spanId);
    expect(create.kind).toBe(SpanKind.PRODUCER);
    expect(create.attributes).toMatchObject({
      "mcp.task.id": taskId,
      "mcp.tool.name": "confirm_delete",
      "mcp.era": "2026-07-28",
      "mcp.task.status": "working",
    });

    // The run, on the other node: a child of the creation, same trace, and the tracestate
    // travelled with the task.
    expect(run.spanContext().traceId).toBe(client.traceId);
    expect(run.parentSpanContext?.spanId).toBe(create.spanContext().spanId);
    expect(run.parentSpanContext?.traceState?.get("demo")).toBe("1");
    expect(run.kind).toBe(SpanKind.CONSUMER);
    expect(run.attributes).toMatchObject({
      "mcp.task.id": taskId,
      "mcp.tool.name": "confirm_delete",
      "mcp.era": "2026-07-28",
      "mcp.task.status": "completed",
      "mcp.task.attempt": 1,
      "mcp.task.worker": "node-b",
      "mcp.task.outcome": "completed",
    });
    expect(run.status.code).toBe(SpanStatusCode.UNSET);
    const events = run.events.map((e) => [e.name, e.attributes?.["mcp.task.status"] ?? null]);
    expect(events).toEqual([
      ["mcp.task.input_requested", null],
      ["mcp.task.status", "input_required"],
      ["mcp.task.status", "working"],
      ["mcp.task.input_received", null],
      ["mcp.task.status", "completed"],
    ]);
    expect(run.events[0]?.attributes?.["mcp.task.input.keys"]).toEqual(["confirm"]);
  });

  it("a poll is a short span in the poll's own trace, linked to the task's trace", async () => {
    const client = clientTrace();
    const created = await rpc(
      a.url,
      "tools/call",
      {
        name: "slow_compute",
        arguments: { seconds: 0.05 },
        _meta: { traceparent: client.traceparent },
      },
      { token: ALICE },
    );
    const taskId = created.body?.result?.taskId as string;
    await pollTask(a.url, taskId, ALICE);
    const [create] = await spansWhere(ofTask(taskId, "mcp.task.create"));

    const poller = clientTrace();
    const polled = await rpc(
      a.url,
      "tasks/get",
      { taskId, _meta: { traceparent: poller.traceparent } },
      { token: ALICE },
    );
    expect(polled.body?.result).toMatchObject({ status: "completed" });
    const [poll] = await spansWhere(
      (s) => ofTask(taskId, "tasks/get")(s) && s.spanContext().traceId === poller.traceId,
    );
    expect(poll?.parentSpanContext?.spanId).toBe(poller.spanId);
    expect(poll?.kind).toBe(SpanKind.SERVER);
    expect(poll?.attributes).toMatchObject({
      "mcp.method.name": "tasks/get",
      "mcp.task.id": taskId,
      "mcp.tool.name": "slow_compute",
      "mcp.era": "2026-07-28",
      "mcp.task.status": "completed",
    });
    expect(poll?.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([
      [client.traceId, create?.spanContext().spanId],
    ]);
  });
});

describe("trace context from a client (memory store, both eras)", () => {
  let demo: Awaited<ReturnType<typeof startDualDemo>>;
  beforeAll(async () => {
    demo = await startDualDemo();
  });
  afterAll(async () => {
    await demo?.stop();
  });

  it("ignores a malformed traceparent: the task is created and starts a trace of its own", async () => {
    const created = await rpc(
      demo.url,
      "tools/call",
      {
        name: "slow_compute",
        arguments: { seconds: 0.05 },
        _meta: { traceparent: "00-NOT-A-TRACE-01", tracestate: "x" },
      },
      { token: ALICE },
    );
    expect(created.body?.result).toMatchObject({ resultType: "task" });
    const taskId = created.body?.result?.taskId as string;
    await pollTask(demo.url, taskId, ALICE);
    const [create] = await spansWhere(ofTask(taskId, "mcp.task.create"));
    const [run] = await spansWhere(ofTask(taskId, "mcp.task.run"));
    expect(create?.parentSpanContext).toBeUndefined();
    expect(run?.spanContext().traceId).toBe(create?.spanContext().traceId);
    expect(run?.parentSpanContext?.spanId).toBe(create?.spanContext().spanId);
  });

  it("2026-07-28: the W3C traceparent header when _meta has none", async () => {
    const client = clientTrace();
    const created = await rpc(
      demo.url,
      "tools/call",
      { name: "slow_compute", arguments: { seconds: 0.05 } },
      { token: ALICE, headers: { traceparent: client.traceparent, tracestate: "demo=2" } },
    );
    const taskId = created.body?.result?.taskId as string;
    await pollTask(demo.url, taskId, ALICE);
    const poller = clientTrace();
    await rpc(
      demo.url,
      "tasks/get",
      { taskId },
      { token: ALICE, headers: { traceparent: poller.traceparent } },
    );
    const [create] = await spansWhere(ofTask(taskId, "mcp.task.create"));
    const [run] = await spansWhere(ofTask(taskId, "mcp.task.run"));
    const [poll] = await spansWhere(
      (s) => ofTask(taskId, "tasks/get")(s) && s.spanContext().traceId === poller.traceId,
    );
    expect(create?.parentSpanContext?.spanId).toBe(client.spanId);
    expect(create?.parentSpanContext?.traceState?.get("demo")).toBe("2");
    expect(run?.spanContext().traceId).toBe(client.traceId);
    expect(poll?.parentSpanContext?.spanId).toBe(poller.spanId);
    expect(poll?.links.map((l) => l.context.spanId)).toEqual([create?.spanContext().spanId]);
  });

  it("2025-11-25: the traceparent header of the creating request; tasks/result links to its trace", async () => {
    const post = (body: unknown, headers: Record<string, string>) =>
      fetch(demo.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${ALICE}`,
          ...headers,
        },
        body: JSON.stringify(body),
      });
    const init = await post(legacyInitialize("traced"), {});
    const sessionId = init.headers.get("mcp-session-id") as string;
    await init.body?.cancel();
    const session = { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" };
    const client = clientTrace();
    const created = await readResponse(
      await post(
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "slow_compute", arguments: { seconds: 0.05 }, task: { ttl: 60_000 } },
        },
        { ...session, traceparent: client.traceparent },
      ),
      2,
    );
    const taskId = (created.body?.result?.task as { taskId: string } | undefined)?.taskId;
    if (taskId === undefined) throw new Error(`no task: ${JSON.stringify(created.body)}`);
    const poller = clientTrace();
    const result = await readResponse(
      await post(
        {
          jsonrpc: "2.0",
          id: 3,
          method: "tasks/result",
          params: { taskId, _meta: { traceparent: poller.traceparent } },
        },
        session,
      ),
      3,
    );
    expect(result.body?.result).toBeDefined();
    const [create] = await spansWhere(ofTask(taskId, "mcp.task.create"));
    const [run] = await spansWhere(ofTask(taskId, "mcp.task.run"));
    const [poll] = await spansWhere(ofTask(taskId, "tasks/result"));
    expect(create?.spanContext().traceId).toBe(client.traceId);
    expect(create?.parentSpanContext?.spanId).toBe(client.spanId);
    expect(create?.attributes["mcp.era"]).toBe("2025-11-25");
    expect(run?.parentSpanContext?.spanId).toBe(create?.spanContext().spanId);
    expect(poll?.spanContext().traceId).toBe(poller.traceId);
    expect(poll?.attributes["mcp.task.status"]).toBe("completed");
    expect(poll?.links.map((l) => l.context.spanId)).toEqual([create?.spanContext().spanId]);
    await fetch(demo.url, {
      method: "DELETE",
      headers: { ...session, authorization: `Bearer ${ALICE}` },
    });
  });

  it("a failed tasks/get is a span marked as an error, with no task to link to", async () => {
    const poller = clientTrace();
    const missing = await rpc(
      demo.url,
      "tasks/get",
      { taskId: "no-such-task", _meta: { traceparent: poller.traceparent } },
      { token: ALICE },
    );
    expect(missing.body?.error).toBeDefined();
    const [poll] = await spansWhere(
      (s) => s.name === "tasks/get" && s.spanContext().traceId === poller.traceId,
    );
    expect(poll?.status.code).toBe(SpanStatusCode.ERROR);
    expect(poll?.links).toEqual([]);
  });
});
