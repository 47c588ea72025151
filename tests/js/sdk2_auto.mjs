// The official TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.x) with
// versionNegotiation {mode: "auto"}: it probes server/discover and falls back to the
// initialize handshake only if the server is not modern. Asserts the negotiated protocol
// version (parity must land in the 2026-07-28 era), then runs the tool steps of
// lib/client_steps.mjs in that era (elicitation there is MRTR: input_required + retry).
//
// usage: node sdk2_auto.mjs [--expect-version 2026-07-28] [options of lib/client_steps.mjs]
//                           <server target (see lib/harness.mjs)>
import "./lib/deps.mjs";
import { check, onCleanup, parseArgs, resolveTarget, step, watchdog, cleanupAll } from "./lib/harness.mjs";
import { answerFor } from "./lib/mcp_checks.mjs";
import { runToolSteps } from "./lib/client_steps.mjs";

const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");

watchdog(90);
const { options, target } = parseArgs(process.argv.slice(2));
const expectVersion = options["expect-version"] ?? "2026-07-28";

const client = new Client({ name: "parity-test-sdk2", version: "1.0.0" },
                          { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "auto" } });
// In the 2026-07-28 era the server asks through an input_required result (MRTR); the v2
// client fulfils it through this same handler and retries the call.
const elicitations = [];
client.setRequestHandler("elicitation/create", async (request) => {
  elicitations.push(request.params);
  return { action: "accept", content: answerFor(request.params.requestedSchema) };
});

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

await runToolSteps({ client, options, elicitations,
                    call: (params, requestOptions) => client.callTool(params, requestOptions) });

await step("close", () => cleanupAll());
console.log("PASS");
process.exit(0);
