import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  type TaskEnabledSession,
} from "@modelcontextprotocol/ext-tasks/client";

export interface LegacyConnected {
  client: Client;
  session: TaskEnabledSession;
  inputs: string[];
  close(): Promise<void>;
}

/**
 * The unmodified ext-tasks client on its 2025-11-25 path: a plain SDK `Client` (which
 * initializes a session), with the tasks session created from it. Inputs are accepted with
 * `{ confirm: true, name: "Ada" }`.
 */
export async function connectLegacy(
  url: string,
  token: string,
  name = "ext-tasks-legacy",
): Promise<LegacyConnected> {
  const client = new Client(
    { name, version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  const inputs: string[] = [];
  const session = createTaskSessionFromClient(client, {
    endpointId: `legacy-${name}-${token}`,
    onInputRequest: (async (request: { kind: string }) => {
      inputs.push(request.kind);
      return { action: "accept", content: { confirm: true, name: "Ada" } };
    }) as never,
  });
  return {
    client,
    session,
    inputs,
    async close() {
      await session.close();
      await client.close();
    },
  };
}
