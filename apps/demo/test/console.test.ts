// The demo's web console at /console, in Debian's Chromium (headless, playwright-core):
// the real binary with static tokens and an operator token, on the memory store and on
// PostgreSQL (a fresh schema); tasks created over MCP.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DATABASE_URL,
  type DemoProcess,
  dropSchema,
  killAll,
  schemaName,
  startProcess,
} from "./helpers/process.js";
import { rpc } from "./helpers/wire.js";

const OPERATOR = "operator-token-0123456789";
const SHOTS = fileURLToPath(new URL("../test-output/", import.meta.url));
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

let demo: DemoProcess;
let profile: string;
let context: BrowserContext;
let consoleUrl: string;
const schemas: string[] = [];

async function call(token: string, name: string, args: Record<string, unknown>): Promise<string> {
  const { body } = await rpc(demo.url, "tools/call", { name, arguments: args }, { token });
  const taskId = body?.result?.taskId;
  if (typeof taskId !== "string") throw new Error(`no task: ${JSON.stringify(body)}`);
  return taskId;
}

async function signIn(token: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(consoleUrl);
  await page.fill('input[name="token"]', token);
  await page.press('input[name="token"]', "Enter");
  return page;
}

const rowIds = (page: Page) =>
  page.$$eval("#tasks tbody tr", (rows) => rows.map((r) => r.getAttribute("data-task-id")));

async function startDemo(store: "memory" | "postgres"): Promise<void> {
  await killAll();
  const storeArgs = ["--store", store];
  if (store === "postgres") {
    const schema = schemaName("demo_console");
    schemas.push(schema);
    storeArgs.push("--database-url", DATABASE_URL, "--schema", schema);
  }
  demo = await startProcess([
    "--port",
    "0",
    ...storeArgs,
    "--tokens",
    "alice-token=alice@acme,bob-token=bob@acme",
    "--admin-tokens",
    OPERATOR,
  ]);
  expect(demo.out()).toContain("console: ");
  consoleUrl = demo.url.replace(/\/mcp$/, "/console");
}

beforeAll(async () => {
  profile = mkdtempSync(join(tmpdir(), "demo-console-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 860 },
  });
  mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await killAll();
  await Promise.all(schemas.map((schema) => dropSchema(schema)));
});

describe.each(["memory", "postgres"] as const)("the demo's console on %s", (store) => {
  beforeAll(() => startDemo(store), 60_000);

  it("alice sees her own tasks; answering confirm_delete completes it; the operator sees both owners", async () => {
    const mine = [
      await call("alice-token", "slow_compute", { seconds: 0, label: "quick" }),
      await call("alice-token", "slow_compute", { seconds: 600, label: "long" }),
      await call("alice-token", "confirm_delete", { filename: "plan.txt" }),
    ];
    const bobs = await call("bob-token", "slow_compute", { seconds: 600, label: "bob" });

    const alice = await signIn("alice-token");
    await alice.waitForSelector(`tr[data-task-id="${mine[2]}"][data-status="input_required"]`);
    expect(await rowIds(alice)).toEqual([...mine].reverse());
    expect(await alice.$(`tr[data-task-id="${bobs}"]`)).toBeNull();
    await alice.click(`tr[data-task-id="${mine[2]}"] td.id button`);
    await alice.getByLabel("Yes, delete it").check();
    await alice.getByRole("button", { name: "Send answer" }).click();
    await alice.waitForSelector(`tr[data-task-id="${mine[2]}"][data-status="completed"]`);
    await alice.screenshot({ path: join(SHOTS, `console-alice-${store}.png`), fullPage: true });

    const operator = await signIn(OPERATOR);
    await operator.waitForSelector(`tr[data-task-id="${bobs}"]`);
    const owners = await operator.$$eval("#tasks tbody td.owner-col", (cells) =>
      cells.map((c) => c.textContent),
    );
    expect(new Set(owners)).toEqual(new Set(["alice@acme", "bob@acme"]));
    // The traffic panel's totals come from the demo's request metrics.
    await operator.waitForSelector("#traffic .legend:has-text('2026-07-28')");
    await operator.click(`tr[data-task-id="${mine[1]}"] td.id button`);
    await operator.click("#cancel-task");
    await operator.waitForSelector(`tr[data-task-id="${mine[1]}"][data-status="cancelled"]`);
    await operator.screenshot({
      path: join(SHOTS, `console-operator-${store}.png`),
      fullPage: true,
    });
  });

  it("a bad token gets the message", async () => {
    const page = await signIn("not-a-token");
    await page.waitForSelector("#sign-in-error:has-text('not accepted')");
    await page.screenshot({ path: join(SHOTS, `console-bad-token-${store}.png`), fullPage: true });
  });
});
