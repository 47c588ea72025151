// The MCP Inspector CLI (@modelcontextprotocol/inspector 2.12, `--cli`, run with Node 22)
// against an MCP server: tools/list with its schema portability check (compared with the
// expected names or the CLI's own list), an optional tools/call whose result text is checked, and a call of an unknown
// tool, which the Inspector must report as exit 5 / tool_not_found.
//
// usage: node inspector_cli.mjs [--expect-tools a,b] [--tools-cli JSON-ARGV]
//          [--call NAME [--call-args JSON] [--call-expect TEXT]] <server target>
import { execFile } from "node:child_process";
import { inspectorCli, node22 } from "./lib/deps.mjs";
import { check, parseArgs, resolveTarget, step, watchdog, cleanupAll } from "./lib/harness.mjs";
import { resultText, toolNamesFromCli } from "./lib/mcp_checks.mjs";

watchdog(150);
const { options, target } = parseArgs(process.argv.slice(2));

const endpoint = await step("start server", () => resolveTarget(target));
const targetArgs = endpoint.stdio
  ? [endpoint.stdio.command, ...endpoint.stdio.args]
  : [endpoint.url, "--transport", "http"];

// Runs one Inspector CLI invocation; resolves {code, stdout, stderr} whatever the exit.
function inspector(methodArgs) {
  const argv = [inspectorCli, "--cli", ...targetArgs, ...methodArgs, "--format", "json"];
  return new Promise((resolve) => {
    execFile(node22, argv, { timeout: 60_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? (error.code ?? error.signal) : 0, stdout, stderr, argv });
    });
  });
}

function parseOutput(run) {
  try {
    return JSON.parse(run.stdout);
  } catch {
    throw new Error(`Inspector printed no JSON (exit ${run.code}): ${run.stdout.slice(0, 1000)} ${run.stderr.slice(-1000)}`);
  }
}

// --strict: the Inspector's schema portability report; exit 6 when a tool's schema has an
// error-severity problem some assistants would reject.
const names = await step("inspector tools/list --strict (portable schemas)", async () => {
  const run = await inspector(["--method", "tools/list", "--strict"]);
  check(run.code !== 6, "tool schemas are not portable (Inspector --strict)", run.stderr.slice(-3000));
  // Warnings too: each is a schema some client maps badly (a `type` array, a schema that
  // constrains nothing); every tool's schemas must pass clean.
  const warnings = run.stderr.split("\n").filter((l) => l.startsWith("Warning: "));
  check(warnings.length === 0, `${warnings.length} schema portability warning(s) (Inspector --strict)`, run.stderr.slice(0, 3000));
  check(run.code === 0, `exit ${run.code}`, run.stderr.slice(-2000));
  const tools = parseOutput(run).result?.tools;
  check(Array.isArray(tools), "no result.tools in the output", run.stdout.slice(0, 1000));
  for (const tool of tools) check(tool.inputSchema?.type === "object", `tool ${tool.name} has no object inputSchema`, tool);
  console.log(`     ${tools.length} tools`);
  return new Set(tools.map((t) => t.name));
});

if (options["expect-tools"]) {
  await step("tools/list includes the expected tools", () => {
    for (const name of options["expect-tools"].split(",")) check(names.has(name), `missing tool ${name}`, [...names]);
  });
}

if (options["tools-cli"]) {
  await step("tools/list matches the CLI's tool list", () => {
    const fromCli = toolNamesFromCli(JSON.parse(options["tools-cli"]));
    check(JSON.stringify([...fromCli].sort()) === JSON.stringify([...names].sort()),
          "Inspector's tools/list and the CLI list different tools", { inspector: [...names], cli: [...fromCli] });
  });
}

if (options.call) {
  await step(`inspector tools/call ${options.call}`, async () => {
    const run = await inspector(["--method", "tools/call", "--tool-name", options.call,
                                 "--tool-args-json", options["call-args"] ?? "{}"]);
    check(run.code === 0, `exit ${run.code}`, { stdout: run.stdout.slice(0, 1000), stderr: run.stderr.slice(-2000) });
    const result = parseOutput(run).result;
    check(result && !result.isError, "no successful result", run.stdout.slice(0, 1000));
    if (options["call-expect"]) {
      check(resultText(result).includes(options["call-expect"]), `result lacks "${options["call-expect"]}"`, result);
    }
  });
}

await step("inspector tools/call of an unknown tool exits 5", async () => {
  const run = await inspector(["--method", "tools/call", "--tool-name", "parity_no_such_tool"]);
  check(run.code === 5, `expected exit 5 (tool error), got ${run.code}`, { stdout: run.stdout, stderr: run.stderr.slice(-1000) });
  check((run.stdout + run.stderr).includes("parity_no_such_tool"), "the error does not name the tool", run.stdout + run.stderr);
});

await step("stop server", () => cleanupAll());
console.log("PASS");
process.exit(0);
