// Helpers shared by the client scripts: what to answer an elicitation with, the text of a
// tool result, and the tool names a CLI prints.
import { execFileSync } from "node:child_process";

// A value for every property of a flat elicitation schema, honouring defaults and enums,
// so the server can validate the answer against what it asked.
export function answerFor(schema) {
  const content = {};
  for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
    if (prop.default !== undefined) content[key] = prop.default;
    else if (prop.enum) content[key] = prop.enum[0];
    else if (prop.oneOf) content[key] = prop.oneOf[0].const;
    else if (prop.type === "boolean") content[key] = true;
    else if (prop.type === "number" || prop.type === "integer") content[key] = prop.minimum ?? 1;
    else if (prop.type === "array") content[key] = prop.items?.enum?.slice(0, 1) ?? prop.items?.anyOf?.slice(0, 1).map((o) => o.const) ?? [];
    else if (prop.format === "email") content[key] = "test@example.com";
    else if (prop.format === "uri") content[key] = "https://example.com";
    else if (prop.format === "date") content[key] = "2000-01-01";
    else content[key] = "parity-test-answer";
  }
  return content;
}

export function resultText(result) {
  return (result?.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

// Runs argv (e.g. ["parity", "tools"]) and returns the tool names in its JSON output,
// which may be an array of tools or an object with a "tools" array.
export function toolNamesFromCli(argv) {
  const out = execFileSync(argv[0], argv.slice(1), { encoding: "utf8", timeout: 30_000 });
  const parsed = JSON.parse(out);
  const list = Array.isArray(parsed) ? parsed : parsed.tools;
  if (!Array.isArray(list)) throw new Error(`${argv.join(" ")} printed no tool list: ${out.slice(0, 500)}`);
  return new Set(list.map((t) => t.name));
}
