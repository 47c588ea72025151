// The premerge tool as a 2026-07-28 task (the tasks extension), on the demo repository
// (examples/make-demo-repo) with the real toy trainer, against `parity serve --http`:
//   1. tools/list declares premerge and hunt with execution.taskSupport "optional";
//   2. premerge of numerics/gelu-tanh (toy_small, 3 steps) answers with a task at once;
//      the file's confirm.classes is the caller's, so the user is asked to confirm the
//      classes (the task goes input_required with the audit_workspace question; answered
//      by tasks/update with the proposal); every poll is a new HTTP connection, as a client
//      that reconnected would make it; the status message follows the pipeline's steps;
//      the result, inlined when the task completes, is FAIL for toy_small (GELU's tanh
//      approximation moves the loss at step 1: decided from the branch, as the demo's
//      ground truth says), with the HTML report written;
//   3. hunt (PrecisionComparer's config for the same branch, 3 steps, dumps in statistics
//      mode) as a task: the class of the demo's uncommitted run_train.sh is asked of the
//      user once (answered with the proposal; before, the hunt tool refused, saying to run
//      again with --yes, which an MCP caller cannot), it completes
//      with "inputs equal, output differs" at the planted file:line of the demo's
//      ground_truth.json, and its hunt.json is written;
//   4. a second premerge (many steps) is cancelled by tasks/cancel while its first
//      baseline training runs: the task is cancelled, the training ends by SIGTERM
//      (signal 15, not the SIGKILL after the grace period), the pipeline removes its
//      worktrees, and the user's tree is unchanged.
// The SDK v2 client (2.4) refuses a CreateTaskResult, so the extension is spoken as the
// conformance suite speaks it: raw JSON-RPC, every request carrying its _meta.
//
// usage: node premerge_task.mjs spawn-http -- parity serve --http 127.0.0.1:{port}
//   (the script adds --allow-folder <its temporary folder> to the server's arguments)
import "./lib/deps.mjs";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { answerFor } from "./lib/mcp_checks.mjs";
import { httpRequest } from "./lib/raw_rpc.mjs";
import { check, cleanupAll, onCleanup, parseArgs, resolveTarget, step, watchdog } from "./lib/harness.mjs";

watchdog(420);
const { target } = parseArgs(process.argv.slice(2));
const TASKS = "io.modelcontextprotocol/tasks";
const here = dirname(fileURLToPath(import.meta.url));

const root = mkdtempSync(join(tmpdir(), "parity-premerge-task-"));
onCleanup(() => rmSync(root, { recursive: true, force: true }));
execFileSync(join(here, "..", "..", "examples", "make-demo-repo"), [join(root, "demo"), "--steps", "3"]);
const repo = join(root, "demo", "toy-trainer");
if (target.args) target.args = [...target.args, "--allow-folder", root];

function writeConfig(name, steps) {
  const path = join(root, `premerge-${name}.json`);
  writeFileSync(path, JSON.stringify({
    repo, report_dir: join(root, "reports", name), baseline: "main", candidate: "numerics/gelu-tanh",
    model: "toy", configs: ["toy_small"], steps, dataset_path: "data/corpus.txt",
    compare: { preset: "premerge", tolerance_abs: 0 }, cache: { enabled: false },
    confirm: { classes: "proposed", environment_anomalies: true },
  }, null, 2));
  return path;
}

const git = (...args) => execFileSync("git", ["-C", repo, ...args], { encoding: "utf8" });
const treeBefore = [git("status", "--porcelain"), git("rev-parse", "HEAD")];

const endpoint = await step("start parity serve --http", () => resolveTarget(target));
const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientInfo": { name: "parity-premerge-task", version: "1" },
               "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} }, extensions: { [TASKS]: {} } } };
