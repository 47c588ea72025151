// Where the JavaScript test dependencies live, and a module-resolution hook that finds
// them. scripts/install-deps installs the pinned npm packages under $PARITY_DEPS (default
// ~/.cache/parity-deps), outside the repository, so the scripts here cannot resolve them
// with Node's usual node_modules walk. Importing this module registers a resolve hook
// that retries a failed bare import from $PARITY_DEPS/clients, with Node's own resolver
// (package "exports" included). Import packages dynamically after importing this module:
// static imports are linked before any module body runs.
import { existsSync } from "node:fs";
import { register } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export const depsDir = process.env.PARITY_DEPS || join(homedir(), ".cache", "parity-deps");
export const clientsDir = join(depsDir, "clients");
export const node22 = join(depsDir, "node22", "node_modules", "node", "bin", "node");
export const inspectorCli = join(depsDir, "inspector", "node_modules", "@modelcontextprotocol",
                                 "inspector", "clients", "launcher", "build", "index.js");
export const serverEverything = join(clientsDir, "node_modules", "@modelcontextprotocol",
                                     "server-everything", "dist", "index.js");

if (!existsSync(join(clientsDir, "node_modules", "@modelcontextprotocol"))) {
  console.error(`JavaScript test clients not found under ${clientsDir}; run scripts/install-deps ` +
                `(or set PARITY_DEPS to where it installed them)`);
  process.exit(2);
}

register(pathToFileURL(join(import.meta.dirname ?? new URL(".", import.meta.url).pathname,
                            "resolve-hook.mjs")),
         { data: { parentURL: pathToFileURL(join(clientsDir, "package.json")).href } });
