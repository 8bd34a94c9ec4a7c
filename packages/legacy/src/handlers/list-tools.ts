import { toLegacyTool } from "../projection.js";
import type { LegacyTool } from "../wire.js";
import type { LegacyDeps } from "./deps.js";

/** `tools/list`: every tool with `execution.taskSupport` projected from its task mode. */
export function listTools(deps: Pick<LegacyDeps, "tools">): { tools: LegacyTool[] } {
  return { tools: [...deps.tools.values()].map(toLegacyTool) };
}
