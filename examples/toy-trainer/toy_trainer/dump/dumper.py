"""An msprobe-format dumper: `step{N}/rank{R}/dump.json`, `stack.json`, `construct.json`.

Naming, ordering and file shapes follow msprobe (formats.md §1.a-1.d, checked key by key
against real msprobe 26 output in tests/toy):
- API entries `{Prefix}.{api}.{n}.forward|backward`, n a per-API call counter reset each
  step; the forward key is inserted before the call (inputs) and completed after it
  (output); calls made inside a hooked call are not dumped. The backward entry is written
  when autograd runs the node that produced the API's output (a hook on its grad_fn):
  `input` = gradients w.r.t. that node's outputs, `output` = w.r.t. its inputs.
- Module entries (levels L0 and mix) `Module.{path}.{Class}.forward.{k}`, inserted after
  the module ran, with `parameters`; `Module.{path}.{Class}.parameters_grad.{g}` when all
  of a module's parameter gradients of one backward arrived; in L0 also
  `Module.{path}.{Class}.backward.{k}` (k counts backward calls of that module).
- stack.json in msprobe's deduplicated form {"0": [[entry names], [frames]], ...}, frames
  innermost first, "File {path}, line {n}, in {func}, \\n {code}", dumper frames removed;
  forward entries only, as msprobe writes it.
- construct.json: {node: parent}; {} for L1.
- mode "tensor" (msprobe task "tensor"): every tensor is also saved with torch.save as
  `dump_tensor_data/{leaf name}.pt` and named in the leaf's data_name.
"""
from __future__ import annotations

import collections
import functools
import json
import os
import threading
import traceback

import torch

from toy_trainer.dump import apis
from toy_trainer.dump.summary import LeafOptions, summarize, summarize_output

LEVELS = ("L0", "L1", "mix")
MODES = ("statistics", "md5", "tensor")
_OWN_DIR = os.path.dirname(os.path.abspath(__file__))


def _parse_int_list(flag: str, text: str) -> set[int] | None:
    if not text.strip():
        return None
    try:
        return {int(part) for part in text.replace(" ", "").split(",") if part}
    except ValueError:
        raise ValueError(f"{flag} expects comma-separated integers, got '{text}'") from None


def _call_stack() -> tuple[str, ...]:
    frames = []
    for frame in reversed(traceback.extract_stack()):
        if frame.filename.startswith(_OWN_DIR) or not frame.line:
            continue
        frames.append(f"File {frame.filename}, line {frame.lineno}, in {frame.name}, \n {frame.line.strip()}")
    return tuple(frames)


class _StepRecord:
    def __init__(self):
        self.data: dict = {}
        self.stacks: dict[tuple, list[str]] = {}
        self.construct: dict = {}
        self.api_counts = collections.defaultdict(int)
        self.module_counts = collections.defaultdict(int)
        self.module_backward_counts = collections.defaultdict(int)
        self.grad_counts = collections.defaultdict(int)
        self.pending_grads: dict[str, dict] = {}
        self.module_stack: list[str] = []  # forward names of the modules running now
        self.module_parent: dict[str, str | None] = {}

    def add_stack(self, name: str, stack: tuple) -> None:
        self.stacks.setdefault(stack, []).append(name)


