#!/usr/bin/python3
"""The msprobe-format dumps: structure checked key by key against real msprobe output
(tests/fixtures/msprobe-real), md5 values recomputed independently, the first
divergent entry between main and the numerics branch is the planted API, and a pure
refactor leaves every dumped value unchanged."""
import json
import os
import re
import shutil
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toylib  # noqa: E402

API_NAME = re.compile(r"^(Functional|Torch|Tensor)\.[A-Za-z_0-9]+\.\d+\.(forward|backward)$")
MODULE_NAME = re.compile(r"^Module\.[A-Za-z_0-9.]+\.[A-Za-z_][A-Za-z_0-9]*\.(forward|backward|parameters_grad)\.\d+$")
FRAME = re.compile(r"^File .+, line \d+, in .+, \n .*$", re.S)
TYPE_NAMES = {dict: "object", list: "array", str: "string", bool: "bool", int: "number", float: "number", type(None): "null"}


def load(folder):
    with open(os.path.join(folder, "dump.json")) as f:
        dump_text = f.read()
    files = {"dump.json": json.loads(dump_text)}
    for name in ("stack.json", "construct.json"):
        with open(os.path.join(folder, name)) as f:
            files[name] = json.load(f)
    files["text"] = dump_text
    return files


def kind(name: str) -> str:
    if name.startswith("Module."):
        return "module." + name.split(".")[-2]
    return "api." + name.split(".")[-1]


def leaves(value):
    """Tensor leaves (dicts with type torch.Tensor) found anywhere in an entry."""
    if isinstance(value, dict):
        if value.get("type") == "torch.Tensor":
            yield value
        else:
            for v in value.values():
                yield from leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from leaves(v)


def leaf_signature(leaf):
    return [(k, TYPE_NAMES[type(v)]) for k, v in leaf.items()]


def float_leaf_signature(entries):
    for entry in entries.values():
        for leaf in leaves(entry):
            if leaf["dtype"] == "torch.float32" and leaf["shape"]:
                return leaf_signature(leaf)
    toylib.fail("no float32 tensor leaf found")


