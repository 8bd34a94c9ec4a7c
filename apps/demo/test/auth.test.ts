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
  });
});
