// The TypeScript SDK 1.32 client (@modelcontextprotocol/sdk, its experimental tasks API)
// under the client-side conformance suite's contract: the URL is the last argument, the
// scenario's context in MCP_CONFORMANCE_CONTEXT. Written the way its docs show: a plain
// client.callTool, or client.experimental.tasks.callToolStream with a `task` request option
// (reading taskCreated / taskStatus / result messages), cancelTask to cancel; questions
// through an elicitation/create request handler. 2025-11-25 only (1.x has no 2026-07-28).
//
// `receive` in the context: the client serves task-augmented questions the way the SDK's
// example client (examples/client/simpleStreamableHttp) does: an InMemoryTaskStore as the
// Client's `taskStore` (the SDK then serves tasks/get, list, result and cancel itself),
// `tasks.requests.elicitation.create` declared, and the elicitation handler, when the request
// carries `task`, creating the task with extra.taskStore.createTask({ ttl:
// extra.taskRequestedTtl }) and storing its result.
//
// Run it from <peers root>/npm-sdk1 (install.py copies it next to node_modules).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const url = process.argv[process.argv.length - 1];
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");

const receiving = context.receive
  ? {
      capabilities: { tasks: { requests: { elicitation: { create: {} } } } },
      taskStore: new InMemoryTaskStore(),
    }
  : { capabilities: {} };
const client = new Client(
  { name: "ts1-conformance", version: "0" },
  {
    ...receiving,
    capabilities: { elicitation: { form: {} }, ...receiving.capabilities },
  },
);
client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
  const result = { action: "accept", content: context.answer || {} };
  if (request.params.task && extra.taskStore) {
    const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl });
    await extra.taskStore.storeTaskResult(task.taskId, "completed", result);
    return { task };
  }
  return result;
});
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