def compare_structure(ours, real, label):
    dump, ref = ours["dump.json"], real["dump.json"]
    if list(dump) != list(ref):
        toylib.fail(f"{label}: dump.json top-level keys {list(dump)} != msprobe's {list(ref)}")
    for key in ("task", "framework", "level"):
        if dump[key] != ref[key]:
            toylib.fail(f"{label}: dump.json {key} = {dump[key]!r}, msprobe wrote {ref[key]!r}")
    if ref["dump_data_dir"] is None:
        if dump["dump_data_dir"] is not None:
            toylib.fail(f"{label}: dump_data_dir must be null without tensor data")
    elif not (os.path.isabs(dump["dump_data_dir"]) and dump["dump_data_dir"].endswith("/dump_tensor_data")):
        toylib.fail(f"{label}: dump_data_dir {dump['dump_data_dir']!r} is not an absolute .../dump_tensor_data path")
    if ours["text"][:20] != real["text"][:20]:
        toylib.fail(f"{label}: dump.json is not written with indent=1 like msprobe's")
    for name in dump["data"]:
        if not (API_NAME.match(name) or MODULE_NAME.match(name)):
            toylib.fail(f"{label}: entry name {name!r} is not in msprobe's naming scheme")
    ref_kinds = {}
    for name, entry in ref["data"].items():
        ref_kinds.setdefault(kind(name), entry)
    our_kinds = {}
    for name, entry in dump["data"].items():
        our_kinds.setdefault(kind(name), (name, entry))
    for k, ref_entry in ref_kinds.items():
        if k not in our_kinds:
            toylib.fail(f"{label}: no entry of kind {k} although msprobe's dump has one")
        name, entry = our_kinds[k]
        if k == "module.parameters_grad":
            if not all(isinstance(v, list) and len(v) == 1 for v in entry.values()):
                toylib.fail(f"{label}: {name} values must be one-element lists like msprobe's")
        elif list(entry) != list(ref_entry):
            toylib.fail(f"{label}: {name} has keys {list(entry)}, msprobe's {k} entries have {list(ref_entry)}")
    ours_sig, ref_sig = float_leaf_signature(dump["data"]), float_leaf_signature(ref["data"])
    if ours_sig != ref_sig:
        toylib.fail(f"{label}: tensor leaf keys/types {ours_sig} != msprobe's {ref_sig}")
    ref_keys = [k for k, _ in ref_sig]
    for leaf in leaves(dump["data"]):
        if list(leaf) != ref_keys:
            toylib.fail(f"{label}: tensor leaf keys {list(leaf)} != msprobe's {ref_keys}")
    for entries in (dump["data"], ref["data"]):
        for leaf in leaves(entries):
            if leaf["dtype"] == "torch.int64" and (leaf["Mean"], leaf["Norm"]) != (None, None):
                toylib.fail(f"{label}: int64 leaf with Mean/Norm set: {leaf}")

    stacks, ref_stacks = ours["stack.json"], real["stack.json"]
    if not stacks.get("0") or not ref_stacks.get("0"):
        toylib.fail(f"{label}: stack.json is not in msprobe's new (indexed) form")
    if list(stacks) != [str(i) for i in range(len(stacks))]:
        toylib.fail(f"{label}: stack.json keys are not 0..n-1")
    stacked = set()
    for index, value in stacks.items():
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(n, str) for n in value[0])):
            toylib.fail(f"{label}: stack.json[{index}] is not [[names], [frames]]")
        if not value[1] or not all(FRAME.match(f) for f in value[1]):
            toylib.fail(f"{label}: stack.json[{index}] frames not in msprobe's 'File p, line n, in f, \\n code' form")
        if any("toy_trainer/dump/" in f for f in value[1]):
            toylib.fail(f"{label}: stack.json[{index}] contains the dumper's own frames")
        stacked.update(value[0])
    for name in dump["data"]:
        has_stack = name.endswith(".forward") or ".forward." in name
        if has_stack != (name in stacked):
            toylib.fail(f"{label}: {name} {'lacks' if has_stack else 'has'} a stack.json entry (msprobe: forward entries only)")

    construct = ours["construct.json"]
    if dump["level"] == "L1":
        if construct != {} or real["construct.json"] != {}:
            toylib.fail(f"{label}: construct.json must be {{}} for L1")
        return
    for name in dump["data"]:
        if ".forward" in name and name not in construct:
            toylib.fail(f"{label}: {name} missing from construct.json")
    for node, parent in construct.items():
        if parent is not None and not MODULE_NAME.match(parent):
            toylib.fail(f"{label}: construct.json parent of {node} is {parent!r}")


def check_md5(ours):
    entry = ours["dump.json"]["data"]["Torch.arange.0.forward"]
    leaf = entry["output"][0]
    import torch

    expected = f"{zlib.crc32(torch.arange(leaf['shape'][0]).numpy().tobytes()):08x}"
    if leaf["md5"] != expected:
        toylib.fail(f"md5 of Torch.arange.0.forward output is {leaf['md5']}, CRC-32 of the bytes is {expected}")


def check_tensor_files(ours):
    import torch

    folder = ours["dump.json"]["dump_data_dir"]
    count = 0
    for name, entry in ours["dump.json"]["data"].items():
        for leaf in leaves(entry):
            if not leaf["data_name"].startswith(name + "."):
                toylib.fail(f"{name}: data_name {leaf['data_name']} is not named after its entry")
            tensor = torch.load(os.path.join(folder, leaf["data_name"]))
            if list(tensor.shape) != leaf["shape"] or (tensor.numel() > 1 and tensor.is_floating_point() and tensor.max().item() != leaf["Max"]):
                toylib.fail(f"{leaf['data_name']}: saved tensor does not match its leaf {leaf}")
            count += 1
    if count != len(os.listdir(folder)):
        toylib.fail(f"{folder} holds {len(os.listdir(folder))} files, dump.json names {count}")


