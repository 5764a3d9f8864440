// The TypeScript SDK 1.32 client (@modelcontextprotocol/sdk, its experimental tasks API)
// under the client-side conformance suite's contract: the URL is the last argument, the
// scenario's context in MCP_CONFORMANCE_CONTEXT. Written the way its docs show: a plain
// client.callTool, or client.experimental.tasks.callToolStream with a `task` request option
// (reading taskCreated / taskStatus / result messages), cancelTask to cancel; questions
// through an elicitation/create request handler. 2025-11-25 only (1.x has no 2026-07-28).
//
// Run it from <peers root>/npm-sdk1 (install.py copies it next to node_modules).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const url = process.argv[process.argv.length - 1];
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");

const client = new Client(
  { name: "ts1-conformance", version: "0" },
  { capabilities: { elicitation: { form: {} } } },
);
client.setRequestHandler(ElicitRequestSchema, async () => ({
  action: "accept",
  content: context.answer || {},
}));
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
try {
  const params = { name: context.tool, arguments: context.arguments || {} };
  if (!context.task) {
    await client.callTool(params);
  } else {
    const task = context.ttl == null ? {} : { ttl: context.ttl };
    const stream = client.experimental.tasks.callToolStream(params, undefined, { task });
    for await (const message of stream) {
      if (message.type === "taskCreated" && context.cancel) {
        await client.experimental.tasks.cancelTask(message.task.taskId);
        break;
      }
      if (message.type === "result" || message.type === "error") break;
    }
  }
} finally {
  await client.close();
}
