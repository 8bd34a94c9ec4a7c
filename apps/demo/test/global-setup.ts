import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/** Builds `dist/` once for the tests that start the demo binary as an OS process. */
export default function setup() {
  const root = fileURLToPath(new URL("..", import.meta.url));
  execFileSync(
    process.execPath,
    [createRequire(`${root}/`).resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"],
    { cwd: root, stdio: "inherit", timeout: 180_000 },
  );
}
