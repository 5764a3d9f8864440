// @modelcontextprotocol/ext-tasks 0.2.2 on @modelcontextprotocol/client 2.4.0 as a 2026-07-28
// benchmark row (issue 25); run by rows2026.py / bench.py.
//   node benchmarks/ext_tasks_client.mjs NPM_DIR URL SCENARIO CALLS TASKS POLLS KEYS
// NPM_DIR is the npm folder tests/peers/install.py makes (<peers root>/npm-ext-tasks); both
// packages are imported from it by absolute path, so this script stays in the repository.
//
// The SDK Client connects pinned to 2026-07-28 (its server/discover probe); the session is
// createTaskSessionFromClient, as the package's README shows. A 2026-07-28 Tasks server needs
// the host's rawDispatch (the SDK Client's codecs reject the task wire shapes): the smallest
// one is written here, over fetch: the framed request (ext-tasks adds the _meta) gets a
// JSON-RPC id, the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers (E C57-C59), one POST,
// and the JSON answer read back as {kind: "result"} or {kind: "error"}. It reads JSON answers
// only (the bench server never answers these with SSE) and runs no listen (ext-tasks opens
// none: it polls, with a 10 ms floor, MIN_TASK_POLL_INTERVAL_MS).
//
// Scenarios as rows2026.py: seq (session.task(id).snapshot(), one tasks/get each, after 1,000
// warm-up calls: EXT_WARMUP; V8 compiles hot code over the first calls), burst (TASKS
// executions settled at once, each completing at its POLLS-th poll), short (TASKS tasks one
// after another, each settled), input (TASKS tasks each asking 2 rounds of KEYS inputRequests,
// answered by createApplicationInputHandler's elicitation callback). CPU is
// process.cpuUsage() of this process only. Prints one JSON line, the rows' keys.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [npmDir, url, scenario, ...rest] = process.argv.slice(2);
const [calls, tasks, polls, keys] = rest.map(Number);
const load = (p) => import(pathToFileURL(join(npmDir, "node_modules/@modelcontextprotocol", p)).href);
const { Client, StreamableHTTPClientTransport } = await load("client/dist/index.mjs");
const { createApplicationInputHandler, createTaskSessionFromClient } = await load(
  "ext-tasks/dist/client/index.js",
);

const VERSION = "2026-07-28";
const WARMUP = Number(process.env.EXT_WARMUP ?? 1000);
const ROUNDS = 2;
const clientInfo = { name: "bench", version: "0" };
const clientCapabilities = { elicitation: { form: {} } };

// -- the host's rawDispatch: the smallest one, over fetch ----------------------------------------
let nextId = 0;
let sent = 0; // tasks/get requests sent (the burst's polls)
const NAMED = { "tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId" };
const plain = (v) => /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(v) && !v.startsWith("=?base64?");
const headerValue = (v) => (plain(v) ? v : `=?base64?${Buffer.from(v, "utf8").toString("base64")}?=`);

async function rawDispatch(request, options = {}) {
  const message = { ...request, jsonrpc: "2.0", id: ++nextId };
  const params = message.params ?? {};
  // ext-tasks hands its own routing headers (Mcp-Name on tasks/*) in context.headers: one
  // case-insensitive set, so a header is sent once.
  const headers = new Headers(options.context?.headers ?? {});
  headers.set("content-type", "application/json");
  headers.set("accept", "application/json, text/event-stream");
  headers.set("mcp-protocol-version", params._meta?.["io.modelcontextprotocol/protocolVersion"] ?? VERSION);
  headers.set("mcp-method", message.method);
  const key = NAMED[message.method];
  if (key !== undefined && typeof params[key] === "string" && !headers.has("mcp-name")) {
    headers.set("mcp-name", headerValue(params[key]));
  }
  if (message.method === "tasks/get") sent += 1;
  const response = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify(message),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const body = await response.json();
  if (body.error !== undefined) return { kind: "error", error: body.error };
  return { kind: "result", result: body.result };
}

const client = new Client(clientInfo, {
  capabilities: clientCapabilities,
  versionNegotiation: { mode: { pin: VERSION } },
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const session = createTaskSessionFromClient(client, {
  endpointId: "bench",
  rawDispatch,
  v2RequestFraming: { protocolVersion: VERSION, clientInfo, clientCapabilities },
  onInputRequest: createApplicationInputHandler({
    elicitation: async () => ({ action: "accept", content: {} }),
    sampling: async () => {
      throw new Error("no sampling");
    },
    roots: async () => ({ roots: [] }),
  }),
});

function clock() {
  return [process.cpuUsage(), process.hrtime.bigint()];
}

function per([cpu0, wall0], count, prefix = "") {
  const cpu = process.cpuUsage(cpu0);
  const wall = Number(process.hrtime.bigint() - wall0) / 1e3;
  return {
    [`${prefix}cpu_us`]: (cpu.user + cpu.system) / count,
    [`${prefix}user_us`]: cpu.user / count,
    [`${prefix}wall_us`]: wall / count,
  };
}

async function start(name, args) {
  const execution = await session.callTool(name, args, { task: { preference: "require" } });
  if (execution.kind !== "task") throw new Error(`${name} did not run as a task`);
  return execution;
}

async function settled(execution) {
  const { outcome } = await execution.settle();
  if (outcome.kind !== "completed" && outcome.status !== "completed") {
    throw new Error(`the task ended ${JSON.stringify(outcome).slice(0, 300)}`, { cause: outcome.error });
  }
}

let out;
try {
  if (scenario === "seq") {
    const execution = await start("work", { polls: 0, interval: 1000 });
    const task = session.task(execution.handle.taskId);
    for (let i = 0; i < WARMUP; i++) await task.snapshot();
    const t0 = clock();
    for (let i = 0; i < calls; i++) await task.snapshot();
    out = per(t0, calls);
    await execution.detach();
  } else if (scenario === "burst") {
    const executions = [];
    for (let i = 0; i < tasks; i++) executions.push(await start("work", { polls, interval: 0 }));
    sent = 0;
    const t0 = clock();
    await Promise.all(executions.map(settled));
    out = { ...per(t0, sent), ...per(t0, tasks, "task_"), polls: sent };
  } else if (scenario === "short") {
    sent = 0;
    const t0 = clock();
    for (let i = 0; i < tasks; i++) await settled(await start("work", { polls: 2, interval: 0 }));
    out = { ...per(t0, tasks), polls: sent };
  } else if (scenario === "input") {
    sent = 0;
    const t0 = clock();
    for (let i = 0; i < tasks; i++) {
      await settled(await start("ask", { rounds: ROUNDS, keys, interval: 0 }));
    }
    out = { ...per(t0, tasks * ROUNDS * keys), keys: tasks * ROUNDS * keys, polls: sent };
  } else {
    throw new Error(`no scenario ${scenario} for ext-tasks`);
  }
} finally {
  await session.close();
  await client.close();
}
process.stdout.write(JSON.stringify(out) + "\n");
