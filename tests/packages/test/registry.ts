import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/** One `npm publish` the stand-in registry received. */
export interface Upload {
  readonly name: string;
  readonly version: string;
  readonly distTags: Record<string, string>;
  readonly access: string | undefined;
  readonly authorization: string | undefined;
  /** The package.json inside the uploaded tarball. */
  readonly manifest: Record<string, Record<string, string> | string>;
  /** Paths inside the uploaded tarball (without the leading `package/`). */
  readonly files: readonly string[];
}

/** The entries of an uncompressed tar archive: path → content. */
function untar(tar: Buffer): Map<string, Buffer> {
  const entries = new Map<string, Buffer>();
  let offset = 0;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (start: number, length: number) =>
      header
        .subarray(start, start + length)
        .toString("utf8")
        .replace(/\0.*$/s, "");
    const name = field(0, 100);
    const prefix = field(345, 155);
    const size = Number.parseInt(field(124, 12).trim() || "0", 8);
    const type = field(156, 1);
    const path = prefix ? `${prefix}/${name}` : name;
    if (type === "0" || type === "") {
      entries.set(path, tar.subarray(offset + 512, offset + 512 + size));
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

/**
 * A stand-in npm registry on 127.0.0.1 for the release flow: it answers what `npm info`
 * (changesets' "is this version published?") and `npm publish` (through `pnpm publish`)
 * ask, keeps what was published in memory, and records every upload. Nothing leaves the
 * machine.
 */
export class StandInRegistry {
  readonly uploads: Upload[] = [];
  readonly requests: string[] = [];
  readonly #packuments = new Map<string, Record<string, unknown>>();
  readonly #server: Server;

  constructor() {
    this.#server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const name = decodeURIComponent((req.url ?? "/").slice(1).split("?")[0] ?? "");
      this.requests.push(`${req.method} ${name}`);
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.method === "PUT") {
        try {
          json(201, this.#publish(JSON.parse(Buffer.concat(chunks).toString("utf8")), req));
        } catch (error) {
          json(400, { error: String(error) });
        }
        return;
      }
      const packument = req.method === "GET" ? this.#packuments.get(name) : undefined;
      if (packument) json(200, packument);
      else json(404, { error: "Not found" });
    });
  }

  #publish(body: Record<string, unknown>, req: { headers: Record<string, unknown> }) {
    const name = String(body.name);
    const versions = body.versions as Record<string, Record<string, unknown>>;
    const [version] = Object.keys(versions);
    const attachments = body._attachments as Record<string, { data: string }>;
    const [attachment] = Object.values(attachments);
    if (!version || !attachment) throw new Error("no version or no tarball");
    const files = untar(gunzipSync(Buffer.from(attachment.data, "base64")));
    const packageJson = files.get("package/package.json");
    if (!packageJson) throw new Error("no package/package.json in the tarball");
    const distTags = body["dist-tags"] as Record<string, string>;
    this.uploads.push({
      name,
      version,
      distTags,
      access: body.access as string | undefined,
      authorization: req.headers.authorization as string | undefined,
      manifest: JSON.parse(packageJson.toString("utf8")),
      files: [...files.keys()].map((path) => path.replace(/^package\//, "")),
    });
    const existing = this.#packuments.get(name);
    this.#packuments.set(name, {
      name,
      "dist-tags": { ...(existing?.["dist-tags"] as object), ...distTags },
      versions: { ...(existing?.versions as object), ...versions },
    });
    return { ok: true };
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
