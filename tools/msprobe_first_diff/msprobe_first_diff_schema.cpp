#include "tools/msprobe_first_diff/msprobe_first_diff_schema.h"

namespace parity::tools {

using json = nlohmann::json;

json MsprobeFirstDiffInputSchema() {
  static const json schema = json::parse(R"json({
  "type": "object",
  "properties": {
    "baseline_dump": {"type": "string", "description": "Baseline msprobe dump: the dump root (step*/), a step folder (rank*/), a rank folder or its dump.json. msprobe's golden side (-gp)."},
    "candidate_dump": {"type": "string", "description": "Candidate dump, same forms. msprobe's target side (-tp)."},
    "compare_result": {"type": "string", "description": "Instead of the dumps: an existing msprobe compare result (.csv, or .xlsx from --xlsx), candidate as target."},
    "step": {"type": "integer", "minimum": 0, "description": "Step folder to use. Without step and rank, a dump root (step*/rank*/) or step folder (rank*/) holding several pairs is compared whole: every (step, rank) pair present on both sides; the answer is the first pair to diverge (earliest step, then the rank whose first divergent API comes first in execution order), with a summary per pair (scan.per_rank) and a column per pair in the step x layer heatmap's data (heatmap). With rank only: the lowest step."},
    "rank": {"type": "integer", "minimum": 0, "description": "Rank folder to use (with step only: rank 0, or the unnumbered 'rank')."},
    "threads": {"type": "integer", "minimum": 1, "maximum": 256, "description": "Dump tree: (step, rank) pairs compared at once (default: half the hardware threads, at least 1)."},
    "memory_budget_mib": {"type": "integer", "minimum": 1, "description": "Dump tree: MiB of dump.json files in flight at once (default: a quarter of physical memory); a pair larger than the budget runs alone."},
    "criterion": {"type": "string", "enum": ["msprobe", "bitwise", "tolerance", "calibrated"], "default": "msprobe", "description": "When a row diverges: msprobe (default): any difference the dump shows, each divergent row saying whether msprobe's own pass/warning/error rules would pass it; bitwise: any difference; tolerance: beyond abs_tol + rel_tol*|baseline|; calibrated (implied by noise_dumps): beyond safety_factor x the row's own run-to-run spread, the largest |repeat - baseline| of each statistic over the baseline's repeats (0 where they never moved: any difference counts). In md5 mode, CRC differences msprobe computed after a later in-place op changed the tensor are noise under every criterion."},
    "noise_dumps": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 16, "description": "Dumps of the baseline run again (same code, config and environment; each a dump root, step/rank folder or dump.json, read at the same step and rank): each row of the candidate is judged against that row's own run-to-run spread (criterion calibrated). One (step, rank) pair: give step and rank for dump trees. In md5 mode a row whose CRC differs between the repeats is noise there."},
    "safety_factor": {"type": "number", "minimum": 1, "default": 3, "description": "With noise_dumps: a row diverges beyond safety_factor x its spread."},
    "abs_tol": {"type": "number", "minimum": 0, "default": 0},
    "rel_tol": {"type": "number", "minimum": 0, "default": 0},
    "ignore": {"type": "array", "items": {"type": "string"}, "description": "Substrings of API names to skip (random ops, for example), added to msprobe's own: Torch.empty, Torch.fill, Tensor.__setitem__."},
    "fuzzy_match": {"type": "boolean", "default": false, "description": "Match APIs without their call counters (the k-th call of an op to the k-th call)."},
    "require_same_shape": {"type": "boolean", "default": false, "description": "Match on name and shape, as msprobe 8.x did (26.x matches on name and reports a shape mismatch)."},
    "worktree": {"type": "string", "description": "Local folder holding the candidate's code; stack paths are mapped into it by their longest existing suffix."},
    "path_map": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Training-host path prefix -> local folder, tried before suffix matching, e.g. {\"/home/ma-user/work/toy-block/\": \"/src/toy\"}."},
    "user_code": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": "Path fragments marking the user's code in the stacks, e.g. [\"/PanGu/\"] (PrecisionComparer's parse_code_dir): a frame is user code exactly when its path holds one. Default: every frame outside torch, torch_npu, msprobe, mindspeed, site-/dist-packages and the Python runtime."},
    "repo": {"type": "string", "description": "Git repository for the hunk lookup (default: the worktree). The worktree may be a linked worktree of it (git worktree add): the hunk is then diffed there, HEAD being the worktree's."},
    "baseline_ref": {"type": "string", "description": "Baseline commit/ref; with it the hunk changed between baseline_ref and candidate_ref that covers the source line is returned."},
    "candidate_ref": {"type": "string", "default": "HEAD"},
    "max_next": {"type": "integer", "minimum": 0, "maximum": 100, "default": 5, "description": "How many further divergent APIs to list."},
    "report_dir": {"type": "string", "description": "Report directory (hunt/hunt.json, hunt/compare_table.csv when asked, the ledger); default the server's."},
    "compare_table": {"type": "boolean", "default": false, "description": "Also write parity's full compare table, hunt/compare_table.csv, in msprobe 26's CSV layout (hundreds of MB on a real dump). It is written while the answer is worked out; the answer is sent as a progress notification as soon as it is known, the result once the table is complete. Not with compare_result or run_msprobe (their table is msprobe's own)."},
    "run_msprobe": {"type": "boolean", "default": false, "description": "Run the real `msprobe compare -tp <candidate dump.json> -gp <baseline dump.json>` (with -fm when fuzzy_match) and analyse its result (hunt/msprobe_compare/) instead of parity's own compare. Needs msprobe installed: `msprobe` on PATH, or msprobe_python."},
    "msprobe_python": {"type": "string", "description": "With run_msprobe: a Python interpreter to run `-m msprobe.msprobe` with, instead of `msprobe` on PATH."},
    "msprobe_pythonpath": {"type": "string", "description": "With run_msprobe: PYTHONPATH for msprobe (a source copy's python/ folder, joined with ':')."},
    "msprobe_timeout_s": {"type": "integer", "minimum": 1, "maximum": 86400, "default": 1800, "description": "With run_msprobe: how long msprobe compare may run."}
  },
  "additionalProperties": false
})json");
  return schema;
}

