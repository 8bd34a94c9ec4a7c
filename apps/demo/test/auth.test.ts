import { owner } from "@mcp-tasks/core";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { GatewayHeaderResolver } from "../src/auth/gateway-header.js";
import { JwtResolver } from "../src/auth/jwt.js";
import { parseTokenList, StaticTokenResolver } from "../src/auth/static-tokens.js";

const req = (headers: Record<string, string> = {}) =>
  new Request("http://127.0.0.1/mcp", { headers });

describe("owner resolvers", () => {
  it("static tokens: known token → owner, none → anonymous, unknown/malformed → 401", async () => {
    const tokens = parseTokenList("alice-token=alice@acme, bob-token=bob");
    expect(tokens.get("bob-token")).toEqual(owner({ principalId: "bob" }));
    const resolver = new StaticTokenResolver(tokens);
    expect(await resolver.resolve(req({ authorization: "Bearer alice-token" }))).toEqual({
      kind: "owner",
      owner: owner({ principalId: "alice", tenantId: "acme" }),
    });
    expect(await resolver.resolve(req())).toEqual({ kind: "anonymous" });
    expect(await resolver.resolve(req({ authorization: "Bearer alice-tokem" }))).toMatchObject({
      kind: "reject",
      status: 401,
    });
    expect(await resolver.resolve(req({ authorization: "Basic abc" }))).toMatchObject({
      kind: "reject",
      status: 401,
    });
    expect(() => parseTokenList("oops")).toThrow(TypeError);
  });

  it("JWT: sub → principal, tenant claim → tenant, aud → audience; bad tokens → 401", async () => {
    const secret = new TextEncoder().encode("a-test-secret-of-at-least-32-bytes!!");
    const resolver = new JwtResolver({
      key: secret,
      issuer: "https://issuer",
      audience: "mcp-demo",
      tenantClaim: "org",
    });
    const sign = (claims: Record<string, unknown>, aud = "mcp-demo", key = secret) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: "HS256" })
        .setSubject("alice")
        .setIssuer("https://issuer")
        .setAudience(aud)
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(key);
    expect(
      await resolver.resolve(req({ authorization: `Bearer ${await sign({ org: "acme" })}` })),
    ).toEqual({
      kind: "owner",
      owner: owner({ principalId: "alice", tenantId: "acme", audience: "mcp-demo" }),
    });
    expect(
      await resolver.resolve(req({ authorization: `Bearer ${await sign({}, "other")}` })),
    ).toMatchObject({ kind: "reject", status: 401 });
    const forged = await sign(
      { org: "acme" },
      "mcp-demo",
      new TextEncoder().encode("another-secret-of-at-least-32-bytes!"),
    );
    expect(await resolver.resolve(req({ authorization: `Bearer ${forged}` }))).toMatchObject({
      kind: "reject",
      status: 401,
    });
    expect(await resolver.resolve(req())).toEqual({ kind: "anonymous" });
  });

  it("JWT: refuses tokens without exp, older than the maximum age, or with a tenant that is not a string", async () => {
    const secret = new TextEncoder().encode("a-test-secret-of-at-least-32-bytes!!");
    const resolver = new JwtResolver({ key: secret, audience: "mcp-demo", maxTokenAgeSeconds: 60 });
    const now = Math.floor(Date.now() / 1000);
    const sign = (claims: Record<string, unknown>) =>
      new SignJWT({ sub: "alice", aud: "mcp-demo", ...claims })
        .setProtectedHeader({ alg: "HS256" })
        .sign(secret);
    const as = async (claims: Record<string, unknown>) =>
      resolver.resolve(req({ authorization: `Bearer ${await sign(claims)}` }));
    expect(await as({ iat: now, exp: now + 30, tenant: "acme" })).toMatchObject({ kind: "owner" });
    // No exp: a token that never expires.
    expect(await as({ iat: now })).toMatchObject({ kind: "reject", status: 401 });
    // Issued two hours ago, valid for a year: older than the maximum age.
    expect(await as({ iat: now - 7200, exp: now + 31_536_000 })).toMatchObject({
      kind: "reject",
      status: 401,
    });
    // Under a maximum age, iat is required.
    expect(await as({ exp: now + 30 })).toMatchObject({ kind: "reject", status: 401 });
    // A numeric tenant would otherwise become "no tenant", merging tenants.
    for (const tenant of [42, true, ["acme"], { id: "acme" }, ""]) {
      expect(await as({ iat: now, exp: now + 30, tenant })).toEqual({
        kind: "reject",
        status: 401,
        message: "The token's tenant claim is not a string",
      });
    }
    // Without a maximum age, exp alone is enough.
    const unbounded = new JwtResolver({ key: secret, audience: "mcp-demo", maxTokenAgeSeconds: 0 });
    const noIat = await sign({ exp: now + 30 });
    expect(await unbounded.resolve(req({ authorization: `Bearer ${noIat}` }))).toMatchObject({
      kind: "owner",
    });
  });

  it("gateway header: needs the shared secret; the header names principal@tenant", async () => {
    const resolver = new GatewayHeaderResolver({
      secret: "0123456789abcdef-secret",
      audience: "api",
    });
    expect(await resolver.resolve(req({ "x-authenticated-user": "carol@beta" }))).toMatchObject({
      kind: "reject",
      status: 403,
    });
    expect(
      await resolver.resolve(
        req({
          "x-gateway-secret": "0123456789abcdef-secret",
          "x-authenticated-user": "carol@beta",
        }),
      ),
    ).toEqual({
      kind: "owner",
      owner: owner({ principalId: "carol", tenantId: "beta", audience: "api" }),
    });
    expect(await resolver.resolve(req({ "x-gateway-secret": "0123456789abcdef-secret" }))).toEqual({
      kind: "anonymous",
    });
    expect(() => new GatewayHeaderResolver({ secret: "short" })).toThrow(TypeError);
    // A secret of another length, or one differing in its last character: 403 alike.
    for (const wrong of ["x", "0123456789abcdef-secreT", "0123456789abcdef-secret-and-more"]) {
      expect(await resolver.resolve(req({ "x-gateway-secret": wrong }))).toMatchObject({
        kind: "reject",
        status: 403,
      });
    }
  });

  it("gateway header: a repeated identity or secret header is refused 400, not joined", async () => {
    const secret = "0123456789abcdef-secret";
    const resolver = new GatewayHeaderResolver({ secret });
    const repeated = (name: string, ...values: string[]) => {
      const headers = new Headers({ "x-gateway-secret": secret });
      headers.delete(name);
      for (const value of values) headers.append(name, value);
      return new Request("http://127.0.0.1/mcp", { headers });
    };
    expect(
      await resolver.resolve(repeated("x-authenticated-user", "alice@acme", "bob@acme")),
    ).toMatchObject({ kind: "reject", status: 400, message: /Repeated x-authenticated-user/ });
    expect(await resolver.resolve(repeated("x-gateway-secret", secret, secret))).toMatchObject({
      kind: "reject",
      status: 400,
    });
    expect(() => new GatewayHeaderResolver({ secret: "0123456789abcdef,secret" })).toThrow(/comma/);
  });
});
