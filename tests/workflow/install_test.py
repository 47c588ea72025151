#!/usr/bin/python3
"""`parity install` into a throw-away HOME: --print shows the documented formats (Claude Code
.mcp.json / ~/.claude.json and Claude Desktop's claude_desktop_config.json, reference mcp.md
section 6) and writes nothing; a real install is read back (server entry, skills byte for byte
with valid front matter); a second install changes nothing; another server's entry and other
keys survive; a config file that is not JSON is refused and left untouched.

usage: install_test.py PARITY_BINARY SOURCE_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

parity, source = sys.argv[1], sys.argv[2]
failures = []


def check(cond, message, evidence=""):
    if not cond:
        failures.append(message)
        print(f"FAIL {message}\n  evidence: {str(evidence)[:2000]}")
    else:
        print(f"ok   {message}")


def run(args, home, cwd=None):
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME",)}
    env["HOME"] = home
    env["XDG_CONFIG_HOME"] = os.path.join(home, ".config")
    return subprocess.run([parity, "install", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)


def printed_json(out, path):
    """The JSON document --print shows for `path` ("--- PATH" then the document)."""
    marker = f"--- {path}\n"
    at = out.find(marker)
    if at < 0:
        return None
    return json.JSONDecoder().raw_decode(out[at + len(marker):])[0]


def snapshot(root):
    files = {}
    for folder, _, names in os.walk(root):
        for n in names:
            p = os.path.join(folder, n)
            with open(p, "rb") as f:
                files[os.path.relpath(p, root)] = f.read()
    return files


parity_abs = os.path.realpath(parity)
with tempfile.TemporaryDirectory(prefix="parity-install-") as tmp:
    home = os.path.join(tmp, "home")
    project = os.path.join(tmp, "project")
    os.makedirs(home)
    os.makedirs(project)

    r = run(["--claude-code", "--scope", "project", "--project", project, "--print"], home)
    check(r.returncode == 0, "--print (project scope) exits 0", r.stderr)
    doc = printed_json(r.stdout, os.path.join(project, ".mcp.json"))
    check(doc is not None, "--print shows .mcp.json", r.stdout)
    if doc:
        entry = doc.get("mcpServers", {}).get("parity", {})
        check(entry.get("type") == "stdio" and entry.get("args") == ["serve"] and entry.get("env") == {},
              ".mcp.json entry is {type: stdio, command, args: [serve], env: {}}", entry)
        check(os.path.realpath(entry.get("command", "")) == parity_abs and os.path.isabs(entry.get("command", "")),
              ".mcp.json command is parity's absolute path", entry)
    check("premerge-accuracy-check/SKILL.md" in r.stdout, "--print lists the skill files", r.stdout[:1500])
    check(snapshot(tmp) == {}, "--print wrote nothing", list(snapshot(tmp)))

    r = run(["--claude-desktop", "--print"], home)
    check(r.returncode == 0, "--print (desktop) exits 0", r.stderr)
    desktop_path = os.path.join(home, ".config", "Claude", "claude_desktop_config.json")
    doc = printed_json(r.stdout, desktop_path)
    check(doc is not None, "--print shows claude_desktop_config.json", r.stdout)
    if doc:
        entry = doc.get("mcpServers", {}).get("parity", {})
        check(entry.get("args") == ["serve"] and os.path.realpath(entry.get("command", "")) == parity_abs,
              "desktop entry is {command, args: [serve]}", entry)

    # A user-scope install next to another server and other settings.
    claude_json = os.path.join(home, ".claude.json")
    other = {"numStartups": 3, "mcpServers": {"other": {"type": "stdio", "command": "/bin/other", "args": ["x"]}}}
    with open(claude_json, "w") as f:
        json.dump(other, f)
    r = run(["--claude-code"], home)
    check(r.returncode == 0, "user-scope install exits 0", r.stderr + r.stdout)
    with open(claude_json) as f:
        written = json.load(f)
    check(written.get("numStartups") == 3, "other keys of ~/.claude.json kept", written)
    check(written["mcpServers"].get("other") == other["mcpServers"]["other"], "another server's entry untouched", written)
    check(written["mcpServers"].get("parity", {}).get("args") == ["serve"], "parity registered in ~/.claude.json", written)
    for skill in ("premerge-accuracy-check", "precision-comparer"):
        installed = os.path.join(home, ".claude", "skills", skill, "SKILL.md")
        ok = os.path.exists(installed)
        check(ok, f"{skill}/SKILL.md installed", installed)
        if not ok:
            continue
        with open(installed, "rb") as a, open(os.path.join(source, "skills", skill, "SKILL.md"), "rb") as b:
            check(a.read() == b.read(), f"{skill}/SKILL.md installed byte for byte")
        text = open(installed, encoding="utf-8").read()
        m = re.match(r"---\n(.*?)\n---\n", text, re.S)
        front = yaml.safe_load(m.group(1)) if m else {}
        check(front.get("name") == skill and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", skill),
              f"{skill}: front matter name matches the folder", front)
        d = front.get("description", "")
        check(0 < len(d) <= 1024 and re.search(r"[\u4e00-\u9fff]", d) and re.search(r"[A-Za-z]{4,} [A-Za-z]{4,}", d),
              f"{skill}: description (<= 1024 chars) has Chinese and English trigger phrases", d)
    refs = os.path.join(home, ".claude", "skills", "premerge-accuracy-check", "references")
    check(sorted(os.listdir(refs)) == ["config-matrix-guide.md", "log-validation-guide.md", "report-format-guide.md",
                                       "reproduce-json-guide.md"], "the four references installed",
          os.listdir(refs) if os.path.isdir(refs) else refs)

    before = snapshot(home)
    r = run(["--claude-code"], home)
    check(r.returncode == 0 and snapshot(home) == before, "a second install changes nothing", r.stdout)

    with open(claude_json, "w") as f:
        f.write("{not json")
    r = run(["--claude-code"], home)
    check(r.returncode != 0, "an invalid ~/.claude.json is refused", r.stdout + r.stderr)
    check(open(claude_json).read() == "{not json", "the invalid file is left untouched")
    check("claude.json" in r.stderr, "the refusal names the file", r.stderr)

    r = run(["--claude-desktop"], home)
    check(r.returncode == 0 and os.path.exists(desktop_path), "desktop install writes its config", r.stderr)
    if os.path.exists(desktop_path):
        entry = json.load(open(desktop_path))["mcpServers"]["parity"]
        check(entry["args"] == ["serve"], "desktop config read back", entry)

print("PASS" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
