#!/usr/bin/env bash
# t0970: kill -9 of every process of the stack under load. For each kind of
# process in turn (an API worker, the API master, the executor master, an
# executor slot, a runner, a fork server, an nginx worker, nginx's master,
# and PostgreSQL's postmaster when the stack runs on one this test can
# restart), runs are POSTed in a loop (a scenario of 3 steps whose mocks
# wait 150 ms, on inproc-mock, and every fourth run on namespaces when its
# preflight passes), the process is killed with SIGKILL in the middle of
# that load, the load goes on a little, then stops. The stack must come
# back by itself, or with one `scripts/stack up` for the kinds nothing
# restarts (the test says which), and then every run whose POST was
# acknowledged (201 or 202 with an id) must be found (0 lost) and end
# terminal (0 stuck) within a generous bound (the lease + 30 s), every
# completed run must have as many outputs as steps with distinct seqs (0
# executed twice), and every failed run must carry a reason that names
# what happened to it.
#
# Processes are found through this stack's pid files and /proc (parents,
# command lines), never by name alone: other stacks run on this host.
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
. "$OLV_ROOT/scripts/lib/common.sh"
e2e_require
need_frontend nginx "kill -9 of nginx and the pool"
M=/v1/m/sandbox
STACK=$OLV_ROOT/scripts/stack
ED=$OLV_EDITOR_TOKEN
RUN=$OLIVARES_DATA/run

if [[ -z ${OLV_SLOW_SECONDS:-} || ! -s $RUN/olivares-fcgi.pid ]]; then
	echo "# skip - this stack was not started by run.sh --fresh (its processes are not this test's to kill)"
	ok "kill -9 under load: skipped (not a run.sh --fresh stack)"
	done_testing
fi
# whatever happens below, leave the stack up for the next test
trap '"$STACK" status >/dev/null 2>&1 || "$STACK" up >/dev/null 2>&1; rm -rf "$E2E_TMP"' EXIT

LEASE=$("$OLIVARES_BUILD/olivares-fcgi" --check-config 2>/dev/null |
	awk '/^\[/{s=$0} s=="[executor]" && $1=="lease_seconds" {print $3}')
[[ $LEASE =~ ^[0-9]+$ ]] || LEASE=15
SETTLE=$((LEASE + 30))
NS=0
if [[ $(uname -s) == Linux ]] && "$OLIVARES_BUILD/olivares-runner" --preflight namespaces >/dev/null 2>&1; then
	NS=1
else
	echo "# note - the namespaces backend's preflight fails here: the load is inproc-mock only"
fi

module_on "$OLV_ADMIN_TOKEN" || exit 1
mock() { printf '{"resource":"tool:%s","response":"answer %s","delay_ms":150}' "$1" "$1"; }
req "$ED" POST $M/scenarios "{\"name\":\"t0970-kill9\",\"steps\":[{\"key\":\"a\",\"input\":\"tool:a\"},{\"key\":\"b\",\"input\":\"tool:b\"},{\"key\":\"c\",\"input\":\"tool:c\"}],\"mocks\":[$(mock a),$(mock b),$(mock c)]}"
is_status "a scenario of 3 slow steps" 201
SID=$(jqb '.id // empty')
[[ -n $SID ]] || done_testing

