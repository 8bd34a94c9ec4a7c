import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { BASE_HEADERS } from "../http.js";
import { pageHtml } from "./html.js";
import { CONSOLE_SCRIPT } from "./script.js";
import { CONSOLE_STYLE } from "./style.js";

/**
 * The page's policy: its own script and style only (no inline code), requests to its own
 * origin only, never framed. The token is kept out of reach of anything else.
 */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

interface Asset {
  readonly type: string;
  readonly body: Buffer;
  readonly etag: string;
}

function asset(type: string, text: string): Asset {
  const body = Buffer.from(text, "utf8");
  return {
    type,
    body,
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 16)}"`,
  };
}

const cache = new Map<string, ReadonlyMap<string, Asset>>();

function assetsFor(basePath: string): ReadonlyMap<string, Asset> {
  let assets = cache.get(basePath);
  if (assets === undefined) {
    const page = asset("text/html; charset=utf-8", pageHtml(basePath));
    assets = new Map([
      ["", page],
      ["/", page],
      ["/app.js", asset("text/javascript; charset=utf-8", CONSOLE_SCRIPT)],
      ["/app.css", asset("text/css; charset=utf-8", CONSOLE_STYLE)],
    ]);
    cache.set(basePath, assets);
  }
  return assets;
}

/** Serves the page or one of its assets at `path` (below the base); `false` if none is there. */
export function servePage(res: ServerResponse, path: string, basePath: string): boolean {
  const found = assetsFor(basePath).get(path);
  if (found === undefined) return false;
  res.writeHead(200, {
    ...BASE_HEADERS,
    "cache-control": "no-cache",
    etag: found.etag,
    "content-type": found.type,
    "content-length": found.body.length,
    "content-security-policy": CSP,
  });
  res.end(res.req?.method === "HEAD" ? undefined : found.body);
  return true;
}
