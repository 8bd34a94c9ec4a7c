import type { TaskHandler } from "./runner.js";

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
}
