// inject_prints' MCP-sampling analyser driven by a real SDK client, whatever its major
// version: the steps both tests/js/sampling_sdk*.mjs scripts run once connected, and the
// stand-in "model" their sampling handler delegates to.
//
// The model checks each sampling/createMessage request (systemPrompt, the target line
// marked in the numbered source, maxTokens, temperature 0) and answers a fixed JSON that
// differs from what Python's ast would choose, so the injected probes prove who decided.
// The steps: a real git repository and parity worktree (audit_workspace prepare through the
// same server), analyze and inject with analyser=sampling, the injected file run by Debian's
// PyTorch (/usr/bin/python3) printing exactly the model's names, revert restoring every byte;
// then the model answers invalid JSON: analyser=auto falls back to the ast with the failed
// attempt recorded, analyser=sampling is an isError result naming the reason.
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { check, onCleanup, resolveTarget, step } from "./harness.mjs";
import { resultText } from "./mcp_checks.mjs";

const PYTHON = "/usr/bin/python3";  // Debian's, with torch (the first python3 on PATH has none)

const MODEL_PY = `"""toy model for the sampling client test"""
import torch
import torch.nn.functional as F


def scale(x, factor=2.0):
    y = x * factor
    return y


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.approximate = "tanh"

    def forward(self, x):
        h = F.gelu(self.fc1(x), approximate=self.approximate)
        return scale(h.sum(dim=-1))


if __name__ == "__main__":
    torch.manual_seed(0)
    out = Block()(torch.ones(2, 4))
    print("done", float(out.sum()))
`;

// The two targets and the model's fixed answers. The ast would also probe
// self.approximate and factor (both read by the statements); the model leaves them out.
const TARGETS = [
  { code: "h = F.gelu(self.fc1(x), approximate=self.approximate)",
    answer: { inputs: ["x"], outputs: ["h"] },
    astInputs: ["x", "self.approximate"] },
  { code: "y = x * factor",
    answer: { inputs: ["x"], outputs: ["y"] },
    astInputs: ["x", "factor"] },
];
for (const t of TARGETS) t.line = MODEL_PY.split("\n").findIndex((l) => l.trim() === t.code) + 1;

// Processes run while connected must not block the event loop: the HTTP client would miss
// the server closing an idle keep-alive connection and send the next call on it.
const runAsync = async (command, args, options) => (await promisify(execFile)(command, args, options)).stdout;

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

// The client's model: checks every request, answers by the mode set with setMode():
// "valid" (the fixed JSON above) or "invalid" (text that is not JSON).
export class StandInModel {
  constructor() {
    this.mode = "valid";
    this.requests = [];
    this.problems = [];  // a bad request cannot be thrown to the server usefully: collected
  }

  setMode(mode) { this.mode = mode; }

  answer(params) {
    this.requests.push(params);
    const target = this.inspect(params);
    const text = this.mode === "invalid"
      ? "Sure! The inputs are x and the output is h."  // prose, not the JSON the prompt asks for
      : JSON.stringify(target?.answer ?? { inputs: [], outputs: [] });
    return { model: "parity-stand-in-model", role: "assistant", stopReason: "endTurn",
             content: { type: "text", text } };
  }

  // Which target the request asks about (by the marked line), recording what is wrong with it.
  inspect(params) {
    const problem = (what) => this.problems.push(`${what}: ${JSON.stringify(params).slice(0, 600)}`);
    if (typeof params.systemPrompt !== "string" || params.systemPrompt.length < 20) problem("no systemPrompt");
    if (!Number.isInteger(params.maxTokens) || params.maxTokens <= 0) problem("maxTokens is not a positive integer");
    if (params.temperature !== 0) problem("temperature is not 0");
    const text = (params.messages ?? []).flatMap((m) => [m.content].flat())
      .filter((c) => c?.type === "text").map((c) => c.text).join("\n");
    // The prompt numbers the source lines and marks the target: "   19 > h = F.gelu(...)".
    const marked = TARGETS.filter((t) => new RegExp(`^\\s*${t.line} > \\s*${regexQuote(t.code)}\\s*$`, "m").test(text));
    if (marked.length !== 1) {
      problem(`expected exactly one target line marked in the messages, found ${marked.length}`);
      return undefined;
    }
    if (!text.includes("model.py")) problem("the messages do not name the file");
    return marked[0];
  }

  // Asserts that since `from` the requests were exactly one per target, all well formed.
  expectOnePerTarget(from, what) {
    check(this.problems.length === 0, `bad sampling request(s) during ${what}`, this.problems);
    const asked = this.requests.slice(from).map((p) => this.inspect(p)?.code);
    check(JSON.stringify(asked.slice().sort()) === JSON.stringify(TARGETS.map((t) => t.code).sort()),
          `${what}: expected one sampling request per target`, asked);
  }
}

