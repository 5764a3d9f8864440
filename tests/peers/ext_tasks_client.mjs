// @modelcontextprotocol/ext-tasks 0.2.2 on @modelcontextprotocol/client 2.4.0 under the
// client-side conformance suite's contract: the URL is the last argument, the scenario's
// context in MCP_CONFORMANCE_CONTEXT. Written the way its README shows: a connected SDK
// Client, createTaskSessionFromClient, session.callTool (default options unless the context
// asks for a task: then task.preference "require", with retentionMs for a ttl), settle() to
// wait, cancel() to cancel; questions through createApplicationInputHandler.
// 2025-11-25 only here: a 2026-07-28 session needs a host's rawDispatch and framing.
//
// Run it from <peers root>/npm-ext-tasks (install.py copies it next to node_modules).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createApplicationInputHandler,
  createTaskSessionFromClient,
} from "@modelcontextprotocol/ext-tasks/client";

const url = process.argv[process.argv.length - 1];
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
const answer = context.answer || {};

const client = new Client(
  { name: "ext-tasks-conformance", version: "0" },
  { capabilities: { elicitation: { form: {} } } },
);
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const session = createTaskSessionFromClient(client, {
  endpointId: "conformance",
  onInputRequest: createApplicationInputHandler({
    elicitation: async () => ({ action: "accept", content: answer }),
    sampling: async () => {
      throw new Error("no sampling");
    },
    roots: async () => ({ roots: [] }),
  }),
});
try {
  const options = context.task
    ? {
        task: {
          preference: "require",
          ...(context.ttl == null ? {} : { retentionMs: context.ttl }),
        },
      }
    : undefined;
  const execution = await session.callTool(context.tool, context.arguments || {}, options);
  if (context.cancel) {
    await execution.cancel();
  } else {
    await execution.settle();
  }
} finally {
  await session.close();
  await client.close();
}
