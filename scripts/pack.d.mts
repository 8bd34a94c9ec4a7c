/** The repository root (absolute). */
export const root: string;

/** The repository URL every package.json points to (`repository.url`). */
export const REPOSITORY_URL: string;

/** A non-private package under packages/. */
export interface PublishablePackage {
  readonly name: string;
  /** Absolute directory. */
  readonly dir: string;
  /** Directory relative to the repository root: `packages/core`. */
  readonly directory: string;
  readonly manifest: Record<string, unknown>;
}

/** A package packed with `pnpm pack`. */
export interface PackedPackage {
  readonly name: string;
  readonly version: string;
  readonly dir: string;
  readonly directory: string;
  /** Absolute path of the `.tgz`. */
  readonly tarball: string;
  /** The packed files, relative to the package root. */
  readonly files: readonly string[];
}

export interface RunOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Keep the output off the terminal (default true). */
  readonly quiet?: boolean;
}

export function publishablePackages(): PublishablePackage[];
export function run(
  command: string,
  args: readonly string[],
  options?: RunOptions,
): Promise<{ stdout: string; stderr: string }>;
export function pnpm(
  args: readonly string[],
  options?: RunOptions,
): Promise<{ stdout: string; stderr: string }>;
export function buildPackages(packages?: readonly PublishablePackage[]): Promise<void>;
export function packPackages(
  destination: string,
  packages?: readonly PublishablePackage[],
): Promise<PackedPackage[]>;
export function npmEnv(env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
