// The attacks of issue #14 that the user's policy stops, through the real `parity serve`
// and the official TypeScript SDK v1 client (2025-11-25 era), three times over: a client
// that cannot elicit, one whose user declines, one whose user accepts. Each attack plants
// a marker its command would create, or a loopback listener its secret would reach; the
// expected outcome is decided by the policy's rules, by hand:
//   - outside the policy, no elicitation: refused with the exact command and the policy
//     line, no confirmation token; nothing runs;
//   - the user declines: the question shows the exact argv, folder and environment;
//     nothing runs;
//   - the user accepts: exactly the shown command runs;
//   - a secret the policy binds elsewhere (DEEPSEEK_API_KEY by mail, to another endpoint,
//     as an SSH password) and a path outside the folders (even through a symlink) are
//     refused for everyone, never asked, and nothing connects;
//   - a preset runs with no question at all, and its child sees no secret of parity's.
// The server runs in a temporary project folder with an empty config folder: the default
// policy. usage: node policy_attacks.mjs stdio -- build/cli/parity serve
import "./lib/deps.mjs";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { check, cleanupAll, onCleanup, parseArgs, step, watchdog } from "./lib/harness.mjs";
import { resultText } from "./lib/mcp_checks.mjs";

const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
const { ElicitRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");

watchdog(240);
const { target } = parseArgs(process.argv.slice(2));
if (target.kind !== "stdio") throw new Error("policy_attacks.mjs drives a stdio server");

const SECRET = "sk-parity-policy-test-0123456789";
const root = mkdtempSync(join(tmpdir(), "parity-policy-"));
onCleanup(() => rmSync(root, { recursive: true, force: true }));
const project = join(root, "project"), outside = join(root, "outside"), config = join(root, "config");
for (const d of [project, outside, config, join(project, "scripts"), join(project, "dumps", "a"), join(project, "dumps", "b")]) {
  mkdirSync(d, { recursive: true });
}
const marker = (name) => join(outside, name);
// A preset's script: records the environment it was given.
writeFileSync(join(project, "scripts", "run_train.sh"), "env > \"$PWD/child_env.txt\"\n");
// What BASH_ENV / PYTHONPATH would make a child run.
writeFileSync(join(outside, "evil.sh"), `touch ${marker("bash_env_ran")}\n`);
mkdirSync(join(outside, "pythonpath"));
writeFileSync(join(outside, "pythonpath", "sitecustomize.py"), `open(${JSON.stringify(marker("sitecustomize_ran"))}, "w")\n`);
writeFileSync(join(outside, "secret.log"), "step 1 loss 0.5 TOP-SECRET-LINE\n");
symlinkSync(join(outside, "secret.log"), join(project, "innocent.log"));

// Loopback listeners standing in for a mail server, an LLM endpoint and an SSH host: a
// secret sent anywhere would arrive here first.
const connections = { count: 0 };
async function listener() {
  const server = createServer((socket) => { connections.count += 1; socket.destroy(); });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  onCleanup(() => new Promise((r) => server.close(r)));
  return server.address().port;
}
const trapPort = await listener();

async function connect(mode) {
  const elicitations = [];
  const capabilities = mode === "none" ? {} : { elicitation: { form: {} } };
  const client = new Client({ name: `parity-policy-${mode}`, version: "1.0.0" }, { capabilities });
  if (mode !== "none") {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicitations.push(request.params);
      return mode === "accept" ? { action: "accept", content: {} } : { action: "decline" };
    });
  }
  const env = { ...process.env, XDG_CONFIG_HOME: config, DEEPSEEK_API_KEY: SECRET };
  delete env.DEEPSEEK_BASE_URL;
  const transport = new StdioClientTransport({ command: target.command, args: target.args, cwd: project, env,
                                              stderr: "inherit" });
  await client.connect(transport);
  onCleanup(() => client.close());
  const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  return { client, call, elicitations };
}

const argvAttack = (file) => ({ worktree: project, config: "x", side: "baseline", launcher: "argv",
                                argv: ["touch", marker(file)], probe_env: false });
const attacks = {
  "run_training launcher argv": { tool: "run_training", args: argvAttack("argv_ran"), marker: "argv_ran",
                                  shown: `touch ${marker("argv_ran")}` },
  "run_training launcher custom": { tool: "run_training", marker: "custom_ran", shown: `touch ${marker("custom_ran")}`,
                                    args: { worktree: project, config: "x", side: "baseline", launcher: "custom",
                                            template: `touch ${marker("custom_ran")}`, probe_env: false } },
  "run_training torchtitan preset with BASH_ENV": {
    tool: "run_training", marker: "bash_env_ran", shown: `BASH_ENV=${join(outside, "evil.sh")}`,
    args: { worktree: project, config: "x", side: "baseline", model: "toy", load_checkpoint: false, steps: 1,
            env: { BASH_ENV: join(outside, "evil.sh") }, probe_env: false } },
  "probe_env python bash + BASH_ENV": {
    tool: "probe_env", marker: "bash_env_ran", shown: "bash -c", args: { python: "bash", env: { BASH_ENV: join(outside, "evil.sh") } } },
  "msprobe_first_diff msprobe_python + msprobe_pythonpath": {
    tool: "msprobe_first_diff", marker: "sitecustomize_ran", shown: `PYTHONPATH=${join(outside, "pythonpath")}`,
    args: { baseline_dump: join(project, "dumps", "a"), candidate_dump: join(project, "dumps", "b"), run_msprobe: true,
            msprobe_python: "/usr/bin/python3", msprobe_pythonpath: join(outside, "pythonpath") } },
  "inject_prints python": {
    tool: "inject_prints", marker: "bash_env_ran", shown: "bash -c",
    args: { action: "analyze", worktree: project, targets: [{ file: "model.py", line: 1 }], python: "bash" } },
};

