import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../src/config.js";
import { spawnDemo, startProcess } from "./helpers/process.js";
import { legacyInitialize, rpc } from "./helpers/wire.js";

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
      requireAuth: false,
      legacy: true,
    });
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
      expect((await rpc(url, "tasks/get", { taskId })).body?.error?.code).toBe(-32602);
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

  it("prints help", async () => {
    const p = spawnDemo(["--help"]);
    expect(await p.exited).toBe(0);
    expect(p.out()).toContain("--require-auth");
  });

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
