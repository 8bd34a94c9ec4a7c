// The console in a real browser: Debian's Chromium, headless, driven by playwright-core,
// against a real node:http server on 127.0.0.1 over a real TaskService, TaskRunner and
// memory store. Each test saves a screenshot under test-output/.
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openBrowser, rowIds, screenshot, signIn } from "./support/browser.js";
import { COUNT_LOADS, OVERFLOWS_HORIZONTALLY, PHONE, row } from "./support/console-page.js";
import { ADMIN_TOKEN, ALICE, BOB, type ConsoleFixture, startConsole } from "./support/server.js";

let browser: Awaited<ReturnType<typeof openBrowser>>;
let f: ConsoleFixture;
let page: Page;

beforeAll(async () => {
  browser = await openBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

beforeEach(async () => {
  f = await startConsole();
  page = await browser.context.newPage();
  // Count page loads: a live update must not reload the page.
  await page.addInitScript(COUNT_LOADS);
});

afterEach(async () => {
  await page?.close();
  await f?.close();
});

describe("console in Chromium", () => {
  it("alice signs in and sees her 3 tasks and none of bob's", async () => {
    const mine = [];
    for (const gate of ["a1", "a2", "a3"]) {
      mine.push((await f.start(ALICE, "gated_job", { gate })).taskId);
    }
    const bobs = (await f.start(BOB, "gated_job", { gate: "b1" })).taskId;
    await signIn(page, f.url, "alice-token");
    await page.waitForSelector(row(mine[0]!));
    expect(await rowIds(page)).toEqual([...mine].reverse());
    expect(await page.$(row(bobs))).toBeNull();
    expect(await page.textContent("#who")).toBe("Signed in as alice@acme");
    // The token is kept in session storage and never put in a URL.
    expect(page.url()).not.toContain("alice-token");
    expect(await page.evaluate('sessionStorage.getItem("mcp-tasks-console-token")')).toBe(
      "alice-token",
    );
    await screenshot(page, "alice-list");
    await page.setViewportSize({ ...PHONE });
    // Readable on a phone: no horizontal scrolling.
    expect(await page.evaluate(OVERFLOWS_HORIZONTALLY)).toBe(false);
    await screenshot(page, "alice-list-phone");
  });

  it("a running task turns completed on the page without a reload", async () => {
    const t = await f.start(ALICE, "gated_job", { gate: "go" });
    await signIn(page, f.url, "alice-token");
    await page.waitForSelector(row(t.taskId, "working"));
    await page.waitForSelector("#live:has-text('Live')");
    f.gates.open("go");
    await page.waitForSelector(row(t.taskId, "completed"));
    expect(await page.textContent(`${row(t.taskId)} td.status`)).toBe("completed");
    expect(await page.evaluate("window.loads")).toBe(1);
    // A task created after the page loaded appears at the top, also without a reload.
    const late = await f.start(ALICE, "gated_job", { gate: "late" });
    await page.waitForSelector(row(late.taskId));
    expect((await rowIds(page))[0]).toBe(late.taskId);
    expect(await page.evaluate("window.loads")).toBe(1);
    await screenshot(page, "live-completed");
  });

  it("cancel from the page ends the task", async () => {
    const t = await f.start(ALICE, "gated_job", { gate: "never" });
    await signIn(page, f.url, "alice-token");
    await page.click(`${row(t.taskId)} td.id button`);
    await page.waitForSelector(`#detail[data-task-id="${t.taskId}"]`);
    await page.click("#cancel-task");
    await page.waitForSelector(row(t.taskId, "cancelled"));
    await page.waitForSelector(`#detail[data-status="cancelled"]`);
    expect((await f.service.get(ALICE, t.taskId)).status).toBe("cancelled");
    await screenshot(page, "cancelled");
  });

  it("answering confirm_delete's input from the page completes it", async () => {
    const t = await f.start(ALICE, "confirm_delete", { filename: "notes.txt" });
    await f.service.waitFor(ALICE, t.taskId, (r) => r.status === "input_required");
    await signIn(page, f.url, "alice-token");
    await page.click(`${row(t.taskId, "input_required")} td.id button`);
    const form = 'form[data-input-key="confirm"]';
    await page.waitForSelector(form);
    expect(await page.textContent(`${form} legend`)).toBe("Delete notes.txt?");
    // Labelled controls: reach them by their labels, and use the keyboard.
    await page.getByLabel("Yes, delete it").check();
    await page.getByLabel("Mode (required)").selectOption("shred");
    await page.getByLabel("Copies to keep").fill("2");
    await screenshot(page, "input-form");
    // A live update of the open task re-renders it; what was typed survives.
    await f.service.setStatusMessage(ALICE, t.taskId, "Still waiting");
    await page.waitForSelector("#detail dd:has-text('Still waiting')");
    expect(await page.getByLabel("Yes, delete it").isChecked()).toBe(true);
    expect(await page.getByLabel("Copies to keep").inputValue()).toBe("2");
    await page.getByLabel("Copies to keep").press("Enter");
    await page.waitForSelector(row(t.taskId, "completed"));
    const done = await f.service.get(ALICE, t.taskId);
    expect(done.outcome).toEqual({
      kind: "result",
      result: { content: [{ type: "text", text: "Deleted notes.txt (shred)" }] },
    });
    await page.waitForSelector(`#detail[data-status="completed"]`);
    await screenshot(page, "input-answered");
  });

  it("the operator sees both owners, and the traffic panel", async () => {
    const a = await f.start(ALICE, "gated_job", { gate: "x" });
    const b = await f.start(BOB, "confirm_delete", { filename: "report.pdf" });
    await f.service.waitFor(BOB, b.taskId, (r) => r.status === "input_required");
    const done = await f.start(ALICE, "gated_job", { gate: "y" });
    f.gates.open("y");
    await f.service.waitFor(ALICE, done.taskId, (r) => r.status === "completed");
    f.traffic.add("2026-07-28", "claude-code", 40);
    f.traffic.add("2025-11-25", "old-ide", 12);
    await signIn(page, f.url, ADMIN_TOKEN);
    await page.waitForSelector(row(b.taskId));
    expect(await rowIds(page)).toEqual([done.taskId, b.taskId, a.taskId]);
    expect(await page.textContent(`${row(a.taskId)} td.owner-col`)).toBe("alice@acme");
    expect(await page.textContent(`${row(b.taskId)} td.owner-col`)).toBe("bob@acme");
    expect(await page.isVisible("#traffic")).toBe(true);
    // Two more samples: the panel draws requests per interval, pushed over the live stream.
    await sample(f);
    f.traffic.add("2026-07-28", "claude-code", 25);
    f.traffic.add("2025-11-25", "old-ide", 3);
    await sample(f);
    await page.waitForSelector('#traffic-table td[data-era="2025-11-25"]:has-text("3")');
    // The operator answers Bob's question as Bob's task asks it.
    await page.click(`${row(b.taskId)} td.id button`);
    await page.waitForSelector('form[data-input-key="confirm"]');
    await screenshot(page, "operator");
  });

  it("a bad token shows the message", async () => {
    await signIn(page, f.url, "wrong-token");
    await page.waitForSelector("#sign-in-error:has-text('not accepted')");
    expect(await page.isVisible("#app")).toBe(false);
    expect(await page.evaluate('sessionStorage.getItem("mcp-tasks-console-token")')).toBeNull();
    await screenshot(page, "bad-token");
  });
});

/** Takes a traffic sample now (the sampler's timer would, every interval). */
async function sample(fixture: ConsoleFixture): Promise<void> {
  await fixture.sampleTraffic();
}