# ---- this stack's processes --------------------------------------------------
children() { cat /proc/"$1"/task/*/children 2>/dev/null; }
comm_of() {
	local c
	read -r c <"/proc/$1/comm" 2>/dev/null && printf '%s\n' "$c"
}
pgid_of() {
	local s
	local -a f
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	read -r -a f <<<"${s##*) }"
	echo "${f[2]}"
}
has_arg() { tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | grep -qx -- "$2"; }
# pidfile_pid FILE COMM: the live process FILE names, if it has that name
pidfile_pid() {
	local p
	p=$(tr -dc '0-9' <"$1" 2>/dev/null)
	[[ -n $p && $(comm_of "$p") == "$2" ]] && ! olv_proc_gone "$p" && echo "$p"
}
fcgi_master() { pidfile_pid "$RUN/olivares-fcgi.pid" olivares-fcgi; }
exec_master() { pidfile_pid "$RUN/olivares-executor-1.pid" olivares-execut; }
nginx_master() { pidfile_pid "$RUN/nginx.pid" nginx; }
kids_named() {
	local c
	for c in $(children "$1"); do [[ $(comm_of "$c") == "$2" ]] && echo "$c"; done
}
slots() { local m; m=$(exec_master) && kids_named "$m" olivares-execut; }
servers() {
	local s c
	for s in $(slots); do
		for c in $(children "$s"); do has_arg "$c" --serve && echo "$c"; done
	done
}
# a runner at work: a fork server's child that leads its own process group
# (not one that has exited and waits to be reaped)
runner_of() {
	local c
	for c in $(children "$1"); do
		[[ $(pgid_of "$c") == "$c" ]] && ! olv_proc_gone "$c" && echo "$c" && return 0
	done
	return 1
}

# find_victim KIND: VICTIM, a process of that kind of this stack (at work
# when the kind can be: the executor master, a slot or a fork server while
# one of its slots runs a run), waiting at most 15 s
find_victim() {
	local give_up=$((SECONDS + 15)) s f r
	VICTIM=
	while ((SECONDS < give_up)); do
		case $1 in
		api-worker) VICTIM=$(kids_named "$(fcgi_master)" olivares-fcgi | head -n 1) ;;
		api-master) VICTIM=$(fcgi_master) ;;
		executor-master | executor-slot | fork-server | runner)
			for s in $(slots); do
				for f in $(children "$s"); do
					has_arg "$f" --serve || continue
					r=$(runner_of "$f") || continue
					case $1 in
					executor-master) VICTIM=$(exec_master) ;;
					executor-slot) VICTIM=$s ;;
					fork-server) VICTIM=$f ;;
					runner) VICTIM=$r ;;
					esac
					break 2
				done
			done
			;;
		nginx-worker) VICTIM=$(kids_named "$(nginx_master)" nginx | head -n 1) ;;
		nginx-master) VICTIM=$(nginx_master) ;;
		postgresql) VICTIM=$PG_PID ;;
		esac
		[[ -n $VICTIM ]] && return 0
		sleep 0.02
	done
	return 1
}

# ---- PostgreSQL: the postmaster of a cluster olv_pg_start made -------------
# (its command line names -D DIR/data and unix_socket_directories=DIR), on
# the port of OLIVARES_DSN; PG_WHY says why not when there is none
PG_PID='' PG_DATA='' PG_OPTS='' PG_WHY=''
find_postmaster() {
	local port p a d sockdir opts
	if [[ -z ${OLIVARES_DSN:-} ]]; then
		PG_WHY="the stack runs on SQLite"
		return 1
	fi
	port=$(printf '%s\n' "$OLIVARES_DSN" | tr ';' '\n' | sed -n 's/^Port=\([0-9]*\)$/\1/Ip' | head -n 1)
	if [[ -z $port || $OLIVARES_DSN != *Servername=127.0.0.1* ]]; then
		PG_WHY="OLIVARES_DSN names no PostgreSQL on 127.0.0.1 with a port"
		return 1
	fi
	for p in $(pgrep -x postgres 2>/dev/null); do
		has_arg "$p" "port=$port" || continue
		d='' sockdir='' opts=''
		local -a args=()
		mapfile -d '' -t args <"/proc/$p/cmdline" 2>/dev/null || continue
		for ((a = 1; a < ${#args[@]}; a++)); do
			if [[ ${args[a]} == -D ]]; then
				d=${args[a + 1]:-}
				a=$((a + 1))
				continue
			fi
			[[ ${args[a]} == unix_socket_directories=* ]] && sockdir=${args[a]#*=}
			opts+="${opts:+ }${args[a]}"
		done
		if [[ -n $d && -n $sockdir && $d == "$sockdir/data" && -f $d/postmaster.pid ]]; then
			PG_PID=$p PG_DATA=$d PG_OPTS=$opts
			return 0
		fi
	done
	PG_WHY="no PostgreSQL on port $port that this test's helpers started (olv_pg_start) and can restart"
	return 1
}
pg_restart() {
	local bin i
	bin=$(olv_pg_bindir) || return 1
	# the backends of the killed postmaster see it gone and exit; until
	# then its shared memory is in use and the start is refused: retried
	for ((i = 0; i < 30; i++)); do
		if olv_pg_as "$bin/pg_ctl" -D "$PG_DATA" -l "$(dirname "$PG_DATA")/postgres.log" -w -t 30 \
			-o "$PG_OPTS" start >"$E2E_TMP/pg_ctl.log" 2>&1; then
			return 0
		fi
		sleep 1
	done
	cat "$E2E_TMP/pg_ctl.log" >&2
	return 1
}

# ---- load ----------------------------------------------------------------------
# load_loop FILE STOP: POST runs until STOP exists, one line per POST in FILE:
# "HTTP-STATUS ID-or-- BACKEND"
load_loop() {
	local file=$1 stop=$2 n=0 code id backend
	while [[ ! -e $stop ]]; do
		n=$((n + 1))
		backend=inproc-mock
		((NS && n % 4 == 0)) && backend=namespaces
		code=$(curl -s -o "$file.body" -w '%{http_code}' -X POST --max-time 30 \
			-H "Authorization: Bearer $ED" -H 'Content-Type: application/json' \
			--data "{\"backend\":\"$backend\"}" "$OLIVARES_URL$M/scenarios/$SID/runs" 2>/dev/null) || true
		id=$(jq -r '.id // empty' "$file.body" 2>/dev/null)
		printf '%s %s %s\n' "${code:-000}" "${id:--}" "$backend" >>"$file"
		sleep 0.15
	done
}

# the stack answers and runs a run to its end (a probe, not counted)
stack_works() {
	local code
	"$STACK" status >/dev/null 2>&1 || return 1
	code=$(curl -s -o "$E2E_TMP/probe.json" -w '%{http_code}' -X POST --max-time 40 \
		-H "Authorization: Bearer $ED" -H 'Content-Type: application/json' -H 'Prefer: wait=30' \
		--data '{"backend":"inproc-mock"}' "$OLIVARES_URL$M/scenarios/$SID/runs" 2>/dev/null) || true
	[[ $code == 201 && $(jq -r .status "$E2E_TMP/probe.json" 2>/dev/null) == completed ]]
}

REASONS='^(executor [^ ]+ lost: no heartbeat for [0-9]+ s|executor [^ ]+ stopped before the run ended|runner killed by SIGKILL|runner exit status lost: |no live executor offers backend )'

# one KIND HOW EXPECT: kill -9 of a process of KIND under load; HOW is
# "itself" (nothing needs to be done) or "up" (one scripts/stack up);
# EXPECT, when not empty, a reason at least one failed run must have
# (the run that the killed process held)
one() {
	local kind=$1 how=$2 expect=$3 log=$E2E_TMP/load-$1 stop=$E2E_TMP/stop-$1 l1 l2
	local give_up ids pending id st sd total n seqs reason lost=0 stuck=0 twice=0 badwhy=0
	local completed=0 failed=0 other=0 seen_expect=0 acked rc came what tries
	local -a left=()
	: >"$log.1"
	: >"$log.2"
	load_loop "$log.1" "$stop" &
	l1=$!
	sleep 0.07
	load_loop "$log.2" "$stop" &
	l2=$!
	sleep 1.5
	# the kill at once: the run a runner or a slot holds takes under a
	# second; a process that ended between the look and the kill (kill
	# fails) is looked for again
	what=
	for ((tries = 0; tries < 20; tries++)); do
		find_victim "$kind" || break
		{ read -r what <"/proc/$VICTIM/comm"; } 2>/dev/null || continue
		kill -KILL "$VICTIM" 2>/dev/null && break
		what=
	done
	if [[ -z $what ]]; then
		not_ok "$kind: a process of that kind of this stack found and killed"
		touch "$stop"
		wait "$l1" "$l2"
		return
	fi
	echo "# $kind: killed pid $VICTIM ($what) after $(cat "$log.1" "$log.2" | wc -l) POSTs"
	sleep 1.5
	touch "$stop"
	wait "$l1" "$l2"

	# ---- back
	came=
	if [[ $kind == postgresql ]]; then
		if pg_restart; then ok "postgresql: restarted on its data dir"; else not_ok "postgresql: restarted on its data dir"; fi
	fi
	if [[ $how == itself ]]; then
		give_up=$((SECONDS + 30))
		until stack_works; do
			((SECONDS < give_up)) || break
			sleep 0.5
		done
		if stack_works; then
			came="by itself"
		else
			not_ok "$kind: the stack comes back by itself within 30 s (status: $(tr '\n' ' ' < <("$STACK" status 2>&1)))"
			"$STACK" up >/dev/null 2>&1
		fi
	else
		rc=0
		"$STACK" up >"$E2E_TMP/up-$kind.out" 2>"$E2E_TMP/up-$kind.err" || rc=$?
		if ((rc == 0)) && stack_works; then
			came="with one scripts/stack up"
		else
			not_ok "$kind: one scripts/stack up brings the stack back (exit $rc: $(short "$(cat "$E2E_TMP/up-$kind.err")"))"
		fi
	fi
	[[ -n $came ]] && ok "$kind: the stack is back $came"

	# ---- every acknowledged run: found, terminal, executed once
	ids=$(cat "$log.1" "$log.2" | awk '($1 == 201 || $1 == 202) && $2 != "-" { print $2 }' | sort -u)
	acked=$(printf '%s\n' "$ids" | grep -c . || true)
	echo "# $kind: $(cat "$log.1" "$log.2" | wc -l) POSTs, $acked acknowledged ($(cat "$log.1" "$log.2" | awk '{print $1}' | sort | uniq -c | tr -s ' \n' ' '))"
	if ((acked == 0)); then
		not_ok "$kind: some POSTs were acknowledged under load"
		return
	fi
	give_up=$((SECONDS + SETTLE))
	pending=$ids
	while [[ -n $pending ]]; do
		left=()
		for id in $pending; do
			req "$ED" GET "$M/runs/$id"
			st=$(jqb '.status // empty')
			case $STATUS:$st in
			200:completed | 200:failed | 200:cancelled | 200:degraded) ;;
			*) left+=("$id") ;;
			esac
		done
		pending=${left[*]:-}
		[[ -z $pending ]] && break
		((SECONDS < give_up)) || break
		sleep 1
	done
	for id in $ids; do
		req "$ED" GET "$M/runs/$id"
		if [[ $STATUS != 200 ]]; then
			lost=$((lost + 1))
			echo "# $kind: run $id: HTTP $STATUS"
			continue
		fi
		st=$(jqb .status)
		sd=$(jqb .steps_done)
		total=$(jqb .steps_total)
		reason=$(jqb '.reason // ""')
		case $st in
		queued | running)
			stuck=$((stuck + 1))
			echo "# $kind: run $id still $st"
			continue
			;;
		completed) completed=$((completed + 1)) ;;
		failed) failed=$((failed + 1)) ;;
		*) other=$((other + 1)) ;;
		esac
		req "$ED" GET "$M/runs/$id/outputs"
		n=$(jqb '.outputs | length')
		seqs=$(jqb '[.outputs[].seq] | unique | length')
		if [[ $st == completed && ($n != 3 || $seqs != 3 || $sd != 3 || $total != 3) ]] ||
			[[ $st != completed && ! ($n == "$seqs" && $n == "$sd" && $n -le 3) ]]; then
			twice=$((twice + 1))
			echo "# $kind: run $id $st: $n outputs, $seqs seqs, steps_done $sd of $total"
		fi
		if [[ $st == failed ]]; then
			if ! [[ $reason =~ $REASONS ]]; then
				badwhy=$((badwhy + 1))
				echo "# $kind: run $id failed: $(short "$reason")"
			fi
			[[ -n $expect && $reason =~ $expect ]] && seen_expect=1
		fi
	done
	echo "# $kind: $completed completed, $failed failed, $other other"
	is "$kind: 0 of $acked acknowledged runs lost" 0 "$lost"
	is "$kind: 0 runs stuck queued or running ${SETTLE} s after the stack is back (lease $LEASE s + 30 s)" 0 "$stuck"
	is "$kind: 0 runs with outputs other than their steps done (3 for a completed run)" 0 "$twice"
	is "$kind: 0 failed runs whose reason does not name what happened" 0 "$badwhy"
	if [[ -n $expect ]]; then
		is "$kind: the run the killed process held ended failed, \"$expect\"" 1 "$seen_expect"
	fi
}

one api-worker itself ""
one api-master up ""
one executor-master up "^executor [^ ]+ stopped before the run ended"
one executor-slot itself "^executor [^ ]+ lost: no heartbeat"
one runner itself "^runner killed by SIGKILL"
one fork-server itself "^runner exit status lost: "
one nginx-worker itself ""
one nginx-master up ""
if find_postmaster; then
	# shellcheck source=../../scripts/lib/pg.sh
	. "$OLV_ROOT/scripts/lib/pg.sh"
	one postgresql itself ""
else
	echo "# skip - PostgreSQL's own kill: $PG_WHY"
	ok "postgresql: skipped ($PG_WHY)"
fi

done_testing
