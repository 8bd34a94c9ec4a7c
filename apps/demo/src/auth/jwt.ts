import { owner } from "@mcp-tasks/core";
import { createRemoteJWKSet, type JWTVerifyGetKey, jwtVerify } from "jose";

type VerifyKey = Parameters<typeof jwtVerify>[1];

import type { RequestHead } from "@mcp-tasks/http";
import { bearerToken, type OwnerResolution, type OwnerResolver } from "./resolver.js";

/** Settings of a {@link JwtResolver}. */
export interface JwtResolverOptions {
  /** A symmetric secret (HS256/384/512), a key, or a JWKS URL (RS/ES/EdDSA). */
  readonly key: Exclude<VerifyKey, JWTVerifyGetKey> | URL | JWTVerifyGetKey;
  /** Required `iss`, when set. */
  readonly issuer?: string;
  /** Required `aud` (one of), when set; the matched audience becomes the owner's audience. */
  readonly audience?: string | readonly string[];
  /** The claim holding the tenant; default `tenant`. */
  readonly tenantClaim?: string;
  /** Accepted algorithms; default whatever `jose` allows for the key. */
  readonly algorithms?: readonly string[];
  /**
   * The oldest token accepted, by its `iat`, in seconds (e.g. 86 400), or `0` for no
   * bound; default 86 400 (one day). With a bound, tokens must carry `iat`.
   */
  readonly maxTokenAgeSeconds?: number;
}

/** The default {@link JwtResolverOptions.maxTokenAgeSeconds}: one day. */
export const DEFAULT_JWT_MAX_AGE_SECONDS = 86_400;

/**
 * JSON Web Tokens verified with `jose`: `sub` becomes the principal, a configurable claim the
 * tenant, and `aud` the audience (so a token for another audience is another owner). No
 * header: anonymous. A bad signature, expiry, issuer or audience: `401`. Every token must
 * carry `exp` (a token that never expires is refused) and, under a maximum token age,
 * `iat`; a tenant claim that is not a string is refused (it would merge tenants).
 */
export class JwtResolver implements OwnerResolver {
  readonly #options: JwtResolverOptions;
  readonly #key: Exclude<VerifyKey, JWTVerifyGetKey> | JWTVerifyGetKey;

  constructor(options: JwtResolverOptions) {
    this.#options = options;
    this.#key = options.key instanceof URL ? createRemoteJWKSet(options.key) : options.key;
  }

  async resolve(request: RequestHead): Promise<OwnerResolution> {
    const token = bearerToken(request);
    if (token === undefined) return { kind: "anonymous" };
    if (token === null) return { kind: "reject", status: 401, message: "Malformed bearer token" };
    const { issuer, audience, algorithms } = this.#options;
    const maxAge = this.#options.maxTokenAgeSeconds ?? DEFAULT_JWT_MAX_AGE_SECONDS;
    try {
      const verifyOptions = {
        requiredClaims: maxAge > 0 ? ["exp", "iat"] : ["exp"],
        ...(maxAge > 0 && { maxTokenAge: maxAge }),
        ...(issuer !== undefined && { issuer }),
        ...(audience !== undefined && { audience: audience as string | string[] }),
        ...(algorithms !== undefined && { algorithms: [...algorithms] }),
      };
      const { payload } =
        typeof this.#key === "function"
          ? await jwtVerify(token, this.#key, verifyOptions)
          : await jwtVerify(token, this.#key, verifyOptions);
      if (typeof payload.sub !== "string" || payload.sub.length === 0) {
        return { kind: "reject", status: 401, message: "The token has no subject" };
      }
      const tenant = payload[this.#options.tenantClaim ?? "tenant"];
      if (tenant !== undefined && (typeof tenant !== "string" || tenant.length === 0)) {
        return { kind: "reject", status: 401, message: "The token's tenant claim is not a string" };
      }
      const audiences = Array.isArray(payload.aud) ? payload.aud : payload.aud ? [payload.aud] : [];
      const wanted = audience === undefined ? null : new Set([audience].flat());
      const matched = wanted ? audiences.find((a) => wanted.has(a)) : audiences[0];
      return {
        kind: "owner",
        owner: owner({
          principalId: payload.sub,
          tenantId: typeof tenant === "string" ? tenant : null,
          audience: matched ?? null,
        }),
      };
    } catch {
      return { kind: "reject", status: 401, message: "Invalid or expired token" };
    }
  }
}
