#include "domain/run/launch.h"

#include <map>
#include <sstream>

namespace parity::run {

namespace {

Status CheckArgs(const std::vector<std::string>& args, const std::string& where) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--debug.deterministic_warn_only", 0) == 0) {
      return InvalidArgument(where + "[" + std::to_string(i) + "]: " + a + " is refused")
          .WithHint("deterministic_warn_only lets kernels without a deterministic implementation run with only a "
                    "warning, so baseline and candidate can differ with no error; the pre-merge check requires "
                    "--debug.deterministic without warn_only");
    }
    size_t eq = a.find('=');
    std::string value = eq == std::string::npos ? a : a.substr(eq + 1);
    if (value == "None" || value == "none" || value == "null") {
      return InvalidArgument(where + "[" + std::to_string(i) + "]: the value " + a + " would reach the training as the "
                             "string \"" + value + "\", not Python None")
          .WithHint("omit the option to keep its default of None (known trap: --checkpoint.initial_load_path None "
                    "is parsed as the string \"None\")");
    }
  }
  return Status::Ok();
}

Result<std::vector<std::string>> FillTemplate(const LaunchRequest& r) {
  std::map<std::string, std::string> values = {
      {"model", r.model}, {"config", r.config}, {"dataset_path", r.dataset_path},
      {"steps", r.steps ? std::to_string(*r.steps) : ""}, {"seed", std::to_string(r.seed)},
      {"checkpoint_dir", r.checkpoint_dir}, {"report_dir", r.report_dir}, {"worktree", r.worktree},
      {"side", r.side}, {"phase", r.phase}};
  std::vector<std::string> out;
  std::istringstream words(r.custom_template);
  std::string word;
  while (words >> word) {
    std::string filled;
    size_t pos = 0;
    while (pos < word.size()) {
      size_t open = word.find('{', pos);
      if (open == std::string::npos) { filled += word.substr(pos); break; }
      size_t close = word.find('}', open);
      if (close == std::string::npos) {
        return InvalidArgument("arguments.template: unclosed '{' in \"" + word + "\"");
      }
      filled += word.substr(pos, open - pos);
      std::string name = word.substr(open + 1, close - open - 1);
      auto it = values.find(name);
      if (it == values.end()) {
        return InvalidArgument("arguments.template: unknown placeholder {" + name + "}")
            .WithHint("known: {model} {config} {steps} {seed} {dataset_path} {checkpoint_dir} {report_dir} "
                      "{worktree} {side} {phase}");
      }
      if (it->second.empty()) {
        return InvalidArgument("arguments.template uses {" + name + "} but no value was given for it");
      }
      filled += it->second;
      pos = close + 1;
    }
    out.push_back(filled);
  }
  if (out.empty()) return InvalidArgument("arguments.template is empty");
  return out;
}

}  // namespace

Result<Launch> BuildLaunch(const LaunchRequest& r) {
  if (r.phase != "train" && r.phase != "gen_ckpt") {
    return InvalidArgument("arguments.phase: expected train or gen_ckpt, got " + r.phase);
  }
  PARITY_RETURN_IF_ERROR(CheckArgs(r.extra_args, "arguments.extra_args"));
  Launch launch;
  const bool gen = r.phase == "gen_ckpt";
  const int steps = gen ? 1 : r.steps.value_or(100);
  if (r.steps && *r.steps < 1) return InvalidArgument("arguments.steps: must be at least 1");

  if (r.launcher == "torchtitan") {
    if (r.model.empty()) return InvalidArgument("arguments.model: required by the torchtitan launcher (--module)");
    if (r.config.empty()) return InvalidArgument("arguments.config: required by the torchtitan launcher (--config)");
    auto& a = launch.argv;
    a = {"bash", r.script.empty() ? "scripts/run_train.sh" : r.script, "--module", r.model, "--config", r.config};
    if (gen) {
      a.insert(a.end(), {"--training.steps", "1"});
    } else {
      a.push_back("--training.steps=" + std::to_string(steps));
    }
    a.push_back("--debug.seed=" + std::to_string(r.seed));
    if (r.deterministic) a.push_back("--debug.deterministic");
    if (!r.dataset_path.empty()) a.push_back("--training.dataset_path=" + r.dataset_path);
    if (!r.dump_folder.empty()) {
      if (r.dump_folder[0] == '/' || r.dump_folder.find("..") != std::string::npos ||
          r.dump_folder.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-/") !=
              std::string::npos) {
        return InvalidArgument("arguments.dump_folder: \"" + r.dump_folder + "\" must be a plain path inside the worktree");
      }
      a.push_back("--job.dump_folder=" + r.dump_folder);
    }
    if (gen) {
      a.insert(a.end(), {"--checkpoint.enable", "--checkpoint.last_save_in_hf", "--checkpoint.last_save_model_only"});
      launch.checkpoint_to_move = (r.dump_folder.empty() ? std::string("outputs") : r.dump_folder) + "/checkpoint/step-1";
    } else if (r.load_checkpoint) {
      if (r.checkpoint_dir.empty()) return InvalidArgument("arguments.checkpoint_dir: needed to load the initial checkpoint");
      a.insert(a.end(), {"--checkpoint.enable", "--checkpoint.load_only", "--checkpoint.initial_load_path",
                         r.checkpoint_dir, "--checkpoint.initial_load_in_hf"});
    }
    launch.expected_steps = steps;
  } else if (r.launcher == "megatron") {
    if (r.script.empty()) return InvalidArgument("arguments.script: the megatron launcher needs the training script");
    auto& a = launch.argv;
    a = {"bash", r.script, "--train-iters", std::to_string(steps), "--seed", std::to_string(r.seed)};
    if (r.deterministic) a.push_back("--deterministic-mode");
    if (!r.dataset_path.empty()) a.insert(a.end(), {"--data-path", r.dataset_path});
    if (gen) {
      if (r.checkpoint_dir.empty()) return InvalidArgument("arguments.checkpoint_dir: needed to save the initial checkpoint");
      a.insert(a.end(), {"--save", r.checkpoint_dir, "--save-interval", "1"});
    } else if (r.load_checkpoint) {
      if (r.checkpoint_dir.empty()) return InvalidArgument("arguments.checkpoint_dir: needed to load the initial checkpoint");
      a.insert(a.end(), {"--load", r.checkpoint_dir, "--finetune", "--no-load-optim", "--no-load-rng"});
    }
    launch.expected_steps = steps;
  } else if (r.launcher == "custom") {
    if (r.custom_template.empty()) return InvalidArgument("arguments.template: required by the custom launcher");
    PARITY_ASSIGN_OR_RETURN(launch.argv, FillTemplate(r));
    PARITY_RETURN_IF_ERROR(CheckArgs(launch.argv, "arguments.template"));
    if (r.steps) launch.expected_steps = steps;
    launch.notes.push_back("custom launcher: parity cannot add deterministic flags itself; the template must");
  } else if (r.launcher == "argv") {
    if (r.argv.empty()) return InvalidArgument("arguments.argv: required by the argv launcher");
    PARITY_RETURN_IF_ERROR(CheckArgs(r.argv, "arguments.argv"));
    launch.argv = r.argv;
    if (r.steps) launch.expected_steps = steps;
    launch.notes.push_back("argv launcher: parity cannot add deterministic flags itself; the argv must");
  } else {
    return InvalidArgument("arguments.launcher: expected torchtitan, megatron, custom or argv, got " + r.launcher);
  }
  launch.argv.insert(launch.argv.end(), r.extra_args.begin(), r.extra_args.end());
  return launch;
}

}  // namespace parity::run
