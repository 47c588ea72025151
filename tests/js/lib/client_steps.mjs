// The steps both SDK client scripts run once connected, whatever the SDK major version:
// tools/list through every page, optional expectations on the list, a plain call, a call
// with a progress handler, a call whose elicitation the client answers, and an unknown
// tool. `call(params, requestOptions)` adapts the SDK's callTool signature; `elicitations`
// is the array the script's elicitation handler pushes each request's params to.
//
// Options (from the command line): --expect-tools a,b  --tools-cli JSON-ARGV
//   --call NAME [--call-args JSON] [--call-expect TEXT]
//   --bad-call NAME --bad-call-args JSON --bad-call-expect TEXT  a tool refusing bad
//          arguments with an isError result whose text contains TEXT (e.g. the JSON path)
//   --progress-tool NAME [--progress-args JSON]
//   --elicit-tool NAME [--elicit-args JSON] [--elicit-expect TEXT]
import { check, step } from "./harness.mjs";
import { resultText, toolNamesFromCli } from "./mcp_checks.mjs";

const json = (text, fallback) => (text === undefined ? fallback : JSON.parse(text));

export async function runToolSteps({ client, call, options, elicitations }) {
  const tools = await step("tools/list, every page", async () => {
    const all = [];
    let cursor;
    let pages = 0;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      pages += 1;
      check(Array.isArray(page.tools), "tools/list result has no tools array", page);
      all.push(...page.tools);
      cursor = page.nextCursor;
      check(pages <= 1000, "tools/list keeps returning a nextCursor");
    } while (cursor);
    const names = all.map((t) => t.name);
    check(new Set(names).size === names.length, "a tool appears twice across pages", names);
    for (const tool of all) {
      check(typeof tool.description === "string" && tool.description.length > 0, `tool ${tool.name} has no description`);
      check(tool.inputSchema?.type === "object", `tool ${tool.name} inputSchema is not an object schema`, tool.inputSchema);
    }
    console.log(`     ${all.length} tools in ${pages} page(s)`);
    return all;
  });
  const names = new Set(tools.map((t) => t.name));

  if (options["expect-tools"]) {
    await step("tools/list includes the expected tools", () => {
      for (const name of options["expect-tools"].split(",")) check(names.has(name), `missing tool ${name}`, [...names]);
    });
  }

  if (options["tools-cli"]) {
    await step("tools/list matches the CLI's tool list", () => {
      const fromCli = toolNamesFromCli(json(options["tools-cli"]));
      check(JSON.stringify([...fromCli].sort()) === JSON.stringify([...names].sort()),
            "MCP tools/list and the CLI list different tools", { mcp: [...names], cli: [...fromCli] });
    });
  }

  if (options.call) {
    await step(`tools/call ${options.call}`, async () => {
      const result = await call({ name: options.call, arguments: json(options["call-args"], {}) });
      check(!result.isError, "tool returned isError", result);
      const expect = options["call-expect"];
      if (expect) check(resultText(result).includes(expect), `result lacks "${expect}"`, result);
    });
  }

  if (options["bad-call"]) {
    await step(`tools/call ${options["bad-call"]} with bad arguments is an isError result`, async () => {
      const result = await call({ name: options["bad-call"], arguments: json(options["bad-call-args"], {}) });
      check(result.isError === true, "bad arguments did not give an isError result", result);
      const expect = options["bad-call-expect"];
      if (expect) check(resultText(result).includes(expect), `the error lacks "${expect}"`, result);
    });
  }

  if (options["progress-tool"]) {
    await step(`tools/call ${options["progress-tool"]} with a progress handler`, async () => {
      const seen = [];
      const result = await call({ name: options["progress-tool"], arguments: json(options["progress-args"], {}) },
                                { onprogress: (p) => seen.push(p), resetTimeoutOnProgress: true, timeout: 60_000 });
      check(!result.isError, "tool returned isError", result);
      check(seen.length >= 2, `expected at least 2 progress notifications, got ${seen.length}`, seen);
      for (let i = 1; i < seen.length; i++) check(seen[i].progress > seen[i - 1].progress, "progress did not increase", seen);
      for (const p of seen) if (p.total !== undefined) check(p.progress <= p.total, "progress exceeds total", p);
      console.log(`     progress: ${seen.map((p) => `${p.progress}/${p.total ?? "?"}`).join(" ")}`);
    });
  }

  if (options["elicit-tool"]) {
    await step(`tools/call ${options["elicit-tool"]} answering its elicitation`, async () => {
      const before = elicitations.length;
      const args = json(options["elicit-args"], {});
      const result = await call({ name: options["elicit-tool"], arguments: args });
      check(elicitations.length === before + 1, `expected one elicitation, got ${elicitations.length - before}`);
      const asked = elicitations.at(-1);
      check(typeof asked.message === "string" && asked.message.length > 0, "elicitation has no message", asked);
      if (typeof args.message === "string") check(asked.message === args.message, "elicitation message differs from the one passed", asked);
      check(asked.requestedSchema?.type === "object", "requestedSchema is not an object schema", asked);
      check(!result.isError, "tool returned isError after an accepted elicitation", result);
      const expect = options["elicit-expect"];
      if (expect) check(resultText(result).includes(expect), `result lacks "${expect}" (the answer given)`, result);
      console.log(`     asked: ${asked.message.slice(0, 80)}`);
    });
  }

  await step("tools/call of an unknown tool is an error naming it", async () => {
    const name = "parity_no_such_tool";
    let message;
    try {
      const result = await call({ name, arguments: {} });
      check(result.isError === true, "an unknown tool returned a successful result", result);
      message = resultText(result);
    } catch (error) {
      message = error.message;  // a JSON-RPC error (-32602) is also what the spec allows
    }
    check(message.includes(name), "the error does not name the unknown tool", message);
  });
}
