// Imports every public entry point of the installed tarballs (but `@mcp-tasks/core/testing`,
// which loads vitest, an optional peer this project does not install) and prints, per
// entry, how many names it exports.
const entries = [
  "@mcp-tasks/core",
  "@mcp-tasks/core/store",
  "@mcp-tasks/store-memory",
  "@mcp-tasks/store-drizzle",
  "@mcp-tasks/store-drizzle/testing",
  "@mcp-tasks/legacy",
  "@mcp-tasks/legacy/sdk-task-store",
  "@mcp-tasks/extension",
  "@mcp-tasks/extension/client",
  "@mcp-tasks/console",
  "@mcp-tasks/http",
  "@mcp-tasks/http/express",
  "@mcp-tasks/http/hono",
];
const counts = {};
for (const entry of entries) counts[entry] = Object.keys(await import(entry)).length;
console.log(JSON.stringify(counts));
