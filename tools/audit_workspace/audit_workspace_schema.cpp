#include "tools/audit_workspace/audit_workspace_schema.h"

namespace parity::tools {

nlohmann::json AuditWorkspaceInputSchema() {
  static const nlohmann::json schema = nlohmann::json::parse(R"json({
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["audit", "diff", "prepare", "cleanup"], "default": "audit",
      "description": "audit: read-only report (remotes, HEAD/upstream, staged/unstaged/untracked, stash, worktrees, stale-fork check). diff: baseline..candidate per-file +/- and the proposed A/B/C class of every changed or uncommitted file. prepare: confirm the classes with the user, create the two worktrees, copy class-B files into both and class-C files into the candidate, write infra_files.tar.gz. cleanup: remove parity's worktrees."},
    "repo": {"type": "string", "default": ".", "description": "Path inside the user's git working tree."},
    "baseline": {"type": "string", "description": "Baseline revision (branch A), e.g. cann/master. Required for diff and prepare. A bare branch name carried by several remotes at different commits is refused: name the remote."},
    "candidate": {"type": "string", "default": "HEAD", "description": "Candidate revision (branch B)."},
    "baseline_path": {"type": "string", "description": "Where to create the baseline worktree; default <repo>-baseline beside the repo."},
    "candidate_path": {"type": "string", "description": "Where to create the candidate worktree; default <repo>-candidate beside the repo."},
    "classes": {"type": "object", "additionalProperties": {"type": "string", "enum": ["A", "B", "C", "ignore"]},
      "description": "Classes the user already confirmed, path -> A|B|C|ignore. When they cover every file, prepare does not ask again."},
    "paths": {"type": "array", "items": {"type": "string"}, "description": "cleanup: the worktrees to remove; default every worktree parity created for this repo."},
    "force": {"type": "boolean", "default": false, "description": "cleanup: remove worktrees that hold changes other than parity's copies (training outputs, edits)."},
    "remove_stale": {"type": "boolean", "description": "prepare: parity's own worktrees of an earlier run that stand where the new ones go: true removes them first (the user confirmed), false refuses listing them; absent: the user is asked (elicitation)."},
    "report_dir": {"type": "string", "description": "Report directory for the ledger and infra_files.tar.gz; default the server's."},
    "max_files": {"type": "integer", "minimum": 1, "maximum": 100000, "default": 5000, "description": "Most files listed per diff or status."}
  },
  "additionalProperties": false
})json");
  return schema;
}

