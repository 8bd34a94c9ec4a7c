// Live views are bounded per owner, and owners together cannot take the operators' share:
// one owner's flood of event streams leaves another owner and the operator served.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, type ConsoleFixture, startConsole } from "./support/server.js";

let f: ConsoleFixture;
const refused: string[] = [];
const views: AbortController[] = [];

beforeAll(async () => {
  f = await startConsole({
    maxStreams: 6,
    maxStreamsPerOwner: 3,
    operatorStreams: 2,
    onLiveRefused: (limit) => refused.push(limit),
  });
});

afterAll(async () => {
  for (const view of views) view.abort();
  await f?.close();
});

/** Opens a live view; its body stays open until its controller aborts. */
async function open(
  token: string,
): Promise<{ response: Response; error: string; close: () => void }> {
  const controller = new AbortController();
  views.push(controller);
  const response = await fetch(`${f.url}/api/events`, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  const error = response.status === 200 ? "" : ((await response.json()) as { error: string }).error;
  return { response, error, close: () => controller.abort() };
}

describe("live view limits", () => {
  it("refuses an owner past their share with 429 and Retry-After; others and operators still get theirs", async () => {
    const alice = [];
    for (let i = 0; i < 3; i++) alice.push(await open("alice-token"));
    expect(alice.map((v) => v.response.status)).toEqual([200, 200, 200]);
    const fourth = await open("alice-token");
    expect(fourth.response.status).toBe(429);
    expect(Number(fourth.response.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(fourth.error).toMatch(/You have too many live views/);
    // Bob gets one: owners together may hold 6 - 2 = 4.
    expect((await open("bob-token")).response.status).toBe(200);
    const bobs = await open("bob-token");
    expect(bobs.response.status).toBe(429);
    expect(bobs.error).toMatch(/on this server/);
    // The operators' reserve is still there, and no more.
    expect((await open(ADMIN_TOKEN)).response.status).toBe(200);
    expect((await open(ADMIN_TOKEN)).response.status).toBe(200);
    expect((await open(ADMIN_TOKEN)).response.status).toBe(429);
    expect(refused).toEqual(["owner", "all", "all"]);

    // A closed view gives its slot back (once the server has seen the close).
    alice[0]!.close();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = (await open("bob-token")).response.status;
    }
    expect(status).toBe(200);
  });
});
