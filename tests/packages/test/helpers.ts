import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

export {
  npmEnv,
  packPackages,
  pnpm,
  publishablePackages,
  root,
  run,
} from "../../../scripts/pack.mjs";

/** The text of the first ```lang block after the line `heading` in a README. */
export function readmeBlock(readme: string, heading: string, lang: string): string {
  const at = readme.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`no "${heading}" in the README`);
  const open = readme.indexOf(`\`\`\`${lang}\n`, at);
  const close = readme.indexOf("\n```", open);
  if (open < 0 || close < 0) throw new Error(`no \`\`\`${lang} block after "${heading}"`);
  return readme.slice(open + lang.length + 4, close + 1);
}

/** A port nobody listens on right now, on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export interface Started {
  readonly child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `node <file>` in `cwd` and waits until `url` answers HTTP (any status), failing if
 * the process exits first or nothing answers within `timeoutMs`.
 */
export async function startServer(
  cwd: string,
  file: string,
  url: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 30_000,
): Promise<Started> {
  const child = spawn(process.execPath, [file], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const started: Started = {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const killed = await Promise.race([exited.then(() => true), sleep(5000, false)]);
        if (!killed) child.kill("SIGKILL");
        await exited;
      }
    },
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${file} exited (${child.exitCode ?? child.signalCode}):\n${output}`);
    }
    try {
      await fetch(url, { method: "GET", signal: AbortSignal.timeout(1000) });
      return started;
    } catch {
      await sleep(100);
    }
  }
  await started.stop();
  throw new Error(`${file}: nothing answered at ${url} within ${timeoutMs} ms:\n${output}`);
}

/** Runs `node <file> [...args]` in `cwd`; resolves with its output, rejects on failure. */
export async function runNode(
  cwd: string,
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<{ stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [file, ...args], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const code = await new Promise<number | string>((resolve) =>
    child.once("close", (c, signal) => resolve(c ?? signal ?? "unknown")),
  );
  clearTimeout(timer);
  if (code !== 0)
    throw new Error(`node ${file} ${args.join(" ")}: exit ${code}\n${stdout}${stderr}`);
  return { stdout, stderr };
}