nlohmann::json AuditWorkspaceOutputSchema() {
  static const nlohmann::json schema = nlohmann::json::parse(R"json({
  "type": "object",
  "required": ["action", "repo"],
  "properties": {
    "action": {"type": "string", "enum": ["audit", "diff", "prepare", "cleanup"]},
    "repo": {"type": "string", "description": "Absolute path of the working-tree root."},
    "audit": {"type": "object", "description": "action=audit",
      "properties": {
        "git_dir": {"type": "string"},
        "head": {"type": "object", "properties": {
          "branch": {"type": ["string", "null"]}, "detached": {"type": "boolean"}, "unborn": {"type": "boolean"},
          "commit": {"$ref": "#/$defs/commit"}, "upstream": {"type": ["string", "null"]},
          "ahead": {"type": ["integer", "null"]}, "behind": {"type": ["integer", "null"]}}},
        "remotes": {"type": "array", "items": {"type": "object", "required": ["name", "url"], "properties": {
          "name": {"type": "string"}, "url": {"type": "string"}, "push_url": {"type": "string"}}}},
        "staged": {"type": "array", "items": {"$ref": "#/$defs/change"}},
        "unstaged": {"type": "array", "items": {"$ref": "#/$defs/change"}},
        "untracked": {"type": "array", "items": {"type": "string"}},
        "conflicted": {"type": "array", "items": {"type": "string"}},
        "clean": {"type": "boolean"},
        "truncated": {"type": "boolean"},
        "stash": {"type": "array", "items": {"type": "object", "properties": {
          "index": {"type": "integer"}, "ref": {"type": "string"}, "message": {"type": "string"}, "commit": {"type": "string"}}}},
        "worktrees": {"type": "array", "items": {"$ref": "#/$defs/worktree"}},
        "stale_fork": {"type": "array", "description": "Branch names carried by the local branches and/or several remotes.",
          "items": {"type": "object", "properties": {
            "branch": {"type": "string"}, "diverged": {"type": "boolean"}, "newest": {"type": "string"},
            "choice_required": {"type": "boolean", "description": "true when a bare name is ambiguous: pass baseline as one of refs[].ref"},
            "refs": {"type": "array", "items": {"$ref": "#/$defs/commit"}},
            "pairs": {"type": "array", "items": {"type": "object", "properties": {
              "a": {"type": "string"}, "b": {"type": "string"}, "a_ahead": {"type": "integer"}, "b_ahead": {"type": "integer"},
              "merge_base": {"type": ["string", "null"]}}}}}}},
        "last_fetch": {"type": ["string", "null"], "description": "When FETCH_HEAD was written: remote-tracking refs are that old."},
        "baseline": {"description": "The `baseline` argument resolved, or why it cannot be.", "type": "object"}
      }},
    "diff": {"type": "object", "description": "action=diff (also inside prepare)",
      "properties": {
        "baseline": {"$ref": "#/$defs/commit"}, "candidate": {"$ref": "#/$defs/commit"},
        "head": {"$ref": "#/$defs/commit"},
        "committed": {"$ref": "#/$defs/stat"}, "uncommitted": {"$ref": "#/$defs/stat"},
        "files": {"type": "array", "items": {"type": "object",
          "required": ["path", "origin", "change", "proposed", "reason", "allowed"],
          "properties": {
            "path": {"type": "string"}, "old_path": {"type": "string"},
            "origin": {"type": "string", "enum": ["committed", "uncommitted", "untracked", "committed+uncommitted"]},
            "change": {"type": "string"}, "additions": {"type": "integer"}, "deletions": {"type": "integer"},
            "binary": {"type": "boolean"},
            "proposed": {"type": "string", "enum": ["A", "B", "C", "ignore"]},
            "reason": {"type": "string"},
            "allowed": {"type": "array", "items": {"type": "string"}}}}},
        "warnings": {"type": "array", "items": {"type": "string"}}
      }},
    "prepare": {"type": "object", "description": "action=prepare",
      "properties": {
        "classes": {"type": "object", "additionalProperties": {"type": "string"}},
        "baseline_worktree": {"$ref": "#/$defs/worktree"}, "candidate_worktree": {"$ref": "#/$defs/worktree"},
        "copied": {"type": "array", "items": {"type": "object", "properties": {
          "path": {"type": "string"}, "class": {"type": "string"}, "sides": {"type": "array", "items": {"type": "string"}},
          "source": {"type": "string"}, "blob": {"type": "string"}, "mode": {"type": "string"}}}},
        "infra_tarball": {"type": ["string", "null"], "description": "relative to report_dir"},
        "removed_stale": {"type": "array", "description": "an earlier run's worktrees removed first (remove_stale)",
          "items": {"type": "object", "properties": {
          "path": {"type": "string"}, "name": {"type": "string"},
          "discarded": {"type": "array", "items": {"type": "string"}}}}},
        "report_dir": {"type": "string"},
        "ledger_entries": {"type": "array", "items": {"type": "string"}}
      }},
    "cleanup": {"type": "object", "description": "action=cleanup",
      "properties": {
        "removed": {"type": "array", "items": {"type": "object", "properties": {
          "path": {"type": "string"}, "name": {"type": "string"},
          "discarded": {"type": "array", "items": {"type": "string"}}}}},
        "report_dir": {"type": "string"},
        "ledger_entries": {"type": "array", "items": {"type": "string"}}
      }}
  },
  "$defs": {
    "commit": {"type": "object", "properties": {
      "ref": {"type": "string"}, "commit": {"type": "string"}, "date": {"type": "string"},
      "author": {"type": "string"}, "summary": {"type": "string"}}},
    "change": {"type": "object", "properties": {
      "path": {"type": "string"}, "change": {"type": "string"}, "old_path": {"type": "string"}}},
    "stat": {"type": "object", "properties": {
      "files": {"type": "integer"}, "additions": {"type": "integer"}, "deletions": {"type": "integer"},
      "truncated": {"type": "boolean"}}},
    "worktree": {"type": "object", "properties": {
      "name": {"type": "string"}, "path": {"type": "string"}, "valid": {"type": "boolean"}, "locked": {"type": "boolean"},
      "parity_owned": {"type": "boolean"}, "side": {"type": ["string", "null"]}, "commit": {"type": ["string", "null"]}}}
  }
})json");
  return schema;
}

}  // namespace parity::tools
