#!/usr/bin/env bash
# tests/scale/scale-out.sh: the scale-out shape on PostgreSQL, end to end.
#
# Two API pools (two olivares-fcgi, each with its own configuration and
# socket, one database) behind one nginx upstream of both sockets, and two
# executor hosts (scale-a, scale-b: an olivares-executor each, with its own
# [executor] host_id, the init of network and PID namespaces of its own,
# as in a container, reaching PostgreSQL through its unix socket
# directory). RUNS runs of a scenario whose mocks wait (STEPS steps of
# DELAY_MS each) are posted through nginx without Prefer (202s), a few at a
# time; mid-load host scale-a is killed outright (SIGKILL to its master,
# its namespace's init: its slots, fork servers and runners die with it).
# Checked: every run ends once and only once, the runs scale-a held end
# failed "executor <id> lost: no heartbeat for N s" within lease + lease/3
# + SLACK_S seconds of the kill, scale-b takes the rest, no run is left
# queued or running, none ran twice, and both pools and both hosts served.
#
# Prints "ok - …" / "not ok - …" lines and ends with "N passed, M failed";
# exit 1 on a failure. Everything it starts is stopped on every way out.
#
# Environment:
#   OLIVARES_BUILD  the binaries (default: as scripts/stack finds them)
#   OLIVARES_DSN    an empty PostgreSQL database to use (its role owning it);
#                   default: a throw-away server of scripts/lib/pg.sh. The
#                   executors' namespaces need its Servername to be the
#                   server's unix socket directory: with a TCP address they
#                   run in the host's namespaces (said in a "# note" line)
#   OLV_SCALE_RUNS (200), OLV_SCALE_SLOTS (4 per host), OLV_SCALE_LEASE (6),
#   OLV_SCALE_SLACK (5: seconds of slack on the lost runs' bound)
#   OLV_SCALE_KEEP=1 keeps the temp dir (logs, configurations)
set -uo pipefail

SCALE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# the e2e helpers: ok/not ok lines, req through nginx, jqb
# shellcheck source=../e2e/lib.sh
. "$SCALE_DIR/../e2e/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
. "$OLV_ROOT/scripts/lib/common.sh"
# shellcheck source=../../scripts/lib/pg.sh
. "$OLV_ROOT/scripts/lib/pg.sh"

RUNS=${OLV_SCALE_RUNS:-200}
SLOTS=${OLV_SCALE_SLOTS:-4}
LEASE=${OLV_SCALE_LEASE:-6}
SLACK_S=${OLV_SCALE_SLACK:-5}
STEPS=4
DELAY_MS=250
PARALLEL=4
BUILD=$(olv_build_dir)
HOSTS=(scale-a scale-b)

PASSES=0
# counted here too: lib.sh counts only the failures
ok() {
	PASSES=$((PASSES + 1))
	printf 'ok - %s\n' "$1"
}

T=$(mktemp -d "${TMPDIR:-/tmp}/olv-scale.XXXXXX")
chmod 0755 "$T"
declare -A POOL_PID=() HOST_PID=() HOST_ID=()
NGINX_PID_FILE=$T/nginx/nginx.pid
OWN_PG=0

# the pid of the first child of PID (the init of a host's PID namespace,
# child of its unshare; the master, child of that init), empty for none
child_of() {
	local c
	c=$(cat "/proc/$1/task/$1/children" 2>/dev/null) || return 0
	printf '%s\n' "${c%% *}"
}

# kids PID: the children of PID, one a line
kids() {
	local c
	c=$(cat "/proc/$1/task/$1/children" 2>/dev/null) || return 0
	# shellcheck disable=SC2086 # a list of pids
	printf '%s\n' $c
}

# host_procs HOST: the pids of the processes of an executor host: those of
# its PID namespace, else those of its session (one process each way: a
# walk of the process tree in the shell is seconds on a loaded machine)
declare -A HOST_NS=() HOST_SID=()
host_procs() {
	if ((NS)); then
		# HOST_NS is pid:[INODE]; the brackets match themselves
		find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/ns/pid' \
			-lname "pid:?${HOST_NS[$1]//[^0-9]/}?" 2>/dev/null |
			cut -d / -f 3
	else
		ps -e -o pid=,sid= | awk -v s="${HOST_SID[$1]}" '$2 == s { print $1 }'
	fi
}

