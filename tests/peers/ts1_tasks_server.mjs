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
// Server->client tasks (the CLIENT runs the task, this server polls it; texts identical to
// mcp1_tasks_server.py, see its docstring): plain tools ask_as_task, sample_as_task,
// list_then_cancel, ask_short_ttl {ttl} send their requests on the tools/call's own stream
// (extra.sendRequest: over HTTP the POST's SSE response); polling honours the client's
// pollInterval (else 100 ms), gives up after 30 s ("timeout status=<last>");
// "client executed synchronously" on a plain answer, "create-error=<code> <message>" on
// an error answer to the elicitation/sampling itself.
//   ask_as_task: elicitation/create {mode:form, message "Confirm: <text>?", ok schema,
//     task:{ttl:60000}}, tasks/get until terminal, tasks/result =>
//     "status=<s> result=<sorted compact JSON, no _meta>" | "status=<s> error=<code> <msg>";
//     "get-error=<code> <msg>" if a tasks/get answers an error
//   sample_as_task: the same with sampling/createMessage {messages:[user text], maxTokens:50}
//   list_then_cancel: that elicitation, tasks/list (all pages), tasks/cancel X, tasks/get X,
//     tasks/cancel X => "listed=<true|false> cancel=<status> after=<status> again=<code|ok>"
//   ask_short_ttl {ttl}: "Confirm: short?" with task:{ttl}, sleep ttl+1.5 s without polling,
//     tasks/get => "gone=<true iff -32602> code=<code|none>"
//   immediate_ask (taskSupport required): right after the task is created it sends
//     elicitation/create "Immediate: ok?" (no task) DIRECTLY (not queued for tasks/result;
//     over HTTP on the standalone GET stream) with _meta related-task = this task, task
//     input_required meanwhile => "immediate confirmed=<true|false> action=<a>" |
//     "immediate error=<code>"
//   progress_steps (taskSupport required) {steps=3, delay=0.2, related=false}: for i in
//     1..steps: statusMessage "step i/steps" (taskStore.updateTaskStatus: a
//     notifications/tasks/status too), then, if the call carried _meta.progressToken,
//     notifications/progress {that token, progress i, total steps, message "step i/steps"}
//     (with _meta related-task = the task if `related`) DIRECTLY (no relatedTask option, which
//     would queue it for tasks/result; over HTTP the standalone GET stream, dropped when none
//     is open), then sleeps `delay` s => "progressed <steps> steps token=<token as JSON|null>";
//     with `queued`, the SDK's own way for a task: notification(..., { relatedTask }), which
//     queues it (related-task _meta added) for delivery on the client's tasks/result stream
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CancelTaskResultSchema,
  CreateMessageResultSchema,
  CreateTaskResultSchema,
  ElicitResultSchema,
  GetTaskPayloadResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
  McpError,
  RELATED_TASK_META_KEY,
  ResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { InMemoryTaskStore, InMemoryTaskMessageQueue } from '@modelcontextprotocol/sdk/experimental/tasks';

const taskStore = new InMemoryTaskStore(); // shared by all sessions (scoped by sessionId inside)
const taskMessageQueue = new InMemoryTaskMessageQueue();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t, isError = false) => ({ content: [{ type: 'text', text: t }], isError });

