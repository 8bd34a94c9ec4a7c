import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { type ZodType, z } from "zod";

/** A zod raw shape, `{ a: z.number() }`, as `McpServer.registerTool` also accepts it. */
export type ZodRawShape = Record<string, ZodType>;

/** What a tool's input or output schema may be: a Standard Schema with JSON Schema, or a raw shape. */
export type ToolSchema = StandardSchemaWithJSON | ZodRawShape;

/** The arguments (or structured result) a {@link ToolSchema} describes, once validated. */
export type InferSchema<S> = S extends StandardSchemaWithJSON
  ? StandardSchemaWithJSON.InferOutput<S>
  : S extends ZodRawShape
    ? z.infer<z.ZodObject<S>>
    : Record<string, never>;

/** The JSON Schema dialect the SDK lists schemas in. */
const JSON_SCHEMA_TARGET = "draft-2020-12";

function isStandardSchema(value: unknown): value is StandardSchemaWithJSON {
  return typeof value === "object" && value !== null && "~standard" in value;
}

/**
 * A raw shape wrapped with `z.object`, as `McpServer` wraps it, so that one schema both
 * validates and lists; a Standard Schema as it is.
 */
export function normalizeSchema(schema: ToolSchema, what: string): StandardSchemaWithJSON {
  if (isStandardSchema(schema)) {
    if (schema["~standard"].jsonSchema === undefined) {
      throw new TypeError(
        `${what} must implement Standard JSON Schema (\`~standard.jsonSchema\`, zod >= 4.2): upgrade the schema library, or wrap a JSON Schema with fromJsonSchema() from @modelcontextprotocol/server`,
      );
    }
    return schema;
  }
  if (typeof schema === "object" && schema !== null) {
    return z.object(schema as ZodRawShape) as unknown as StandardSchemaWithJSON;
  }
  throw new TypeError(
    `${what} must be a Standard Schema (e.g. z.object({...})) or a zod raw shape`,
  );
}

/** The JSON Schema of a tool's arguments (`type: "object"`), as `tools/list` shows it. */
export function inputJsonSchema(schema: StandardSchemaWithJSON): Record<string, unknown> {
  const json = schema["~standard"].jsonSchema.input({ target: JSON_SCHEMA_TARGET });
  if (json.type !== undefined && json.type !== "object") {
    throw new TypeError(
      `A tool's input schema must describe an object (got type ${JSON.stringify(json.type)}): wrap it in z.object({...})`,
    );
  }
  return { type: "object", ...json };
}

/** The JSON Schema of a tool's `structuredContent`, as `tools/list` shows it. */
export function outputJsonSchema(schema: StandardSchemaWithJSON): Record<string, unknown> {
  return schema["~standard"].jsonSchema.output({ target: JSON_SCHEMA_TARGET });
}

/** A validation's outcome: the (possibly transformed) value, or the issues as one line. */
export type Validation = { ok: true; value: unknown } | { ok: false; message: string };

/** Validates as `McpServer` does, with its wording of the issues (`path: message, …`). */
export async function validate(
  schema: StandardSchemaWithJSON,
  value: unknown,
): Promise<Validation> {
  const result = await schema["~standard"].validate(value);
  if (result.issues !== undefined && result.issues.length > 0) {
    const message = result.issues
      .map((issue) => {
        const path = issue.path?.map((p) => String(typeof p === "object" ? p.key : p)).join(".");
        return path ? `${path}: ${issue.message}` : issue.message;
      })
      .join(", ");
    return { ok: false, message };
  }
  return { ok: true, value: (result as { value: unknown }).value };
}
