import type { IncomingHttpHeaders } from "node:http";
import type { InboundClassificationOutcome } from "@modelcontextprotocol/server";
import { checkArguments } from "../arguments.js";
import {
  CLIENT_CAPABILITIES_META_KEY,
  MODERN_PROTOCOL_VERSION,
  PROTOCOL_VERSION_META_KEY,
} from "../constants.js";
import { decideDispatch } from "../handlers/call-tool.js";
import type { TasksTool } from "../tool.js";
import { isPlainObject, single } from "./guards.js";

/** The only `params` keys of a call taken directly (anything else goes to the SDK). */
const PARAM_KEYS: ReadonlySet<string> = new Set(["name", "arguments", "_meta"]);
/** Longer names are left to the SDK (and its header checks). */
const TOOL_NAME_MAX = 256;

/** A 2026-07-28 `tools/call` that becomes a task with nothing needed from the SDK. */
export interface DirectToolCall {
  readonly id: string | number;
  readonly params: Record<string, unknown>;
  readonly clientCapabilities: unknown;
  /** The tool (its name is the call's), and its arguments as checked: no check left to make. */
  readonly tool: TasksTool;
  readonly args: Readonly<Record<string, unknown>>;
}

/**
 * Whether a parsed POST body is a `tools/call` the SDK would hand to the extension
 * unchanged *and* the extension would answer by creating a task: a single request with
 * the 2026-07-28 envelope (the SDK's classifier accepts it as modern), `MCP-Protocol-Version`
 * and `Mcp-Method` present and agreeing, `Mcp-Name` exactly `params.name`; `params` with only
 * `name`, `arguments` (a plain object) and `_meta`; a tool of the extension without a
 * preflight, whose arguments pass its check, and which this request's capabilities make a
 * task (server-directed creation). Everything else — unknown tools, bad arguments, calls
 * answered in the request, `-32021` refusals, every malformed or unusual request —
 * returns `undefined` and goes to the SDK, which answers it as it always does.
 */
export function matchDirectToolCall(
  headers: IncomingHttpHeaders,
  body: unknown,
  route: InboundClassificationOutcome,
  tools: ReadonlyMap<string, TasksTool>,
): DirectToolCall | undefined {
  if (!isPlainObject(body) || body.jsonrpc !== "2.0" || body.method !== "tools/call") {
    return undefined;
  }
  const id = body.id;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return undefined;
  const params = body.params;
  if (!isPlainObject(params)) return undefined;
  for (const key in params) if (!PARAM_KEYS.has(key)) return undefined;
  const name = params.name;
  if (typeof name !== "string" || name.length === 0 || name.length > TOOL_NAME_MAX) {
    return undefined;
  }
  const args = params.arguments;
  // The SDK's record schema would turn an own `__proto__` key into a prototype.
  if (args !== undefined && (!isPlainObject(args) || Object.hasOwn(args, "__proto__"))) {
    return undefined;
  }
  const meta = params._meta;
  if (!isPlainObject(meta) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN_PROTOCOL_VERSION) {
    return undefined;
  }
  if (single(headers["mcp-protocol-version"]) !== MODERN_PROTOCOL_VERSION) return undefined;
  if (single(headers["mcp-method"]) !== "tools/call") return undefined;
  if (single(headers["mcp-name"]) !== name) return undefined;
  if (route.kind !== "modern" || route.messageKind !== "request") return undefined;
  if (route.classification.revision !== MODERN_PROTOCOL_VERSION) return undefined;
  const tool = tools.get(name);
  if (tool === undefined || tool.preflight !== undefined) return undefined;
  const checked = args ?? {};
  if (checkArguments(tool, checked) !== null) return undefined;
  const clientCapabilities = meta[CLIENT_CAPABILITIES_META_KEY];
  let dispatch: string;
  try {
    dispatch = decideDispatch(tool, clientCapabilities);
  } catch {
    return undefined; // `-32021`: the SDK words and answers it.
  }
  if (dispatch !== "task") return undefined;
  return { id: id as string | number, params, clientCapabilities, tool, args: checked };
}