class Dumper:
    """Hooks torch while a selected step runs; start(step) / stop() bracket one step."""

    def __init__(self, dump_cfg, model: torch.nn.Module, rank: int = 0):
        if dump_cfg.level not in LEVELS:
            raise ValueError(f"dump.level must be one of {LEVELS}, got '{dump_cfg.level}'")
        if dump_cfg.mode not in MODES:
            raise ValueError(f"dump.mode must be one of {MODES}, got '{dump_cfg.mode}'")
        self.root = dump_cfg.dir
        self.level = dump_cfg.level
        self.task = "tensor" if dump_cfg.mode == "tensor" else "statistics"
        self.opts = LeafOptions(with_md5=dump_cfg.mode == "md5",
                                save=self._save_tensor if dump_cfg.mode == "tensor" else None)
        self.tensor_dir = None
        self.steps = _parse_int_list("dump.step", dump_cfg.step)
        self.ranks = _parse_int_list("dump.rank", dump_cfg.rank)
        self.rank = rank
        self.record: _StepRecord | None = None
        self.step = None
        self._local = threading.local()
        if self.level in ("L1", "mix"):
            self._wrap_apis()
        if self.level in ("L0", "mix"):
            self._hook_modules(model)

    # ---- state helpers -------------------------------------------------------------
    def _idle(self) -> bool:
        """True when nothing must be recorded: no selected step, or inside a hooked call
        or inside the dumper's own statistics."""
        return self.record is None or getattr(self._local, "depth", 0) > 0

    def _enter(self):
        self._local.depth = getattr(self._local, "depth", 0) + 1

    def _leave(self):
        self._local.depth -= 1

    def _summarize(self, value, path: str):
        self._enter()
        try:
            with torch.no_grad():
                return summarize(value, self.opts, path)
        finally:
            self._leave()

    def _summarize_output(self, value, path: str):
        self._enter()
        try:
            with torch.no_grad():
                return summarize_output(value, self.opts, path)
        finally:
            self._leave()

    def _save_tensor(self, path: str, tensor: torch.Tensor) -> str:
        name = f"{path}.pt"
        torch.save(tensor.detach().clone().contiguous().cpu(), os.path.join(self.tensor_dir, name))
        return name

    def _add_construct(self, name: str, parent: str | None) -> None:
        rec = self.record
        if self.level == "L1":
            return
        if name not in rec.construct:
            rec.construct[name] = parent
        # Enclosing modules are named the first time something inside them is recorded,
        # right after it and outermost first: the order msprobe's construct.json shows.
        for module_name in rec.module_stack:
            if module_name not in rec.construct:
                rec.construct[module_name] = rec.module_parent.get(module_name)

    # ---- API hooks -----------------------------------------------------------------
    def _wrap_apis(self) -> None:
        for owner, attr, prefix, structure_only in apis.targets():
            original = getattr(owner, attr)
            if getattr(original, "_toy_dump_original", None) is not None:
                original = original._toy_dump_original  # already wrapped by an earlier Dumper
            wrapper = self._make_api_wrapper(original, f"{prefix}.{attr}.", structure_only)
            wrapper._toy_dump_original = original
            setattr(owner, attr, wrapper)

    def _make_api_wrapper(self, original, api_name: str, structure_only: bool):
        dumper = self

        @functools.wraps(original)
        def wrapper(*args, **kwargs):
            if dumper._idle():
                return original(*args, **kwargs)
            rec = dumper.record
            index = rec.api_counts[api_name]
            forward_name = f"{api_name}{index}.forward"
            parent = rec.module_stack[-1] if rec.module_stack else None
            entry = None
            if not structure_only:
                inputs = f"{forward_name}.input"
                entry = {"input_args": dumper._summarize(list(args), inputs), "input_kwargs": dumper._summarize(kwargs, inputs)}
                rec.data[forward_name] = entry
                rec.add_stack(forward_name, _call_stack())
            dumper._add_construct(forward_name, parent)
            dumper._enter()
            try:
                output = original(*args, **kwargs)
            finally:
                dumper._leave()
            if entry is not None:
                entry["output"] = dumper._summarize_output(output, f"{forward_name}.output")
            dumper._hook_backward(output, f"{api_name}{index}.backward", structure_only)
            rec.api_counts[api_name] += 1
            return output

        return wrapper

    def _hook_backward(self, output, backward_name: str, structure_only: bool) -> None:
        outputs = output if isinstance(output, (list, tuple)) else (output,)
        grad_fn = next((t.grad_fn for t in outputs if isinstance(t, torch.Tensor) and t.grad_fn is not None), None)
        if grad_fn is None:
            return
        rec = self.record

        def on_backward(grad_inputs, grad_outputs):
            if self.record is not rec:
                return
            if not structure_only:
                rec.data[backward_name] = {
                    "input": self._summarize(list(grad_outputs), f"{backward_name}.input"),
                    "output": self._summarize(list(grad_inputs), f"{backward_name}.output"),
                }
            if self.level == "mix":
                rec.construct.setdefault(backward_name, None)

        grad_fn.register_hook(on_backward)

    # ---- module hooks --------------------------------------------------------------
    def _hook_modules(self, model: torch.nn.Module) -> None:
        for path, module in model.named_modules():
            if not path:  # msprobe does not dump the root model itself
                continue
            prefix = f"Module.{path}.{module.__class__.__name__}."
            module.register_forward_pre_hook(functools.partial(self._module_pre, prefix))
            module.register_forward_hook(functools.partial(self._module_post, prefix))
            params = [(n, p) for n, p in module.named_parameters(recurse=False) if p.requires_grad]
            for pname, param in params:
                param.register_hook(functools.partial(self._param_grad, prefix, [n for n, _ in params], pname))
            if self.level == "L0":
                module.register_full_backward_hook(functools.partial(self._module_backward, prefix))

    def _module_pre(self, prefix, module, args):
        if self._idle():
            return
        rec = self.record
        index = rec.module_counts[prefix]
        rec.module_counts[prefix] += 1
        name = f"{prefix}forward.{index}"
        rec.module_parent[name] = rec.module_stack[-1] if rec.module_stack else None
        rec.add_stack(name, _call_stack())
        if self.level == "L0":
            self._add_construct(name, rec.module_parent[name])
        rec.module_stack.append(name)

    def _module_post(self, prefix, module, args, output):
        if self._idle() or not self.record.module_stack:
            return
        rec = self.record
        name = rec.module_stack.pop()
        rec.data[name] = {
            "input_args": self._summarize(list(args), f"{name}.input"),
            "input_kwargs": {},
            "output": self._summarize_output(output, f"{name}.output"),
            "parameters": {n: self._summarize(p, f"{name}.parameters.{n}") for n, p in module.named_parameters(recurse=False)},
        }
        self._add_construct(name, rec.module_parent.get(name))

    def _param_grad(self, prefix, names, pname, grad):
        if self._idle():
            return None
        rec = self.record
        pending = rec.pending_grads.setdefault(prefix, {})
        # The index only advances when the entry completes, so it is known already.
        pending[pname] = [self._summarize(grad, f"{prefix}parameters_grad.{rec.grad_counts[prefix]}.{pname}")]
        if len(pending) == len(names):
            index = rec.grad_counts[prefix]
            rec.grad_counts[prefix] += 1
            rec.data[f"{prefix}parameters_grad.{index}"] = {n: pending[n] for n in names}
            del rec.pending_grads[prefix]
        return None

    def _module_backward(self, prefix, module, grad_input, grad_output):
        if self._idle():
            return None
        rec = self.record
        index = rec.module_backward_counts[prefix]
        rec.module_backward_counts[prefix] += 1
        name = f"{prefix}backward.{index}"
        rec.data[name] = {"input": self._summarize(list(grad_output), f"{name}.input"),
                          "output": self._summarize(list(grad_input), f"{name}.output")}
        forward_parent = rec.module_parent.get(f"{prefix}forward.{index}")
        parent = forward_parent.replace(".forward.", ".backward.") if forward_parent else None
        rec.construct.setdefault(name, parent)
        return None

    # ---- step bracket --------------------------------------------------------------
    def start(self, step: int) -> None:
        selected = (self.steps is None or step in self.steps) and (self.ranks is None or self.rank in self.ranks)
        self.step = step
        self.record = _StepRecord() if selected else None
        if selected and self.task == "tensor":
            self.tensor_dir = os.path.abspath(os.path.join(self._out_dir(), "dump_tensor_data"))
            os.makedirs(self.tensor_dir, exist_ok=True)

    def _out_dir(self) -> str:
        return os.path.join(self.root, f"step{self.step}", f"rank{self.rank}")

    def stop(self) -> None:
        rec, self.record = self.record, None
        if rec is None:
            return
        out_dir = self._out_dir()
        os.makedirs(out_dir, exist_ok=True)
        dump = {"task": self.task, "level": self.level, "framework": "pytorch",
                "dump_data_dir": self.tensor_dir if self.task == "tensor" else None, "data": rec.data}
        stacks = {str(i): [names, list(frames)] for i, (frames, names) in enumerate(rec.stacks.items())}
        for file_name, content in (("dump.json", dump), ("stack.json", stacks), ("construct.json", rec.construct)):
            with open(os.path.join(out_dir, file_name), "w") as f:
                json.dump(content, f, indent=1)
