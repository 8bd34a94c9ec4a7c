import type { ToolDefinition } from "@mcp-tasks/core";

const TYPE_CHECKS: Readonly<Record<string, (value: unknown) => boolean>> = {
  string: (v) => typeof v === "string",
  number: (v) => typeof v === "number" && Number.isFinite(v),
  integer: (v) => typeof v === "number" && Number.isInteger(v),
  boolean: (v) => typeof v === "boolean",
  object: (v) => typeof v === "object" && v !== null && !Array.isArray(v),
  array: (v) => Array.isArray(v),
  null: (v) => v === null,
};

/**
 * A shallow check of tool arguments against the tool's JSON Schema: required properties and
 * the primitive `type` of each declared property. It catches wrong types before a task is
 * created; tools still own deeper validation. Returns a message, or `null` when fine.
 */
export function checkArguments(
  tool: ToolDefinition,
  args: Readonly<Record<string, unknown>>,
): string | null {
  const schema = tool.inputSchema as {
    properties?: Record<string, { type?: string | string[] }>;
    required?: string[];
  };
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(args, name)) return `missing required argument '${name}'`;
  }
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (!Object.hasOwn(args, name) || property.type === undefined) continue;
    const types = Array.isArray(property.type) ? property.type : [property.type];
    const value = args[name];
    if (!types.some((type) => TYPE_CHECKS[type]?.(value) ?? true)) {
      return `argument '${name}' must be of type ${types.join(" | ")}`;
    }
  }
  return null;
}
