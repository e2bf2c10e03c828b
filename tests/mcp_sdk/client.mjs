// `wfx mcp` driven by the official MCP TypeScript SDK (@modelcontextprotocol/sdk,
// installed by tests/mcp_sdk/install.sh): this script only drives and records;
// tests/cli/mcp_sdk.rs judges what it prints (one JSON document on stdout).
//
//   node client.mjs SDK_DIR WFX PROJECT SLOW_FLAG PID_FILE
//
// SLOW_FLAG: while this file exists, the project's test_slow writes its pid to
// PID_FILE and sleeps two minutes (a test run to cancel or to leave behind).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [sdkDir, wfx, project, slowFlag, pidFile] = process.argv.slice(2);
const esm = join(sdkDir, 'node_modules/@modelcontextprotocol/sdk/dist/esm');
const load = (rel) => import(pathToFileURL(join(esm, rel)).href);
const { Client } = await load('client/index.js');
const { StdioClientTransport } = await load('client/stdio.js');
const { CallToolResultSchema } = await load('types.js');
const sdkVersion = JSON.parse(
  readFileSync(join(sdkDir, 'node_modules/@modelcontextprotocol/sdk/package.json'), 'utf8'),
).version;

const report = { sdk_version: sdkVersion };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A transport for `wfx mcp` in the project, with the test's environment. */
function transport() {
  return new StdioClientTransport({
    command: wfx,
    args: ['mcp'],
    cwd: project,
    env: process.env,
    stderr: 'ignore',
  });
}

/** How the child ends: {code, signal}. The SDK keeps the child private. */
function exited(t) {
  const child = t._process;
  if (!child) throw new Error('the SDK transport has no child process');
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Wait until the slow test runs; its pid. */
async function slowTestPid() {
  for (let i = 0; i < 1200; i++) {
    if (existsSync(pidFile)) {
      const pid = parseInt(readFileSync(pidFile, 'utf8'), 10);
      if (pid > 0) return pid;
    }
    await sleep(50);
  }
  throw new Error('the slow test never started');
}

async function gone(pid) {
  for (let i = 0; i < 400 && alive(pid); i++) await sleep(50);
  return !alive(pid);
}

/** A promise's outcome as data: {ok, value} or {error, code}. */
async function outcome(p) {
  try {
    return { ok: true, value: await p };
  } catch (e) {
    return { ok: false, code: e.code ?? null, error: String(e.message ?? e) };
  }
}

// Stdin closed before initialize.
{
  const t = transport();
  await t.start();
  const end = exited(t);
  await t.close();
  report.close_before_initialize = await end;
}

// initialize, tools/list.
const t = transport();
const client = new Client({ name: 'wfx-test', version: '0' });
const sdkErrors = [];
client.onerror = (e) => sdkErrors.push(String(e.message ?? e));
await client.connect(t);
const end = exited(t);
const rawLines = [];
let rawTail = '';
t._process.stdout.on('data', (chunk) => {
  const parts = (rawTail + chunk.toString('utf8')).split('\n');
  rawTail = parts.pop();
  rawLines.push(...parts.filter(Boolean));
});
report.server = client.getServerVersion();
report.capabilities = client.getServerCapabilities();
report.tools = (await client.listTools()).tools.map((tool) => tool.name);

// Each tool.
report.calls = {};
for (const name of ['latest_failures', 'run_tests', 'session_status', 'next_action']) {
  report.calls[name] = await outcome(client.callTool({ name, arguments: {} }));
}
report.calls.latest_failures_after_run = await outcome(
  client.callTool({ name: 'latest_failures', arguments: {} }),
);

// Unknown tool; params that do not fit (sent as they are: the SDK does not
// check a request's params before sending).
report.unknown_tool = await outcome(client.callTool({ name: 'no_such_tool', arguments: {} }));
report.bad_params = [];
for (const params of [{ name: 5 }, { arguments: {} }, { name: 'run_tests', arguments: ['-x'] }]) {
  report.bad_params.push(
    await outcome(client.request({ method: 'tools/call', params }, CallToolResultSchema)),
  );
}

// A line that is not JSON, written to the child's stdin as it is.
{
  const before = sdkErrors.length;
  t._process.stdin.write('{"jsonrpc": "2.0", "id": 99, "method": \n');
  for (let i = 0; i < 100 && !rawLines.some((l) => l.includes('-32700')); i++) await sleep(50);
  report.malformed_json = {
    raw_answer: rawLines.find((l) => l.includes('-32700')) ?? null,
    sdk_errors: sdkErrors.slice(before),
    // The connection still serves.
    tools_after: (await client.listTools()).tools.length,
  };
}

// Cancellation: an aborted run_tests sends notifications/cancelled.
{
  writeFileSync(slowFlag, '');
  rmSync(pidFile, { force: true });
  const abort = new AbortController();
  const call = outcome(client.callTool({ name: 'run_tests', arguments: {} }, undefined, { signal: abort.signal }));
  const pid = await slowTestPid();
  abort.abort('the test cancels');
  report.cancel = { call: await call, test_run_ended: await gone(pid) };
  report.cancel.tools_after = (await client.listTools()).tools.length;
}

// Stdin closed during a run_tests: the SDK's close() ends stdin first.
{
  rmSync(pidFile, { force: true });
  const call = outcome(client.callTool({ name: 'run_tests', arguments: {} }));
  const pid = await slowTestPid();
  await client.close();
  report.close_during_run_tests = {
    exit: await end,
    call: await call,
    test_run_ended: await gone(pid),
  };
  rmSync(slowFlag, { force: true });
}

// Stdin closed right after initialize.
{
  const t2 = transport();
  const c2 = new Client({ name: 'wfx-test', version: '0' });
  await c2.connect(t2);
  const end2 = exited(t2);
  await c2.close();
  report.close_after_initialize = await end2;
}

process.stdout.write(JSON.stringify(report, null, 2) + '\n');
