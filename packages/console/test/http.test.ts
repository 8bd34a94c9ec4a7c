// The console's HTTP API over a real server on 127.0.0.1: who sees what, and every input
// checked (bad input is a 4xx with a message, never a 500).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, ALICE, BOB, type ConsoleFixture, startConsole } from "./support/server.js";

let f: ConsoleFixture;
let aliceTask: string;
let bobTask: string;
let inputTask: string;

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

async function call(
  path: string,
  init: { token?: string; method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${f.url}${path}`, {
    method: init.method ?? "GET",
    headers: { ...(init.token !== undefined && auth(init.token)), ...init.headers },
    ...(init.body !== undefined && { body: init.body }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {} };
}

beforeAll(async () => {
  f = await startConsole();
  aliceTask = (await f.start(ALICE, "gated_job", { gate: "a" })).taskId;
  bobTask = (await f.start(BOB, "gated_job", { gate: "b" })).taskId;
  const t = await f.start(ALICE, "confirm_delete", { filename: "x.txt" });
  inputTask = t.taskId;
  await f.service.waitFor(ALICE, inputTask, (r) => r.status === "input_required");
});

afterAll(async () => {
  await f?.close();
});

describe("the page", () => {
  it("is served with a strict policy, asks for the token in a form, and loads its own script", async () => {
    const res = await fetch(f.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toMatch(/script-src 'self'/);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const html = await res.text();
    expect(html).toContain('<input id="token" name="token" type="password"');
    expect(html).toContain('<label for="token">Token</label>');
    expect(html).not.toMatch(/<script>(?!<\/script>)/); // no inline code
    const script = await fetch(`${f.url}/app.js`);
    expect(script.headers.get("content-type")).toMatch(/javascript/);
    expect(await script.text()).toContain("sessionStorage");
    expect((await fetch(`${f.url}/app.css`)).status).toBe(200);
    expect((await fetch(f.url, { method: "HEAD" })).status).toBe(200);
  });
});

describe("sign-in", () => {
  it("names the owner, or the operator", async () => {
    expect((await call("/api/session", { token: "alice-token" })).body).toMatchObject({
      role: "owner",
      owner: "alice@acme",
      traffic: false,
    });
    expect((await call("/api/session", { token: ADMIN_TOKEN })).body).toMatchObject({
      role: "operator",
      traffic: true,
    });
  });

  it("refuses a missing, unknown or malformed token with 401 and a message", async () => {
    for (const headers of [
      {},
      auth("nope"),
      { authorization: "Bearer two words" },
      { authorization: "Basic x" },
    ]) {
      const res = await call("/api/tasks", { headers });
      expect(res.status).toBe(401);
      expect(String(res.body.error)).toMatch(/token/i);
    }
  });

  it("never takes a token from the URL", async () => {
    expect((await call("/api/tasks?token=alice-token")).status).toBe(401);
    expect((await call("/api/tasks?token=x", { token: "alice-token" })).status).toBe(400);
  });
});

describe("who sees what", () => {
  it("an owner lists exactly their own tasks, newest first", async () => {
    const res = await call("/api/tasks", { token: "alice-token" });
    const ids = (res.body.tasks as { taskId: string; owner?: string }[]).map((t) => t.taskId);
    expect(ids).toEqual([inputTask, aliceTask]);
    expect((res.body.tasks as { owner?: string }[])[0]!.owner).toBeUndefined();
  });

  it("another owner's task is not found, for reads and actions alike", async () => {
    expect((await call(`/api/tasks/${bobTask}`, { token: "alice-token" })).status).toBe(404);
    const cancel = await call(`/api/tasks/${bobTask}/cancel`, {
      token: "alice-token",
      method: "POST",
    });
    expect(cancel.status).toBe(404);
    const search = await call(`/api/tasks?id=${bobTask}`, { token: "alice-token" });
    expect(search.body.tasks).toEqual([]);
    expect((await f.service.get(BOB, bobTask)).cancelRequestedAt).toBeNull();
  });

  it("an operator lists every owner's tasks with the owner shown", async () => {
    const res = await call("/api/tasks", { token: ADMIN_TOKEN });
    const rows = res.body.tasks as { taskId: string; owner: string }[];
    expect(rows.map((r) => r.taskId)).toEqual([inputTask, bobTask, aliceTask]);
    expect(rows.map((r) => r.owner)).toEqual(["alice@acme", "bob@acme", "alice@acme"]);
    const detail = await call(`/api/tasks/${bobTask}`, { token: ADMIN_TOKEN });
    expect(detail.body).toMatchObject({
      taskId: bobTask,
      owner: "bob@acme",
      toolName: "gated_job",
    });
  });

  it("the traffic panel is for operators only", async () => {
    expect((await call("/api/traffic", { token: "alice-token" })).status).toBe(403);
    expect((await call("/api/traffic", { token: ADMIN_TOKEN })).status).toBe(200);
  });
});

describe("filters, search and pages", () => {
  it("filters by status and tool, searches by id, and pages with cursors", async () => {
    const byTool = await call("/api/tasks?tool=confirm_delete", { token: ADMIN_TOKEN });
    expect((byTool.body.tasks as { taskId: string }[]).map((t) => t.taskId)).toEqual([inputTask]);
    const byStatus = await call("/api/tasks?status=input_required", { token: "alice-token" });
    expect((byStatus.body.tasks as { taskId: string }[]).map((t) => t.taskId)).toEqual([inputTask]);
    const byId = await call(`/api/tasks?id=${aliceTask}`, { token: "alice-token" });
    expect((byId.body.tasks as { taskId: string }[]).map((t) => t.taskId)).toEqual([aliceTask]);
    const first = await call("/api/tasks?limit=2", { token: ADMIN_TOKEN });
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await call(`/api/tasks?limit=2&cursor=${first.body.nextCursor}`, {
      token: ADMIN_TOKEN,
    });
    expect((second.body.tasks as { taskId: string }[]).map((t) => t.taskId)).toEqual([aliceTask]);
    expect(second.body.nextCursor).toBeUndefined();
  });

  it.each([
    ["/api/tasks?status=done", /status/],
    ["/api/tasks?status=working&status=failed", /twice/],
    ["/api/tasks?tool=bad%20tool", /tool/],
    [`/api/tasks?tool=${"x".repeat(200)}`, /tool/],
    ["/api/tasks?cursor=garbage", /cursor/],
    ["/api/tasks?cursor=c1.!!", /cursor/],
    [`/api/tasks?cursor=${"c".repeat(300)}`, /cursor/],
    ["/api/tasks?limit=0", /limit/],
    ["/api/tasks?limit=abc", /limit/],
    ["/api/tasks?limit=1000", /limit/],
    ["/api/tasks?id=../../etc", /task id/],
    ["/api/tasks?sort=asc", /Unknown parameter/],
    ["/api/tasks/bad%20id", /task id/],
    ["/api/tasks/%E0%A4%A", /task id/],
    [`/api/tasks/${"a".repeat(300)}`, /task id/],
    ["/api/session?x=1", /Unknown parameter/],
  ])("GET %s is a 400 with a message", async (path, message) => {
    const res = await call(path, { token: "alice-token" });
    expect(res.status).toBe(400);
    expect(String(res.body.error)).toMatch(message);
  });

  it("unknown endpoints are 404 and wrong methods 405, with messages", async () => {
    expect((await call("/api/nothing", { token: "alice-token" })).status).toBe(404);
    expect((await call("/nothing")).status).toBe(404);
    const wrong = await call("/api/tasks", { token: "alice-token", method: "POST" });
    expect(wrong.status).toBe(405);
    expect(wrong.body.error).toMatch(/GET/);
    expect((await call(`/api/tasks/${aliceTask}/cancel`, { token: "alice-token" })).status).toBe(
      405,
    );
    expect((await call("/app.js", { method: "DELETE" })).status).toBe(405);
  });
});

describe("answering input", () => {
  const post = (
    body: string,
    headers: Record<string, string> = { "content-type": "application/json" },
  ) =>
    call(`/api/tasks/${inputTask}/input`, { token: "alice-token", method: "POST", body, headers });

  it("the detail shows the pending request as a form", async () => {
    const res = await call(`/api/tasks/${inputTask}`, { token: "alice-token" });
    expect(res.body.inputRequests).toEqual([
      {
        key: "confirm",
        method: "elicitation/create",
        message: "Delete x.txt?",
        fields: [
          expect.objectContaining({ name: "confirm", kind: "boolean", required: true }),
          expect.objectContaining({ name: "reason", kind: "string", required: false }),
          expect.objectContaining({ name: "copies", kind: "integer", minimum: 0, maximum: 9 }),
          expect.objectContaining({ name: "mode", kind: "enum", required: true }),
        ],
      },
    ]);
    expect(res.body.cancelMode).toBe("cooperative");
  });

  it.each([
    ["not json", 400, /JSON/],
    ["[]", 400, /key, action, content/],
    [JSON.stringify({ key: "nope", action: "accept", content: {} }), 409, /no longer pending/],
    [JSON.stringify({ key: "confirm", action: "maybe" }), 400, /action/],
    [
      JSON.stringify({ key: "confirm", action: "accept", content: { confirm: true } }),
      400,
      /Mode.*required/,
    ],
    [
      JSON.stringify({
        key: "confirm",
        action: "accept",
        content: { confirm: "yes", mode: "trash" },
      }),
      400,
      /true or false/,
    ],
    [
      JSON.stringify({
        key: "confirm",
        action: "accept",
        content: { confirm: true, mode: "burn" },
      }),
      400,
      /choices/,
    ],
    [
      JSON.stringify({
        key: "confirm",
        action: "accept",
        content: { confirm: true, mode: "trash", copies: 1.5 },
      }),
      400,
      /whole number/,
    ],
    [
      JSON.stringify({
        key: "confirm",
        action: "accept",
        content: { confirm: true, mode: "trash", copies: 99 },
      }),
      400,
      /at most 9/,
    ],
    [
      JSON.stringify({
        key: "confirm",
        action: "accept",
        content: { confirm: true, mode: "trash", extra: 1 },
      }),
      400,
      /Unknown field/,
    ],
    [
      JSON.stringify({
        key: "confirm",
        action: "accept",
        content: { confirm: true, mode: "trash" },
        more: 1,
      }),
      400,
      /Unknown property/,
    ],
  ])("answer %s → %i", async (body, status, message) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(String(res.body.error)).toMatch(message);
    expect((await f.service.get(ALICE, inputTask)).status).toBe("input_required");
  });

  it("refuses other content types and oversized bodies", async () => {
    expect((await post("{}", { "content-type": "text/plain" })).status).toBe(415);
    const big = JSON.stringify({
      key: "confirm",
      action: "accept",
      content: { reason: "x".repeat(70_000) },
    });
    expect((await post(big)).status).toBe(413);
  });

  it("a valid answer resumes the task, which completes", async () => {
    const res = await post(
      JSON.stringify({
        key: "confirm",
        action: "accept",
        content: { confirm: true, mode: "shred", copies: 0 },
      }),
    );
    expect(res.status).toBe(200);
    const done = await f.service.waitFor(ALICE, inputTask, (t) => t.status === "completed");
    expect(done.outcome).toEqual({
      kind: "result",
      result: { content: [{ type: "text", text: "Deleted x.txt (shred)" }] },
    });
    const again = await post(JSON.stringify({ key: "confirm", action: "decline" }));
    expect(again.status).toBe(409);
  });
});

describe("cancellation, era-correct", () => {
  it("a 2026-07-28 task gets a cooperative request its handler acknowledges", async () => {
    const t = await f.start(ALICE, "gated_job", { gate: "never-1" });
    await f.service.waitFor(ALICE, t.taskId, (r) => r.statusMessage !== null);
    const res = await call(`/api/tasks/${t.taskId}/cancel`, {
      token: "alice-token",
      method: "POST",
    });
    expect(res.status).toBe(200);
    expect(res.body.cancelRequestedAt).toEqual(expect.any(String));
    const done = await f.service.waitFor(ALICE, t.taskId, (r) => r.status === "cancelled");
    expect(done.status).toBe("cancelled");
    const again = await call(`/api/tasks/${t.taskId}/cancel`, {
      token: "alice-token",
      method: "POST",
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/already ended/);
  });

  it("a 2025-11-25 task is cancelled at once; an operator acts as the task's owner", async () => {
    const t = await f.start(BOB, "gated_job", { gate: "never-2" }, "2025-11-25");
    const res = await call(`/api/tasks/${t.taskId}/cancel`, { token: ADMIN_TOKEN, method: "POST" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: "cancelled",
      cancelMode: "immediate",
      owner: "bob@acme",
    });
  });
});

describe("live updates", () => {
  it("streams a changed task to its owner and not to another owner", async () => {
    const controller = new AbortController();
    const open = (token: string) =>
      fetch(`${f.url}/api/events`, { headers: auth(token), signal: controller.signal });
    const [alice, bob] = await Promise.all([open("alice-token"), open("bob-token")]);
    expect(alice.headers.get("content-type")).toMatch(/text\/event-stream/);
    const t = await f.start(ALICE, "gated_job", { gate: "live" });
    f.gates.open("live");
    await f.service.waitFor(ALICE, t.taskId, (r) => r.status === "completed");
    const read = async (res: Response, until: (text: string) => boolean) => {
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      for (let i = 0; i < 200 && !until(text); i++) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += decoder.decode(chunk.value, { stream: true });
      }
      return text;
    };
    const aliceText = await read(alice, (s) => s.includes('"status":"completed"'));
    expect(aliceText).toContain(t.taskId);
    // Bob's stream: create one of Bob's tasks after Alice's, and read until it shows up.
    const b = await f.start(BOB, "gated_job", { gate: "live-bob" });
    const bobText = await read(bob, (s) => s.includes(b.taskId));
    expect(bobText).not.toContain(t.taskId);
    controller.abort();
  });
});