const regexQuote = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// A temporary git repository holding model.py, removed at cleanup. The server process is
// started from inside it (process.chdir) so nothing it might write lands elsewhere.
export function makeRepository() {
  const root = mkdtempSync(join(tmpdir(), "parity-sampling-"));
  onCleanup(() => rmSync(root, { recursive: true, force: true }));
  const repo = join(root, "toy");
  mkdirSync(repo);
  writeFileSync(join(repo, "model.py"), MODEL_PY);
  const git = (...args) => execFileSync("git", args, {
    cwd: repo, encoding: "utf8", timeout: 30_000,
    env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com",
           GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" } });
  git("init", "-q", "-b", "main");
  git("add", "model.py");
  git("commit", "-q", "-m", "toy");
  return { root, repo, reportDir: join(root, "report") };
}

// What both scripts do before connecting, whatever the SDK: the repository, the server
// started from inside it (resolveTarget: stdio or HTTP), the SDK's transport for it (its
// own classes passed in) with its tools/call requests counted.
export async function openSamplingTransport({ target, StdioClientTransport, StreamableHTTPClientTransport }) {
  const fixture = await step("git repository with model.py", () => makeRepository());
  process.chdir(fixture.root);  // the server's working directory: nothing lands in the build tree
  const endpoint = await step("start server", () => resolveTarget(target));
  const transport = endpoint.stdio
    ? new StdioClientTransport({ ...endpoint.stdio, cwd: fixture.root, stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(endpoint.url));
  return { fixture, endpoint, transport, toolCalls: countToolCalls(transport) };
}

// Counts the tools/call requests a client transport sends (wrapped before connecting): one
// per call in the legacy era, two in the 2026-07-28 era (the call, then its retry carrying
// the answers of one input_required round that asked every target's question).
export function countToolCalls(transport) {
  const counter = { sent: 0 };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message?.method === "tools/call") counter.sent += 1;
    return send(message, options);
  };
  return counter;
}

// call(params): the SDK's tools/call; toolCalls: countToolCalls' counter; rounds: the
// tools/call requests one analysing call should take; server: resolveTarget's spawned HTTP
// server, if any (its output goes into a failed call's error).
export async function runSamplingSteps({ call: sdkCall, model, fixture, toolCalls, rounds, server }) {
  // A transport failure's reason is in error.cause (undici's "fetch failed" says nothing).
  const call = async (params) => {
    try {
      return await sdkCall(params);
    } catch (error) {
      const causes = [];
      for (let c = error?.cause; c && causes.length < 4; c = c.cause) causes.push(`${c.code ?? ""} ${c.message ?? c}`);
      const output = server ? `\n  server output: ${server.output().slice(-1500)}` : "";
      throw new Error(`tools/call ${params.name} ${params.arguments?.action}: ${error?.message}` +
                      (causes.length ? ` (cause: ${causes.join(" <- ")})` : "") + output, { cause: error });
    }
  };
  const { repo, reportDir } = fixture;
  const targets = TARGETS.map((t) => ({ file: "model.py", line: t.line }));
  const structured = async (name, args) => {
    const result = await call({ name, arguments: args });
    check(!result.isError, `${name} ${args.action} returned isError`, result);
    check(result.structuredContent && typeof result.structuredContent === "object",
          `${name} ${args.action} has no structuredContent`, result);
    return result.structuredContent;
  };

  const worktree = await step("audit_workspace prepare makes the parity worktrees", async () => {
    const out = await structured("audit_workspace",
                                 { action: "prepare", repo, baseline: "main", report_dir: reportDir });
    const path = out.prepare?.candidate_worktree?.path;
    check(typeof path === "string" && existsSync(join(path, "model.py")), "no candidate worktree", out.prepare);
    return path;
  });
  const file = join(worktree, "model.py");
  const original = readFileSync(file);

  const analysis = await step("analyze with analyser=sampling: the client's model decides", async () => {
    const from = model.requests.length;
    const sentBefore = toolCalls.sent;
    const out = await structured("inject_prints", { action: "analyze", worktree, analyser: "sampling", targets });
    model.expectOnePerTarget(from, "analyze");
    check(toolCalls.sent - sentBefore === rounds, `expected ${rounds} tools/call request(s) for one call, ` +
          `the client sent ${toolCalls.sent - sentBefore}`);
    check(out.analyser === "sampling" && out.requested === "sampling", "the result does not say sampling decided", out);
    for (const [i, t] of TARGETS.entries()) {
      const got = out.targets?.[i];
      check(got?.analyser === "sampling", `target ${i} not decided by sampling`, got);
      check(same(got.analysis?.inputs, t.answer.inputs) && same(got.analysis?.outputs, t.answer.outputs),
            `target ${i}: inputs/outputs are not the model's answer`, got?.analysis);
      check(got.analysis?.model_answer?.model === "parity-stand-in-model", `target ${i}: model_answer does not name the model`, got.analysis);
      check(got.sha256 === sha256(original), `target ${i}: sha256 is not the file's`, got);
    }
    console.log(`     ${TARGETS.map((t, i) => `line ${t.line}: ${JSON.stringify(out.targets[i].analysis.inputs)} -> ${JSON.stringify(out.targets[i].analysis.outputs)}`).join("; ")}`);
    return out;
  });

  await step("inject with analyser=sampling (expected_sha256 from analyze)", async () => {
    const from = model.requests.length;
    const out = await structured("inject_prints", {
      action: "inject", worktree, analyser: "sampling", targets, report_dir: reportDir,
      expected_sha256: { "model.py": analysis.targets[0].sha256 } });
    model.expectOnePerTarget(from, "inject");
    check(out.analysis?.analyser === "sampling", "inject's analysis does not say sampling decided", out.analysis);
    check(existsSync(join(worktree, "_parity_probe.py")), "no probe helper written into the worktree");
    check(!readFileSync(file).equals(original), "model.py was not changed by inject");
    const ledger = JSON.parse(readFileSync(join(reportDir, "manifest.json"), "utf8"));
    const entry = ledger.entries.filter((e) => e.tool === "inject_prints" && e.action === "inject").at(-1);
    check(entry?.outcome?.status === "ok" && entry.outputs?.analysis?.analyser === "sampling",
          "the ledger's inject entry does not record the sampling analyser", entry);
  });

  await step("the injected file under PyTorch prints exactly the model's probes", async () => {
    const stdout = await runAsync(PYTHON, ["model.py"], {
      cwd: worktree, encoding: "utf8", timeout: 120_000, env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" } });
    check(/^done /m.test(stdout), "the program did not finish", stdout.slice(-2000));
    const probes = stdout.split("\n").filter((l) => l.startsWith("PARITY_PROBE "))
      .map((l) => JSON.parse(l.slice("PARITY_PROBE ".length)));
    const seen = probes.map((p) => `${p.site} ${p.when} ${p.name}`).sort();
    const expected = TARGETS.flatMap((t) => [...t.answer.inputs.map((n) => `model.py:${t.line} before ${n}`),
                                              ...t.answer.outputs.map((n) => `model.py:${t.line} after ${n}`)]).sort();
    check(same(seen, expected), "the probe lines are not exactly the model's names", { seen, expected });
    for (const p of probes) check(p.type === "Tensor" || Array.isArray(p.shape), "a probe printed no tensor fields", p);
    console.log(`     ${seen.join(", ")}`);
  });

  await step("revert restores model.py byte for byte and removes the helper", async () => {
    await structured("inject_prints", { action: "revert", worktree, report_dir: reportDir });
    check(readFileSync(file).equals(original), "model.py differs from the original after revert");
    check(!existsSync(join(worktree, "_parity_probe.py")), "the probe helper is still there");
    const status = await runAsync("git", ["status", "--porcelain", "--untracked-files=all"],
                                  { cwd: worktree, encoding: "utf8", timeout: 30_000 });
    check(status === "", "the worktree is not clean after revert", status);
  });

  model.setMode("invalid");
  await step("invalid JSON from the model with analyser=auto: the ast decides, the failure is recorded", async () => {
    const from = model.requests.length;
    const out = await structured("inject_prints", { action: "analyze", worktree, analyser: "auto", targets });
    model.expectOnePerTarget(from, "analyze (auto)");
    check(out.requested === "auto" && out.analyser === "python-ast", "auto did not fall back to the ast", out);
    for (const [i, t] of TARGETS.entries()) {
      const got = out.targets?.[i];
      check(got?.analyser === "python-ast" && same(got.analysis?.inputs, t.astInputs),
            `target ${i}: not the ast's inputs`, got);
      const failed = (out.attempts ?? []).find((a) => a.analyser === "sampling" && a.target === `model.py:${t.line}`);
      check(failed && failed.ok === false && /not JSON/.test(failed.message ?? ""),
            `target ${i}: no failed sampling attempt naming the reason`, out.attempts);
      check((failed.evidence?.answer_excerpt ?? "").includes("Sure!"), "the attempt lacks the answer's excerpt", failed);
    }
  });

  await step("invalid JSON from the model with analyser=sampling: an isError result naming the reason", async () => {
    const result = await call({ name: "inject_prints",
                                arguments: { action: "analyze", worktree, analyser: "sampling", targets } });
    check(result.isError === true, "the rejected answer did not give an isError result", result);
    const text = resultText(result);
    check(/not JSON/.test(text) && text.includes("rejected"), "the error does not name the reason", text);
    console.log(`     ${text.split("\n")[0].slice(0, 160)}`);
  });
  check(model.problems.length === 0, "bad sampling request(s)", model.problems);
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
