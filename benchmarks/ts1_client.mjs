// The official TypeScript SDK client as a benchmark row (issue 12); run by rows.py / bench.py.
//   node benchmarks/ts1_client.mjs SDK_DIR URL seq CALLS
//   node benchmarks/ts1_client.mjs SDK_DIR URL burst TASKS POLLS
// SDK_DIR is the npm folder tests/peers/install.py makes (<peers root>/npm-sdk1): the SDK is
// imported from it by absolute path, so this script stays in the repository. The client is the
// SDK's Client over StreamableHTTPClientTransport; a poll is client.experimental.tasks.getTask
// (tasks/get, the answer checked against the SDK's GetTaskResultSchema). CPU is
// process.cpuUsage() of this process only (user + system, and user alone), measured over the
// calls after 1,000 warm-up calls (TS1_WARMUP): V8 compiles hot code over the first calls,
// which 50 warm-up calls (the Python rows', no JIT there) would leave inside the measurement,
// about a third more CPU per call here. The burst warms up the same way on a task of its own
// first. Prints one JSON line, the keys the Python rows print.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, url, mode, ...rest] = process.argv.slice(2);
const sdk = (p) => import(pathToFileURL(join(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { CreateTaskResultSchema } = await sdk("types.js");

const WARMUP = Number(process.env.TS1_WARMUP ?? 1000);
const client = new Client({ name: "bench", version: "0" }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);

async function start(polls, interval) {
  const created = await client.request(
    {
      method: "tools/call",
      params: { name: "work", arguments: { polls, interval }, task: { ttl: 3600000 } },
    },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

function measure(cpu0, wall0, count, extra = {}) {
  const cpu = process.cpuUsage(cpu0);
  const wall = Number(process.hrtime.bigint() - wall0) / 1e3;
  return {
    cpu_us: (cpu.user + cpu.system) / count,
    user_us: cpu.user / count,
    wall_us: wall / count,
    ...extra,
  };
}

let out;
if (mode === "seq") {
  const calls = Number(rest[0] ?? 1000);
  const taskId = await start(0, 1000);
  for (let i = 0; i < WARMUP; i++) await client.experimental.tasks.getTask(taskId);
  const cpu0 = process.cpuUsage();
  const wall0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await client.experimental.tasks.getTask(taskId);
  out = measure(cpu0, wall0, calls);
} else if (mode === "burst") {
  const tasks = Number(rest[0] ?? 200);
  const polls = Number(rest[1] ?? 20);
  const probe = await start(0, 1000);
  for (let i = 0; i < WARMUP; i++) await client.experimental.tasks.getTask(probe);
  const ids = [];
  for (let i = 0; i < tasks; i++) ids.push(await start(polls, 0));
  let sent = 0;
  const drive = async (taskId) => {
    for (;;) {
      sent += 1;
      const task = await client.experimental.tasks.getTask(taskId);
      if (task.status === "completed") return;
    }
  };
  const cpu0 = process.cpuUsage();
  const wall0 = process.hrtime.bigint();
  await Promise.all(ids.map(drive));
  out = measure(cpu0, wall0, sent, { polls: sent });
} else {
  throw new Error(`unknown mode ${mode}`);
}
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