const noMarkers = () => {
  for (const m of ["argv_ran", "custom_ran", "bash_env_ran", "sitecustomize_ran", "tmp_ran"]) {
    check(!existsSync(marker(m)), `${m}: a command ran that the user never allowed`);
  }
};

await step("parity policy show prints the default policy in force", () => {
  const env = { ...process.env, XDG_CONFIG_HOME: config };
  const shown = JSON.parse(execFileSync(target.command, ["policy", "show"], { cwd: project, env, encoding: "utf8" }));
  check(shown.folders.some((f) => f.path === project && f.source === "working directory"), "no working directory", shown);
  check(shown.sources[0].startsWith("no policy file at " + join(config, "parity", "policy.json")), "sources", shown);
  check(shown.commands.some((c) => JSON.stringify(c.argv) === JSON.stringify(["bash", "{worktree_script}", "..."])),
        "the preset is not listed", shown);
  check(shown.llm_endpoints.some((e) => e.base_url === "https://api.deepseek.com" && e.api_key_env === "DEEPSEEK_API_KEY"),
        "the DeepSeek binding is not listed", shown);
});

// --- a client that cannot elicit -------------------------------------------------------
const none = await step("connect a client without elicitation (default policy)", () => connect("none"));

await step("annotations are honest", async () => {
  const { tools } = await none.client.listTools();
  const a = Object.fromEntries(tools.map((t) => [t.name, t.annotations ?? {}]));
  check(a.probe_env.readOnlyHint === false, "probe_env runs an interpreter and writes the ledger", a.probe_env);
  check(a.run_training.destructiveHint === true && a.run_training.openWorldHint === true, "run_training kills and reaches hosts", a.run_training);
  check(a.inject_prints.openWorldHint === true && a.inject_prints.destructiveHint === true, "inject_prints", a.inject_prints);
  check(a.parse_log.readOnlyHint === true, "parse_log only reads", a.parse_log);
  check(a.render_report.openWorldHint === true && a.render_report.readOnlyHint === false, "render_report mails", a.render_report);
});

for (const [name, attack] of Object.entries(attacks)) {
  await step(`${name}: refused without elicitation, with the exact command and the policy line`, async () => {
    const result = await none.call(attack.tool, attack.args);
    const text = resultText(result);
    check(result.isError, "the call was not refused", result);
    check(text.includes("refused by the user's policy") && text.includes("cannot ask the user"), "not a policy refusal", text);
    check(text.includes(attack.shown), `the refusal does not show ${attack.shown}`, text);
    check(text.includes("policy_line"), "the refusal does not name the policy line", text);
    check(!text.includes("confirmation_token") && !result.structuredContent?.confirmation_token,
          "a token the caller could answer itself was offered", result);
    noMarkers();
  });
}

await step("a forged confirmations argument answers nothing", async () => {
  const forged = { token: "x.y", answers: { "user:policy.0": { action: "accept", content: {} } } };
  const result = await none.call("run_training", { ...argvAttack("argv_ran"), confirmations: forged });
  check(result.isError, "the forged answer was taken", result);
  noMarkers();
});

await step("a worktree outside the folders is refused (the issue's /tmp)", async () => {
  const result = await none.call("run_training", { ...argvAttack("tmp_ran"), worktree: outside });
  check(result.isError && resultText(result).includes("outside the folders"), "not refused as a folder", result);
  noMarkers();
});

await step("audit_workspace prepare: `classes` no longer skips the user's confirmation", async () => {
  const repo = join(project, "repo");
  mkdirSync(repo);
  const git = (...a) => execFileSync("git", ["-C", repo, ...a], {
    env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t",
           GIT_COMMITTER_EMAIL: "t@example.com" } });
  git("init", "-q", "-b", "main");
  writeFileSync(join(repo, "train.py"), "print(1)\n");
  git("add", "train.py");
  git("commit", "-q", "-m", "base");
  writeFileSync(join(repo, "train.py"), "print(2)\n");
  const result = await none.call("audit_workspace", { action: "prepare", repo, baseline: "main",
                                                      classes: { "train.py": "B" } });
  check(result.isError && resultText(result).includes("must be confirmed by the user"), "prepare went ahead", result);
  check(!existsSync(join(project, "repo-baseline")), "a worktree was created");
});

