import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Real databases: allow for connection set-up, child processes and lease expiry.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: files share one PostgreSQL, so run them one after another.
    fileParallelism: false,
  },
});
