import { randomBytes } from "node:crypto";
import { owner } from "@mcp-tasks/core";
import type { DemoConfig } from "../config.js";
import { GatewayHeaderResolver } from "./gateway-header.js";
import { JwtResolver } from "./jwt.js";
import type { OwnerResolver } from "./resolver.js";
import { parseTokenList, StaticTokenResolver } from "./static-tokens.js";

/** The resolver the flags ask for, plus lines worth printing at start (e.g. dev tokens). */
export interface ConfiguredResolver {
  readonly resolver: OwnerResolver;
  readonly startupLines: readonly string[];
  /** Settings worth a warning on stderr at start (e.g. JWTs accepted for any audience). */
  readonly warnings: readonly string[];
}

/** Builds the owner-extraction hook named by `--auth`. Throws on unusable settings. */
export function resolverFromConfig(config: DemoConfig): ConfiguredResolver {
  switch (config.auth) {
    case "jwt": {
      const key =
        config.jwksUrl !== undefined
          ? new URL(config.jwksUrl)
          : new TextEncoder().encode(config.jwtSecret ?? "");
      return {
        resolver: new JwtResolver({
          key,
          tenantClaim: config.jwtTenantClaim,
          ...(config.jwksUrl === undefined && { algorithms: ["HS256"] }),
          ...(config.jwtIssuer !== undefined && { issuer: config.jwtIssuer }),
          ...(config.jwtAudience !== undefined && { audience: config.jwtAudience }),
          maxTokenAgeSeconds: config.jwtMaxAgeSeconds,
        }),
        startupLines: [
          `auth: JWT (sub → principal, ${config.jwtTenantClaim} → tenant, aud → audience; exp required${config.jwtMaxAgeSeconds > 0 ? `, at most ${config.jwtMaxAgeSeconds} s old` : ""})`,
        ],
        warnings:
          config.jwtAudience === undefined
            ? [
                "warning: no --jwt-audience: tokens the issuer made for any other service are accepted here too",
              ]
            : [],
      };
    }
    case "gateway":
      return {
        resolver: new GatewayHeaderResolver({
          secret: config.gatewaySecret ?? "",
          header: config.gatewayHeader,
        }),
        startupLines: [`auth: trusted gateway header ${config.gatewayHeader}`],
        warnings: [],
      };
    case "tokens": {
      if (config.tokens !== undefined && config.tokens.trim() !== "") {
        return {
          resolver: new StaticTokenResolver(parseTokenList(config.tokens)),
          startupLines: [],
          warnings: [],
        };
      }
      const tokens = new Map([
        [
          `dev-${randomBytes(12).toString("hex")}`,
          owner({ principalId: "alice", tenantId: "dev" }),
        ],
        [`dev-${randomBytes(12).toString("hex")}`, owner({ principalId: "bob", tenantId: "dev" })],
      ]);
      return {
        resolver: new StaticTokenResolver(tokens),
        startupLines: [...tokens].map(
          ([token, who]) => `dev token for ${who.principalId}@${who.tenantId}: ${token}`,
        ),
        warnings: [],
      };
    }
  }
}