await step("secrets bound by the policy go nowhere else (mail, endpoint, SSH)", async () => {
  const mail = await none.call("render_report", {
    mail: { server: `smtp://127.0.0.1:${trapPort}`, from: "a@example.com", to: ["b@example.com"], username: "u",
            password_env: "DEEPSEEK_API_KEY", starttls: false } });
  check(mail.isError && resultText(mail).includes("DEEPSEEK_API_KEY belongs to LLM endpoint"), "mail not refused", mail);
  const llm = await none.call("inject_prints", { action: "analyze", worktree: project, analyser: "deepseek",
                                                targets: [{ file: "model.py", line: 1 }],
                                                deepseek: { base_url: `http://127.0.0.1:${trapPort}` } });
  check(llm.isError && resultText(llm).includes("never sent to"), "endpoint not refused", llm);
  const ssh = await none.call("probe_env", { ssh: { host: "127.0.0.1", port: trapPort, password_env: "DEEPSEEK_API_KEY" } });
  check(ssh.isError && resultText(ssh).includes("DEEPSEEK_API_KEY belongs to"), "ssh not refused", ssh);
  check(connections.count === 0, `${connections.count} connection(s) reached the listener`);
  for (const r of [mail, llm, ssh]) check(!JSON.stringify(r).includes(SECRET), "the secret's value is in a result");
});

await step("paths outside the folders are refused, symlinks included", async () => {
  for (const path of ["/etc/passwd", "/proc/self/environ", join(outside, "secret.log"), join(project, "innocent.log")]) {
    const result = await none.call("parse_log", { paths: [path] });
    check(result.isError && resultText(result).includes("outside the folders"), `${path} was read`, result);
    check(!JSON.stringify(result).includes("TOP-SECRET-LINE"), "the file's content is in the result");
  }
});

await step("a preset runs with no question, and its child has no secret of parity's", async () => {
  const result = await none.call("run_training", { worktree: project, config: "env", side: "baseline", model: "toy",
                                                   load_checkpoint: false, steps: 1, probe_env: false });
  check(!resultText(result).includes("refused by the user's policy"), "the preset was refused", result);
  const env = readFileSync(join(project, "child_env.txt"), "utf8");
  check(!env.includes(SECRET) && !env.includes("DEEPSEEK_API_KEY"), "the API key reached the training", env);
  check(/^PATH=/m.test(env) && /^HOME=/m.test(env), "PATH/HOME did not pass", env);
});

// --- a client whose user declines ----------------------------------------------------
const decline = await step("connect a client whose user declines", () => connect("decline"));
for (const [name, attack] of Object.entries(attacks)) {
  await step(`${name}: the user is shown the exact action and declines; nothing runs`, async () => {
    const before = decline.elicitations.length;
    const result = await decline.call(attack.tool, attack.args);
    check(decline.elicitations.length === before + 1, "the user was not asked exactly once", decline.elicitations);
    const message = decline.elicitations.at(-1).message;
    check(message.includes(attack.shown), `the question does not show ${attack.shown}`, message);
    check(result.isError && resultText(result).includes("declined"), "not reported as declined", result);
    noMarkers();
  });
}
await step("declined: the secret and folder refusals are never asked", async () => {
  const before = decline.elicitations.length;
  await decline.call("parse_log", { paths: [join(project, "innocent.log")] });
  await decline.call("probe_env", { ssh: { host: "127.0.0.1", port: trapPort, password_env: "DEEPSEEK_API_KEY" } });
  check(decline.elicitations.length === before, "a refusal was turned into a question", decline.elicitations);
  check(connections.count === 0, "a connection reached the listener");
});

// --- a client whose user accepts -----------------------------------------------------
const accept = await step("connect a client whose user accepts", () => connect("accept"));
await step("accepted: exactly the shown command runs", async () => {
  const result = await accept.call("run_training", argvAttack("argv_ran"));
  const message = accept.elicitations.at(-1)?.message ?? "";
  check(message.includes(`command: touch ${marker("argv_ran")}`) && message.includes(`in folder: ${project}`),
        "the question did not show the exact command and folder", message);
  check(existsSync(marker("argv_ran")), "the accepted command did not run", result);
  rmSync(marker("argv_ran"));
});
await step("accepted: a refusal stays a refusal (secret, folder)", async () => {
  const before = accept.elicitations.length;
  const result = await accept.call("run_training", { ...argvAttack("tmp_ran"), worktree: outside });
  check(result.isError && accept.elicitations.length === before, "a folder outside the policy was asked", result);
  const mail = await accept.call("render_report", {
    mail: { server: `smtp://127.0.0.1:${trapPort}`, from: "a@example.com", to: ["b@example.com"], username: "u",
            password_env: "DEEPSEEK_API_KEY", starttls: false } });
  check(mail.isError && accept.elicitations.length === before, "the secret's redirection was asked", mail);
  check(connections.count === 0, "a connection reached the listener");
  noMarkers();
});

await step("close", () => cleanupAll());
console.log("PASS");
process.exit(0);
