import { ANONYMOUS, isAnonymous, type Owner, owner } from "@mcp-tasks/core";
import type { AuthInfo } from "@modelcontextprotocol/server";
import { type Refusal, refusal } from "./refusals.js";

/** What an owner resolver decides about one HTTP request. */
export type OwnerResolution =
  | { readonly kind: "owner"; readonly owner: Owner }
  | { readonly kind: "anonymous" }
  | { readonly kind: "reject"; readonly status: 400 | 401 | 403; readonly message: string };

/**
 * The head of the HTTP request an owner resolver reads: headers, method and URL (a web
 * `Request` fits; on `node:http` a light view of the request, no body).
 */
export type RequestHead = Pick<Request, "headers" | "method" | "url">;

/**
 * Who is calling, decided once per HTTP request before any MCP handling: an `Owner` (or
 * `{ kind: "owner" }`), `{ kind: "anonymous" }`, or `{ kind: "reject", status: 400 | 401 | 403 }`,
 * answered with that status (`400` for a malformed identity, e.g. a repeated identity
 * header: note that `headers.get` joins repeated headers with `", "`). `authInfo` is what the framework's auth middleware set
 * (`req.auth` from `requireBearerAuth` of `@modelcontextprotocol/express`, or passed to
 * `fetch`/`handle`), `undefined` without one.
 */
export type ResolveOwner = (
  request: RequestHead,
  authInfo: AuthInfo | undefined,
) => Owner | OwnerResolution | Promise<Owner | OwnerResolution>;

/**
 * The default owner of an authenticated request: the token's `clientId` as the principal and
 * its `resource` (the RFC 8707 audience, when the verifier sets it) as the audience.
 * Requests without `AuthInfo` are anonymous.
 */
export function ownerFromAuthInfo(authInfo: AuthInfo | undefined): Owner {
  if (authInfo === undefined) return ANONYMOUS;
  return owner({ principalId: authInfo.clientId, audience: authInfo.resource?.href ?? null });
}

/** The resolver used when none is given: {@link ownerFromAuthInfo}. */
export const resolveOwnerFromAuthInfo: ResolveOwner = (_request, authInfo) =>
  ownerFromAuthInfo(authInfo);

function isResolution(value: Owner | OwnerResolution): value is OwnerResolution {
  return "kind" in value;
}

/** Settings of {@link callerOf}. */
export interface CallerOptions {
  readonly resolve: ResolveOwner;
  /** Anonymous callers are refused `401`. */
  readonly requireOwner: boolean;
  /** `WWW-Authenticate` value of `401` answers. */
  readonly challenge: string;
}

/** The request's owner, or the refusal (401/403) to answer instead. */
export async function callerOf(
  request: RequestHead,
  authInfo: AuthInfo | undefined,
  options: CallerOptions,
): Promise<Owner | Refusal> {
  const decided = await options.resolve(request, authInfo);
  const resolution: OwnerResolution = isResolution(decided)
    ? decided
    : { kind: "owner", owner: decided };
  if (resolution.kind === "reject") {
    if (resolution.status === 400) {
      return refusal("invalid-identity", { message: resolution.message });
    }
    return resolution.status === 401
      ? refusal("unauthenticated", { message: resolution.message, challenge: options.challenge })
      : refusal("forbidden", { message: resolution.message });
  }
  const caller = resolution.kind === "owner" ? resolution.owner : ANONYMOUS;
  if (options.requireOwner && isAnonymous(caller)) {
    return refusal("unauthenticated", { challenge: options.challenge });
  }
  return caller;
}

/** Whether {@link callerOf} answered a refusal. */
export function isRefusal(value: Owner | Refusal): value is Refusal {
  return "status" in value;
}
