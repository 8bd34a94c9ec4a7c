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

/**
 * A trusted gateway in front of the server authenticates callers and forwards who they are
 * in a header. Requests without the gateway secret are rejected (`403`); with it but no
 * identity, anonymous.
 */
export class GatewayHeaderResolver implements OwnerResolver {
  readonly #header: string;
  readonly #secret: string;
  readonly #audience: string | null;

  constructor(options: GatewayHeaderOptions) {
    if (options.secret.length < 16) throw new TypeError("the gateway secret needs 16+ characters");
    this.#header = (options.header ?? "x-authenticated-user").toLowerCase();
    this.#secret = options.secret;
    this.#audience = options.audience ?? null;
  }

  async resolve(request: RequestHead): Promise<OwnerResolution> {
    if (request.headers.get("x-gateway-secret") !== this.#secret) {
      return { kind: "reject", status: 403, message: "Requests must come through the gateway" };
    }
    const value = request.headers.get(this.#header)?.trim();
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
