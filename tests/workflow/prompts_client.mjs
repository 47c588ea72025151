// The MCP prompts as a slash-command client sees them, with the official TypeScript SDK v1
// over stdio against `parity serve` started in a fresh demo repository: prompts/list,
// completion/complete from the repository (branches, models, configs, config files),
// prompts/get answering the checklist and config-matrix elicitations, the pending
// confirmations of a client that cannot elicit, and argument errors naming the argument.
//
// usage: node prompts_client.mjs PARITY_BINARY MAKE_DEMO_REPO
import "../js/lib/deps.mjs";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { check, cleanupAll, onCleanup, step, watchdog } from "../js/lib/harness.mjs";

const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
const { ElicitRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");

watchdog(120);
const [parity, makeDemo] = process.argv.slice(2);
if (!parity || !makeDemo) {
  console.error("usage: node prompts_client.mjs PARITY_BINARY MAKE_DEMO_REPO");
  process.exit(2);
}

const root = mkdtempSync(join(tmpdir(), "parity-prompts-"));
onCleanup(() => rmSync(root, { recursive: true, force: true }));
const repo = join(root, "toy-trainer");
await step("generate the demo repository", () => {
  const r = spawnSync(makeDemo, [root, "--steps", "10"], { encoding: "utf8" });
  check(r.status === 0, "make-demo-repo failed", r.stderr);
});

async function connect(elicit) {
  const client = new Client({ name: "parity-prompts-test", version: "1.0.0" },
                            { capabilities: elicit ? { elicitation: { form: {} } } : {} });
  const transport = new StdioClientTransport({ command: parity, args: ["serve", "--report-dir", join(root, "report")],
                                               cwd: repo, stderr: "inherit" });
  await client.connect(transport);
  onCleanup(() => client.close());
  return client;
}

const elicitations = [];
const client = await step("initialize (client with elicitation)", async () => {
  const c = await connect(true);
  check(c.getServerCapabilities()?.prompts, "no prompts capability", c.getServerCapabilities());
  check(c.getServerCapabilities()?.completions, "no completions capability", c.getServerCapabilities());
  return c;
});

await step("prompts/list", async () => {
  const { prompts } = await client.listPrompts();
  const byName = Object.fromEntries(prompts.map((p) => [p.name, p]));
  const premerge = byName["premerge-accuracy-check"];
  check(premerge, "premerge-accuracy-check missing", prompts);
  const args = premerge.arguments.map((a) => a.name);
  for (const name of ["baseline", "candidate", "models", "steps", "configs", "tokenizer", "dataset", "email"]) {
    check(args.includes(name), `premerge-accuracy-check lacks argument ${name}`, args);
  }
  const comparer = byName["precision-comparer"];
  check(comparer, "precision-comparer missing", prompts);
  const cargs = comparer.arguments.map((a) => a.name);
  for (const name of ["config", "tolerance", "max_iterations"]) {
    check(cargs.includes(name), `precision-comparer lacks argument ${name}`, cargs);
  }
});

async function complete(prompt, name, value, context) {
  const params = { ref: { type: "ref/prompt", name: prompt }, argument: { name, value } };
  if (context) params.context = { arguments: context };
  return (await client.complete(params)).completion.values;
}

await step("completion: branch names from the repository", async () => {
  const all = await complete("premerge-accuracy-check", "baseline", "");
  for (const b of ["main", "refactor/move-helpers", "numerics/gelu-tanh", "origin/master", "cann/master"]) {
    check(all.includes(b), `branch ${b} not offered`, all);
  }
  check(!all.some((b) => b.endsWith("/HEAD")), "a symbolic ref was offered", all);
  const ref = await complete("premerge-accuracy-check", "candidate", "ref");
  check(JSON.stringify(ref) === JSON.stringify(["refactor/move-helpers"]), "prefix 'ref'", ref);
});

await step("completion: models and configs from config_registry.py", async () => {
  const models = await complete("premerge-accuracy-check", "models", "");
  check(models.includes("toy") && models.includes("all"), "models", models);
  const configs = await complete("premerge-accuracy-check", "configs", "toy_", { models: "toy" });
  for (const c of ["toy_small", "toy_tp2", "toy_debug"]) check(configs.includes(c), `config ${c} not offered`, configs);
  const second = await complete("premerge-accuracy-check", "configs", "toy_small,toy_t", { models: "toy" });
  check(JSON.stringify(second) === JSON.stringify(["toy_small,toy_tp2"]), "list completion", second);
  const none = await complete("premerge-accuracy-check", "configs", "", { models: "no_such_model" });
  check(none.length === 0, "configs of an unknown model", none);
});

client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicitations.push(request.params);
  const props = request.params.requestedSchema.properties;
  if (props.baseline) {
    return { action: "accept", content: { baseline: "main", candidate: "numerics/gelu-tanh", models: ["toy"], steps: 10 } };
  }
  if (props.configs) return { action: "accept", content: { configs: props.configs.default } };
  return { action: "decline" };
});

