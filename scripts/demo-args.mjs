// The arguments `npm run demo` starts the demo with (scripts/run.mjs): the embedded, durable
// store in the repository's .mcp-tasks by default, but only where the user chose nothing
// (flag or environment variable), so every flag reaches the demo once
// (`npm run demo -- --store memory` is `--store memory`, not `--store pglite … --store memory`).

/** The value of `--name value` or `--name=value` in `args`, the last one if repeated. */
function flag(args, name) {
  let value;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === `--${name}`) value = args[i + 1];
    else if (arg.startsWith(`--${name}=`)) value = arg.slice(name.length + 3);
  }
  return value;
}

/**
 * The demo's command line: `userArgs` as given, preceded by `--store pglite` when neither
 * `--store` nor `MCP_TASKS_STORE` chose a store, and by `--data-dir <dataDir>` when the store
 * is PGlite and neither `--data-dir` nor `PGLITE_DIR` chose a directory.
 */
export function demoArguments(userArgs, env, dataDir) {
  const defaults = [];
  const chosenStore = flag(userArgs, "store") ?? (env.MCP_TASKS_STORE || undefined);
  if (chosenStore === undefined) defaults.push("--store", "pglite");
  const store = chosenStore ?? "pglite";
  if (store === "pglite" && flag(userArgs, "data-dir") === undefined && !env.PGLITE_DIR) {
    defaults.push("--data-dir", dataDir);
  }
  return [...defaults, ...userArgs];
}