// --- Server->client tasks: the client runs the task, this server polls it. ---
const OK_SCHEMA = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const SYNC = 'client executed synchronously';
const POLL_DEFAULT_MS = 100;
const POLL_LIMIT_MS = 30000;
// "<code> <message>" of a JSON-RPC error answer; anything else is rethrown by the callers.
const isRpcError = (e) => e instanceof McpError;
const rpcErr = (e) => `${e.code} ${String(e.message).replace(/^MCP error -?\d+: /, '')}`;
// Same bytes as Python json.dumps(v, sort_keys=True, separators=(',', ':'), ensure_ascii=False)
// (keys sorted by hand: a JS object would list integer-like keys first).
const sortedJson = (v) => {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${sortedJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
};
const elicitParams = (message, ttl, relatedTaskId) => ({
  mode: 'form',
  message,
  requestedSchema: OK_SCHEMA,
  ...(ttl !== undefined && { task: { ttl } }),
  ...(relatedTaskId !== undefined && { _meta: { [RELATED_TASK_META_KEY]: { taskId: relatedTaskId } } }),
});

// Requests to the calling client on the tools/call's own stream (HTTP: its POST's SSE).
function clientTasks(extra) {
  const send = (method, params, schema) => extra.sendRequest({ method, params }, schema);
  return {
    // The task-augmented request: the CreateTaskResult's Task, or null if answered inline.
    async create(method, params) {
      const res = await send(method, params, ResultSchema);
      return res.task && typeof res.task === 'object' ? CreateTaskResultSchema.parse(res).task : null;
    },
    get: (taskId) => send('tasks/get', { taskId }, GetTaskResultSchema),
    cancel: (taskId) => send('tasks/cancel', { taskId }, CancelTaskResultSchema),
    async listAll() {
      const tasks = [];
      let cursor;
      for (let i = 0; i < 100; i++) {
        const page = await send('tasks/list', cursor ? { cursor } : {}, ListTasksResultSchema);
        tasks.push(...page.tasks);
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      return tasks;
    },
    // Create, poll tasks/get until terminal, then tasks/result: the tool's text.
    async run(method, params) {
      let task;
      try {
        task = await this.create(method, params);
      } catch (e) {
        if (!isRpcError(e)) throw e;
        return `create-error=${rpcErr(e)}`;
      }
      if (!task) return SYNC;
      let interval = task.pollInterval;
      const deadline = Date.now() + POLL_LIMIT_MS;
      let got;
      for (;;) {
        try {
          got = await this.get(task.taskId);
        } catch (e) {
          if (!isRpcError(e)) throw e;
          return `get-error=${rpcErr(e)}`;
        }
        if (TERMINAL.has(got.status)) break;
        if (Date.now() >= deadline) return `timeout status=${got.status}`;
        if (got.pollInterval !== undefined) interval = got.pollInterval;
        await sleep(interval ?? POLL_DEFAULT_MS);
      }
      let res;
      try {
        res = await send('tasks/result', { taskId: task.taskId }, GetTaskPayloadResultSchema);
      } catch (e) {
        if (!isRpcError(e)) throw e;
        return `status=${got.status} error=${rpcErr(e)}`;
      }
      const { _meta, ...body } = res;
      return `status=${got.status} result=${sortedJson(body)}`;
    },
  };
}

async function listThenCancel(peer, t) {
  const step = async (f, prefix) => {
    try {
      return { v: await f() };
    } catch (e) {
      if (!isRpcError(e)) throw e;
      return { err: `${prefix}${rpcErr(e)}` };
    }
  };
  const created = await step(() => peer.create('elicitation/create', elicitParams(`Confirm: ${t}?`, 60000)), 'create-error=');
  if (created.err) return created.err;
  if (!created.v) return SYNC;
  const id = created.v.taskId;
  const list = await step(() => peer.listAll(), 'list-error=');
  if (list.err) return list.err;
  const listed = list.v.some((x) => x.taskId === id);
  const cancel = await step(() => peer.cancel(id), 'cancel-error=');
  if (cancel.err) return `listed=${listed} ${cancel.err}`;
  const after = await step(() => peer.get(id), 'get-error=');
  if (after.err) return `listed=${listed} cancel=${cancel.v.status} ${after.err}`;
  let again = 'ok';
  try {
    await peer.cancel(id);
  } catch (e) {
    if (!isRpcError(e)) throw e;
    again = String(e.code);
  }
  return `listed=${listed} cancel=${cancel.v.status} after=${after.v.status} again=${again}`;
}

async function askShortTtl(peer, ttl) {
  let task;
  try {
    task = await peer.create('elicitation/create', elicitParams('Confirm: short?', ttl));
  } catch (e) {
    if (!isRpcError(e)) throw e;
    return `create-error=${rpcErr(e)}`;
  }
  if (!task) return SYNC;
  await sleep(ttl + 1500); // no polling meanwhile
  try {
    await peer.get(task.taskId);
  } catch (e) {
    if (!isRpcError(e)) throw e;
    return `gone=${e.code === -32602} code=${e.code}`;
  }
  return 'gone=false code=none';
}

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
  const taskTool = (name, mode, desc, work, schema = args) =>
    server.experimental.tasks.registerToolTask(
      name,
      { description: desc, inputSchema: schema, execution: { taskSupport: mode } },
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

  // Server->client tasks (see the header). Plain tools as plain_echo: no `execution`.
  const plainTool = (name, desc, schema, fn) => {
    const tool = server.registerTool(name, { description: desc, inputSchema: schema }, async (a, extra) =>
      text(await fn(a, clientTasks(extra))),
    );
    delete tool.execution;
  };
  const sampleParams = (t) => ({
    messages: [{ role: 'user', content: { type: 'text', text: t } }],
    maxTokens: 50,
    task: { ttl: 60000 },
  });
  plainTool('ask_as_task', 'Task-augmented elicitation run by the client, polled', args, (a, peer) =>
    peer.run('elicitation/create', elicitParams(`Confirm: ${a.text ?? 'hello'}?`, 60000)),
  );
  plainTool('sample_as_task', 'Task-augmented sampling run by the client, polled', args, (a, peer) =>
    peer.run('sampling/createMessage', sampleParams(a.text ?? 'hello')),
  );
  plainTool('list_then_cancel', 'Client task: tasks/list, cancel, get, cancel again', args, (a, peer) =>
    listThenCancel(peer, a.text ?? 'hello'),
  );
  plainTool('ask_short_ttl', 'Client task with a short ttl, read after it', { ttl: z.number().int() }, (a, peer) =>
    askShortTtl(peer, a.ttl),
  );
  taskTool('immediate_ask', 'required', 'Task that elicits directly, right at its start', async (_a, taskId, extra) => {
    await extra.taskStore.updateTaskStatus(taskId, 'input_required');
    // Straight onto the transport (no relatedTask option => not queued for tasks/result;
    // no relatedRequestId: the tools/call is already answered, so over HTTP this goes to
    // the standalone GET stream). The related-task _meta is set by hand.
    let out;
    try {
      const res = await server.server.request(
        { method: 'elicitation/create', params: elicitParams('Immediate: ok?', undefined, taskId) },
        ElicitResultSchema,
      );
      out = `immediate confirmed=${res.action === 'accept' && res.content?.ok === true} action=${res.action}`;
    } catch (e) {
      if (!isRpcError(e)) throw e;
      out = `immediate error=${e.code}`;
    }
    await extra.taskStore.updateTaskStatus(taskId, 'working').catch(() => {});
    return text(out);
  });
  const stepsArgs = {
    steps: z.number().int().optional(),
    delay: z.number().optional(),
    related: z.boolean().optional(),
    queued: z.boolean().optional(),
  };
  taskTool(
    'progress_steps',
    'required',
    "Task reporting progress with the call's token",
    async (a, taskId, extra) => {
      const token = extra._meta?.progressToken; // the tools/call's own token (C-46)
      const steps = a.steps ?? 3;
      for (let i = 1; i <= steps; i++) {
        const said = `step ${i}/${steps}`;
        await extra.taskStore.updateTaskStatus(taskId, 'working', said);
        if (token !== undefined) {
          // Not extra.sendNotification: it is tied to the answered tools/call (over HTTP its
          // stream is gone); { relatedTask } (a.queued) queues it for tasks/result.
          const note = {
            method: 'notifications/progress',
            params: {
              progressToken: token,
              progress: i,
              total: steps,
              message: said,
              ...(a.related && { _meta: { [RELATED_TASK_META_KEY]: { taskId } } }),
            },
          };
          await server.server.notification(note, a.queued ? { relatedTask: { taskId } } : undefined);
        }
        await sleep((a.delay ?? 0.2) * 1000);
      }
      return text(`progressed ${steps} steps token=${sortedJson(token ?? null)}`);
    },
    stepsArgs,
  );
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
