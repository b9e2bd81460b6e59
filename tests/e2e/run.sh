#!/usr/bin/env bash
# tests/e2e/run.sh [--fresh] [tNNNN...]: run the end-to-end tests in order and
# print "N passed, M failed".
#
# Against a running stack: OLIVARES_URL and OLIVARES_DATA (and OLIVARES_PORT,
# OLIVARES_DSN, OLIVARES_BUILD, OLIVARES_CONF, OLIVARES_FRONTEND,
# OLIVARES_LAUNCHER as it was started with) in the environment; the admin
# token is read from $OLIVARES_DATA/admin_token unless OLV_ADMIN_TOKEN is set. With --fresh (or without OLIVARES_URL), a new stack
# is started on a free port with its data in a temp dir (on OLIVARES_DSN when
# set, else SQLite) and an OLIVARES_CONF of its own (backend policy, agents,
# scorer: see below), and stopped at the end; behind the front end
# OLIVARES_FRONTEND names (nginx, the default, or apache), its pool started
# as OLIVARES_LAUNCHER says (olivares-fcgi, the default, or spawn-fcgi): the
# tests of one web server's own answers skip under the other.
#
# Each test file prints "ok - …" / "not ok - …" lines; a file that exits
# non-zero without a "not ok" line counts as one failure.
set -euo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$E2E_DIR/../.." && pwd)
# shellcheck source=../../scripts/lib/common.sh
. "$ROOT/scripts/lib/common.sh"

fresh=0
declare -a only=()
for a in "$@"; do
	case $a in
	--fresh) fresh=1 ;;
	-h | --help)
		sed -n '2,18p' "$0"
		exit 0
		;;
	*) only+=("$a") ;;
	esac
done
[[ -n ${OLIVARES_URL:-} ]] || fresh=1

OLIVARES_BUILD=$(olv_build_dir)
export OLIVARES_BUILD
# the stack's front end and launcher: scripts/stack reads them, and so do
# the tests (lib.sh: OLV_FRONTEND)
export OLIVARES_FRONTEND=${OLIVARES_FRONTEND:-nginx} OLIVARES_LAUNCHER=${OLIVARES_LAUNCHER:-olivares-fcgi}
for b in olivares olivares-admin olivares-fcgi olivares-runner; do
	[[ -x $OLIVARES_BUILD/$b ]] || olv_die "$OLIVARES_BUILD/$b not found (build first, or set OLIVARES_BUILD)"
done
export PATH=$OLIVARES_BUILD:$PATH
# t0050-cli-offline.sh (the CLI helper's) finds the CLI through this
export OLIVARES_CLI=$OLIVARES_BUILD/olivares

own_dir=
cleanup() {
	if [[ -n $own_dir ]]; then
		"$ROOT/scripts/stack" down >/dev/null 2>&1 || true
		if [[ ${OLV_E2E_KEEP:-0} == 1 ]]; then
			echo "# kept $own_dir" >&2
		else
			rm -rf "$own_dir"
		fi
	fi
}
trap cleanup EXIT