await step("prompts/get premerge-accuracy-check: checklist and matrix elicited", async () => {
  const r = await client.getPrompt({ name: "premerge-accuracy-check", arguments: {} });
  check(elicitations.length === 2, "expected two elicitations (checklist, matrix)", elicitations);
  check(elicitations[0].message.includes("确认清单"), "checklist message", elicitations[0]);
  const matrix = elicitations[1].requestedSchema.properties.configs;
  check(JSON.stringify(matrix.default) === JSON.stringify(["toy_small", "toy_tp2"]),
        "the minimal matrix (TP=1 + TP>1) should be proposed", matrix);
  check(elicitations[1].message.includes("toy_trainer/model.py"), "the matrix message names the touching file",
        elicitations[1]);
  const text = r.messages[0].content.text;
  for (const s of ["`main`", "`numerics/gelu-tanh`", "`toy_small,toy_tp2`", "`10`", "错误上报原则", "audit_workspace",
                   "compare_logs", "render_report"]) {
    check(text.includes(s), `prompt text lacks ${s}`, text);
  }
});

await step("prompts/get: a declined checklist is an error, nothing started", async () => {
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
  const err = await client.getPrompt({ name: "premerge-accuracy-check", arguments: { candidate: "main" } })
    .then(() => null, (e) => e);
  check(err && /not confirmed/.test(err.message), "declining must fail the prompt", err?.message);
});

await step("prompts/get: bad steps names the argument", async () => {
  const err = await client.getPrompt({ name: "premerge-accuracy-check", arguments: { steps: "ten" } })
    .then(() => null, (e) => e);
  check(err && err.message.includes("arguments.steps"), "error must name arguments.steps", err?.message);
});

const plain = await step("initialize (client without elicitation)", () => connect(false));

// A 2025-11-25 client without elicitation gets every item it did not give as a pending
// confirmation. (It must give the items the server would otherwise ask for: CallContext's
// CanElicit() is true for every 2025-11-25 client, see docs/workflows.md.)
await step("prompts/get without elicitation: pending confirmations", async () => {
  const r = await plain.getPrompt({ name: "premerge-accuracy-check",
    arguments: { baseline: "main", candidate: "refactor/move-helpers", models: "toy", steps: "10", configs: "toy_small" } });
  const text = r.messages[0].content.text;
  for (const s of ["Pending confirmations", "Tokenizer", "报告接收邮箱", "File classes A/B/C", "`toy_small`",
                   "- TP degree: touched by toy_trainer/"]) {
    check(text.includes(s), `pending text lacks ${s}`, text);
  }
});

