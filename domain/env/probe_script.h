// The fixed scripts probe_env runs on a host. They never change with the arguments: the
// interpreter, search paths and device directory are passed as positional parameters
// ("$1"...), so nothing from a caller is ever spliced into shell text.
#pragma once

namespace parity::env {

// sh -c kProbeScript parity-probe <python> <dev_dir> <use_default_paths 0|1> <python_script> <search paths...>
// Prints sections introduced by "\n@@parity <name>\n".
inline constexpr const char* kProbeScript = R"SH(
py=$1; dev=$2; defaults=$3; pyscript=$4; shift 4
sec() { printf '\n@@parity %s\n' "$1"; }
sec host
uname -srm 2>&1
hostname 2>/dev/null || cat /etc/hostname 2>/dev/null
if [ "$defaults" = 1 ]; then
  set -- "$@" /usr/local/Ascend /opt/Ascend /etc/ascend_install.info
  for r in /home/*/Ascend; do [ -e "$r" ] && set -- "$@" "$r"; done
fi
[ -n "${ASCEND_HOME_PATH:-}" ] && set -- "$@" "$ASCEND_HOME_PATH"
[ -n "${ASCEND_TOOLKIT_HOME:-}" ] && set -- "$@" "$ASCEND_TOOLKIT_HOME"
sec roots
for r in "$@"; do printf '%s\n' "$r"; done
files=$(for r in "$@"; do
  [ -e "$r" ] && timeout 60 find -L "$r" -maxdepth 5 \( -name version.cfg -o -name 'ascend_*_install.info' \
    -o -name ascend_install.info -o -path '*/driver/version.info' \) -type f 2>/dev/null
done | sort -u | head -n 64)
sec files
printf '%s\n' "$files"
printf '%s\n' "$files" | while IFS= read -r f; do
  [ -n "$f" ] || continue
  sec "file $f"
  head -c 65536 "$f"
done
sec env
env | grep -E '^(ASCEND_[A-Z0-9_]*|HCCL_[A-Z0-9_]*|NCCL_[A-Z0-9_]*|CUBLAS_[A-Z0-9_]*|CUDA_[A-Z0-9_]*|CUDNN_[A-Z0-9_]*|PYTORCH_[A-Z0-9_]*|TORCH_[A-Z0-9_]*|NPU_[A-Z0-9_]*|PYTHONHASHSEED|OMP_NUM_THREADS|MKL_NUM_THREADS|CLOSE_MATMUL_K_SHIFT|TASK_QUEUE_ENABLE|CPU_AFFINITY_CONF|STREAMS_PER_DEVICE|MULTI_STREAM_MEMORY_RESERVE|LD_LIBRARY_PATH|PYTHONPATH|PATH)='
sec ascend_dirs
for v in ASCEND_HOME_PATH ASCEND_TOOLKIT_HOME ASCEND_OPP_PATH; do
  eval "p=\${$v:-}"
  if [ -n "$p" ]; then
    if [ -d "$p" ]; then echo "$v=exists"; else echo "$v=missing"; fi
  fi
done
sec npu_smi
if command -v npu-smi >/dev/null 2>&1; then
  echo "path=$(command -v npu-smi)"
  out=$(timeout 30 npu-smi info 2>&1); echo "exit=$?"
  sec npu_smi_output
  printf '%s\n' "$out"
else
  echo "absent"
fi
sec davinci
ls -1 "$dev" 2>/dev/null | grep -E '^(davinci[0-9]+|davinci_manager|devmm_svm|hisi_hdc)$'
sec python
echo "interpreter=$py"
out=$(timeout 120 "$py" -c "$pyscript" 2>&1); echo "exit=$?"
sec python_output
printf '%s\n' "$out"
sec nvidia_smi
if command -v nvidia-smi >/dev/null 2>&1; then
  out=$(timeout 30 nvidia-smi --query-gpu=index,name,memory.total,memory.used,driver_version --format=csv,noheader,nounits 2>&1)
  echo "exit=$?"
  sec nvidia_smi_output
  printf '%s\n' "$out"
else
  echo "absent"
fi
sec cpu
echo "arch=$(uname -m)"
echo "model=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/^[^:]*: *//')"
echo "cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null)"
sec memory
grep -E '^(MemTotal|MemAvailable):' /proc/meminfo 2>/dev/null
sec end
)SH";

// Run by the probed interpreter; prints one line "PARITY_PY_JSON=<json>".
inline constexpr const char* kPythonProbe = R"PY(
import json, platform, sys, traceback
r = {"python": platform.python_version(), "executable": sys.executable}
try:
    import torch
    r["torch"] = torch.__version__
    r["torch_cuda"] = torch.version.cuda
    r["cuda_available"] = bool(torch.cuda.is_available())
    r["cuda_device_count"] = torch.cuda.device_count() if r["cuda_available"] else 0
    try:
        r["cudnn"] = torch.backends.cudnn.version()
    except Exception:
        r["cudnn"] = None
except BaseException:
    r["torch"] = None
    r["torch_error"] = traceback.format_exc()
try:
    import torch_npu
    r["torch_npu"] = torch_npu.__version__
    r["npu_available"] = bool(torch.npu.is_available())
    r["npu_device_count"] = int(torch.npu.device_count())
except BaseException:
    r["torch_npu"] = None
    r["torch_npu_error"] = traceback.format_exc()
print("PARITY_PY_JSON=" + json.dumps(r))
)PY";

}  // namespace parity::env
