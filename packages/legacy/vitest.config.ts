import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // PostgreSQL schemas are created and dropped per test on a server other suites share:
    // DDL can wait on catalog locks under load. These bound a hang; they assert nothing.
    hookTimeout: 30_000,
    testTimeout: 20_000,
  },
});
