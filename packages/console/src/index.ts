/**
 * `@mcp-tasks/console`: a web console over `@mcp-tasks/core`'s `TaskService`, mounted on
 * any Node HTTP server as a request handler. Owners see exactly their own tasks (resolved
 * like MCP requests); operator tokens see every owner's tasks and the traffic per protocol
 * era. The list is newest first, filtered, paged by keyset cursors and updated live from
 * the change feed; a task's detail shows its arguments, history, input requests, outcome,
 * retention and lease, with era-correct cancellation and answers to form elicitations.
 *
 * @packageDocumentation
 */
export type { FormField, InputForm } from "./answers.js";
export { type ConsoleHandler, type ConsoleOptions, createConsoleHandler } from "./console.js";
export type { TrafficCounts, TrafficPoint, TrafficProvider, TrafficSeries } from "./traffic.js";
export { type ConsoleOwnerResolver, type ConsoleViewer, ownerLabel } from "./viewer.js";
export type { HistoryEntry, TaskDetail, TaskRow } from "./views.js";
