#!/usr/bin/env bash
# A run's gateway is a fork of the gateway server (olivares-gateway
# --serve) that its runner's fork server started (docs/gateway.md), through
# nginx, on namespaces: the servers stand beside the executor's fork
# servers; a run's gateway is a child of one of them, not of its runner,
# and is gone with its directory when the run ends, also when the run is
# cancelled while its gateway waits on a mock's delay; with every server
# killed, the next runs still complete (their gateways started by exec) and
# servers come back.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1
M=/v1/m/sandbox

need_os_agent httpagent "gateway server"
if [[ ! -x /usr/bin/python3 ]]; then
	ok "gateway server: skipped (no /usr/bin/python3)"
	done_testing
fi
module_on "$OLV_ADMIN_TOKEN" || exit 1
ED=$OLV_EDITOR_TOKEN

ok_if() { # ok_if DESC COMMAND...: ok when COMMAND succeeds
	local d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
# stack_tree: the pids of this stack's executors and pool and of all their
# descendants (another stack on the host has gateway servers of its own)
stack_tree() {
	cat "$OLIVARES_DATA"/run/olivares-executor-*.pid "$OLIVARES_DATA"/run/olivares-fcgi.pid 2>/dev/null >"$E2E_TMP/roots"
	ps -eo pid=,ppid= | awk 'NR == FNR { in_[$1] = 1; next }
		{ parent[$1] = $2 }
		END {
			do {
				more = 0
				for (p in parent)
					if (!(p in in_) && (parent[p] in in_)) { in_[p] = 1; more = 1 }
			} while (more)
			for (p in in_) print p
		}' "$E2E_TMP/roots" -
}
# servers: the stack's gateway servers; taken: their children that took a
# run (each leads a process group of its own), with their parents' pids
servers() {
	stack_tree >"$E2E_TMP/tree"
	ps -eo pid=,pgid=,args= | awk 'NR == FNR { t[$1] = 1; next }
		($1 in t) && $3 == "olivares-gateway" && $4 == "--serve" && $1 != $2 { print $1 }' "$E2E_TMP/tree" -
}
taken() {
	stack_tree >"$E2E_TMP/tree"
	ps -eo pid=,pgid=,ppid=,args= | awk 'NR == FNR { t[$1] = 1; next }
		($1 in t) && $4 == "olivares-gateway" && $5 == "--serve" && $1 == $2 { print $1, $3 }' "$E2E_TMP/tree" -
}
# gateway_dirs: the run directories of this stack's runners (named with the
# runner's pid: olivares-gateway-PID-XXXXXX), in /tmp: a runner starts with
# an empty environment, so no TMPDIR of this test's reaches it
gateway_dirs() {
	local d pid
	stack_tree >"$E2E_TMP/tree"
	for d in /tmp/olivares-gateway-*; do
		[[ -d $d ]] || continue
		pid=${d##*/olivares-gateway-}
		pid=${pid%%-*}
		grep -qx "$pid" "$E2E_TMP/tree" && printf '%s\n' "$d"
	done
	return 0
}
wait_for() { # wait_for SECONDS COMMAND...: until COMMAND succeeds
	local until=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < until)) || return 1
		sleep 0.2
	done
}

req "$ED" POST $M/scenarios '{"name":"gateway-server","steps":[{"key":"tool","input":"tool ada"}],"mocks":[{"http":{"method":"GET","url":"http://tools.example.com/search?q=ada"},"response":{"status":200,"body":"found ada"}}]}'
is_status "a scenario with an HTTP mock" 201
SID=$(jqb '.id // empty')
req "$ED" POST $M/scenarios '{"name":"gateway-server-slow","steps":[{"key":"tool","input":"tool ada"}],"mocks":[{"http":{"method":"GET","url":"http://tools.example.com/search?q=ada"},"response":{"status":200,"body":"found ada"},"delay_ms":20000}]}'
is_status "a scenario whose HTTP mock answers after 20 s" 201
SLOW=$(jqb '.id // empty')

run_tool() { # run_tool DESC: one run of SID, completed, its GET answered by the mock
	req "$ED" POST "$M/scenarios/$SID/runs" '{"backend":"namespaces","variant":"httpagent"}'
	is "$1: completed, isolated" "201 completed true" "$STATUS $(jqb '"\(.status) \(.isolated)"')"
	req "$ED" GET "$M/runs/$(jqb '.id')/outputs"
	is "$1: the GET answered by the mock" "tool: 200 found ada" "$(jqb '.outputs[0].output')"
}

run_tool "a run with a gateway"
n=$(servers | wc -l)
ok_if "gateway servers stand beside the fork servers ($n)" test "$n" -ge 1
is "no gateway is left once its run has ended" "" "$(taken)"

E2E_NO_WAIT=1 req "$ED" POST "$M/scenarios/$SLOW/runs" '{"backend":"namespaces","variant":"httpagent"}'
is_status "a run whose gateway waits on a delay is queued" 202
RID=$(jqb '.id // empty')
has_taken() { [[ -n $(taken) ]]; }
if wait_for 30 has_taken; then
	read -r gpid gparent < <(taken)
	is "its gateway is a child of a gateway server, not of its runner" \
		"olivares-gateway --serve" "$(ps -o args= -p "$gparent")"
	GDIRS=$(gateway_dirs)
	ok_if "its directory is there" test -n "$GDIRS"
else
	not_ok "the run's gateway was never seen"
	gpid=
	GDIRS=
fi
req "$ED" POST "$M/runs/$RID/cancel"
is_status "the run is cancelled while its gateway waits" 200
no_taken() { [[ -z $(taken) ]]; }
ok_if "its gateway is gone" wait_for 20 no_taken
no_dirs() {
	local d
	for d in $GDIRS; do [[ ! -e $d ]] || return 1; done
}
ok_if "and its directory with it" wait_for 20 no_dirs
[[ -n $gpid ]] && ok_if "the gateway's pid is gone" wait_for 5 test ! -e "/proc/$gpid"

# every server of the stack killed: the fork servers' spares exec their
# gateways, and
# the fork servers start new servers
for p in $(servers); do kill -KILL "$p" 2>/dev/null || true; done
no_servers() { [[ -z $(servers) ]]; }
wait_for 5 no_servers || true
run_tool "the run after the gateway servers were killed"
run_tool "the next run"
has_servers() { [[ -n $(servers) ]]; }
ok_if "gateway servers are back" wait_for 20 has_servers
run_tool "a run on the new servers"
is "no gateway is left" "" "$(taken)"

done_testing
