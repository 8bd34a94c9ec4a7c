import { toWireTool, type WireTool } from "../tool.js";
import type { HandlerDeps } from "./deps.js";

/** `tools/list`: every tool, projected onto the 2026-07-28 `Tool` (no `execution`). */
export function listTools(deps: Pick<HandlerDeps, "tools">): { tools: WireTool[] } {
  return { tools: [...deps.tools.values()].map(toWireTool) };
}
