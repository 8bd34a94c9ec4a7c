import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Owner } from "@mcp-tasks/core";
import { ConsoleHttpError } from "./http.js";

/**
 * Who is looking at the console: an owner, who sees exactly the tasks the owner policy
 * shows it (as on MCP requests), or an operator, who sees every owner's tasks.
 */
export type ConsoleViewer =
  | { readonly kind: "owner"; readonly owner: Owner }
  | { readonly kind: "operator" };

/**
 * Resolves the owner of a console request the same way MCP requests are resolved (bearer
 * token, JWT, gateway header…): the page sends the token it was given as
 * `Authorization: Bearer <token>`. `null` refuses the request (a bad or missing token).
 */
export type ConsoleOwnerResolver = (request: IncomingMessage) => Promise<Owner | null>;

/** The bearer token of a request; `undefined` without one, `null` when malformed. */
export function bearerOf(request: IncomingMessage): string | null | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer[ ]+([\x21-\x7e]{1,4096})\s*$/i.exec(header);
  return match ? (match[1] ?? null) : null;
}

const digest = (token: string) => createHash("sha256").update(token, "utf8").digest();

/**
 * Decides who a request comes from: an operator when its bearer token is one of the
 * operator tokens (compared in constant time), else the owner the resolver finds. Throws
 * 401 with a message for the page when neither accepts it.
 */
export function viewerResolver(
  adminTokens: readonly string[],
  resolveOwner: ConsoleOwnerResolver,
): (request: IncomingMessage) => Promise<ConsoleViewer> {
  const admins = adminTokens.filter((t) => t.length > 0).map(digest);
  return async (request) => {
    const token = bearerOf(request);
    if (token === null) {
      throw new ConsoleHttpError(401, "That token is not valid: it must be a single word.");
    }
    if (token !== undefined) {
      const presented = digest(token);
      // Compare with every operator token, so the time taken says nothing about which.
      let operator = false;
      for (const admin of admins) operator = timingSafeEqual(admin, presented) || operator;
      if (operator) return { kind: "operator" };
    }
    let owner: Owner | null;
    try {
      owner = await resolveOwner(request);
    } catch {
      owner = null;
    }
    if (owner === null) {
      throw new ConsoleHttpError(
        401,
        token === undefined
          ? "Sign in with a token."
          : "That token was not accepted. Check it and sign in again.",
      );
    }
    return { kind: "owner", owner };
  };
}

/** An owner as one line of text for the page, e.g. `alice@acme`. */
export function ownerLabel(owner: Owner): string {
  const parts = [owner.principalId ?? "", owner.tenantId === null ? "" : `@${owner.tenantId}`];
  const who = parts.join("");
  const label = owner.audience === null ? who : `${who} (${owner.audience})`;
  return label.length > 0 ? label : "(anonymous)";
}
