/**
 * The demo's command line for `npm run demo`: the user's arguments, preceded by the
 * defaults (`--store pglite`, `--data-dir <dataDir>`) the user did not choose by flag or
 * environment variable.
 */
export function demoArguments(
  userArgs: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  dataDir: string,
): string[];
