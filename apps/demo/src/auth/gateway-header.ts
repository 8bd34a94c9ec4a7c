import { createHash, timingSafeEqual } from "node:crypto";
import { owner } from "@mcp-tasks/core";
import type { RequestHead } from "@mcp-tasks/http";
import type { OwnerResolution, OwnerResolver } from "./resolver.js";

/** Settings of a {@link GatewayHeaderResolver}. */
export interface GatewayHeaderOptions {
  /** The header carrying `principal@tenant`; default `x-authenticated-user`. */
  readonly header?: string;
  /**
   * A shared secret the gateway sends in `x-gateway-secret`, so that a client bypassing the
   * gateway cannot claim an identity. Required: a header alone proves nothing.
   */
  readonly secret: string;
  /** The audience recorded on every owner, when the gateway fronts one resource. */
  readonly audience?: string;
}

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/**
 * A trusted gateway in front of the server authenticates callers and forwards who they are
 * in a header. Requests without the gateway secret are rejected (`403`); with it but no
 * identity, anonymous. The secret is compared in constant time (SHA-256 digests of equal
 * length, `timingSafeEqual`). A repeated secret or identity header is refused `400`: HTTP
 * joins repeated headers with `", "`, so a value holding a comma is refused whichever
 * front (`node:http`, `fetch`) read it, and a principal or tenant may hold no comma.
 */
export class GatewayHeaderResolver implements OwnerResolver {
  readonly #header: string;
  readonly #secret: Buffer;
  readonly #audience: string | null;

  constructor(options: GatewayHeaderOptions) {
    if (options.secret.length < 16) throw new TypeError("the gateway secret needs 16+ characters");
    this.#header = (options.header ?? "x-authenticated-user").toLowerCase();
    if (options.secret.includes(",")) throw new TypeError("the gateway secret may hold no comma");
    this.#secret = digest(options.secret);
    this.#audience = options.audience ?? null;
  }

  async resolve(request: RequestHead): Promise<OwnerResolution> {
    const secret = request.headers.get("x-gateway-secret");
    if (secret?.includes(",")) {
      return { kind: "reject", status: 400, message: "Repeated x-gateway-secret header" };
    }
    if (secret === null || !timingSafeEqual(digest(secret), this.#secret)) {
      return { kind: "reject", status: 403, message: "Requests must come through the gateway" };
    }
    const value = request.headers.get(this.#header)?.trim();
    if (value?.includes(",")) {
      return {
        kind: "reject",
        status: 400,
        message: `Repeated ${this.#header} header (or a comma in it): send exactly one identity`,
      };
    }
    if (!value) return { kind: "anonymous" };
    const at = value.lastIndexOf("@");
    return {
      kind: "owner",
      owner: owner({
        principalId: at > 0 ? value.slice(0, at) : value,
        tenantId: at > 0 ? value.slice(at + 1) : null,
        audience: this.#audience,
      }),
    };
  }
}
