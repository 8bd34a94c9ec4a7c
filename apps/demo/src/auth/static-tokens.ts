import { timingSafeEqual } from "node:crypto";
import { type Owner, owner } from "@mcp-tasks/core";
import type { RequestHead } from "@mcp-tasks/http";
import { bearerToken, type OwnerResolution, type OwnerResolver } from "./resolver.js";

/**
 * Parses `token=principal@tenant,token2=principal2@tenant2` (tenant optional). Throws a
 * `TypeError` naming the bad entry.
 */
export function parseTokenList(spec: string): Map<string, Owner> {
  const tokens = new Map<string, Owner>();
  for (const entry of spec
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = entry.indexOf("=");
    const token = entry.slice(0, eq).trim();
    const who = entry.slice(eq + 1).trim();
    if (eq <= 0 || who.length === 0 || !/^[\x21-\x7e]+$/.test(token)) {
      throw new TypeError(`bad token entry '${entry}': expected token=principal@tenant`);
    }
    const at = who.lastIndexOf("@");
    const principalId = at > 0 ? who.slice(0, at) : who;
    const tenantId = at > 0 ? who.slice(at + 1) : null;
    tokens.set(token, owner({ principalId, tenantId }));
  }
  return tokens;
}

/**
 * Static bearer tokens mapped to owners (`Authorization: Bearer <token>`). No header:
 * anonymous. An unknown or malformed token: `401`.
 */
export class StaticTokenResolver implements OwnerResolver {
  readonly #tokens: ReadonlyArray<readonly [Buffer, Owner]>;

  constructor(tokens: ReadonlyMap<string, Owner>) {
    this.#tokens = [...tokens].map(([token, who]) => [Buffer.from(token), who] as const);
  }

  async resolve(request: RequestHead): Promise<OwnerResolution> {
    const token = bearerToken(request);
    if (token === undefined) return { kind: "anonymous" };
    if (token === null) return { kind: "reject", status: 401, message: "Malformed bearer token" };
    const presented = Buffer.from(token);
    let found: Owner | undefined;
    for (const [known, who] of this.#tokens) {
      // Compare every entry in constant time, so timing does not reveal a near match.
      if (known.length === presented.length && timingSafeEqual(known, presented)) found = who;
    }
    return found
      ? { kind: "owner", owner: found }
      : { kind: "reject", status: 401, message: "Unknown bearer token" };
  }
}
