import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../src/config.js";
import { spawnDemo, startProcess } from "./helpers/process.js";
import { legacyInitialize, pollTask, rpc } from "./helpers/wire.js";

describe("the demo binary", () => {
  it("parses flags over environment variables", () => {
    expect(
      parseConfig(["--port", "0", "--store", "memory"], {
        PORT: "9",
        HOST: "::1",
        DEMO_TOKENS: "a=b@c",
      }),
    ).toMatchObject({
      port: 0,
      host: "::1",
      store: "memory",
      tokens: "a=b@c",
      // The require-owner posture is the default; --allow-anonymous opts out.
      requireAuth: true,
      legacy: true,
    });
    expect(parseConfig(["--allow-anonymous"], {}).requireAuth).toBe(false);
    expect(parseConfig([], { DEMO_ALLOW_ANONYMOUS: "1" }).requireAuth).toBe(false);
    expect(parseConfig([], { DEMO_REQUIRE_AUTH: "0" }).requireAuth).toBe(false);
    expect(parseConfig([], { DEMO_REQUIRE_AUTH: "1" }).requireAuth).toBe(true);
    expect(() => parseConfig(["--allow-anonymous", "--require-auth"], {})).toThrow(/contradict/);
    expect(() => parseConfig(["--port", "x"], {})).toThrow(/port/);
    expect(() => parseConfig(["--store", "redis"], {})).toThrow(/store/);
    expect(() => parseConfig(["--bogus"], {})).toThrow();
    expect(parseConfig([], { PORT: "", HOST: "", MCP_TASKS_STORE: "" })).toMatchObject({
      port: 3000,
      host: "127.0.0.1",
      store: "memory",
    });
    expect(() => parseConfig(["--schema", "Bad-Name"], {})).toThrow(/schema/);
    expect(() => parseConfig(["--lease-ms", "5"], {})).toThrow(/lease/);
    expect(
      parseConfig(["--store", "pglite", "--lease-ms", "2000"], {
        PGLITE_DIR: "/tmp/x",
        MCP_TASKS_SCHEMA: "s1",
        DATABASE_URL: "postgres://db/x",
      }),
    ).toMatchObject({
      store: "pglite",
      dataDir: "/tmp/x",
      schema: "s1",
      databaseUrl: "postgres://db/x",
      leaseMs: 2000,
      sweepMs: 2000,
    });
    expect(parseConfig([], {})).toMatchObject({
      dataDir: ".mcp-tasks",
      databaseUrl: "postgres://postgres@127.0.0.1:5432/test",
      schema: undefined,
      leaseMs: 30_000,
      sweepMs: 10_000,
    });
  });

  it("takes the console's operator tokens from --admin-tokens, apart from MCP tokens", () => {
    const ops = "operator-token-0123456789";
    expect(parseConfig([], {}).adminTokens).toEqual([]);
    expect(parseConfig(["--admin-tokens", ` ${ops}, second-operator-token `], {})).toMatchObject({
      adminTokens: [ops, "second-operator-token"],
    });
    expect(parseConfig([], { DEMO_ADMIN_TOKENS: ops }).adminTokens).toEqual([ops]);
    expect(() => parseConfig(["--admin-tokens", "short"], {})).toThrow(/16 to 512/);
    expect(() => parseConfig(["--admin-tokens", "with space in it 0123"], {})).toThrow(
      /admin-tokens/,
    );
    expect(() => parseConfig(["--admin-tokens", ops, "--tokens", `${ops}=alice@acme`], {})).toThrow(
      /must not also be an MCP token/,
    );
  });

  it("identifies callers by JWT with --auth jwt: owners are isolated, bad tokens get 401", async () => {
    const secret = "a-test-secret-of-at-least-32-chars!";
    const p = await startProcess([
      "--port",
      "0",
      "--auth",
      "jwt",
      "--jwt-secret",
      secret,
      "--jwt-audience",
      "mcp",
    ]);
    const { url } = p;
    try {
      expect(p.out()).toContain("auth: JWT");
      const sign = (sub: string) =>
        new SignJWT({ tenant: "acme" })
          .setProtectedHeader({ alg: "HS256" })
          .setSubject(sub)
          .setAudience("mcp")
          .setIssuedAt()
          .setExpirationTime("5m")
          .sign(new TextEncoder().encode(secret));
      const alice = await sign("alice");
      const bob = await sign("bob");
      const created = await rpc(
        url,
        "tools/call",
        { name: "slow_compute", arguments: { seconds: 0, label: "jwt" } },
        { token: alice },
      );
      const taskId = String(created.body?.result?.taskId);
      expect(created.body?.result?.resultType).toBe("task");
      expect((await rpc(url, "tasks/get", { taskId }, { token: alice })).body?.result?.taskId).toBe(
        taskId,
      );
      expect((await rpc(url, "tasks/get", { taskId }, { token: bob })).body?.error?.code).toBe(
        -32602,
      );
      // Anonymous callers are refused by default (the require-owner posture).
      expect((await rpc(url, "tasks/get", { taskId })).status).toBe(401);
      expect((await rpc(url, "tasks/get", { taskId }, { token: `${alice}x` })).status).toBe(401);
    } finally {
      await p.kill("SIGTERM");
    }
  }, 30_000);

  it("trusts only the gateway's header with --auth gateway", async () => {
    const secret = "gateway-secret-0123456789";
    const p = await startProcess(["--port", "0", "--auth", "gateway", "--gateway-secret", secret]);
    const { url } = p;
    try {
      const as = (who: string, withSecret = true) => ({
        headers: {
          "x-authenticated-user": who,
          ...(withSecret && { "x-gateway-secret": secret }),
        },
      });
      const created = await rpc(
        url,
        "tools/call",
        { name: "slow_compute", arguments: { seconds: 0, label: "gw" } },
        as("alice@acme"),
      );
      const taskId = String(created.body?.result?.taskId);
      expect((await rpc(url, "tasks/get", { taskId }, as("alice@acme"))).body?.result?.taskId).toBe(
        taskId,
      );
      expect((await rpc(url, "tasks/get", { taskId }, as("bob@acme"))).body?.error?.code).toBe(
        -32602,
      );
      expect((await rpc(url, "tasks/get", { taskId }, as("alice@acme", false))).status).toBe(403);
    } finally {
      await p.kill("SIGTERM");
    }
  }, 30_000);

  it("refuses incomplete auth settings", async () => {
    const jwt = spawnDemo(["--port", "0", "--auth", "jwt"]);
    expect(await jwt.exited).toBe(2);
    expect(jwt.err()).toContain("--jwt-secret");
    expect(() => parseConfig(["--auth", "gateway", "--gateway-secret", "short"], {})).toThrow(
      /gateway-secret/,
    );
    expect(() => parseConfig(["--auth", "magic"], {})).toThrow(/--auth/);
  });

  it("takes --otel off|console|otlp from the flag or DEMO_OTEL, off by default", () => {
    expect(parseConfig([], {}).otel).toBe("off");
    expect(parseConfig([], { DEMO_OTEL: "otlp" }).otel).toBe("otlp");
    expect(parseConfig(["--otel", "console"], { DEMO_OTEL: "otlp" }).otel).toBe("console");
    expect(() => parseConfig(["--otel", "jaeger"], {})).toThrow(
      /--otel must be off, console or otlp/,
    );
  });

  it("--otel console prints each span; a client's traceparent is the creation's parent", async () => {
    const traceId = "5b8efff798038103d269b633813fc60c";
    const p = await startProcess(["--port", "0", "--tokens", "t1=alice@acme", "--otel", "console"]);
    expect(p.out()).toContain("tracing: console");
    const created = await rpc(
      p.url,
      "tools/call",
      {
        name: "slow_compute",
        arguments: { seconds: 0.05 },
        _meta: { traceparent: `00-${traceId}-eee19b7ec3c1b174-01` },
      },
      { token: "t1" },
    );
    const taskId = created.body?.result?.taskId as string;
    expect(taskId).toBeTypeOf("string");
    await pollTask(p.url, taskId, "t1");
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    const out = p.out();
    for (const name of ["mcp.task.create", "mcp.task.run", "tasks/get"]) {
      expect(out).toContain(`name: '${name}'`);
    }
    expect(out).toContain(`traceId: '${traceId}'`);
    expect(out).toContain(`'mcp.task.id': '${taskId}'`);
  }, 30_000);

  it("--otel otlp sends the spans to OTEL_EXPORTER_OTLP_ENDPOINT (flushed on shutdown)", async () => {
    const received: { path: string; type: string; body: Buffer }[] = [];
    const collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        received.push({
          path: req.url ?? "",
          type: req.headers["content-type"] ?? "",
          body: Buffer.concat(chunks),
        });
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = collector.address() as AddressInfo;
      const endpoint = `http://127.0.0.1:${port}`;
      const p = await startProcess(["--port", "0", "--tokens", "t1=alice@acme", "--otel", "otlp"], {
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
      });
      expect(p.out()).toContain(`tracing: otlp ${endpoint}/v1/traces`);
      const traceId = "0af7651916cd43dd8448eb211c80319c";
      const created = await rpc(
        p.url,
        "tools/call",
        {
          name: "slow_compute",
          arguments: { seconds: 0.05 },
          _meta: { traceparent: `00-${traceId}-b7ad6b7169203331-01` },
        },
        { token: "t1" },
      );
      await pollTask(p.url, created.body?.result?.taskId as string, "t1");
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
      expect(received.length).toBeGreaterThan(0);
      expect(received.every((r) => r.path === "/v1/traces")).toBe(true);
      // OTLP/HTTP with JSON encoding (this exporter's): trace ids as hex strings.
      expect(received.every((r) => r.type.startsWith("application/json"))).toBe(true);
      const sent = received.map((r) => r.body.toString("utf8")).join("\n");
      expect(sent).toContain(`"traceId":"${traceId}"`);
      expect(sent).toContain('"name":"mcp.task.run"');
    } finally {
      collector.close();
    }
  }, 30_000);

  it("prints help", async () => {
    const p = spawnDemo(["--help"]);
    expect(await p.exited).toBe(0);
    expect(p.out()).toContain("--require-auth");
    expect(p.out()).toContain("--max-bytes-per-owner");
  });

  it("takes the store quotas from flags or the environment, with defaults for a real server", () => {
    expect(parseConfig([], {}).limits).toEqual({
      maxTasks: 100_000,
      maxTasksPerOwner: 10_000,
      maxBytesPerOwner: 64 * 1024 * 1024,
    });
    expect(
      parseConfig(
        ["--max-tasks", "500", "--max-tasks-per-owner", "50", "--max-bytes-per-owner", "2M"],
        {
          MCP_TASKS_MAX_TASKS: "9",
        },
      ).limits,
    ).toEqual({ maxTasks: 500, maxTasksPerOwner: 50, maxBytesPerOwner: 2 * 1024 * 1024 });
    expect(
      parseConfig([], {
        MCP_TASKS_MAX_TASKS: "7",
        MCP_TASKS_MAX_TASKS_PER_OWNER: "3",
        MCP_TASKS_MAX_BYTES_PER_OWNER: "65536",
      }).limits,
    ).toEqual({ maxTasks: 7, maxTasksPerOwner: 3, maxBytesPerOwner: 65_536 });
    for (const [text, bytes] of [
      ["64K", 65_536],
      ["64KiB", 65_536],
      ["1g", 1024 ** 3],
      ["100b", 100],
    ] as const) {
      expect(parseConfig(["--max-bytes-per-owner", text], {}).limits.maxBytesPerOwner).toBe(bytes);
    }
    for (const bad of ["0", "-1", "1.5M", "lots", "2T", ""]) {
      expect(() => parseConfig(["--max-bytes-per-owner", bad], {})).toThrow(
        /--max-bytes-per-owner/,
      );
    }
    expect(() => parseConfig(["--max-tasks", "0"], {})).toThrow(/--max-tasks/);
    expect(() => parseConfig(["--max-tasks-per-owner", "x"], {})).toThrow(/--max-tasks-per-owner/);
  });

  it("enforces --max-bytes-per-owner: past it a new task gets store_full naming the quota", async () => {
    const p = await startProcess([
      "--port",
      "0",
      "--tokens",
      "t1=alice@acme,t2=bob@acme",
      "--max-bytes-per-owner",
      "2K",
    ]);
    try {
      const call = (token: string) =>
        rpc(
          p.url,
          "tools/call",
          { name: "slow_compute", arguments: { seconds: 30, label: "x".repeat(1200) } },
          { token },
        );
      expect((await call("t1")).body?.result).toMatchObject({ resultType: "task" });
      const refused = await call("t1");
      expect(refused.body?.error).toMatchObject({
        code: -32603,
        data: { reason: "store_full", quota: "maxBytesPerOwner", limit: 2048 },
      });
      expect(refused.body?.error?.message).toContain("maxBytesPerOwner");
      // Another owner's quota is their own.
      expect((await call("t2")).body?.result).toMatchObject({ resultType: "task" });
    } finally {
      await p.kill();
    }
  }, 30_000);

  it("refuses an unreachable store clearly", async () => {
    const p = spawnDemo([
      "--store",
      "postgres",
      "--database-url",
      "postgres://postgres:secret@127.0.0.1:1/test",
      "--port",
      "0",
    ]);
    expect(await p.exited).toBe(1);
    expect(p.err()).toContain("cannot open the postgres store at 127.0.0.1:1/test");
    expect(p.err()).not.toContain("secret");
  });

  it("prints one listening line, serves, and exits 0 on SIGTERM after in-flight requests", async () => {
    const p = await startProcess(["--port", "0", "--tokens", "t1=alice@acme"]);
    const url = p.url;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(p.out().match(/listening on/g)).toHaveLength(1);
    expect(p.out()).toContain("store: memory");
    const inFlight = rpc(
      url,
      "tools/call",
      { name: "slow_compute", arguments: { seconds: 0.3 } },
      { token: "t1", capabilities: {} },
    );
    await new Promise((r) => setTimeout(r, 100));
    p.child.kill("SIGTERM");
    const answered = await inFlight;
    expect(answered.body?.result).toMatchObject({ content: [{ text: "Computed job in 0.3s" }] });
    expect(await p.exited).toBe(0);
  }, 30_000);

  it("with --legacy off, answers 2025-11-25 clients with a clear error", async () => {
    const p = await startProcess(["--port", "0", "--legacy", "off", "--tokens", "t1=alice@acme"]);
    try {
      const url = p.url;
      expect(p.out()).toContain("eras: 2026-07-28)");
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: "Bearer t1",
        },
        body: JSON.stringify(legacyInitialize("old")),
      });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error?: { code?: number; message?: string } };
      expect(body.error?.code).toBe(-32022);
      expect(body.error?.message).toContain("use 2026-07-28");
    } finally {
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
    }
  });
});
