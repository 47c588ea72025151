// The official TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.x) with
// versionNegotiation {mode: "auto"}: it probes server/discover and falls back to the
// initialize handshake only if the server is not modern. Asserts the negotiated protocol
// version (parity must land in the 2026-07-28 era), then lists tools through every page
// and checks an unknown tool is refused by name, all in the negotiated era.
//
// usage: node sdk2_auto.mjs [--expect-version 2026-07-28] [--tools-cli JSON-ARGV]
//                           <server target (see lib/harness.mjs)>
import "./lib/deps.mjs";
import { check, onCleanup, parseArgs, resolveTarget, step, watchdog, cleanupAll } from "./lib/harness.mjs";
import { answerFor, resultText, toolNamesFromCli } from "./lib/mcp_checks.mjs";

const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");

watchdog(90);
const { options, target } = parseArgs(process.argv.slice(2));
const expectVersion = options["expect-version"] ?? "2026-07-28";

const client = new Client({ name: "parity-test-sdk2", version: "1.0.0" },
                          { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "auto" } });
client.setRequestHandler("elicitation/create", async (request) =>
  ({ action: "accept", content: answerFor(request.params.requestedSchema) }));

const endpoint = await step("start server", () => resolveTarget(target));
const transport = endpoint.stdio
  ? new StdioClientTransport({ ...endpoint.stdio, stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(endpoint.url));

await step(`connect in auto mode negotiates ${expectVersion}`, async () => {
  await client.connect(transport);
  onCleanup(() => client.close());
  const negotiated = client.getNegotiatedProtocolVersion();
  check(negotiated === expectVersion, `negotiated ${negotiated}, expected ${expectVersion}`,
        { server: client.getServerVersion(), capabilities: client.getServerCapabilities() });
  const info = client.getServerVersion();
  check(info?.name, "no serverInfo after connecting", info);
  console.log(`     negotiated ${negotiated} with ${info.name} ${info.version ?? ""}`);
});

const names = await step("tools/list, every page", async () => {
  const all = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    all.push(...page.tools);
    cursor = page.nextCursor;
    check(all.length < 100_000, "tools/list keeps returning a nextCursor");
  } while (cursor);
  const list = all.map((t) => t.name);
  check(new Set(list).size === list.length, "a tool appears twice across pages", list);
  console.log(`     ${list.length} tools`);
  return new Set(list);
});

if (options["tools-cli"]) {
  await step("tools/list matches the CLI's tool list", () => {
    const fromCli = toolNamesFromCli(JSON.parse(options["tools-cli"]));
    check(JSON.stringify([...fromCli].sort()) === JSON.stringify([...names].sort()),
          "MCP tools/list and the CLI list different tools", { mcp: [...names], cli: [...fromCli] });
  });
}

await step("tools/call of an unknown tool is an error naming it", async () => {
  const name = "parity_no_such_tool";
  let message;
  try {
    const result = await client.callTool({ name, arguments: {} });
    check(result.isError === true, "an unknown tool returned a successful result", result);
    message = resultText(result);
  } catch (error) {
    message = error.message;
  }
  check(message.includes(name), "the error does not name the unknown tool", message);
});

await step("close", () => cleanupAll());
console.log("PASS");
process.exit(0);