if ((fresh)); then
	own_dir=$(mktemp -d "${TMPDIR:-/tmp}/olv-stack.XXXXXX")
	export OLIVARES_DATA=$own_dir/data
	# The backend policy and agents under test (t0900): tenant "demo" may
	# use all four backends (default inproc-mock, so the other tests see
	# the skeleton's behaviour), tenant $OLV_RESTRICTED_TENANT only
	# inproc-mock. The agents directory holds the example agent as
	# variant "profile", "slow" (t0420, t0930), "linger" (t0920) and two names
	# that must be refused: "escape", a symlink out of the directory, and
	# "dangling", one that climbs out to nothing. The scorer (t1000, t1100) is the builtin reference
	# adapter reading the suites in tests/fixtures/suites.
	OLV_AGENTS_DIR=$own_dir/agents
	OLV_SUITES_DIR=$ROOT/tests/fixtures/suites
	OLV_RESTRICTED_TENANT=olv-policy-restricted
	# t0900: a tenant whose configured default is not the built-in one
	OLV_DEFAULT_TENANT=olv-policy-default
	mkdir -p "$OLV_AGENTS_DIR"
	cp "$OLIVARES_BUILD/olivares-agent-profile-bot" "$OLV_AGENTS_DIR/profile"
	# t0495: the example agent of tool mocks as variant "tools"
	cp "$OLIVARES_BUILD/olivares-agent-tool-bot" "$OLV_AGENTS_DIR/tools"
	# t0498: a Python agent written on olivares_agent, as variant "pyagent"
	install -m 0755 "$ROOT/tests/fixtures/agents/sdk_agent.py" "$OLV_AGENTS_DIR/pyagent"
	# t0499: an agent that reaches its tools and model over HTTP(S) through
	# the run's gateway, as variant "httpagent"
	install -m 0755 "$ROOT/tests/fixtures/agents/http_agent.py" "$OLV_AGENTS_DIR/httpagent"
	# t0420, t0930: an agent that takes its time, a shell script run by
	# the jail's /bin/sh from the bound /usr. Its sleep's length is this
	# stack's own (another stack on the host has another), so that a test
	# counts and ends its own agents only; at most 8 s, inside the runs'
	# 10 s wall clock.
	OLV_SLOW_SECONDS=8.$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	printf '%s\n' '#!/bin/sh' "while IFS= read -r line <&3; do sleep $OLV_SLOW_SECONDS; echo '{\"type\":\"output\",\"output\":\"slow\"}' >&4; done" \
		>"$OLV_AGENTS_DIR/slow"
	chmod 0755 "$OLV_AGENTS_DIR/slow"
	# t0920: an agent that answers every step, then ignores the end of
	# its input (sleeps): killed at the end of its grace, and the run says so
	printf '%s\n' '#!/bin/sh' "while IFS= read -r line <&3; do echo '{\"type\":\"output\",\"output\":\"answered\"}' >&4; done" \
		'exec sleep 300' >"$OLV_AGENTS_DIR/linger"
	chmod 0755 "$OLV_AGENTS_DIR/linger"
	# t0490: an agent that logs on stdout and stderr around its protocol
	# lines (descriptors 3 and 4), markup and a terminal escape included
	printf '%s\n' '#!/bin/sh' 'echo "log: <b>start</b> & go"' \
		'while IFS= read -r line <&3; do echo "log: step on stdout"; echo "log: step on stderr" >&2; printf "log: \033[31mred\n"; echo "{\"type\":\"output\",\"output\":\"logged\"}" >&4; done' \
		'echo "log: end" >&2' >"$OLV_AGENTS_DIR/printer"
	chmod 0755 "$OLV_AGENTS_DIR/printer"
	# t1110: an agent right on even repeats of a comparison and wrong on
	# odd ones (OLIVARES_REPEAT), as variant "halfright", and one that
	# answers the same steps right every time, as variant "right"
	install -m 0755 "$ROOT/tests/fixtures/agents/half_right.sh" "$OLV_AGENTS_DIR/halfright"
	# shellcheck disable=SC2016 # $line and $out are the agent's own
	printf '%s\n' '#!/bin/sh' 'while IFS= read -r line <&3; do case $line in' \
		"*'\"input\":\"agent:user1@example.test\"'*) out='first synthetic account' ;;" \
		"*) out='second synthetic account' ;; esac" \
		'printf "{\"type\":\"output\",\"output\":\"%s\"}\n" "$out" >&4; done' >"$OLV_AGENTS_DIR/right"
	chmod 0755 "$OLV_AGENTS_DIR/right"
	ln -s /bin/sh "$OLV_AGENTS_DIR/escape"
	ln -s ../../x "$OLV_AGENTS_DIR/dangling"
	# t0950: tenants with a max_active_runs of their own (1, 1 and 2)
	OLV_SLOTS_TENANTS="olv-slots-b olv-slots-c olv-slots-d"
	# t0710: a tenant with a storage quota of 1 MiB
	OLV_QUOTA_TENANT=olv-quota
	# t0711: another, for concurrent creates on an empty tenant
	OLV_QUOTA_RACE_TENANT=olv-quota-race
	# t0712: another, for runs of one tenant going at once
	OLV_QUOTA_RUNS_TENANT=olv-quota-runs
	# t0720: a tenant whose runs are kept one day, purged every 2 s
	OLV_RETENTION_TENANT=olv-retention
	# t0500: a tenant whose runs may reach one host outside, a server
	# the test starts on the host's loopback at this port
	OLV_EGRESS_TENANT=olv-egress
	OLV_EGRESS_PORT=$(olv_free_port)
	# t0501: the credential the gateway adds for that host (this stack's
	# own value), in a file only the executor's user reads
	OLV_EGRESS_SECRET=olv-e2e-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
	OLV_EGRESS_SECRETS=$own_dir/egress-secrets.ini
	printf '[host 127.0.0.1:%s]\nheader = Authorization: Bearer %s\n' "$OLV_EGRESS_PORT" "$OLV_EGRESS_SECRET" \
		>"$OLV_EGRESS_SECRETS"
	chmod 0600 "$OLV_EGRESS_SECRETS"
	# cpu_seconds: on a slow host (a guest without /dev/kvm, where gVisor
	# runs on its ptrace platform) the sandbox's start and a Python agent's
	# import use more than the default 5 s of CPU; no test here reaches the
	# CPU limit on purpose (the unit suites do, with limits of their own)
	cat >"$own_dir/olivares.conf" <<-CONF
		[server]
		purge_interval_seconds = 2
		[runner]
		agents_dir = $OLV_AGENTS_DIR
		cpu_seconds = 30
		[tenant demo]
		backends = inproc-mock, namespaces, gvisor, firecracker
		default_backend = inproc-mock
		[tenant olv-slots-b]
		backends = inproc-mock, namespaces
		max_active_runs = 1
		[tenant olv-slots-c]
		backends = inproc-mock, namespaces
		max_active_runs = 1
		[tenant olv-slots-d]
		backends = inproc-mock, namespaces
		max_active_runs = 2
		[tenant $OLV_QUOTA_TENANT]
		backends = inproc-mock
		max_stored_mb = 1
		[tenant $OLV_QUOTA_RACE_TENANT]
		backends = inproc-mock
		max_stored_mb = 1
		[tenant $OLV_QUOTA_RUNS_TENANT]
		backends = inproc-mock
		max_stored_mb = 1
		[tenant $OLV_EGRESS_TENANT]
		backends = inproc-mock, namespaces, gvisor
		egress_allow = 127.0.0.1:$OLV_EGRESS_PORT
		egress_secrets = $OLV_EGRESS_SECRETS
		[tenant $OLV_RESTRICTED_TENANT]
		backends = inproc-mock
		[tenant $OLV_RETENTION_TENANT]
		retention_days = 1
		[tenant $OLV_DEFAULT_TENANT]
		backends = inproc-mock, namespaces
		default_backend = namespaces
		[scorer]
		adapter = builtin:$OLV_SUITES_DIR
		[executor]
		lease_seconds = 6
	CONF
	export OLIVARES_CONF=$own_dir/olivares.conf OLV_AGENTS_DIR OLV_RESTRICTED_TENANT OLV_DEFAULT_TENANT OLV_SUITES_DIR \
		OLV_SLOTS_TENANTS OLV_SLOW_SECONDS OLV_EGRESS_TENANT OLV_EGRESS_PORT \
		OLV_EGRESS_SECRET OLV_EGRESS_SECRETS OLV_QUOTA_TENANT OLV_QUOTA_RACE_TENANT OLV_QUOTA_RUNS_TENANT OLV_RETENTION_TENANT
	started=0
	for try in 1 2 3; do
		OLIVARES_PORT=$(olv_free_port)
		export OLIVARES_PORT
		if "$ROOT/scripts/stack" up >"$own_dir/up.out" 2>&1; then
			started=1
			break
		fi
		echo "# stack up failed on port $OLIVARES_PORT (try $try):" >&2
		cat "$own_dir/up.out" >&2
		"$ROOT/scripts/stack" down >/dev/null 2>&1 || true
	done
	if ((!started)); then
		echo "not ok - the stack under test started"
		echo "0 passed, 1 failed"
		exit 1
	fi
	OLIVARES_URL=http://127.0.0.1:$OLIVARES_PORT
	unset OLV_ADMIN_TOKEN
