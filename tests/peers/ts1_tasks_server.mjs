// Minimal 2025-11-25 (SEP-1686) tasks peer on npm @modelcontextprotocol/sdk@1.32.2.
// install.py / the harness copy this file into <peers root>/npm-sdk1/ (next to its
// node_modules: node resolves ESM imports relative to the script file) and run the copy.
//   node ts1_tasks_server.mjs stdio
//   node ts1_tasks_server.mjs http PORT          -> http://127.0.0.1:PORT/mcp
// Tools (same names as mcp1_tasks_server.py):
//   slow_echo (taskSupport optional), need_task (required),
//   confirm (required; elicits inside the task => input_required), fail (required; status failed),
//   summarize (required; sampling/createMessage inside the task => input_required),
//   plain_echo (no execution => task forbidden; returns "echo: <text>" immediately)
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CreateMessageResultSchema, ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryTaskStore, InMemoryTaskMessageQueue } from '@modelcontextprotocol/sdk/experimental/tasks';

const taskStore = new InMemoryTaskStore(); // shared by all sessions (scoped by sessionId inside)
const taskMessageQueue = new InMemoryTaskMessageQueue();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t, isError = false) => ({ content: [{ type: 'text', text: t }], isError });

function buildServer() {
  const server = new McpServer(
    { name: 'ts1-tasks-peer', version: '1.32.2' },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore, // installs tasks/get, tasks/result, tasks/list, tasks/cancel handlers
      taskMessageQueue, // side-channel queue: requests with relatedTask go out on tasks/result
    },
  );
  const args = { text: z.string().optional(), seconds: z.number().optional() };

  // Background job helper: create task now, finish later.
  const taskTool = (name, mode, desc, work) =>
    server.experimental.tasks.registerToolTask(
      name,
      { description: desc, inputSchema: args, execution: { taskSupport: mode } },
      {
        createTask: async (a, extra) => {
          const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 60000, pollInterval: 500 });
          // storeTaskResult throws if the task is already terminal (e.g. the client sent
          // tasks/cancel); unguarded, that rejection crashes the whole Node process.
          const store = (status, result) =>
            extra.taskStore.storeTaskResult(task.taskId, status, result).catch(() => {});
          (async () => {
            try {
              await store('completed', await work(a, task.taskId, extra));
            } catch (e) {
              await store('failed', text(String(e?.message ?? e), true));
            }
          })();
          return { task };
        },
        getTask: async (_a, extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (_a, extra) => extra.taskStore.getTaskResult(extra.taskId),
      },
    );

  const echo = async (a) => {
    await sleep((a.seconds ?? 1) * 1000);
    return text(`echo (task): ${a.text ?? 'hello'}`);
  };
  taskTool('slow_echo', 'optional', 'Echo text after a delay (task optional)', echo);
  taskTool('need_task', 'required', 'Echo text after a delay (task required)', echo);
  taskTool('confirm', 'required', 'Ask the user to confirm via elicitation, inside a task', async (a, taskId, extra) => {
    await extra.taskStore.updateTaskStatus(taskId, 'input_required');
    // relatedTask => request is queued and delivered on the client's tasks/result stream
    const res = await server.server.request(
      {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: `Confirm: ${a.text ?? 'hello'}?`,
          requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
        },
      },
      ElicitResultSchema,
      { relatedTask: { taskId } },
    );
    await extra.taskStore.updateTaskStatus(taskId, 'working');
    return text(`confirmed=${res.action === 'accept' && !!res.content?.ok} action=${res.action}`);
  });
  taskTool('summarize', 'required', "Ask the client's model to summarize, inside a task", async (a, taskId, extra) => {
    await extra.taskStore.updateTaskStatus(taskId, 'input_required');
    const res = await server.server.request(
      {
        method: 'sampling/createMessage',
        params: { messages: [{ role: 'user', content: { type: 'text', text: a.text ?? 'hello' } }], maxTokens: 50 },
      },
      CreateMessageResultSchema,
      { relatedTask: { taskId } },
    );
    await extra.taskStore.updateTaskStatus(taskId, 'working');
    const said = res.content?.type === 'text' ? res.content.text : '?';
    return text(`model ${res.model} said: ${said}`);
  });
  taskTool('fail', 'required', 'Task that fails', async () => {
    await sleep(200);
    throw new Error('boom');
  });
  // Plain tool: no `execution` at all (taskSupport absent = forbidden). registerTool()
  // would advertise an explicit {taskSupport:'forbidden'}; drop it so tools/list omits it.
  const plain = server.registerTool(
    'plain_echo',
    { description: 'Echo text immediately (no task support)', inputSchema: args },
    async (a) => text(`echo: ${a.text ?? 'hello'}`),
  );
  delete plain.execution;
  return server;
}

const [mode = 'stdio', portArg] = process.argv.slice(2);
if (mode === 'stdio') {
  await buildServer().connect(new StdioServerTransport());
} else if (mode === 'http' && portArg) {
  const transports = new Map(); // Mcp-Session-Id -> transport (one McpServer per session)
  const httpServer = http.createServer(async (req, res) => {
    try {
      if (!req.url.startsWith('/mcp')) return res.writeHead(404).end();
      let body;
      if (req.method === 'POST') {
        const chunks = [];
        for await (const c of req) chunks.push(c);
        body = JSON.parse(Buffer.concat(chunks).toString() || 'null');
      }
      const sid = req.headers['mcp-session-id'];
      let transport = sid && transports.get(sid);
      if (!transport) {
        if (req.method !== 'POST' || body?.method !== 'initialize') {
          return res.writeHead(sid ? 404 : 400, { 'content-type': 'application/json' }).end(
            JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: no valid session' } }),
          );
        }
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => transports.set(id, created),
        });
        created.onclose = () => created.sessionId && transports.delete(created.sessionId);
        await buildServer().connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res, body);
    } catch (e) {
      // Malformed JSON and the like: answer instead of crashing the process.
      if (!res.headersSent) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(
          JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${e?.message ?? e}` } }),
        );
      } else {
        res.end();
      }
    }
  });
  httpServer.listen(Number(portArg), '127.0.0.1', () =>
    console.error(`ts1-tasks-peer listening on http://127.0.0.1:${portArg}/mcp`),
  );
  // Exit at once on SIGTERM/SIGINT: open SSE streams would hold httpServer.close() up.
  for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
} else {
  console.error('usage: ts1_tasks_server.mjs stdio | http PORT');
  process.exit(2);
}
