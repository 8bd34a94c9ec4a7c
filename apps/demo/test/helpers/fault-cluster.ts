import type { FaultWindow } from "./history-checker.js";
import { type PrivatePostgres, startPrivatePostgres } from "./private-postgres.js";
import { type DemoProcess, startProcess } from "./process.js";
import { PostgresRelay } from "./relay.js";

/**
 * Demo nodes (`--store postgres`, a short lease) on one private PostgreSQL, each node's
 * database link through a TCP relay of its own, and the faults the history suite injects:
 * kill -9 (then a restart), SIGSTOP past the lease (then SIGCONT), a cut of one node's link,
 * and a restart of the database. Each fault is recorded as a window, from its injection
 * until the system is whole again.
 */
export interface ClusterNode {
  readonly name: string;
  readonly relay: PostgresRelay;
  process: DemoProcess;
  /** Down (killed and not yet back): clients wait or pick another node. */
  down: boolean;
}

export interface FaultClusterOptions {
  readonly nodes: number;
  readonly leaseMs: number;
  /** `--tokens` of every node. */
  readonly tokens: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class FaultCluster {
  readonly nodes: ClusterNode[] = [];
  readonly faults: FaultWindow[] = [];
  readonly #options: FaultClusterOptions;
  readonly #clock: () => number;
  #pg: PrivatePostgres | undefined;

  constructor(options: FaultClusterOptions, clock: () => number) {
    this.#options = options;
    this.#clock = clock;
  }

  /** Starts the database and the nodes (bounded by the callers' hook timeouts). */
  async start(): Promise<void> {
    this.#pg = await startPrivatePostgres();
    for (let i = 1; i <= this.#options.nodes; i++) {
      const relay = new PostgresRelay(this.#pg.url);
      await relay.start();
      const name = `n${i}`;
      this.nodes.push({ name, relay, process: await this.#spawn(relay), down: false });
    }
  }

  #spawn(relay: PostgresRelay): Promise<DemoProcess> {
    return startProcess(
      [
        "--store",
        "postgres",
        "--database-url",
        relay.url,
        "--port",
        "0",
        "--tokens",
        this.#options.tokens,
        "--lease-ms",
        String(this.#options.leaseMs),
      ],
      { timeoutMs: 60_000 },
    );
  }

  /** kill -9, then the same node started again (a new process, a new port). */
  async kill(node: ClusterNode): Promise<void> {
    const startAt = this.#clock();
    node.down = true;
    await node.process.kill("SIGKILL");
    node.process = await this.#spawn(node.relay);
    node.down = false;
    this.faults.push({ kind: "kill", node: node.name, startAt, endAt: this.#clock() });
  }

  /** SIGSTOP for `ms` (past the lease), then SIGCONT. */
  async stall(node: ClusterNode, ms: number): Promise<void> {
    const pid = node.process.child.pid as number;
    const startAt = this.#clock();
    process.kill(pid, "SIGSTOP");
    try {
      await sleep(ms);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    this.faults.push({ kind: "stall", node: node.name, startAt, endAt: this.#clock() });
  }

  /** Cuts the node's database link (every connection reset, the port closed) for `ms`. */
  async cutLink(node: ClusterNode, ms: number): Promise<void> {
    const startAt = this.#clock();
    await node.relay.stop();
    await sleep(ms);
    await node.relay.start();
    this.faults.push({ kind: "link_cut", node: node.name, startAt, endAt: this.#clock() });
  }

  /** Stops the database (fast shutdown), keeps it down `ms`, starts it again. */
  async restartDatabase(ms: number): Promise<void> {
    const pg = this.#pg as PrivatePostgres;
    const startAt = this.#clock();
    await pg.stop();
    await sleep(ms);
    await pg.start();
    this.faults.push({ kind: "db_restart", startAt, endAt: this.#clock() });
  }

  /** Stops everything: the nodes, the relays, the database (and its directory). */
  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.process.kill("SIGKILL")));
    await Promise.all(this.nodes.map((node) => node.relay.stop()));
    await this.#pg?.destroy();
  }
}
