import type { ExecutionPolicy, InputRequest } from "./task.js";
import type { TaskHandler } from "./task-context.js";

/**
 * A tool's single task policy, projected per era by the facades:
 *
 * | TaskMode   | 2025-11-25 `execution.taskSupport` | 2026-07-28 (extension declared on the request) |
 * |------------|------------------------------------|------------------------------------------------|
 * | `never`    | `forbidden`                        | always answered synchronously                  |
 * | `optional` | `optional`                         | a task at the server's discretion              |
 * | `always`   | `required`                         | a task; `-32021` when the extension is missing |
 */
export type TaskMode = "never" | "optional" | "always";

/** Every mode, for validation. */
export const TASK_MODES: readonly TaskMode[] = Object.freeze(["never", "optional", "always"]);

/**
 * What a tool's preflight decides for one call, before any task exists: ask the client for
 * input (ephemerally: the 2026-07-28 era answers `input_required` and the client retries
 * with the answers; the 2025-11-25 era can ask with side requests), or proceed with
 * arguments, possibly enriched by the answers.
 */
export type PreflightOutcome =
  | {
      readonly kind: "input_required";
      readonly inputRequests: Readonly<Record<string, InputRequest>>;
      /** Opaque state the client hands back with its retry (2026-07-28 only). */
      readonly requestState?: string;
    }
  | { readonly kind: "proceed"; readonly arguments: Readonly<Record<string, unknown>> };

/**
 * Gathers input before the tool runs or its task is created, from the answers given so far
 * (by key). Era-neutral: it sees only arguments and answers.
 */
export type Preflight = (
  args: Readonly<Record<string, unknown>>,
  inputResponses: Readonly<Record<string, unknown>>,
) => PreflightOutcome | Promise<PreflightOutcome>;

/** An era-neutral tool: what it is called, what it takes, whether it runs as a task. */
export interface ToolDefinition {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  /** JSON Schema of the arguments object. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly taskMode: TaskMode;
  /** The tool body; run as a task (with a full {@link TaskContext}) or synchronously. */
  readonly run: TaskHandler;
  /**
   * Optional input round(s) before the body runs, e.g. to ask for a missing name and then
   * start a task whose result uses it (the MRTR-then-task composition).
   */
  readonly preflight?: Preflight;
  /**
   * How a run may be executed when the tool runs as a task. Default: one run and no
   * deadline. Opt into `retry` only where re-running the tool from the start is safe.
   */
  readonly execution?: ToolExecution;
  /** MCP tool annotations (`readOnlyHint`, …), listed as given in both eras. */
  readonly annotations?: Readonly<Record<string, unknown>>;
  /** MCP tool icons, listed as given in both eras. */
  readonly icons?: readonly Readonly<Record<string, unknown>>[];
  /** JSON Schema of the result's `structuredContent`, listed as given in both eras. */
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  /** The tool's `_meta`, listed as given in both eras. */
  readonly _meta?: Readonly<Record<string, unknown>>;
}

/**
 * The fields of a tool's listing that both eras show unchanged (every `Tool` field but
 * `name`, `inputSchema` and the 2025-11-25 `execution`), in the order the SDK lists them.
 */
export function listedToolFields(tool: ToolDefinition): Record<string, unknown> {
  const listed: Record<string, unknown> = {};
  if (tool.title !== undefined) listed.title = tool.title;
  if (tool.description !== undefined) listed.description = tool.description;
  if (tool.annotations !== undefined) listed.annotations = tool.annotations;
  if (tool.icons !== undefined) listed.icons = tool.icons;
  if (tool._meta !== undefined) listed._meta = tool._meta;
  if (tool.outputSchema !== undefined) listed.outputSchema = tool.outputSchema;
  return listed;
}

/** A tool's execution policy; see {@link ToolDefinition.execution}. */
export interface ToolExecution {
  readonly retry?: {
    /** Most runs, the first included (e.g. 3: the first run and up to two retries). */
    readonly attempts: number;
    /** Wait before a retry; default 1000 ms. */
    readonly backoffMs?: number;
    /**
     * Also retry when the handler throws; by default only a lost worker or an overstayed
     * deadline is retried.
     */
    readonly onError?: boolean;
  };
  /** How long one run may take, in ms: past it the run is aborted and fails or is retried. */
  readonly deadlineMs?: number;
}

/** The execution policy a tool's tasks are created with. */
export function executionPolicyOf(
  tool: Pick<ToolDefinition, "execution">,
): Partial<ExecutionPolicy> {
  const { retry, deadlineMs } = tool.execution ?? {};
  return {
    ...(retry !== undefined && { maxAttempts: retry.attempts }),
    ...(retry?.backoffMs !== undefined && { backoffMs: retry.backoffMs }),
    ...(retry?.onError !== undefined && { retryOnError: retry.onError }),
    ...(deadlineMs !== undefined && { deadlineMs }),
  };
}

/**
 * The tools by name, checked once: a second tool with a name already taken is a
 * programming error (`TypeError`), whichever facade serves them.
 */
export function toolRegistry(
  tools: readonly ToolDefinition[],
): ReadonlyMap<string, ToolDefinition> {
  const byName = new Map<string, ToolDefinition>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new TypeError(`Duplicate tool name: ${tool.name}`);
    byName.set(tool.name, tool);
  }
  return byName;
}
