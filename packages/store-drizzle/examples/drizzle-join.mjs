// Run from packages/store-drizzle after a build: node examples/drizzle-join.mjs
// Uses DATABASE_URL (through node-postgres) when set, else an in-memory PGlite database.
import { owner, TaskRunner, TaskService } from "@mcp-tasks/core";
import { createTaskStore, migrate, taskTable } from "@mcp-tasks/store-drizzle";
import { count, eq, sql } from "drizzle-orm";
import { pgTable, text } from "drizzle-orm/pg-core";

// Your schema file (the one drizzle-kit reads): your tables, and the task table.
export const projects = pgTable("projects", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
});
export const tasks = taskTable(); // in "public"; or taskTable(jobs), jobs = pgSchema("jobs")

// Your Drizzle database, on node-postgres or PGlite; the store uses the client underneath.
const url = process.env.DATABASE_URL;
const db = url
  ? (await import("drizzle-orm/node-postgres")).drizzle(url)
  : (await import("drizzle-orm/pglite")).drizzle();

// With drizzle-kit both tables come from your migrations; without it:
await db.execute(
  sql`CREATE TABLE IF NOT EXISTS projects (id text PRIMARY KEY, name text NOT NULL)`,
);
await migrate(db);
const store = await createTaskStore({ client: db });

const build = {
  name: "build",
  inputSchema: { type: "object" },
  taskMode: "always",
  run: async ({ projectId }) => ({ content: [{ type: "text", text: `built ${projectId}` }] }),
};
const service = new TaskService({ store });
const runner = new TaskRunner({ service, tools: [build] });

const alice = owner({ principalId: "alice" });
await db.insert(projects).values([
  { id: "web", name: "Website" },
  { id: "app", name: "Mobile app" },
]);
for (const projectId of ["web", "app", "web"]) {
  const task = await runner.start(alice, {
    era: "2026-07-28",
    request: { toolName: "build", arguments: { projectId } },
  });
  await service.waitFor(alice, task.taskId, (t) => t.status === "completed");
}

// Alice's tasks per project and status: the project's id is in each task's arguments.
const perProject = await db
  .select({ project: projects.name, status: tasks.status, tasks: count() })
  .from(tasks)
  .innerJoin(projects, eq(projects.id, sql`${tasks.request} -> 'arguments' ->> 'projectId'`))
  .where(eq(tasks.ownerPrincipal, "alice"))
  .groupBy(projects.name, tasks.status)
  .orderBy(projects.name, tasks.status);
console.log(JSON.stringify(perProject));

await runner.shutdown();
await store.close(); // your connection stays open: close it yourself
await (url ? db.$client.end() : db.$client.close());