let next = 1;
// Every request is its own HTTP exchange on a new connection (no keep-alive agent).
async function rpc(method, params) {
  const id = `p${next++}`;
  const body = { jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } };
  const name = params.name ?? params.taskId;
  const r = await httpRequest(endpoint.url, { timeoutMs: 60_000, body: JSON.stringify(body), headers: {
    "content-type": "application/json", accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28", "mcp-method": method, ...(name ? { "mcp-name": name } : {}) } });
  const reply = r.messages.find((m) => m.id === id);
  check(reply?.result, `${method} failed`, reply ?? r);
  return reply.result;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

await step("tools/list: premerge and hunt may run as tasks", async () => {
  const { tools } = await rpc("tools/list", {});
  for (const name of ["premerge", "hunt"]) {
    const t = tools.find((x) => x.name === name);
    check(t?.execution?.taskSupport === "optional", `${name} does not declare taskSupport optional`, t);
  }
});

const created = await step("premerge answers with a task", async () => {
  const r = await rpc("tools/call", { name: "premerge", arguments: { config: writeConfig("gelu", 3) } });
  check(r.resultType === "task" && r.taskId && r.status === "working", "expected a CreateTaskResult", r);
  return r;
});

const messages = new Set();
const done = await step("polled from new connections: the classes are asked of the user, then it completes", async () => {
  let asked = 0;
  for (;;) {
    const t = await rpc("tasks/get", { taskId: created.taskId });
    const said = `${t.status}: ${t.statusMessage ?? ""}`;
    if (!messages.has(said)) console.log(`  task ${said}`);
    messages.add(said);
    if (t.status === "input_required") {
      const responses = {};
      for (const [key, request] of Object.entries(t.inputRequests ?? {})) {
        check(request.method === "elicitation/create" && /class of each changed file/.test(request.params?.message ?? ""),
              "the question is not the classes' confirmation", request);
        responses[key] = { action: "accept", content: answerFor(request.params.requestedSchema) };
      }
      check(Object.keys(responses).length > 0, "input_required with no input request", t);
      console.log("  asked:", JSON.stringify(Object.keys(responses)), (Object.values(t.inputRequests)[0]?.params?.message ?? "").slice(0, 200));
      asked++;
      await rpc("tasks/update", { taskId: created.taskId, inputResponses: responses });
      continue;
    }
    if (t.status === "completed" || t.status === "failed" || t.status === "cancelled") {
      check(asked === 1, `the user was asked ${asked} time(s), expected once (the classes)`, t);
      return t;
    }
    await sleep(500);
  }
});
await step("its result: toy_small FAIL, the report written", async () => {
  check(done.status === "completed" && done.result && !done.result.isError, `the task ended ${done.status}`, done);
  const out = done.result.structuredContent;
  check(out.verdict === "FAIL" && out.cases?.length === 1 && out.cases[0].config === "toy_small" &&
        out.cases[0].verdict === "FAIL", "expected toy_small FAIL", out);
  check(out.outputs?.html && existsSync(out.outputs.html), "no HTML report", out.outputs);
  check([...messages].some((m) => /^working: step \d+\/\d+ /.test(m)), "no pipeline step in the status messages", [...messages]);
});

// A task's life to its end: answers every question with the proposal, returns the final task.
async function runToEnd(taskId, asked = []) {
  for (;;) {
    const t = await rpc("tasks/get", { taskId });
    if (t.status === "input_required") {
      const responses = {};
      for (const [key, request] of Object.entries(t.inputRequests ?? {})) {
        asked.push(request.params?.message ?? "");
        responses[key] = { action: "accept", content: answerFor(request.params.requestedSchema) };
      }
      await rpc("tasks/update", { taskId, inputResponses: responses });
      continue;
    }
    if (t.status === "completed" || t.status === "failed" || t.status === "cancelled") return t;
    await sleep(500);
  }
}

await step("hunt as a task: the planted line and its hunk", async () => {
  const truth = JSON.parse(readFileSync(join(root, "demo", "ground_truth.json"), "utf8")).branches["numerics/gelu-tanh"];
  const dumps = join(root, "hunt-dumps");
  const script = (dump) => "bash scripts/run_train.sh --module toy --config toy_small --training.steps 3 " +
    "--debug.seed=42 --debug.deterministic --training.dataset_path=data/corpus.txt " +
    `--dump.dir ${dump} --dump.level mix --dump.mode statistics --dump.step 0`;
  const config = join(root, "hunt.json");
  writeFileSync(config, JSON.stringify({
    baseline: { mode: "local", code_path: repo, ref: "main", run_script: script(join(dumps, "baseline")) },
    test: { mode: "local", code_path: repo, ref: "numerics/gelu-tanh", run_script: script(join(dumps, "test")) },
    msprobe: { baseline_data_dir: join(dumps, "baseline"), test_data_dir: join(dumps, "test"),
               parse_code_dir: "/toy_trainer/", compare_output_dir: "" },
    debug: { max_iterations: 3, tolerance: 0, trace_threshold: 0.001 },
  }, null, 2));
  const report = join(root, "reports", "hunt");
  const r = await rpc("tools/call", { name: "hunt", arguments: { config, report_dir: report } });
  check(r.resultType === "task" && r.taskId, "expected a CreateTaskResult", r);
  const asked = [];
  const t = await runToEnd(r.taskId, asked);
  check(t.status === "completed" && t.result && !t.result.isError, `the hunt task ended ${t.status}`, t);
  // The demo's uncommitted run_train.sh: its class is the user's to confirm, asked once.
  check(asked.length === 1 && /class of each changed file/.test(asked[0]), "the classes were not asked of the user once",
        asked);
  const out = t.result.structuredContent;
  const planted = truth.planted_change;
  check(out.verdict === "inputs equal, output differs" && out.located?.file === planted.file &&
        out.located?.line === planted.line, `expected the planted ${planted.file}:${planted.line}`, out);
  check(existsSync(join(report, "hunt", "hunt.json")), "no hunt.json", report);
  console.log(`  hunt: ${out.verdict} at ${out.located.file}:${out.located.line}`);
});

await step("a cancelled premerge: its training ends by SIGTERM", async () => {
  const config = writeConfig("cancel", 100000);
  const r = await rpc("tools/call", { name: "premerge", arguments: { config } });
  check(r.resultType === "task", "expected a task", r);
  const report = join(root, "reports", "cancel");
  const running = async () => {
    const list = await rpc("tools/call", { name: "run_training", arguments: { action: "list", report_dir: report } });
    return (list.structuredContent?.jobs ?? []).filter((j) => j.status === "running" && j.side === "baseline");
  };
  for (;;) {
    const t = await rpc("tasks/get", { taskId: r.taskId });
    if (t.status === "input_required") {
      const responses = {};
      for (const [key, request] of Object.entries(t.inputRequests ?? {})) {
        responses[key] = { action: "accept", content: answerFor(request.params.requestedSchema) };
      }
      await rpc("tasks/update", { taskId: r.taskId, inputResponses: responses });
      continue;
    }
    check(t.status === "working", `the task is ${t.status} before the cancel`, t);
    const jobs = await running();
    if (process.env.DEBUG) console.log("  waiting:", t.statusMessage, JSON.stringify(jobs.map((j) => [j.id, j.status, j.log])));
    if (jobs.length === 1 && existsSync(join(report, jobs[0].log ?? "-")) &&
        /step:\s*\d+/.test(readFileSync(join(report, jobs[0].log), "utf8"))) break;
    await sleep(250);
  }
  const cancelledAt = Date.now();
  const ack = await rpc("tasks/cancel", { taskId: r.taskId });
  check(!("taskId" in ack) && !("status" in ack), "the ack must be empty", ack);
  const t = await rpc("tasks/get", { taskId: r.taskId });
  check(t.status === "cancelled", `the task is ${t.status}`, t);
  for (;;) {
    const list = await rpc("tools/call", { name: "run_training", arguments: { action: "list", report_dir: report } });
    const jobs = list.structuredContent?.jobs ?? [];
    const baseline = jobs.filter((j) => j.side === "baseline");
    if (baseline.length && baseline.every((j) => j.status !== "running")) {
      const job = baseline[baseline.length - 1];
      check(job.status === "cancelled" && job.signal === 15,
            `the training ended ${job.status} by signal ${job.signal} (exit ${job.exit_code}), not by SIGTERM`, job);
      console.log(`the training was recorded ended ${Date.now() - cancelledAt} ms after tasks/cancel`);
      return;
    }
    await sleep(100);
  }
});

await step("the cancelled premerge removed its worktrees", async () => {
  for (let i = 0; ; i++) {
    const n = (git("worktree", "list", "--porcelain").match(/^worktree /gm) ?? []).length;
    if (n === 1) return;
    check(i < 300, `${n - 1} worktree(s) left 30 s after the cancel`, git("worktree", "list"));
    await sleep(100);
  }
});
await step("the user's tree is unchanged", async () => {
  const after = [git("status", "--porcelain"), git("rev-parse", "HEAD")];
  check(JSON.stringify(after) === JSON.stringify(treeBefore), "the repository changed", { treeBefore, after });
});
await step("close", () => cleanupAll());
console.log("PASS");
process.exit(0);