json MsprobeFirstDiffOutputSchema() {
  static const json schema = json::parse(R"json({
  "type": "object",
  "required": ["schema", "source", "mode", "criteria", "found", "first_divergence", "next_divergences", "noise", "counts"],
  "properties": {
    "schema": {"const": "parity.hunt/1"},
    "source": {"type": "object"},
    "mode": {"type": "string", "enum": ["summary", "md5", "all"]},
    "criteria": {"type": "object"},
    "matching": {"type": "object"},
    "found": {"type": "boolean"},
    "explanation": {"type": "string"},
    "first_divergence": {"type": ["object", "null"], "properties": {
      "api": {"type": "string"},
      "verdict": {"type": "string", "enum": ["operator", "argument", "operands", "upstream", "unmatched"]},
      "cause": {"type": "object", "required": ["kind", "rule", "sentence", "evidence"], "properties": {
        "kind": {"type": "string", "enum": ["operator", "argument", "operands", "upstream", "unmatched"]},
        "rule": {"type": "string"}, "sentence": {"type": "string"}, "evidence": {"type": "object"},
        "trace": {"type": ["object", "null"]}}},
      "msprobe_note": {"type": ["string", "null"]},
      "inputs_equal": {"type": "boolean"},
      "user_frame": {"type": ["object", "null"]},
      "source": {"type": ["object", "null"]},
      "stack": {"type": "array"}
    }},
    "next_divergences": {"type": "array", "items": {"type": "string"}},
    "noise": {"type": "array"},
    "noise_total": {"type": "integer"},
    "msprobe_first_flagged": {"type": ["string", "null"]},
    "first_any_difference": {"type": ["string", "null"]},
    "counts": {"type": "object"},
    "compare_table": {"type": ["string", "null"]},
    "scan": {"type": "object", "description": "Dump tree only: pairs, first, tied_ranks, explanation, per_rank."},
    "heatmap": {"type": "object", "description": "The step x layer heatmap's data: kind, rows, columns, values[row][column], first_cell."},
    "hunt_json": {"type": ["string", "null"]},
    "ledger_entry": {"type": ["string", "null"]}
  }
})json");
  return schema;
}

}  // namespace parity::tools
