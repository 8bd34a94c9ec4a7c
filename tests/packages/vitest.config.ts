import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // npm installs from the registry, tsc, PGlite and servers in child processes.
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Two cores: the two files each pack and spawn; one after the other.
    fileParallelism: false,
  },
});
