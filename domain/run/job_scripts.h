// The fixed scripts behind a job, the same on this machine and on an SSH host, so local and
// remote jobs share one implementation. Every value reaches them as a positional parameter,
// never as shell text. A job directory on the executing host holds:
//   supervisor.pid  the detached supervisor (its own session: survives parity and the SSH
//                   connection that started it)
//   pid             the training process, leader of its own process group (what cancel kills)
//   exit_code       written by the supervisor when the training ends (128+N: killed by signal N)
//   timed_out, cancel_requested   markers that explain a signal
#pragma once

namespace parity::run {

// bash -c kLauncher parity-launch <supervisor script> <job dir> <log> <timeout_s> <cwd> -- argv...
// Creates the job dir, starts the supervisor detached and prints its pid.
inline constexpr const char* kLauncher = R"SH(
sup=$1; d=$2; shift 2
mkdir -p -- "$d" && d=$(cd -- "$d" && pwd) || { echo "cannot create job directory $2" >&2; exit 90; }
setsid nohup bash -c "$sup" parity-job "$d" "$@" > /dev/null 2>&1 < /dev/null &
echo "$!"
)SH";

// bash -c kSupervisor parity-job <abs job dir> <log> <timeout_s> <cwd> -- argv...
inline constexpr const char* kSupervisor = R"SH(
d=$1; log=$2; t=$3; wd=$4; shift 5
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

// bash -c kStatus parity-status <job dir> <log> <offset> <supervisor pid from the launcher>
// key=value lines, then "@@log" and the log from byte <offset> (at most 4 MiB). The exit
// code is read before the log, so once it is there the log bytes that follow are complete.
// A negative offset skips the log (a local job's log is read directly).
inline constexpr const char* kStatus = R"SH(
d=$1; log=$2; off=$3
case $log in /*) ;; *) log=$d/$log ;; esac
sup=$(cat "$d/supervisor.pid" 2>/dev/null); sup=${sup:-$4}; pid=$(cat "$d/pid" 2>/dev/null)
echo "exists=$([ -d "$d" ] && echo 1 || echo 0)"
echo "pid=$pid"
echo "supervisor_alive=$([ -n "$sup" ] && kill -0 "$sup" 2>/dev/null && echo 1 || echo 0)"
echo "group_alive=$([ -n "$pid" ] && kill -0 -- "-$pid" 2>/dev/null && echo 1 || echo 0)"
echo "exit_code=$(cat "$d/exit_code" 2>/dev/null)"
echo "timed_out=$([ -e "$d/timed_out" ] && echo 1 || echo 0)"
echo "cancel_requested=$([ -e "$d/cancel_requested" ] && echo 1 || echo 0)"
echo "finished=$(stat -c %Y "$d/exit_code" 2>/dev/null)"
echo "@@log"
[ "$off" -ge 0 ] && tail -c +$((off + 1)) "$log" 2>/dev/null | head -c 4194304
exit 0
)SH";

// bash -c kCancel parity-cancel <job dir> <grace_s>
// SIGTERM to the training's process group, SIGKILL to what is left of it after the grace
// period; returns once the group is gone and the supervisor has recorded the exit status.
inline constexpr const char* kCancel = R"SH(
d=$1; grace=$2
: > "$d/cancel_requested"
pid=$(cat "$d/pid" 2>/dev/null)
[ -n "$pid" ] || { echo "no pid recorded in $d" >&2; exit 3; }
kill -TERM -- "-$pid" 2>/dev/null
i=0
while kill -0 -- "-$pid" 2>/dev/null && [ "$i" -lt $((grace * 5)) ]; do sleep 0.2; i=$((i + 1)); done
kill -0 -- "-$pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null
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
