// @modelcontextprotocol/ext-tasks 0.2.2 on @modelcontextprotocol/client 2.4.0 under the
// client-side conformance suite's contract: the URL is the last argument, the scenario's
// context in MCP_CONFORMANCE_CONTEXT, the generation in MCP_CONFORMANCE_PROTOCOL_VERSION.
// Written the way its README and guides show: a connected SDK Client,
// createTaskSessionFromClient, session.callTool (default options unless the context asks for a
// task: then task.preference "require", with retentionMs for a ttl), settle() to wait,
// cancel() to cancel; questions through createApplicationInputHandler.
//
// 2026-07-28: the Client is pinned to the generation (versionNegotiation), and the session
// gets what its "Adapters and schemas" guide asks of the host: `rawDispatch` (the host's
// request coordinator, which owns request ids and response matching) and
// `v2RequestFraming` (the values the Client was initialized with). The coordinator below is
// the smallest one: a second StreamableHTTPClientTransport of the same SDK to the same URL,
// so the raw requests carry the headers the SDK derives from their body (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name), not headers of this script's making.
//
// `receive` (2025-11-25): bindTaskReceiver (ext-tasks/receiver), elicitation/create enabled,
// its capabilities merged under the Client's `tasks`, as its receiver guide shows.
// `listen` (2026-07-28): ext-tasks 0.2.2 has no subscriptions/listen (it follows a task by
// tasks/get only), and the Client's own listen() takes a SubscriptionFilter with no taskIds
// (toolsListChanged, promptsListChanged, resourcesListChanged, resourceSubscriptions): there
// is no library feature to configure, so the script says so on stderr and polls as usual.
//
// Run it from <peers root>/npm-ext-tasks (install.py copies it next to node_modules).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createApplicationInputHandler,
  createTaskSessionFromClient,
} from "@modelcontextprotocol/ext-tasks/client";
import { bindTaskReceiver } from "@modelcontextprotocol/ext-tasks/receiver";

const url = new URL(process.argv[process.argv.length - 1]);
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION || "2025-11-25";
const modern = version >= "2026-07-28";
const answer = context.answer || {};

// The host's request coordinator for 2026-07-28 task traffic: its own ids, its own matching.
function requestCoordinator(target) {
  const transport = new StreamableHTTPClientTransport(target);
  const pending = new Map();
  let next = 0;
  transport.onmessage = (message) => {
    const waiter = pending.get(message.id);
    if (waiter === undefined || !("result" in message || "error" in message)) return;
    pending.delete(message.id);
    waiter.resolve(
      "error" in message
        ? { kind: "error", error: message.error }
        : { kind: "result", result: message.result },
    );
  };
  transport.onerror = () => {}; // a failed send rejects its own dispatch below
  const started = transport.start();
  return {
    async dispatch(request, options = {}) {
      await started;
      const id = `raw-${++next}`;
      const answered = new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
      const headers = options.context?.headers;
      try {
        await transport.send(
          { ...request, jsonrpc: "2.0", id },
          {
            ...(options.signal === undefined ? {} : { requestSignal: options.signal }),
            ...(headers === undefined ? {} : { headers }),
          },
        );
      } catch (error) {
        pending.delete(id);
        throw error;
      }
      if (options.signal === undefined) return answered;
      return Promise.race([
        answered,
        new Promise((_, reject) =>
          options.signal.addEventListener("abort", () => reject(options.signal.reason), {
            once: true,
          }),
        ),
      ]).finally(() => pending.delete(id));
    },
    close: () => transport.close(),
  };
}

const clientInfo = { name: "ext-tasks-conformance", version: "0" };
const capabilities = { elicitation: { form: {} } };
let receiver;
const client = new Client(clientInfo, {
  capabilities,
  ...(modern ? { versionNegotiation: { mode: { pin: version } } } : {}),
});
if (context.receive && !modern) {
  receiver = bindTaskReceiver(client, {
    methods: { "elicitation/create": true },
    elicitation: async () => ({ action: "accept", content: answer }),
  });
  client.registerCapabilities({ tasks: receiver.capabilities });
}
if (context.listen) {
  process.stderr.write(
    "ext-tasks 0.2.2 has no subscriptions/listen for tasks (and Client.listen's filter has " +
      "no taskIds): following the task by tasks/get only\n",
  );
}
await client.connect(new StreamableHTTPClientTransport(url));
const coordinator = modern ? requestCoordinator(url) : undefined;
const session = createTaskSessionFromClient(client, {
  endpointId: "conformance",
  ...(modern
    ? {
        rawDispatch: coordinator.dispatch,
        v2RequestFraming: { protocolVersion: version, clientInfo, clientCapabilities: capabilities },
      }
    : {}),
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
  receiver?.close();
  await coordinator?.close();
  await client.close();
}