def dump_run(tree, out, level, mode):
    toylib.run_train(tree, ["--config", "toy_debug", "--training.steps=2", "--debug.seed=42", "--debug.deterministic",
                            f"--dump_folder={out}/train", f"--dump.dir={out}", f"--dump.level={level}",
                            f"--dump.mode={mode}", "--dump.step=0"])
    if os.path.exists(os.path.join(out, "step1")):
        toylib.fail("--dump.step=0 also dumped step1")
    return load(os.path.join(out, "step0", "rank0"))


def main():
    fixtures = os.path.join(toylib.msprobe_fixtures_dir(), "dumps", "baseline")
    if not os.path.isdir(fixtures):
        toylib.fail(f"real msprobe fixture missing: {fixtures}")
    tmp = toylib.tempdir("dump")
    truth = toylib.make_demo_repo(os.path.join(tmp, "demo"))
    wt = os.path.join(tmp, "wt")
    trees = {b: toylib.worktree(truth["repo"], b, wt) for b in ("main", "numerics/gelu-tanh", "ulp/loss-reduction-order", "refactor/move-helpers")}

    for level, mode, fixture in (("mix", "md5", "md5_mix"), ("L1", "statistics", "statistics_L1"), ("mix", "statistics", "statistics_mix"),
                                   ("L1", "tensor", "tensor_L1")):
        ours = dump_run(trees["main"], os.path.join(tmp, f"main_{level}_{mode}"), level, mode)
        compare_structure(ours, load(os.path.join(fixtures, fixture, "step0", "rank0")), f"{level}/{mode}")
        if mode == "md5":
            check_md5(ours)
        if mode == "tensor":
            check_tensor_files(ours)
    l0 = dump_run(trees["main"], os.path.join(tmp, "main_L0"), "L0", "statistics")
    names = list(l0["dump.json"]["data"])
    if not names or any(not n.startswith("Module.") for n in names) or not any(".backward." in n for n in names):
        toylib.fail(f"L0 dump should hold only Module entries, including backward ones: {names[:10]}")

    base = load(os.path.join(tmp, "main_mix_statistics", "step0", "rank0"))["dump.json"]["data"]
    cand = dump_run(trees["numerics/gelu-tanh"], os.path.join(tmp, "gelu"), "mix", "statistics")["dump.json"]["data"]
    first = next((n for n in base if base[n] != cand.get(n)), None)
    expected = truth["branches"]["numerics/gelu-tanh"]["first_divergent_api"]
    if first != expected:
        toylib.fail(f"first divergent entry is {first}, ground truth says {expected}")
    stack = load(os.path.join(tmp, "gelu", "step0", "rank0"))["stack.json"]
    frames = next(v[1] for v in stack.values() if expected in v[0])
    planted = truth["branches"]["numerics/gelu-tanh"]["planted_change"]
    if f"{planted['file']}, line {planted['line']}, in forward" not in frames[0]:
        toylib.fail(f"first frame of {expected} is {frames[0]!r}, not the planted line {planted}")

    ulp_info = truth["branches"]["ulp/loss-reduction-order"]
    ulp = dump_run(trees["ulp/loss-reduction-order"], os.path.join(tmp, "ulp"), "mix", "statistics")["dump.json"]["data"]
    ulp_first = next((n for n in base if base[n] != ulp.get(n)), None)
    if ulp_first != ulp_info["first_divergent_api"]:
        toylib.fail(f"ULP branch: first divergent entry is {ulp_first}, ground truth says {ulp_info['first_divergent_api']}")

    refactor = dump_run(trees["refactor/move-helpers"], os.path.join(tmp, "refactor"), "mix", "statistics")["dump.json"]["data"]
    if refactor != base:
        diff = next(n for n in base if base[n] != refactor.get(n))
        toylib.fail(f"refactor branch dump differs from main at {diff}")
    shutil.rmtree(tmp)
    print(f"ok: dumps match msprobe's structure (mix/md5, L1, mix/statistics, L1/tensor, L0); first divergent entry {first}")


if __name__ == "__main__":
    main()