# alive PID...: how many of the pids still run (a zombie has ended)
alive() {
	local p n=0
	for p in "$@"; do olv_proc_gone "$p" || n=$((n + 1)); done
	printf '%s\n' "$n"
}

# stop PID with SIGNAL and wait up to 15 s, then SIGKILL
stop_pid() {
	local pid=$1 sig=$2 i
	[[ -n $pid ]] || return 0
	kill "-$sig" "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 150; i++)); do
		olv_proc_gone "$pid" && return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
}

# shellcheck disable=SC2317 # called by the EXIT trap and at the end
stop_all() {
	local h p
	if [[ -s $NGINX_PID_FILE ]]; then
		stop_pid "$(<"$NGINX_PID_FILE")" QUIT
	fi
	for h in "${!HOST_PID[@]}"; do
		# SIGTERM to the master (the child of unshare, or of the shell
		# that leads the host's session): its slots end their runs and it
		# records its stop
		p=$(child_of "${HOST_PID[$h]}")
		[[ -z $p ]] || stop_pid "$p" TERM
		stop_pid "${HOST_PID[$h]}" TERM
		wait "${HOST_PID[$h]}" 2>/dev/null || true
		unset "HOST_PID[$h]"
	done
	for p in "${POOL_PID[@]}"; do
		stop_pid "$p" TERM
		wait "$p" 2>/dev/null || true
	done
	POOL_PID=()
	if ((OWN_PG)); then olv_pg_stop || true; fi
	OWN_PG=0
}
# shellcheck disable=SC2317
cleanup() {
	stop_all
	rm -rf "$E2E_TMP"
	if [[ ${OLV_SCALE_KEEP:-0} == 1 ]]; then
		echo "# kept $T" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

finish() {
	echo "$PASSES passed, $E2E_FAILS failed"
	((E2E_FAILS == 0))
	exit
}

# bail DESC: a step everything after depends on failed
bail() {
	not_ok "$1"
	for f in "$T"/log/*.log; do
		[[ -s $f ]] || continue
		echo "# --- tail of $f"
		tail -n 15 "$f" | sed 's/^/#   /'
	done
	finish
}

for b in olivares-fcgi olivares-admin olivares-executor olivares-runner; do
	[[ -x $BUILD/$b ]] || bail "$BUILD/$b is built"
done
mkdir -p "$T/log"

# --- the database
if [[ -z ${OLIVARES_DSN:-} ]]; then
	if ! olv_pg_start "$T/pg" olivares_scale >"$T/log/pg.log" 2>&1; then
		bail "PostgreSQL started (scripts/lib/pg.sh)"
	fi
	OWN_PG=1
	# through its unix socket: what the executors' network namespaces reach
	OLIVARES_DSN=$(olv_pg_socket_dsn olivares_scale)
fi
DSN=$OLIVARES_DSN
unset OLIVARES_DSN OLIVARES_DATA OLIVARES_CONF

# the executors go in network and PID namespaces of their own when the
# database is reached through a unix socket and unshare can make them
NS=1
if [[ ! $DSN =~ (^|;)Servername=/ ]]; then
	NS=0
	echo "# note: the DSN's Servername is not a socket directory: the executors run in the host's namespaces"
elif ! unshare -n -p -f true 2>"$T/log/unshare.log"; then
	NS=0
	echo "# note: unshare -n -p -f fails here ($(head -n 1 "$T/log/unshare.log")): the executors run in the host's namespaces"
fi

# conf NAME LINES...: the configuration file of a pool or a host
conf() {
	local name=$1
	shift
	mkdir -p "$T/$name"
	{
		printf '[server]\ndsn = %s\ndata_dir = %s\nsocket = %s\nworkers = 2\n' \
			"$DSN" "$T/$name" "$T/$name/olivares.sock"
		# all RUNS queued at once must pass the tenant's bound
		printf '[runner]\nmax_active_runs = %d\n' "$((RUNS + 50))"
		printf '[executor]\nlease_seconds = %d\nslots = %d\n' "$LEASE" "$SLOTS"
		printf '%s\n' "$@"
	} >"$T/$name/olivares.conf"
	chmod 0600 "$T/$name/olivares.conf"
}
conf pool-1
conf pool-2
for h in "${HOSTS[@]}"; do conf "$h" "host_id = $h"; done

if ! OLIVARES_CONF=$T/pool-1/olivares.conf "$BUILD/olivares-admin" migrate >"$T/log/admin.log" 2>&1; then
	bail "olivares-admin migrate on PostgreSQL ($(tail -n 1 "$T/log/admin.log"))"
fi
admin() { OLIVARES_CONF=$T/pool-1/olivares.conf "$BUILD/olivares-admin" "$@"; }
TENANT=scale-$$
if ! admin tenant create "$TENANT" >>"$T/log/admin.log" 2>&1 ||
	! admin module enable --tenant "$TENANT" sandbox >>"$T/log/admin.log" 2>&1 ||
	! TOKEN=$(admin token create --tenant "$TENANT" --role editor 2>>"$T/log/admin.log") ||
	[[ -z $TOKEN ]]; then
	bail "tenant, module and token made with olivares-admin"
fi
ok "database migrated; tenant $TENANT with the module on and an editor token"

# --- the two API pools, one after the other (each applies the migrations)
for p in pool-1 pool-2; do
	OLIVARES_CONF=$T/$p/olivares.conf "$BUILD/olivares-fcgi" </dev/null >"$T/log/$p.log" 2>&1 &
	POOL_PID[$p]=$!
	for ((i = 0; i < 150; i++)); do
		[[ -S $T/$p/olivares.sock ]] && break
		olv_proc_gone "${POOL_PID[$p]}" && break
		sleep 0.1
	done
	[[ -S $T/$p/olivares.sock ]] || bail "olivares-fcgi $p listens on its socket within 15 s"
done
ok "two olivares-fcgi pools up, each on its own socket and configuration"

# --- nginx: the stack's server block, its pool an upstream of both sockets
PORT=$(olv_free_port)
NGX=$T/nginx
mkdir -p "$NGX/tmp" "$T/run"
cp /etc/nginx/fastcgi_params /etc/nginx/mime.types "$NGX/"
user_line=
if ((EUID == 0)); then user_line="user $(id -un) $(id -gn);"; fi
{
	# which socket served each request: how the test knows both pools did
	printf 'log_format olivares_upstream %s;\n' "'\$upstream_addr \$status \"\$olivares_request\"'"
	printf 'upstream olivares_pools {\n\tserver unix:%s;\n\tserver unix:%s;\n}\n' \
		"$T/pool-1/olivares.sock" "$T/pool-2/olivares.sock"
	sed -e "/^[[:space:]]*#/!{s|@LISTEN@|127.0.0.1:$PORT|g; s|unix:@SOCKET@|olivares_pools|g; s|@WWW@|$OLV_ROOT/www|g}" \
		-e "/^[[:space:]]*#/!{s|@ACCESS_LOG@|$T/log/nginx-access.log|g; s|@READ_TIMEOUT@|60s|g}" \
		-e "s|include fastcgi_params;|include $NGX/fastcgi_params;|" \
		-e "s|^\([[:space:]]*\)access_log \(.*\) olivares;|&\n\1access_log $T/log/nginx-upstream.log olivares_upstream;|" \
		"$OLV_ROOT/nginx/olivares.conf.template"
} >"$NGX/olivares.conf"
sed -e "s|@USER_LINE@|$user_line|g" -e "s|@DATA@|$T|g" -e "s|@NGINX_DIR@|$NGX|g" -e "s|@WORKERS@|1|g" \
	-e "s|^pid .*|pid $NGINX_PID_FILE;|" \
	"$OLV_ROOT/nginx/nginx.conf.template" >"$NGX/nginx.conf"
if ! nginx -e "$T/log/nginx-error.log" -p "$NGX" -c "$NGX/nginx.conf" >"$T/log/nginx-start.log" 2>&1; then
	bail "nginx starts with an upstream of both sockets ($(tail -n 1 "$T/log/nginx-start.log"))"
fi
OLIVARES_URL=http://127.0.0.1:$PORT
for ((i = 0; i < 100; i++)); do
	req "" GET /healthz
	[[ $STATUS == 200 ]] && break
	sleep 0.1
done
is_status "GET /healthz through nginx's upstream" 200

# --- the two executor hosts
start_host() {
	local h=$1 log
	log=$T/log/$1.log
	if ((NS)); then
		# the master is the init of its PID namespace, as in a container
		# whose entry point it is: its death ends every process there
		OLIVARES_CONF=$T/$h/olivares.conf unshare -n -p -f --kill-child -- \
			"$BUILD/olivares-executor" </dev/null >"$log" 2>&1 &
	else
		# shellcheck disable=SC2016 # expanded by that shell
		OLIVARES_CONF=$T/$h/olivares.conf setsid bash -c '"$1" & wait $!' _ "$BUILD/olivares-executor" \
			</dev/null >"$log" 2>&1 &
	fi
	HOST_PID[$h]=$!
	# the session setsid made (its leader is that shell)
	HOST_SID[$h]=$!
}
for h in "${HOSTS[@]}"; do start_host "$h"; done
for h in "${HOSTS[@]}"; do
	for ((i = 0; i < 600; i++)); do
		HOST_ID[$h]=$(sed -n 's/^{.*"prog":"olivares-executor",.*"msg":"executor \([^ "]*\) registered"}$/\1/p' "$T/log/$h.log" | head -n 1)
		[[ -n ${HOST_ID[$h]} ]] && break
		olv_proc_gone "${HOST_PID[$h]}" && break
		sleep 0.1
	done
	[[ ${HOST_ID[$h]} == "$h"-* ]] || bail "executor host $h registered within 60 s"
	if ((NS)); then
		HOST_NS[$h]=$(readlink "/proc/$(child_of "${HOST_PID[$h]}")/ns/pid")
		[[ -n ${HOST_NS[$h]} && ${HOST_NS[$h]} != "$(readlink /proc/$$/ns/pid)" ]] ||
			bail "executor host $h runs in a PID namespace of its own"
	fi
done
A=${HOST_ID[scale-a]}
B=${HOST_ID[scale-b]}
if ((NS)); then
	is "executor hosts registered, each master pid 1 of its own network and PID namespace (PostgreSQL through its socket directory)" \
		"scale-a-1 scale-b-1" "$A $B"
else
	ok "executor hosts registered as $A and $B"
fi
admin executor list >"$T/executors-before.txt" 2>>"$T/log/admin.log"
is "olivares-admin executor list: both hosts live, offering inproc-mock, $SLOTS slots each" \
	"$A live $SLOTS scale-a|$B live $SLOTS scale-b" \
	"$(awk -F '\t' -v a="$A" -v b="$B" '($1 == a || $1 == b) && $3 ~ /(^|,)inproc-mock(,|$)/ { print $1, $2, $5, $6 }' "$T/executors-before.txt" | sort | paste -sd '|')"

# --- the scenario: STEPS steps, each answered by a mock after DELAY_MS
scenario=$(jq -cn --argjson n "$STEPS" --argjson d "$DELAY_MS" '{name: "scale-out",
	steps: [range(1; $n + 1) | {key: "step-\(.)", input: "tool:lookup-\(.)"}],
	mocks: [range(1; $n + 1) | {resource: "tool:lookup-\(.)", response: "answer \(.)", delay_ms: $d}]}')
req "$TOKEN" POST /v1/m/sandbox/scenarios "$scenario"
is_status "scenario with $STEPS steps of $DELAY_MS ms mocks created" 201
SCN=$(jqb .id)
[[ -n $SCN ]] || bail "the scenario has an id"

# runs_json: every run of the scenario as one JSON array, from the pages
# of 100 that RUNS runs fill (one jq for all: a process costs on a loaded
# machine, and the kill below should follow its look closely)
runs_json() {
	local off pages=()
	for ((off = 0; off < RUNS; off += 100)); do
		req "$TOKEN" GET "/v1/m/sandbox/runs?scenario=$SCN&limit=100&offset=$off"
		[[ $STATUS == 200 ]] || return 1
		mv "$BODY_FILE" "$T/page-$off.json"
		pages+=("$T/page-$off.json")
	done
	jq -s '[.[].runs[]]' "${pages[@]}"
}

# --- RUNS runs through nginx, PARALLEL at a time, no Prefer: 202 each
post_runs() {
	seq 1 "$RUNS" | xargs -P "$PARALLEL" -I@N@ curl -s -o "$T/posts/@N@.json" -w '%{http_code}\n' \
		-X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
		--data-binary '{}' --max-time 60 "$OLIVARES_URL/v1/m/sandbox/scenarios/$SCN/runs" \
		>"$T/post-status.txt" 2>"$T/log/post-curl.log"
}
mkdir -p "$T/posts"
post_runs &
POSTER=$!

# --- kill scale-a mid-load: once each host has completed a few runs and
# scale-a holds some running, and at most half the runs have ended
KILLED=0 a_done=0 b_done=0 a_running=0 ended=0
deadline=$((SECONDS + 120))
while ((SECONDS < deadline)); do
	look=$(date +%s.%N)
	if runs_json >"$T/runs-now.json"; then
		read -r a_done b_done a_running ended < <(jq -r --arg a "$A" --arg b "$B" '
			[(map(select(.status == "completed" and .executor == $a)) | length),
			 (map(select(.status == "completed" and .executor == $b)) | length),
			 (map(select(.status == "running" and .executor == $a)) | length),
			 (map(select(.status != "queued" and .status != "running")) | length)] | @tsv' "$T/runs-now.json")
		if ((a_done >= 3 && b_done >= 3 && a_running >= 1)); then
			init=$(child_of "${HOST_PID[scale-a]}")
			A_NPROCS=$(host_procs scale-a | wc -l)
			if ((NS)) && [[ -n $init ]]; then
				# the master, the namespace's init: the kernel kills
				# every process of the namespace with it
				kill -KILL "$init"
			else
				kill -KILL -- "-${HOST_PID[scale-a]}"
			fi
			KILL_AT=$(date +%s.%N)
			KILLED=1
			break
		fi
		((ended < RUNS / 2)) || break
	fi
	# the posts are over and every run has ended: too late
	if olv_proc_gone "$POSTER" && ((ended == $(jq length "$T/runs-now.json"))); then break; fi
	sleep 0.3
done
((KILLED)) || bail "scale-a killed mid-load (each host with 3 runs completed, scale-a running one, before half the runs ended; got $A completed ${a_done:-?}, $B completed ${b_done:-?}, $A running ${a_running:-?}, ended ${ended:-?})"
ok "scale-a killed (SIGKILL) mid-load: at a look $(awk -v a="$look" -v b="$KILL_AT" 'BEGIN { printf "%.1f", b - a }') s before, $a_done runs completed by $A and $b_done by $B, $a_running running on $A, $ended of $RUNS ended"
wait "${HOST_PID[scale-a]}" 2>/dev/null
unset "HOST_PID[scale-a]"
# the kernel ends a PID namespace's processes when its init dies: at
# once, but the ends are not awaited by kill(2); 5 s is plenty
for ((i = 0; i < 50; i++)); do
	mapfile -t left < <(host_procs scale-a)
	((${#left[@]} == 0)) && break
	sleep 0.1
done
is "none of scale-a's $A_NPROCS processes (master, slots, fork servers, runners) is left 5 s after the kill" 0 \
	"$(alive "${left[@]}")"

wait "$POSTER"
is "$RUNS runs posted through nginx without Prefer: every answer 202" "$RUNS 202" \
	"$(sort "$T/post-status.txt" | uniq -c | awk '{ printf "%s%s %s", sep, $1, $2; sep = ", " }')"
is "the $RUNS answers are $RUNS distinct queued runs" "$RUNS" \
	"$(cat "$T"/posts/*.json | jq -r 'select(.status == "queued") | .id' | sort -u | wc -l)"

# --- the end: nothing queued or running any more (each run takes about
# STEPS x DELAY_MS; the bound is generous)
deadline=$((SECONDS + 120))
while ((SECONDS < deadline)); do
	runs_json >"$T/runs-end.json" &&
		(($(jq 'map(select(.status == "queued" or .status == "running")) | length' "$T/runs-end.json") == 0)) && break
	sleep 1
done
R=$T/runs-end.json
is "$RUNS runs of the scenario are recorded" "$RUNS" "$(jq length "$R")"
is "0 runs left queued or running (bound: 120 s after the posts)" 0 \
	"$(jq 'map(select(.status == "queued" or .status == "running")) | length' "$R")"
is "every run ended completed or failed" "$RUNS" \
	"$(jq 'map(select(.status == "completed" or .status == "failed")) | length' "$R")"
is "every run's executor is one of the two hosts'" "$RUNS" \
	"$(jq --arg a "$A" --arg b "$B" 'map(select(.executor == $a or .executor == $b)) | length' "$R")"

# seconds since the epoch of an ISO time with milliseconds (jq)
EPOCH='def epoch: (.[0:19] + "Z" | fromdateiso8601) + ((.[20:23] // "0") | tonumber / 1000);'
lost=$(jq --arg a "$A" '[.[] | select(.status == "failed")] | length' "$R")
lost_a=$(jq --arg a "$A" '[.[] | select(.status == "failed" and .executor == $a)] | length' "$R")
is "the failed runs are all scale-a's" "$lost" "$lost_a"
if ((lost >= 1 && lost <= SLOTS)); then
	ok "$lost of scale-a's runs were lost (at least the one seen running, at most its $SLOTS slots)"
else
	not_ok "scale-a's lost runs: between 1 and $SLOTS (its slots), got $lost"
fi
is "each lost run's reason: executor $A lost: no heartbeat for N s" "$lost" \
	"$(jq --arg a "$A" '[.[] | select(.status == "failed") |
		select(.reason | test("^executor " + ($a | gsub("\\."; "\\.")) + " lost: no heartbeat for [0-9]+ s$"))] | length' "$R")"
bound=$(awk -v l="$LEASE" -v s="$SLACK_S" 'BEGIN { print l + l / 3 + s }')
late=$(jq -r --arg k "$KILL_AT" --argjson b "$bound" "$EPOCH"'
	[.[] | select(.status == "failed") | (.finished_at | epoch) - ($k | tonumber)] | max // 0' "$R")
if awk -v d="$late" -v b="$bound" 'BEGIN { exit !(d <= b) }'; then
	ok "the lost runs ended within $bound s of the kill (lease $LEASE + lease/3 + $SLACK_S s slack): the last after $(printf '%.1f' "$late") s"
else
	not_ok "the lost runs ended within $bound s of the kill (lease $LEASE + lease/3 + $SLACK_S s slack): the last after $late s"
fi
is "no lost run was ended before its lease had run out (finished_at - started_at >= $LEASE s)" 0 \
	"$(jq --argjson l "$LEASE" "$EPOCH"'[.[] | select(.status == "failed") |
		select((.finished_at | epoch) - (.started_at | epoch) < $l)] | length' "$R")"
is "scale-a completed nothing after its kill" 0 \
	"$(jq --arg a "$A" --arg k "$KILL_AT" "$EPOCH"'[.[] | select(.status == "completed" and .executor == $a) |
		select((.finished_at | epoch) > ($k | tonumber))] | length' "$R")"
is "scale-b completed every run but the lost ones and scale-a's before the kill" \
	"$((RUNS - lost))" "$(jq 'map(select(.status == "completed")) | length' "$R")"
is "every completed run: steps_done = steps_ok = steps_total = $STEPS" 0 \
	"$(jq --argjson n "$STEPS" '[.[] | select(.status == "completed") |
		select(.steps_done != $n or .steps_ok != $n or .steps_total != $n)] | length' "$R")"

# each run's outputs, read through nginx (PARALLEL at a time): once each
# step, in order; a lost run keeps the steps it recorded
mkdir -p "$T/outputs"
jq -r '.[].id' "$R" | xargs -P "$PARALLEL" -I@ID@ curl -s -o "$T/outputs/@ID@.json" -w '%{http_code}\n' \
	-H "Authorization: Bearer $TOKEN" --max-time 60 "$OLIVARES_URL/v1/m/sandbox/runs/@ID@/outputs" \
	>"$T/outputs-status.txt" 2>>"$T/log/post-curl.log"
is "every run's outputs read: $RUNS answers 200" "$RUNS 200" \
	"$(sort "$T/outputs-status.txt" | uniq -c | awk '{ printf "%s%s %s", sep, $1, $2; sep = ", " }')"
jq -n -r --argjson n "$STEPS" --slurpfile runs "$R" '
	([inputs | {key: (input_filename | split("/") | last | rtrimstr(".json")),
	            value: [.outputs[]?.seq]}] | from_entries) as $seqs
	| $runs[0][] | [range(1; (if .status == "completed" then $n else .steps_done end) + 1)] as $want
	| select($seqs[.id] != $want)
	| "\(.id) (\(.status), steps_done \(.steps_done)): outputs seq \($seqs[.id]), expected \($want)"' \
	"$T"/outputs/*.json >"$T/outputs-bad.txt"
is "every run's outputs are its steps once each in order ($STEPS for a completed run, steps_done for a lost one): no run executed twice" \
	0 "$(wc -l <"$T/outputs-bad.txt")"
head -n 5 "$T/outputs-bad.txt" | sed 's/^/# /'

# --- who served
a_before=$(jq --arg a "$A" --arg k "$KILL_AT" "$EPOCH"'[.[] | select(.status == "completed" and .executor == $a)] | length' "$R")
b_total=$(jq --arg b "$B" '[.[] | select(.status == "completed" and .executor == $b)] | length' "$R")
if ((a_before >= 3 && b_total >= 3)); then
	ok "both executor hosts ran runs: $A completed $a_before (all before the kill), $B $b_total"
else
	not_ok "both executor hosts ran runs (got $A $a_before, $B $b_total)"
fi
p1=$(grep -c -F "unix:$T/pool-1/olivares.sock " "$T/log/nginx-upstream.log" || true)
p2=$(grep -c -F "unix:$T/pool-2/olivares.sock " "$T/log/nginx-upstream.log" || true)
p1_posts=$(grep -F "unix:$T/pool-1/olivares.sock 202 \"POST /v1/m/sandbox/scenarios/" "$T/log/nginx-upstream.log" | grep -c '/runs"$' || true)
p2_posts=$(grep -F "unix:$T/pool-2/olivares.sock 202 \"POST /v1/m/sandbox/scenarios/" "$T/log/nginx-upstream.log" | grep -c '/runs"$' || true)
if ((p1_posts > 0 && p2_posts > 0 && p1_posts + p2_posts == RUNS)); then
	ok "both API pools queued runs (nginx's upstream log: pool-1 $p1_posts, pool-2 $p2_posts of the $RUNS posts; $p1 and $p2 requests in all)"
else
	not_ok "both API pools queued runs (nginx's upstream log: pool-1 $p1_posts, pool-2 $p2_posts posts, expected both > 0 and $RUNS in all)"
fi

admin executor list >"$T/executors-after.txt" 2>>"$T/log/admin.log"
is "olivares-admin executor list after the kill: $A lost, $B live" "$A lost|$B live" \
	"$(awk -F '\t' -v a="$A" -v b="$B" '$1 == a || $1 == b { print $1, $2 }' "$T/executors-after.txt" | sort | paste -sd '|')"
is "scale-b's log: it ended scale-a's $lost lost runs" "$lost" \
	"$(sed -n 's/^{.*"prog":"olivares-executor",.*"msg":"ended \([0-9]*\) runs of lost executors"}$/\1/p' "$T/log/scale-b.log" | awk '{ n += $1 } END { print n + 0 }')"

if grep -E -H 'AddressSanitizer|runtime error:|Segmentation|core dumped' "$T"/log/*.log >"$T/crashes.txt"; then
	not_ok "no crash or sanitizer report in the logs: $(head -n 3 "$T/crashes.txt" | tr '\n' '~')"
else
	ok "no crash or sanitizer report in the pools' and hosts' logs"
fi

# --- stop everything, and nothing is left
ngx=$(cat "$NGINX_PID_FILE" 2>/dev/null)
mapfile -t PROCS < <(host_procs scale-b
	for p in "${POOL_PID[@]}" $ngx; do
		echo "$p"
		kids "$p"
	done)
stop_all
is "every one of the ${#PROCS[@]} processes left at the end (pools, scale-b, nginx) has stopped" 0 "$(alive "${PROCS[@]}")"
finish
