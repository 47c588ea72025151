#!/usr/bin/bash
# Launches the toy trainer the way torchtitan's run_train.sh launches torchtitan.train:
#   bash scripts/run_train.sh --module toy --config toy_small --training.steps 10 ...
# Environment: NGPU (only 1 is supported: the toy trainer runs on one device),
# LOG_RANK (rank whose output is shown, default 0), TRAIN_FILE (entry module),
# PYTHON (interpreter with torch, default Debian's /usr/bin/python3).
set -eu

NGPU=${NGPU:-"1"}
export LOG_RANK=${LOG_RANK:-0}
TRAIN_FILE=${TRAIN_FILE:-"toy_trainer.train"}
PYTHON=${PYTHON:-/usr/bin/python3}

if [ "${NGPU}" != "1" ]; then
    echo "run_train.sh: NGPU=${NGPU} is not supported by the toy trainer (single device only)" >&2
    exit 2
fi

# Like torchtitan's launcher, relative paths in flags are taken from the caller's
# directory (run it from the repository root); only the package path is fixed here.
REPO_ROOT="$(cd "$(dirname "$0")/.." && pwd)"
export PYTHONPATH="${REPO_ROOT}${PYTHONPATH:+:${PYTHONPATH}}"
# torchrun --role rank --tee 3 prefixes every line of rank R with "[rankR]:"; the
# trainer adds the same prefix itself (torch 1.13's torchrun cannot parse --tee on
# Python 3.11).
export TOY_TEE_PREFIX="[rank${LOG_RANK}]:"
export RANK=0 LOCAL_RANK=0 WORLD_SIZE=1
exec "${PYTHON}" -u -m "${TRAIN_FILE}" "$@"
