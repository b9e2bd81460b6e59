# shellcheck shell=bash
# Shared helpers for scripts/*: repository paths, messages, free ports.
# Source it; it defines functions and OLV_ROOT, nothing runs.

OLV_ROOT=${OLV_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

olv_say() { printf '%s\n' "$*" >&2; }
olv_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# olv_abspath PATH: PATH made absolute (the path need not exist yet).
olv_abspath() {
	case $1 in
	/*) printf '%s\n' "$1" ;;
	*) printf '%s/%s\n' "$PWD" "${1#./}" ;;
	esac
}

# olv_port_busy PORT: true when something accepts TCP connections on
# 127.0.0.1:PORT.
olv_port_busy() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# olv_free_port: print a TCP port on 127.0.0.1 that nothing listens on now,
# random in 20000..32767: below Linux's ephemeral range (32768..60999), where
# the source port of any outgoing connection would make bind() fail. The
# caller retries if it loses a race.
olv_free_port() {
	local p i
	for ((i = 0; i < 200; i++)); do
		p=$((20000 + RANDOM % 12768))
		if ! olv_port_busy "$p"; then
			printf '%s\n' "$p"
			return 0
		fi
	done
	olv_die "no free TCP port found on 127.0.0.1"
}

# olv_build_dir: the directory holding the built binaries: $OLIVARES_BUILD,
# else the repository root when the binaries were built in tree, else
# <repo>/build.
olv_build_dir() {
	if [[ -n ${OLIVARES_BUILD:-} ]]; then
		olv_abspath "$OLIVARES_BUILD"
	elif [[ -x $OLV_ROOT/olivares-fcgi ]]; then
		printf '%s\n' "$OLV_ROOT"
	else
		printf '%s\n' "$OLV_ROOT/build"
	fi
}

# olv_pid_alive PIDFILE NAME [LOG]: print the pid and succeed when PIDFILE
# names a live process (not a zombie) whose name (/proc/PID/comm) is NAME
# (so a recycled pid is never taken for ours). With LOG, the log file the
# process writes: it must also hold LOG open (a pid reused by the same
# program of another data dir is not ours; taken on trust when its
# descriptors cannot be read) and its parent must have another name (a
# master, not a worker or slot that the pid went to).
olv_pid_alive() {
	local pidfile=$1 name=$2 log=${3:-} pid cmd ppid pcmd
	[[ -s $pidfile ]] || return 1
	pid=$(tr -dc '0-9' <"$pidfile")
	[[ -n $pid ]] || return 1
	# the process's own name (comm), exactly: a pid reused by another
	# program (a `tail -f` of the nginx log) is not the server
	[[ -r /proc/$pid/comm ]] || return 1
	{ read -r cmd <"/proc/$pid/comm"; } 2>/dev/null || return 1
	[[ $cmd == "$name" ]] || return 1
	# a zombie keeps its name: it is not a running server
	! olv_proc_gone "$pid" || return 1
	if [[ -n $log ]]; then
		olv_holds "$pid" "$log" || return 1
		ppid=$(olv_ppid "$pid") || return 1
		if { read -r pcmd <"/proc/$ppid/comm"; } 2>/dev/null && [[ $pcmd == "$name" ]]; then
			return 1
		fi
	fi
	printf '%s\n' "$pid"
}

# olv_ppid PID: the parent's pid
olv_ppid() {
	local stat
	local -a f
	{ read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
	# the fields after the ")" that closes the command name: state, ppid
	read -r -a f <<<"${stat##*) }"
	printf '%s\n' "${f[1]}"
}

# olv_holds PID FILE: true when PID has FILE open, or when its descriptors
# cannot be read (another user's process: not decided here). FILE is a
# plain path (no glob characters). One find for all the descriptors: a
# fork per descriptor takes seconds on a loaded machine.
olv_holds() {
	[[ -r /proc/$1/fd ]] || return 0
	[[ -n $(find "/proc/$1/fd" -maxdepth 1 -lname "$2" -print -quit 2>/dev/null) ]]
}

# olv_strays NAME LOG: the live processes named NAME (comm) that hold LOG
# open, one pid a line: what is left of a data dir's server whose pid file
# no longer names it (the workers of a master killed with SIGKILL keep the
# master's log as their stderr). LOG is a plain path (no glob characters);
# processes whose descriptors cannot be read are not listed.
olv_strays() {
	local fd pid c last=
	while IFS= read -r fd; do
		pid=${fd#/proc/}
		pid=${pid%%/*}
		[[ $pid != "$last" ]] || continue
		last=$pid
		{ read -r c <"/proc/$pid/comm"; } 2>/dev/null || continue
		[[ $c == "$1" ]] || continue
		olv_proc_gone "$pid" || printf '%s\n' "$pid"
	done < <(find /proc/[0-9]*/fd -maxdepth 1 -lname "$2" 2>/dev/null)
}

# olv_proc_gone PID: true when PID has exited. A zombie counts as gone:
# `kill -0` succeeds on a zombie, and a daemon's zombie (nginx, olivares-fcgi
# are children of init) lasts until init reaps it, which some inits do only
# every few seconds (measured: ~2 s on the test VMs' init).
olv_proc_gone() {
	local stat
	[[ -r /proc/$1/stat ]] || return 0
	stat=$(<"/proc/$1/stat") 2>/dev/null || return 0
	# state is the field after the ")" that closes the command name
	stat=${stat##*) }
	[[ ${stat%% *} == Z ]]
}
