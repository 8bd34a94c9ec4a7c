import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    // See tsconfig.json: the memory store from source, over this package's source.
    alias: {
      "@mcp-tasks/core": here("./src/index.ts"),
      "@mcp-tasks/store-memory": here("../store-memory/src/index.ts"),
    },
  },
  test: {
    include: ["test/**/*.test.ts"],
  },
});
