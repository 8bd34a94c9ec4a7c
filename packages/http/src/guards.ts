import {
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  validateHostHeader,
  validateOriginHeader,
} from "@modelcontextprotocol/server";
import { type Refusal, refusal } from "./refusals.js";

/**
 * Which `Host` (or `Origin`) names are accepted: `"loopback"` (`localhost`, `127.0.0.1`,
 * `[::1]`, the SDK's lists), `"any"` (no check), or an explicit list of hostnames (no port;
 * IPv6 in brackets), as `validateHostHeader` of `@modelcontextprotocol/server` takes them.
 */
export type AllowList = "loopback" | "any" | readonly string[];

/** A Host header's grammar (RFC 9110 `uri-host [ ":" port ]`, reg-name or IP literal). */
const HOST_HEADER = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;
const METHODS: ReadonlySet<string> = new Set(["GET", "POST", "DELETE"]);
/** Clients send the same few Host values: the accepted ones are remembered, up to this many. */
const REMEMBERED_HOSTS = 64;

/**
 * The checks made on a request's head before anything else: the HTTP method, then the
 * `Host` header (DNS-rebinding protection), then `Origin`. Each refusal comes from the one
 * refusal table.
 */
export class HeadGuards {
  readonly #hosts: string[] | null;
  readonly #origins: string[] | null;
  readonly #accepted = new Set<string>();

  constructor(hosts: AllowList, origins: AllowList) {
    this.#hosts =
      hosts === "any" ? null : hosts === "loopback" ? localhostAllowedHostnames() : [...hosts];
    this.#origins =
      origins === "any" ? null : origins === "loopback" ? localhostAllowedOrigins() : [...origins];
  }

  /** The refusal for this method, `Host` and `Origin`, or `undefined` when they pass. */
  check(method: string, host: string | undefined, origin: string | undefined): Refusal | undefined {
    if (!METHODS.has(method)) return refusal("method-not-allowed");
    return this.checkHostAndOrigin(host, origin);
  }

  /** The refusal for this `Host` and `Origin` alone (for paths beside the endpoint). */
  checkHostAndOrigin(host: string | undefined, origin: string | undefined): Refusal | undefined {
    return this.#hostRefusal(host) ?? this.#originRefusal(origin);
  }

  #hostRefusal(host: string | undefined): Refusal | undefined {
    if (host !== undefined && this.#accepted.has(host)) return undefined;
    // `new URL` accepts more than a Host header may hold (user info, a path): only
    // `name[:port]` and `[ipv6][:port]` go on to the SDK's check.
    const checked =
      host !== undefined && !HOST_HEADER.test(host)
        ? ({ ok: false, errorCode: "invalid_host_header", message: "Invalid Host header" } as const)
        : validateHostHeader(host, this.#hosts ?? []);
    // Without an allow-list, any host that forms a URL is fine.
    const accepted = checked.ok || (this.#hosts === null && checked.errorCode === "invalid_host");
    if (accepted) {
      if (host !== undefined && this.#accepted.size < REMEMBERED_HOSTS) this.#accepted.add(host);
      return undefined;
    }
    return refusal(
      checked.errorCode === "invalid_host" ? "host-not-allowed" : "invalid-host-header",
      {
        message: checked.message,
      },
    );
  }

  #originRefusal(origin: string | undefined): Refusal | undefined {
    if (this.#origins === null) return undefined;
    const checked = validateOriginHeader(origin, this.#origins);
    return checked.ok ? undefined : refusal("origin-not-allowed", { message: checked.message });
  }
}
