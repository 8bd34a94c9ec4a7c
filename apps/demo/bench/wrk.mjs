// Bounded `wrk` runs for the HTTP benchmarks: a Lua script per request, one run parsed into
// requests/s, p50/p99 and the CPU of this process (where the servers under test run) and of
// the local PostgreSQL server.
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Installs Debian's `wrk` when it is missing (as root, or with passwordless sudo). */
export function ensureWrk() {
  if (spawnSync("wrk", ["--version"]).error === undefined) return wrkVersion();
  console.log("wrk not found: installing the Debian package (apt-get install -y wrk)");
  const sudo = process.getuid?.() === 0 ? [] : ["sudo", "-n"];
  const [cmd, ...args] = [...sudo, "apt-get", "install", "-y", "wrk"];
  const done = spawnSync(cmd, args, { stdio: "inherit" });
  if (done.status !== 0 || spawnSync("wrk", ["--version"]).error !== undefined) {
    console.error("wrk is required: apt-get install -y wrk");
    process.exit(2);
  }
  return wrkVersion();
}

function wrkVersion() {
  return spawnSync("wrk", ["--version"])
    .stdout.toString()
    .split("\n")[0]
    .trim()
    .replace(/^wrk\s*/, "")
    .replace(/\s*Copyright.*$/, "");
}

/**
 * Writes the Lua script that POSTs `body` with `headers`; returns its path. With `tokens`,
 * the requests take them in turn as `Authorization: Bearer` (each request formatted once).
 */
export function luaScript(dir, name, { headers, body }, tokens = []) {
  const lines = ['wrk.method = "POST"', `wrk.body = [==[${JSON.stringify(body)}]==]`];
  for (const [key, value] of Object.entries(headers)) {
    lines.push(`wrk.headers[ [==[${key}]==] ] = [==[${value}]==]`);
  }
  if (tokens.length > 0) {
    lines.push(
      `local tokens = { ${tokens.map((token) => `[==[${token}]==]`).join(", ")} }`,
      "local requests = {}",
      "local turn = 0",
      "init = function(args)",
      "  for i, token in ipairs(tokens) do",
      '    wrk.headers["authorization"] = "Bearer " .. token',
      "    requests[i] = wrk.format()",
      "  end",
      "end",
      "request = function()",
      "  turn = turn % #requests + 1",
      "  return requests[turn]",
      "end",
    );
  }
  const file = join(dir, `${name}.lua`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

function toMs(value) {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(value);
  if (!match) return Number.NaN;
  const n = Number(match[1]);
  return { us: n / 1000, ms: n, s: n * 1000, m: n * 60_000 }[match[2]];
}

/** Clock ticks per second of `/proc`'s CPU times. */
const CLOCK_TICKS = Number(spawnSync("getconf", ["CLK_TCK"]).stdout?.toString().trim()) || 100;

/**
 * CPU time (ms) this machine's PostgreSQL server has used so far: the processes named
 * `postgres` in `/proc`, with the ended backends that the postmaster has reaped (its
 * children's times). NaN where `/proc` cannot tell (not Linux). The benchmarks' database runs
 * on this machine (127.0.0.1), so this is where a request's database work shows.
 */
export function databaseCpuMs() {
  let ticks = 0;
  let found = false;
  let pids;
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return Number.NaN;
  }
  for (const pid of pids) {
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // ended meanwhile
    }
    const close = stat.lastIndexOf(")");
    if (stat.slice(stat.indexOf("(") + 1, close) !== "postgres") continue;
    // After the name: state is field 3; utime, stime, cutime, cstime are fields 14 to 17.
    const fields = stat.slice(close + 2).split(" ");
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    found = true;
  }
  return found ? (ticks * 1000) / CLOCK_TICKS : Number.NaN;
}

/**
 * One bounded wrk run (1 thread, `connections`, `seconds`); also samples this process's CPU
 * and the local PostgreSQL server's (see {@link databaseCpuMs}), and how busy this process's
 * event loop was (`loopBusy`: its share of the run not spent waiting for I/O or timers; on a
 * shared machine it also counts the time its thread waited for a core).
 * Resolves with `{ rps, p50, p99, bad, errors, serverCpu, databaseCpu, loopBusy }`
 * (latencies in ms, CPU as a share of one core over the run).
 */
export function runWrk(url, script, seconds, connections = 10) {
  const loopBefore = performance.eventLoopUtilization();
  const cpuBefore = process.cpuUsage();
  const databaseBefore = databaseCpuMs();
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      "wrk",
      ["-t1", `-c${connections}`, `-d${seconds}s`, "--latency", "-s", script, url],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      out += chunk;
    });
    const killer = setTimeout(() => child.kill("SIGKILL"), (seconds + 10) * 1000);
    child.on("error", reject);
    child.on("close", () => {
      clearTimeout(killer);
      const cpu = process.cpuUsage(cpuBefore);
      const loopBusy = performance.eventLoopUtilization(loopBefore).utilization;
      const wallMs = performance.now() - started;
      const databaseCpu = (databaseCpuMs() - databaseBefore) / wallMs;
      const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN);
      const p50 = toMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? "");
      const p99 = toMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? "");
      const bad = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
      const errors = /Socket errors:.*/.exec(out)?.[0];
      if (!Number.isFinite(rps)) reject(new Error(`wrk output not understood:\n${out}`));
      else
        resolve({
          rps,
          p50,
          p99,
          bad,
          errors,
          serverCpu: (cpu.user + cpu.system) / 1000 / wallMs,
          databaseCpu,
          loopBusy,
        });
    });
  });
}

/** CPU µs per request of a {@link runWrk} run: the server's, or `cpu` (a share of a core). */
export const usPerRequest = (run, cpu = run.serverCpu) => (cpu * 1e6) / run.rps;

/** The median of some numbers. */
export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

/** A number with `digits` decimals, or `n/a`. */
export const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");
