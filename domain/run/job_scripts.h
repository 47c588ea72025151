// The fixed scripts behind a job, the same on this machine and on an SSH host, so local and
// remote jobs share one implementation. Every value reaches them as a positional parameter,
// never as shell text. A job directory on the executing host holds:
//   supervisor.pid  the detached supervisor (its own session: survives parity and the SSH
//                   connection that started it)
//   pid             the training process, leader of its own process group (what cancel kills)
//                   the training and its children carry PARITY_JOB_NONCE=<the record's nonce>
//                   in their environment: what proves a group is this job's before a signal
//   exit_code       written by the supervisor when the training ends (128+N: killed by signal N)
//   timed_out, cancel_requested   markers that explain a signal
#pragma once

#include <string>

namespace parity::run {

// bash -c kLauncher parity-launch <supervisor script> <job dir> <log> <timeout_s> <cwd> <nonce> -- argv...
// Creates the job dir, starts the supervisor detached and prints its pid.
inline constexpr const char* kLauncher = R"SH(
sup=$1; d=$2; shift 2
mkdir -p -- "$d" && d=$(cd -- "$d" && pwd) || { echo "cannot create job directory $2" >&2; exit 90; }
PARITY_JOB_NONCE=$4 setsid nohup bash -c "$sup" parity-job "$d" "$@" > /dev/null 2>&1 < /dev/null &
echo "$!"
)SH";

// bash -c kSupervisor parity-job <abs job dir> <log> <timeout_s> <cwd> <nonce> -- argv...
inline constexpr const char* kSupervisor = R"SH(
d=$1; log=$2; t=$3; wd=$4; export PARITY_JOB_NONCE=$5; shift 6
echo "$$" > "$d/supervisor.pid"
case $log in /*) ;; *) log=$d/$log ;; esac
if ! cd -- "$wd" 2>/dev/null; then
  echo "parity: cannot enter the working directory $wd" >> "$log"
  echo 127 > "$d/exit_code"
  exit 0
fi
setsid "$@" >> "$log" 2>&1 < /dev/null &
c=$!
echo "$c" > "$d/pid.tmp" && mv -f "$d/pid.tmp" "$d/pid"
if [ "$t" -gt 0 ] 2>/dev/null; then
  start=$(date +%s); term_at=
  while kill -0 "$c" 2>/dev/null; do
    now=$(date +%s)
    if [ -z "$term_at" ] && [ $((now - start)) -ge "$t" ]; then
      : > "$d/timed_out"; kill -TERM -- "-$c" 2>/dev/null; term_at=$now
    elif [ -n "$term_at" ] && [ $((now - term_at)) -ge 15 ]; then
      kill -KILL -- "-$c" 2>/dev/null
    fi
    sleep 1
  done
fi
wait "$c"; rc=$?
echo "$rc" > "$d/exit_code.tmp" && mv -f "$d/exit_code.tmp" "$d/exit_code"
)SH";

// The checks kStatus and kCancel share.
inline constexpr const char* kOurs = R"SH(
# carries P: whether process P (> 1) has this job's nonce in its environment (readable only
# by its owner; set at its start, so no other process can have it).
carries() {
  case $1 in ''|*[!0-9]*) return 1 ;; esac
  [ "$1" -gt 1 ] && [ -n "$nonce" ] || return 1
  tr '\0' '\n' 2>/dev/null < "/proc/$1/environ" | grep -qxF "PARITY_JOB_NONCE=$nonce"
}
# ours G: whether process group G has a process that carries the nonce; the leader is
# looked at first, the other members only once it is gone.
ours() {
  local g=$1 s p rest
  case $g in ''|*[!0-9]*) return 1 ;; esac
  [ "$g" -gt 1 ] && [ -n "$nonce" ] || return 1
  for s in "/proc/$g/stat" /proc/[0-9]*/stat; do
    read -r rest 2>/dev/null < "$s" || continue
    rest=${rest##*) }
    set -- $rest
    [ "$3" = "$g" ] || continue
    p=${s#/proc/}; p=${p%/stat}
    carries "$p" && return 0
  done
  return 1
}
)SH";

// bash -c kStatus parity-status <job dir> <log> <offset> <supervisor pid from the launcher> <nonce>
// key=value lines, then "@@log" and the log from byte <offset> (at most 4 MiB). The exit
// code is read before the log, so once it is there the log bytes that follow are complete.
// A negative offset skips the log (a local job's log is read directly). group_alive is 1
// only for a group that is this job's (ours).
inline const std::string kStatus = std::string(kOurs) + R"SH(
d=$1; log=$2; off=$3; nonce=$5
case $log in /*) ;; *) log=$d/$log ;; esac
sup=$(cat "$d/supervisor.pid" 2>/dev/null); sup=${sup:-$4}; pid=$(cat "$d/pid" 2>/dev/null)
echo "exists=$([ -d "$d" ] && echo 1 || echo 0)"
echo "pid=$pid"
echo "supervisor_alive=$(carries "$sup" && echo 1 || echo 0)"
echo "group_alive=$(ours "$pid" && echo 1 || echo 0)"
echo "exit_code=$(cat "$d/exit_code" 2>/dev/null)"
echo "timed_out=$([ -e "$d/timed_out" ] && echo 1 || echo 0)"
echo "cancel_requested=$([ -e "$d/cancel_requested" ] && echo 1 || echo 0)"
echo "finished=$(stat -c %Y "$d/exit_code" 2>/dev/null)"
echo "@@log"
[ "$off" -ge 0 ] && tail -c +$((off + 1)) "$log" 2>/dev/null | head -c 4194304
exit 0
)SH";

// bash -c kCancel parity-cancel <job dir> <grace_s> <nonce>
// SIGTERM to the training's process group, SIGKILL to what is left of it after the grace
// period; returns once the group is gone and the supervisor has recorded the exit status.
// A group that is not this job's (ours) gets no signal: exit 6.
inline const std::string kCancel = std::string(kOurs) + R"SH(
d=$1; grace=$2; nonce=$3
pid=$(cat "$d/pid" 2>/dev/null)
[ -n "$pid" ] || { echo "no pid recorded in $d" >&2; exit 3; }
if ! ours "$pid"; then
  [ -e "$d/exit_code" ] && exit 0
  echo "process group $pid is not one parity started for this job (no process of it carries the job's nonce); no signal sent" >&2
  exit 6
fi
: > "$d/cancel_requested"
kill -TERM -- "-$pid" 2>/dev/null
i=0
while ours "$pid" && [ "$i" -lt $((grace * 5)) ]; do sleep 0.2; i=$((i + 1)); done
ours "$pid" && kill -KILL -- "-$pid" 2>/dev/null
i=0
while [ ! -e "$d/exit_code" ] && [ "$i" -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
exit 0
)SH";

// bash -c kMoveDir parity-move <from> <to>: renames a directory, creating the parent of <to>.
inline constexpr const char* kMoveDir = R"SH(
[ -d "$1" ] || { echo "$1 does not exist" >&2; ls -la "$(dirname -- "$1")" >&2 2>/dev/null; exit 4; }
[ -e "$2" ] && { echo "$2 already exists" >&2; exit 5; }
mkdir -p -- "$(dirname -- "$2")" && mv -T -- "$1" "$2"
)SH";

}  // namespace parity::run
