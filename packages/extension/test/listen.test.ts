import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DetailedTaskSchema, type StreamNotification } from "../src/index.js";
import {
  ALICE,
  BOB,
  ctx,
  errorOf,
  type Harness,
  harness,
  resultOf,
  STORES,
  startTask,
} from "./fixtures.js";

describe.each(STORES)("on the $name store", (factory) => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness(factory);
  });
  afterEach(async () => {
    await h.close();
  });

  describe("task subscriptions (subscriptions/listen with taskIds)", () => {
    it("answers -32021 without the extension and -32602 for a foreign or unknown id", async () => {
      const taskId = await startTask(h, "work", { gate: "a" });
      const params = { notifications: { taskIds: [taskId] } };
      expect(
        errorOf(await h.ext.authorizeSubscription(ctx(ALICE, { capabilities: {} }), params)).code,
      ).toBe(-32021);
      expect(errorOf(await h.ext.authorizeSubscription(ctx(BOB), params)).code).toBe(-32602);
      expect(
        errorOf(
          await h.ext.authorizeSubscription(ctx(), {
            notifications: { taskIds: [taskId, "nope"] },
          }),
        ).code,
      ).toBe(-32602);
      expect(
        errorOf(await h.ext.authorizeSubscription(ctx(), { notifications: { taskIds: "x" } })).code,
      ).toBe(-32602);
      expect(resultOf(await h.ext.authorizeSubscription(ctx(), params))).toEqual({
        taskIds: [taskId],
      });
      h.gates.open("a");
    });

    it("acknowledges, then pushes full DetailedTasks tagged with the subscription id until terminal", async () => {
      const taskId = await startTask(h, "ask");
      await h.service.waitFor(ALICE, taskId, (t) => t.status === "input_required");
      const sent: StreamNotification[] = [];
      let ended!: () => void;
      const allTerminal = new Promise<void>((resolve) => {
        ended = resolve;
      });
      const subscription = h.ext.subscription({
        ctx: ctx(),
        taskIds: [taskId],
        subscriptionId: 7,
        send: (n) => sent.push(n),
        onAllTerminal: () => ended(),
      });
      expect(subscription.acknowledgement()).toEqual({
        method: "notifications/subscriptions/acknowledged",
        params: {
          notifications: { taskIds: [taskId] },
          _meta: { "io.modelcontextprotocol/subscriptionId": 7 },
        },
      });
      subscription.start();
      await vi.waitFor(() => expect(sent.length).toBeGreaterThan(0), {
        timeout: 5000,
        interval: 5,
      });
      resultOf(
        await h.ext.updateTask(ctx(), {
          taskId,
          inputResponses: {
            first: { action: "accept", content: {} },
            second: { action: "accept", content: {} },
          },
        }),
      );
      await allTerminal;
      subscription.close();
      const statuses = sent.map((n) => n.params.status);
      expect(statuses[0]).toBe("input_required");
      expect(statuses.at(-1)).toBe("completed");
      for (const n of sent) {
        expect(n.method).toBe("notifications/tasks");
        const { _meta, ...task } = n.params;
        expect(_meta).toEqual({ "io.modelcontextprotocol/subscriptionId": 7 });
        expect(() => DetailedTaskSchema.parse(task)).not.toThrow();
      }
      expect(sent.at(-1)?.params).toMatchObject({ result: { resultType: "complete" } });
    });
  });
});