await step("precision-comparer: config read, password never shown, errors name the JSON path", async () => {
  const good = { baseline: { mode: "local", log_path: "b.log", code_path: repo, run_script: "bash scripts/run_train.sh" },
                 test: { mode: "remote", log_path: "t.log", code_path: repo, run_script: "bash scripts/run_train.sh",
                         ssh: { host: "127.0.0.1", username: "u", port: 22, password: "s3cret-pw" } },
                 msprobe: { baseline_data_dir: "/b", test_data_dir: "/t", parse_code_dir: "/x", compare_output_dir: "/o" },
                 debug: { max_iterations: 7, tolerance: 0.002, log_keywords: ["loss"], trace_threshold: 0.001 } };
  writeFileSync(join(root, "good.json"), JSON.stringify(good));
  writeFileSync(join(root, "bad.json"), JSON.stringify({ ...good, test: { ...good.test, mode: "cloud" } }));
  const r = await plain.getPrompt({ name: "precision-comparer", arguments: { config: join(root, "good.json"),
                                                                             inject_prints: "no" } });
  const text = r.messages[0].content.text;
  check(text.includes("tolerance 0.002") && text.includes("iterations: 7"), "defaults from the config's debug section", text);
  check(!text.includes("s3cret-pw"), "the SSH password leaked into the prompt", text);
  check(text.includes("did NOT allow injected prints"), "the consent argument is honoured", text);
  const r2 = await plain.getPrompt({ name: "precision-comparer",
    arguments: { config: join(root, "good.json"), tolerance: "0.0005", max_iterations: "3", inject_prints: "yes" } });
  check(r2.messages[0].content.text.includes("0.0005"), "tolerance argument", r2.messages[0].content.text);
  const bad = await plain.getPrompt({ name: "precision-comparer", arguments: { config: join(root, "bad.json"), inject_prints: "no" } })
    .then(() => null, (e) => e);
  check(bad && bad.message.includes("test.mode"), "error must name test.mode", bad?.message);
  const tol = await plain.getPrompt({ name: "precision-comparer",
                                      arguments: { config: join(root, "good.json"), tolerance: "x", inject_prints: "no" } })
    .then(() => null, (e) => e);
  check(tol && tol.message.includes("arguments.tolerance"), "error must name arguments.tolerance", tol?.message);
});

await step("precision-comparer: consent elicited from a client that can answer", async () => {
  elicitations.length = 0;
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicitations.push(request.params);
    return { action: "accept", content: { inject_prints: true } };
  });
  const r = await client.getPrompt({ name: "precision-comparer", arguments: { config: join(root, "good.json") } });
  check(elicitations.length === 1 && elicitations[0].requestedSchema.properties.inject_prints, "consent asked", elicitations);
  check(r.messages[0].content.text.includes("The user allowed injected prints"), "consent recorded", r.messages[0].content.text);
});

await step("bisect: the first-parent history and the first probe; open items pending or elicited", async () => {
  // make-demo-repo's bisect/history: 13 first-parent commits, the first probe is commit 6.
  const r = await plain.getPrompt({ name: "bisect", arguments: { good: "main", bad: "bisect/history", case: "toy_small",
                                                                 steps: "5" } });
  const text = r.messages[0].content.text;
  check(text.includes("(13 commits, about 4 trainings"), "the history's size and ~log2 trainings", text);
  check(text.includes("13. `") && text.includes("the bad commit") && text.includes("(merge)"), "every commit listed", text);
  check(text.includes("first: commit 6 ("), "the first probe is the middle of 1..12", text);
  check(!text.includes("Pending confirmations"), "nothing left open", text);
  const open = await plain.getPrompt({ name: "bisect", arguments: { good: "main" } });
  const otext = open.messages[0].content.text;
  check(otext.includes("- [ ] the bad commit") && otext.includes("- [ ] the steps per training"), "open items pending", otext);
  const bad = await plain.getPrompt({ name: "bisect", arguments: { good: "bisect/history", bad: "main", case: "toy_small",
                                                                   steps: "5" } }).then(() => null, (e) => e);
  check(bad && bad.message.includes("not an ancestor"), "a reversed range is refused", bad?.message);
  elicitations.length = 0;
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicitations.push(request.params);
    return { action: "accept", content: { bad: "bisect/history", case: "toy_small", steps: 5 } };
  });
  const asked = await client.getPrompt({ name: "bisect", arguments: { good: "main" } });
  const props = elicitations[0]?.requestedSchema?.properties ?? {};
  check(elicitations.length === 1 && props.bad && props.steps && !props.good, "the open items asked in one form", elicitations);
  check(asked.messages[0].content.text.includes("(13 commits"), "the answers used", asked.messages[0].content.text);
});

await step("close", () => cleanupAll());
console.log("PASS");
process.exit(0);
