// Cancelling a real training (the toy trainer, PyTorch on CPU) through parity's MCP
// tools, as #17 reproduced it:
//   legacy   SDK v1 (2025-11-25): run_training with progress; the call is cancelled on
//            its first progress notification. No progress may follow the cancel, and the
//            training must end by the SIGTERM of the cancel (signal 15), not by the SIGKILL
//            that follows the grace period when the child cannot see SIGTERM (the mask
//            `serve --http` gave its children).
//   task     2026-07-28 with the tasks extension declared (raw JSON-RPC: the SDK v2 2.4
//            client rejects resultType "task"): run_training answers with a task; tasks/get
//            (over HTTP each request is a new stateless exchange) shows its progress as the
//            status message; tasks/cancel ends it, and the training ends by SIGTERM.
//
// usage: node training_cancel.mjs --mode legacy|task <server target: parity serve ...>
//   the script adds --report-dir <its own temporary folder> to the server's arguments
import "./lib/deps.mjs";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { check, cleanupAll, onCleanup, parseArgs, resolveTarget, step, watchdog } from "./lib/harness.mjs";

watchdog(240);
const { options, target } = parseArgs(process.argv.slice(2));
const mode = options.mode ?? "legacy";
const TASKS = "io.modelcontextprotocol/tasks";

const root = mkdtempSync(join(tmpdir(), "parity-cancel-"));
onCleanup(() => rmSync(root, { recursive: true, force: true }));
const repo = join(root, "repo");
const report = join(root, "numerical_report");
const here = dirname(fileURLToPath(import.meta.url));
cpSync(join(here, "..", "..", "examples", "toy-trainer"), repo, { recursive: true });
rmSync(join(repo, "outputs"), { recursive: true, force: true });
const git = (...args) => execFileSync("git", args, { cwd: repo, env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t",
                                                                      GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } });
git("init", "-q", "-b", "main");
git("add", "-A");
git("commit", "-q", "-m", "toy trainer");
target.args = [...target.args, "--report-dir", report];

const training = { worktree: repo, model: "toy", config: "toy_small", dataset_path: "data/corpus.txt",
                   side: "baseline", steps: 5000, load_checkpoint: false, probe_env: false };

// The job, once parity has recorded how it ended.
async function finishedJob(callTool) {
  for (;;) {
    const list = await callTool({ name: "run_training", arguments: { action: "list" } });
    const jobs = list.structuredContent?.jobs ?? [];
    check(jobs.length === 1, "expected exactly one job", list);
    if (jobs[0].status !== "running") return jobs[0];
    await new Promise((r) => setTimeout(r, 250));
  }
}

function checkEndedBySigterm(job) {
  check(job.status === "cancelled", `the job is ${job.status}, not cancelled`, job);
  check(job.signal === 15, `the training ended by signal ${job.signal} (exit ${job.exit_code}), not by SIGTERM (15)`, job);
}

if (mode === "legacy") await legacy();
else await task();
await step("close", () => cleanupAll());
console.log("PASS");
process.exit(0);

async function legacy() {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const endpoint = await step("start server", () => resolveTarget(target));
  const client = new Client({ name: "parity-cancel-v1", version: "1" }, { capabilities: {} });
  await step("connect (2025-11-25)", () => client.connect(endpoint.stdio
    ? new StdioClientTransport({ ...endpoint.stdio, stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(endpoint.url))));
  onCleanup(() => client.close());
  let afterCancel = 0, cancelled = false;
  await step("run_training, cancelled on its first progress notification", async () => {
    const abort = new AbortController();
    const call = client.callTool({ name: "run_training", arguments: training }, undefined, {
      signal: abort.signal, timeout: 200_000,
      onprogress: (p) => {
        if (cancelled) { afterCancel++; return; }
        if (p.progress >= 1) { cancelled = true; abort.abort("the test cancels"); }
      },
    });
    let error = null, result = null;
    try { result = await call; } catch (e) { error = e; }
    check(error, "the cancelled call returned a result", result);
  });
  const job = await step("the job ends by SIGTERM", () => finishedJob((p) => client.callTool(p)));
  checkEndedBySigterm(job);
  await step("no progress notification came after the cancel", async () => {
    check(afterCancel === 0, `${afterCancel} progress notification(s) after the cancel`);
  });
}

// The SDK v2 client (2.4) refuses a CreateTaskResult ("Unsupported result type 'task' for
// tools/call"), so the tasks extension is spoken here as the conformance suite speaks it:
// raw 2026-07-28 JSON-RPC, every request carrying its _meta (stateless: any connection).
async function task() {
  const { StdioPeer, httpRequest } = await import("./lib/raw_rpc.mjs");
  const endpoint = await step("start server", () => resolveTarget(target));
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                 "io.modelcontextprotocol/clientInfo": { name: "parity-task", version: "1" },
                 "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } } };
  const peer = endpoint.stdio ? new StdioPeer(endpoint.stdio.command, endpoint.stdio.args) : null;
  let next = 1;
  const rpc = async (method, params) => {
    const id = `t${next++}`;
    const body = { jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } };
    let reply;
    if (peer) {
      await peer.send(body);
      reply = await peer.response(id, { timeoutMs: 120_000 });
    } else {
      const name = params.name ?? params.taskId;
      const r = await httpRequest(endpoint.url, { timeoutMs: 120_000, body: JSON.stringify(body), headers: {
        "content-type": "application/json", accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28", "mcp-method": method, ...(name ? { "mcp-name": name } : {}) } });
      reply = r.messages.find((m) => m.id === id);
    }
    check(reply?.result, `${method} failed`, reply);
    return reply.result;
  };
  const created = await step("run_training answers with a task", async () => {
    const r = await rpc("tools/call", { name: "run_training", arguments: training });
    check(r.resultType === "task" && r.taskId && r.status === "working", "expected a CreateTaskResult", r);
    return r;
  });
  await step("tasks/get shows the training's progress", async () => {
    for (;;) {
      const t = await rpc("tasks/get", { taskId: created.taskId });
      check(t.status === "working", `the task is ${t.status}`, t);
      if (/step \d+/.test(t.statusMessage ?? "")) return;
      await new Promise((r) => setTimeout(r, 250));
    }
  });
  await step("tasks/cancel: an empty ack, the task is cancelled", async () => {
    const ack = await rpc("tasks/cancel", { taskId: created.taskId });
    check(!("taskId" in ack) && !("status" in ack), "the ack must be empty", ack);
    const t = await rpc("tasks/get", { taskId: created.taskId });
    check(t.status === "cancelled", `the task is ${t.status}`, t);
  });
  const call = async (p) => rpc("tools/call", p);
  const job = await step("the job ends by SIGTERM", () => finishedJob(call));
  checkEndedBySigterm(job);
}
