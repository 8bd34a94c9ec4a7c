import { owner, type TaskContext } from "@mcp-tasks/core";
import { type fromJsonSchema, McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isTaskTool, mountTaskTools, type TaskToolRouting, taskTool } from "../src/index.js";

/** The context a run gets, minus what these tools never use. */
const context = (): TaskContext => ({
  taskId: "t-1",
  owner: owner({ principalId: "alice" }),
  signal: new AbortController().signal,
  attempt: 1,
  worker: "test",
  requireInput: async () => ({}),
  setStatusMessage: async () => {},
  reportProgress: () => {},
});

const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });

describe("taskTool", () => {
  it("declares a core tool with the JSON Schema, listing fields and execution policy", () => {
    const tool = taskTool(
      "report",
      {
        title: "Report",
        description: "Writes one",
        inputSchema: z.object({ topic: z.string(), pages: z.number().int().optional() }),
        outputSchema: z.object({ words: z.number() }),
        annotations: { readOnlyHint: true },
        icons: [{ src: "https://example.com/r.png" }],
        _meta: { "com.example/x": 1 },
        taskSupport: "required",
        retry: { attempts: 3, backoffMs: 50 },
        deadlineMs: 60_000,
      },
      async ({ topic }) => ({ ...text(topic), structuredContent: { words: 1 } }),
    );
    expect(isTaskTool(tool)).toBe(true);
    expect(tool).toMatchObject({
      name: "report",
      title: "Report",
      description: "Writes one",
      taskMode: "always",
      execution: { retry: { attempts: 3, backoffMs: 50 }, deadlineMs: 60_000 },
      annotations: { readOnlyHint: true },
      icons: [{ src: "https://example.com/r.png" }],
      _meta: { "com.example/x": 1 },
      inputSchema: {
        type: "object",
        properties: { topic: { type: "string" }, pages: { type: "integer" } },
        required: ["topic"],
      },
      outputSchema: { type: "object", properties: { words: { type: "number" } } },
    });
  });

  it("takes a raw shape as McpServer does, and defaults to optional tasks", async () => {
    const tool = taskTool("echo", { inputSchema: { text: z.string() } }, async ({ text: t }) =>
      text(t.toUpperCase()),
    );
    expect(tool.taskMode).toBe("optional");
    expect(tool.inputSchema).toMatchObject({ properties: { text: { type: "string" } } });
    expect(await tool.run({ text: "hi" }, context())).toEqual(text("HI"));
  });

  it("hands the handler the schema's output (transforms and defaults applied)", async () => {
    const tool = taskTool(
      "count",
      { inputSchema: z.object({ n: z.coerce.number().default(2) }) },
      async ({ n }) => text(typeof n === "number" ? `number ${n}` : "not a number"),
    );
    expect(await tool.run({ n: "5" }, context())).toEqual(text("number 5"));
    expect(await tool.run({}, context())).toEqual(text("number 2"));
  });

  it("answers bad stored arguments and bad structured output with McpServer's isError words", async () => {
    const tool = taskTool(
      "shaped",
      { inputSchema: z.object({ n: z.number() }), outputSchema: z.object({ n: z.number() }) },
      async ({ n }) =>
        n === 0
          ? text("no structure")
          : n === 1
            ? { ...text("wrong"), structuredContent: { n: "one" } }
            : n === 2
              ? { ...text("failed"), isError: true }
              : { ...text("fine"), structuredContent: { n } },
    );
    expect(await tool.run({ n: "x" }, context())).toEqual({
      content: [
        {
          type: "text",
          text: "Input validation error: Invalid arguments for tool shaped: n: Invalid input: expected number, received string",
        },
      ],
      isError: true,
    });
    expect(await tool.run({ n: 0 }, context())).toEqual({
      content: [
        {
          type: "text",
          text: "Output validation error: Tool shaped has an output schema but no structured content was provided",
        },
      ],
      isError: true,
    });
    expect(await tool.run({ n: 1 }, context())).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/^Output validation error: Invalid structured/) }],
    });
    expect(await tool.run({ n: 2 }, context())).toEqual({ ...text("failed"), isError: true });
    expect(await tool.run({ n: 3 }, context())).toEqual({
      ...text("fine"),
      structuredContent: { n: 3 },
    });
  });

  it("refuses schemas that are not objects or carry no JSON Schema", () => {
    expect(() =>
      taskTool("bad", { inputSchema: z.string() as never }, async () => text("")),
    ).toThrow(/must describe an object/);
    const noJson = { "~standard": { version: 1, vendor: "x", validate: () => ({ value: {} }) } };
    expect(() => taskTool("bad", { inputSchema: noJson as never }, async () => text(""))).toThrow(
      /Standard JSON Schema/,
    );
  });
});

describe("mountTaskTools", () => {
  const routing: TaskToolRouting = {
    takesCall: () => false,
    answerCall: async () => ({}),
    runInRequest: async () => text("in request"),
  };
  const tool = taskTool("report", { inputSchema: z.object({}) }, async () => text("r"));

  it("registers JSON Schema tools through fromJsonSchema, keeping the schema", () => {
    const server = new McpServer({ name: "s", version: "1" });
    mountTaskTools(
      server,
      [
        {
          name: "plain",
          inputSchema: { type: "object", properties: { a: { type: "number" } } },
          taskMode: "optional",
          run: () => text("plain"),
        },
      ],
      routing,
    );
    const registered = (
      server as unknown as {
        _registeredTools: Record<string, { inputSchema: ReturnType<typeof fromJsonSchema> }>;
      }
    )._registeredTools.plain;
    if (registered === undefined) throw new Error("not registered");
    expect(
      registered.inputSchema["~standard"].jsonSchema.input({ target: "draft-2020-12" }),
    ).toMatchObject({ properties: { a: { type: "number" } } });
  });

  it("refuses a connected server, a second attach and a name the server already has", async () => {
    const taken = new McpServer({ name: "s", version: "1" });
    taken.registerTool("report", {}, () => text("mine"));
    expect(() => mountTaskTools(taken, [tool], routing)).toThrow(
      'Cannot add task tool "report": this McpServer already has a tool of that name.',
    );
    const twice = new McpServer({ name: "s", version: "1" });
    mountTaskTools(twice, [tool], routing);
    expect(() => mountTaskTools(twice, [tool], routing)).toThrow(/already attached/);
    const { InMemoryTransport } = await import("@modelcontextprotocol/server");
    const [, serverSide] = InMemoryTransport.createLinkedPair();
    const connected = new McpServer({ name: "s", version: "1" });
    await connected.connect(serverSide);
    expect(() => mountTaskTools(connected, [tool], routing)).toThrow(
      /before the McpServer is connected/,
    );
    await connected.close();
  });
});
