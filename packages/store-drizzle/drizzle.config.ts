import { defineConfig } from "drizzle-kit";

// `pnpm generate` writes a new migration into drizzle/ after a change to src/schema.ts.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/schema.ts",
  out: "./drizzle",
});
