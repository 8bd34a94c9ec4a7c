import type { InputRequest, InputResponse } from "@mcp-tasks/core";
import { ConsoleHttpError } from "./http.js";

/** One control of an input form, generated from an elicitation's `requestedSchema`. */
export interface FormField {
  readonly name: string;
  readonly kind: "string" | "number" | "integer" | "boolean" | "enum";
  readonly title: string | null;
  readonly description: string | null;
  readonly required: boolean;
  /** For `enum`: the allowed values and their labels. */
  readonly options?: readonly { readonly value: string; readonly label: string }[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
}

/** A pending input request as the page shows it: a form, when the console can render one. */
export interface InputForm {
  readonly key: string;
  readonly method: string;
  readonly message: string | null;
  /** `null` when the request is not a form elicitation the console understands. */
  readonly fields: readonly FormField[] | null;
}

const MAX_FIELDS = 50;

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

const text = (value: unknown): string | null => (typeof value === "string" ? value : null);
const num = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined;

function field(name: string, schema: Record<string, unknown>, required: boolean): FormField | null {
  const base = {
    name,
    title: text(schema.title),
    description: text(schema.description),
    required,
  };
  const values = Array.isArray(schema.enum) ? schema.enum : null;
  const oneOf = Array.isArray(schema.oneOf) ? schema.oneOf : null;
  if (schema.type === "string" && (values !== null || oneOf !== null)) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
    const options =
      values !== null
        ? values.map((v, i) => ({ value: String(v), label: text(names[i]) ?? String(v) }))
        : oneOf!.map((o) => {
            const c = record(o);
            return { value: String(c?.const ?? ""), label: text(c?.title) ?? String(c?.const) };
          });
    if (options.length === 0 || options.some((o) => typeof o.value !== "string")) return null;
    return { ...base, kind: "enum", options };
  }
  const bounds = {
    ...(num(schema.minimum) !== undefined && { minimum: num(schema.minimum)! }),
    ...(num(schema.maximum) !== undefined && { maximum: num(schema.maximum)! }),
    ...(num(schema.minLength) !== undefined && { minLength: num(schema.minLength)! }),
    ...(num(schema.maxLength) !== undefined && { maxLength: num(schema.maxLength)! }),
  };
  switch (schema.type) {
    case "string":
    case "number":
    case "integer":
    case "boolean":
      return { ...base, kind: schema.type, ...bounds };
    default:
      return null;
  }
}

/** The form for one pending input request (fields `null` when it is not a form elicitation). */
export function inputForm(key: string, request: InputRequest): InputForm {
  const params = record(request.params) ?? {};
  const message = text(params.message);
  const unsupported = { key, method: request.method, message, fields: null };
  if (request.method !== "elicitation/create") return unsupported;
  if (params.mode !== undefined && params.mode !== "form") return unsupported;
  const schema = record(params.requestedSchema);
  const properties = record(schema?.properties);
  if (schema === null || properties === null) return unsupported;
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const fields: FormField[] = [];
  for (const [name, value] of Object.entries(properties).slice(0, MAX_FIELDS)) {
    const s = record(value);
    const f = s === null ? null : field(name, s, required.has(name));
    if (f === null) return unsupported;
    fields.push(f);
  }
  return { key, method: request.method, message, fields };
}

const bad = (message: string) => new ConsoleHttpError(400, message);

/** The checked content of an accepted answer, against the form's fields. */
function checkedContent(fields: readonly FormField[], content: unknown): Record<string, unknown> {
  const given = record(content);
  if (given === null) throw bad("content must be an object of field values.");
  const byName = new Map(fields.map((f) => [f.name, f]));
  for (const name of Object.keys(given)) {
    if (!byName.has(name)) throw bad(`Unknown field '${name.slice(0, 60)}'.`);
  }
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const value = given[f.name];
    const label = f.title ?? f.name;
    if (value === undefined || value === null || value === "") {
      if (f.required && f.kind !== "boolean") throw bad(`'${label}' is required.`);
      if (f.kind === "boolean" && f.required) out[f.name] = false;
      continue;
    }
    switch (f.kind) {
      case "boolean":
        if (typeof value !== "boolean") throw bad(`'${label}' must be true or false.`);
        break;
      case "number":
      case "integer":
        if (typeof value !== "number" || !Number.isFinite(value)) {
          throw bad(`'${label}' must be a number.`);
        }
        if (f.kind === "integer" && !Number.isInteger(value)) {
          throw bad(`'${label}' must be a whole number.`);
        }
        if (f.minimum !== undefined && value < f.minimum) {
          throw bad(`'${label}' must be at least ${f.minimum}.`);
        }
        if (f.maximum !== undefined && value > f.maximum) {
          throw bad(`'${label}' must be at most ${f.maximum}.`);
        }
        break;
      case "string":
        if (typeof value !== "string" || value.length > 10_000) {
          throw bad(`'${label}' must be text (at most 10000 characters).`);
        }
        if (f.minLength !== undefined && value.length < f.minLength) {
          throw bad(`'${label}' needs at least ${f.minLength} characters.`);
        }
        if (f.maxLength !== undefined && value.length > f.maxLength) {
          throw bad(`'${label}' allows at most ${f.maxLength} characters.`);
        }
        break;
      case "enum":
        if (typeof value !== "string" || !f.options!.some((o) => o.value === value)) {
          throw bad(`'${label}' must be one of the listed choices.`);
        }
        break;
    }
    out[f.name] = value;
  }
  return out;
}

/**
 * Turns the page's answer (`{key, action, content}`) into the input response for
 * `TaskService.submitInput`, checked against the pending request: 409 when that request is
 * no longer pending, 400 for anything malformed.
 */
export function answerFor(
  pending: Readonly<Record<string, InputRequest>>,
  body: unknown,
): { key: string; response: InputResponse } {
  const b = record(body);
  if (b === null) throw bad("Send {key, action, content}.");
  for (const name of Object.keys(b)) {
    if (name !== "key" && name !== "action" && name !== "content") {
      throw bad(`Unknown property '${name.slice(0, 40)}'.`);
    }
  }
  const key = b.key;
  if (typeof key !== "string" || key.length === 0 || key.length > 200) {
    throw bad("key must name the input request being answered.");
  }
  const request = Object.hasOwn(pending, key) ? pending[key] : undefined;
  if (request === undefined) {
    throw new ConsoleHttpError(409, "That input request is no longer pending.");
  }
  const form = inputForm(key, request);
  if (form.fields === null) {
    throw bad("The console can only answer form elicitations.");
  }
  if (b.action === "decline" || b.action === "cancel") {
    if (b.content !== undefined) throw bad("A declined request takes no content.");
    return { key, response: { action: b.action } };
  }
  if (b.action !== "accept") throw bad("action must be 'accept', 'decline' or 'cancel'.");
  return { key, response: { action: "accept", content: checkedContent(form.fields, b.content) } };
}