fi
export OLIVARES_URL
OLIVARES_DATA=$(olv_abspath "${OLIVARES_DATA:?OLIVARES_DATA must name the stack data dir}")
export OLIVARES_DATA
export OLIVARES_PORT=${OLIVARES_PORT:-${OLIVARES_URL##*:}}
if [[ -n ${OLIVARES_DSN:-} ]]; then export OLIVARES_DSN; fi
if [[ -z ${OLV_ADMIN_TOKEN:-} ]]; then
	OLV_ADMIN_TOKEN=$(<"$OLIVARES_DATA/admin_token")
fi
OLV_EDITOR_TOKEN=$(olivares-admin token create --tenant demo --role editor)
OLV_VIEWER_TOKEN=$(olivares-admin token create --tenant demo --role viewer)
export OLV_ADMIN_TOKEN OLV_EDITOR_TOKEN OLV_VIEWER_TOKEN
export OLIVARES_TOKEN=$OLV_EDITOR_TOKEN

echo "# e2e against $OLIVARES_URL (data $OLIVARES_DATA, store ${OLIVARES_DSN:-SQLite}, behind $OLIVARES_FRONTEND, pool started by $OLIVARES_LAUNCHER)"
passed=0
failed=0
for t in "$E2E_DIR"/t*.sh; do
	name=$(basename "$t" .sh)
	if ((${#only[@]})); then
		sel=0
		for o in "${only[@]}"; do [[ $name == "$o"* ]] && sel=1; done
		((sel)) || continue
	fi
	echo "# $name"
	out=$(mktemp)
	rc=0
	t_start=$SECONDS
	timeout 600 bash "$t" >"$out" 2>&1 || rc=$?
	cat "$out"
	echo "# $name took $((SECONDS - t_start)) s"
	p=$(grep -c '^ok ' "$out" || true)
	f=$(grep -c '^not ok ' "$out" || true)
	if ((rc != 0 && f == 0)); then
		echo "not ok - $name exited with status $rc without reporting a failure"
		f=1
	fi
	if ((p + f == 0)); then
		echo "not ok - $name reported no check"
		f=1
	fi
	rm -f "$out"
	passed=$((passed + p))
	failed=$((failed + f))
done

# The server must not have reported a sanitizer error or a crash meanwhile.
log=$OLIVARES_DATA/log/olivares-fcgi.log
if [[ -f $log ]] && grep -Eq 'AddressSanitizer|runtime error:|LeakSanitizer' "$log"; then
	echo "not ok - no sanitizer report in $log"
	grep -E -m 5 -A 5 'AddressSanitizer|runtime error:|LeakSanitizer' "$log" | sed 's/^/#   /'
	failed=$((failed + 1))
else
	echo "ok - no sanitizer report in the server log"
	passed=$((passed + 1))
fi

echo "$passed passed, $failed failed"
((failed == 0))
