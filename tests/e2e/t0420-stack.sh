#!/usr/bin/env bash
# scripts/stack on a running stack: `status` reports the port nginx really
# listens on (not OLIVARES_PORT), `up` on a running stack says "already
# running at URL" and prints that stack's url=/admin_token= lines at once,
# `down` is prompt, `restart` comes back on the running port, and
# admin_url= is printed only when the admin view answers.
. "$(dirname "$0")/lib.sh"
e2e_require
need_frontend nginx "scripts/stack with nginx (its generated configuration, its port)"
STACK=$OLV_ROOT/scripts/stack
PORT=${OLIVARES_URL##*:}
TOKEN=$(<"$OLIVARES_DATA/admin_token")

# whatever happens below, leave the stack up for the next test
trap '"$STACK" status >/dev/null 2>&1 || "$STACK" up >/dev/null 2>&1; rm -rf "$E2E_TMP"' EXIT

# a port that is not the stack's
OTHER=$((PORT == 20000 ? 20001 : 20000))

# ---- status: the running port
rc=0
OLIVARES_PORT=$OTHER "$STACK" status >"$E2E_TMP/status.out" 2>&1 || rc=$?
is "status (OLIVARES_PORT elsewhere): exit 0" 0 "$rc"
if grep -q "nginx: running (pid [0-9]*, http://127.0.0.1:$PORT)" "$E2E_TMP/status.out"; then
	ok "status names the port nginx listens on ($PORT), not OLIVARES_PORT ($OTHER)"
else
	not_ok "status names the port nginx listens on ($PORT), not OLIVARES_PORT ($OTHER) (got $(short "$(cat "$E2E_TMP/status.out")"))"
fi

# ---- up on a running stack, from an environment naming another port
rc=0
start=$(date +%s%N)
OLIVARES_PORT=$OTHER "$STACK" up >"$E2E_TMP/up.out" 2>"$E2E_TMP/up.err" || rc=$?
took=$((($(date +%s%N) - start) / 1000000))
is "up on a running stack: exit 0" 0 "$rc"
if grep -q "already running at http://127.0.0.1:$PORT" "$E2E_TMP/up.err"; then
	ok "up on a running stack says 'already running at' its URL"
else
	not_ok "up on a running stack says 'already running at' its URL (stderr $(short "$(cat "$E2E_TMP/up.err")"))"
fi
if grep -q "migration" "$E2E_TMP/up.err"; then
	not_ok "up on a running stack migrates nothing (stderr $(short "$(cat "$E2E_TMP/up.err")"))"
else
	ok "up on a running stack migrates nothing"
fi
is "up on a running stack: url= of the running stack" "http://127.0.0.1:$PORT" "$(sed -n 's/^url=//p' "$E2E_TMP/up.out")"
is "up on a running stack: admin_token= of the data dir" "$TOKEN" "$(sed -n 's/^admin_token=//p' "$E2E_TMP/up.out")"
if ((took < 5000)); then
	ok "up on a running stack answers at once (${took} ms)"
else
	not_ok "up on a running stack answers at once (took ${took} ms)"
fi

# ---- admin_url= only when the admin view answers
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$OLIVARES_URL/admin/")
if [[ $code == 404 || $code == 5* || $code == 000 ]]; then
	if grep -q '^admin_url=' "$E2E_TMP/up.out"; then
		not_ok "no admin_url= while GET /admin/ gives $code"
	else
		ok "no admin_url= while GET /admin/ gives $code"
	fi
else
	is "admin_url= printed since GET /admin/ answers $code" "$OLIVARES_URL/admin/" "$(sed -n 's/^admin_url=//p' "$E2E_TMP/up.out")"
fi

# ---- down is prompt, up comes back on the same port
start=$(date +%s%N)
if "$STACK" down >"$E2E_TMP/down.out" 2>&1; then ok "down"; else not_ok "down ($(cat "$E2E_TMP/down.out"))"; fi
took=$((($(date +%s%N) - start) / 1000000))
# An idle stack stops without waiting for a request in progress: neither
# process takes the second after its signal that makes down say it waits,
# and down is far inside the grace it would give a request (tens of
# seconds). Not a tighter bound: a loaded machine slows every step.
if ! grep -q 'waiting for the requests in progress' "$E2E_TMP/down.out" && ((took < 10000)); then
	ok "down of an idle stack waits for no request (${took} ms)"
else
	not_ok "down of an idle stack waits for no request (took ${took} ms: $(tr '\n' ' ' <"$E2E_TMP/down.out"))"
fi
rc=0
"$STACK" status >/dev/null 2>&1 || rc=$?
is "status after down: exit 3" 3 "$rc"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$OLIVARES_URL/healthz" || true)
is "nothing answers after down" 000 "$code"
rc=0
"$STACK" up >"$E2E_TMP/up2.out" 2>"$E2E_TMP/up2.err" || rc=$?
is "up after down: exit 0" 0 "$rc"
is "up after down: url=" "$OLIVARES_URL" "$(sed -n 's/^url=//p' "$E2E_TMP/up2.out")"
if grep -q 'already running' "$E2E_TMP/up2.err"; then
	not_ok "up after down does not say 'already running'"
else
	ok "up after down does not say 'already running'"
fi
req "$OLV_VIEWER_TOKEN" GET /v1/modules
is_status "the API answers after down + up" 200
if grep -q 'refuses' "$E2E_TMP/up2.err"; then
	not_ok "up with a working admin token says nothing of it (stderr $(short "$(cat "$E2E_TMP/up2.err")"))"
else
	ok "up with a working admin token says nothing of it"
fi
# ---- an admin token the API refuses (revoked): up says so, keeps the file
cp -p "$OLIVARES_DATA/admin_token" "$E2E_TMP/admin_token.keep"
printf 'olv_%s' "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$OLIVARES_DATA/admin_token"
cp -p "$OLIVARES_DATA/admin_token" "$E2E_TMP/admin_token.bad"
rc=0
"$STACK" up >"$E2E_TMP/up3.out" 2>"$E2E_TMP/up3.err" || rc=$?
is "up with a refused admin token: exit 0" 0 "$rc"
if grep -q "^note: the API refuses $OLIVARES_DATA/admin_token (401: revoked, or a token of another database)" "$E2E_TMP/up3.err"; then
	ok "up says the API refuses the data dir's admin token"
else
	not_ok "up says the API refuses the admin token (stderr $(short "$(cat "$E2E_TMP/up3.err")"))"
fi
if cmp -s "$OLIVARES_DATA/admin_token" "$E2E_TMP/admin_token.bad"; then
	ok "up does not replace a refused admin token by itself"
else
	not_ok "up replaced the refused admin token"
fi
if grep -qF "$(cat "$E2E_TMP/admin_token.bad")" "$E2E_TMP/up3.err"; then
	not_ok "the note does not print the token"
else
	ok "the note does not print the token"
fi
mv "$E2E_TMP/admin_token.keep" "$OLIVARES_DATA/admin_token"
# what the server notes at start is said by up, not only logged (run.sh
# --fresh names tenant olv-slots-b, which t0950 creates later)
if [[ -n ${OLV_SLOTS_TENANTS:-} ]]; then
	if grep -q '^olivares-fcgi note: \[tenant olv-slots-b\] names no tenant of the database yet' "$E2E_TMP/up2.err"; then
		ok "up says the server's start-up notes ([tenant NAME] naming no tenant yet)"
	else
		not_ok "up says the server's start-up notes (stderr $(short "$(cat "$E2E_TMP/up2.err")"))"
	fi
fi

# ---- --check-config masks a DSN's password, a braced one whole (the
# file's DSN: OLIVARES_DSN, set for the PostgreSQL pass, would win)
printf '[server]\ndsn = Driver=SQLite3;PWD={hun;ter2}};x};UID=u;Password=plain\n' >"$E2E_TMP/secret.conf"
shown=$(env -u OLIVARES_DSN OLIVARES_CONF=$E2E_TMP/secret.conf "$OLIVARES_BUILD/olivares-fcgi" --check-config 2>&1 | sed -n 's/^dsn = //p')
is "--check-config: passwords masked, braced ones whole" "Driver=SQLite3;PWD=***;UID=u;Password=***" "$shown"
# ---- what --check-config prints is an INI file that loads to itself: its
# own sections and key names, with every default written out
printf '[runner]\ntimeout_ms = 2500\ncpu_seconds = 7\n[tenant  acme ]\nbackends = inproc-mock\n' >"$E2E_TMP/small.conf"
env -u OLIVARES_DSN OLIVARES_CONF=$E2E_TMP/small.conf "$OLIVARES_BUILD/olivares-fcgi" --check-config >"$E2E_TMP/printed.conf" 2>/dev/null
env -u OLIVARES_DSN OLIVARES_CONF=$E2E_TMP/printed.conf "$OLIVARES_BUILD/olivares-fcgi" --check-config >"$E2E_TMP/reprinted.conf" 2>/dev/null
is "--check-config: the file's keys under the file's names" "timeout_ms = 2500|cpu_seconds = 7|timeout_ms = 5000|[tenant acme]" \
	"$(grep -E '^(timeout_ms|cpu_seconds|\[tenant)' "$E2E_TMP/printed.conf" | paste -sd'|')"
is "--check-config: it names the file it read, and what wins over it" "# read from $E2E_TMP/small.conf|# OLIVARES_DATA is set: it is the data dir, whatever the file says" "$(head -n 2 "$E2E_TMP/printed.conf" | paste -sd'|')"
if [[ -s $E2E_TMP/printed.conf ]] && cmp -s <(tail -n +2 "$E2E_TMP/printed.conf") <(tail -n +2 "$E2E_TMP/reprinted.conf"); then
	ok "--check-config: its output, loaded as a configuration, prints the same"
else
	not_ok "--check-config: its output, loaded as a configuration, prints the same ($(diff <(tail -n +2 "$E2E_TMP/printed.conf") <(tail -n +2 "$E2E_TMP/reprinted.conf") | head -3 | tr '\n' ' '))"
fi

# a value too long for a line of the file (a DSN from the environment) is a
# note, so that the printed file still loads
longdsn="Driver=SQLite3;Database=$E2E_TMP/$(repeat_char d 200).db"
OLIVARES_DSN=$longdsn "$OLIVARES_BUILD/olivares-fcgi" --check-config >"$E2E_TMP/longdsn.conf" 2>/dev/null
if grep -q "^# dsn: its line would be $((${#longdsn} + 6)) bytes, more than a line of the file takes (198)$" "$E2E_TMP/longdsn.conf" &&
	env -u OLIVARES_DSN OLIVARES_CONF=$E2E_TMP/longdsn.conf "$OLIVARES_BUILD/olivares-fcgi" --check-config >/dev/null 2>&1; then
	ok "--check-config: a DSN too long for the file is a note, and the output loads"
else
	not_ok "--check-config: a DSN too long for the file is a note, and the output loads ($(grep -m1 dsn "$E2E_TMP/longdsn.conf" | cut -c1-80))"
fi

# ---- relative paths in the file are taken from the file's directory,
# wherever the server is started
mkdir -p "$E2E_TMP/confdir/suites"
printf '[runner]\nagents_dir = .//agents\n[scorer]\nadapter = builtin:suites\n' >"$E2E_TMP/confdir/rel.conf"
(cd / && env -u OLIVARES_DSN OLIVARES_CONF=$E2E_TMP/confdir/rel.conf "$OLIVARES_BUILD/olivares-fcgi" --check-config >"$E2E_TMP/rel.out" 2>"$E2E_TMP/rel.err") && rc=0 || rc=$?
is "--check-config from /: relative paths (.//agents too) under the file's directory" "0|agents_dir = $E2E_TMP/confdir/agents|adapter = builtin:$E2E_TMP/confdir/suites" \
	"$rc|$(grep -E '^(agents_dir|adapter) =' "$E2E_TMP/rel.out" | paste -sd'|')"
if grep -q "warning: agents_dir $E2E_TMP/confdir/agents is not a directory" "$E2E_TMP/rel.err"; then
	ok "--check-config warns of an agents_dir that is not there"
else
	not_ok "--check-config warns of an agents_dir that is not there (stderr $(short "$(cat "$E2E_TMP/rel.err")"))"
fi

# ---- restart with a configuration that would not start: nothing is stopped
printf '[runner]\ntimeout_ms = 50\n' >"$E2E_TMP/bad.conf"
rc=0
OLIVARES_CONF=$E2E_TMP/bad.conf "$STACK" restart >"$E2E_TMP/badrestart.out" 2>"$E2E_TMP/badrestart.err" || rc=$?
isnt "restart with a bad configuration: fails" 0 "$rc"
if grep -q 'bad value "50" for \[runner\] timeout_ms' "$E2E_TMP/badrestart.err" && grep -q 'nothing was stopped' "$E2E_TMP/badrestart.err"; then
	ok "restart with a bad configuration: says why, and that nothing was stopped"
else
	not_ok "restart with a bad configuration: says why, and that nothing was stopped (got $(short "$(cat "$E2E_TMP/badrestart.err")"))"
fi
req "" GET /healthz
is_status "the stack still answers after the refused restart" 200
# ---- restart while the database does not answer: nothing is stopped
pid_before=$(cat "$OLIVARES_DATA/run/olivares-fcgi.pid" 2>/dev/null)
rc=0
OLIVARES_DSN="Driver=SQLite3;Database=$E2E_TMP/no/such/dir/olivares.db" "$STACK" restart \
	>"$E2E_TMP/dbdown.out" 2>"$E2E_TMP/dbdown.err" || rc=$?
isnt "restart while the database does not answer: fails" 0 "$rc"
if grep -q 'the database does not answer: nothing was stopped' "$E2E_TMP/dbdown.err"; then
	ok "restart while the database does not answer: says so, and that nothing was stopped"
else
	not_ok "restart while the database does not answer: says so, and that nothing was stopped (got $(short "$(cat "$E2E_TMP/dbdown.err")"))"
fi
is "the same server still runs" "$pid_before" "$(cat "$OLIVARES_DATA/run/olivares-fcgi.pid" 2>/dev/null)"
req "" GET /healthz
is_status "and answers" 200
# ---- up or restart on another database than the one the stack started on
# (a shell without its OLIVARES_DSN: a new SQLite file, and admin_token
# replaced by a token of it): refused, nothing stopped or written
is "the stack records the database it started on (passwords masked)" \
	"$("$OLIVARES_BUILD/olivares-fcgi" --check-config 2>/dev/null | sed -n 's/^dsn = //p')" "$(cat "$OLIVARES_DATA/dsn" 2>/dev/null)"
other="Driver=SQLite3;Database=$E2E_TMP/other.db"
OLIVARES_DSN=$other "$OLIVARES_BUILD/olivares-admin" migrate >/dev/null 2>&1
for cmd in restart up; do
	rc=0
	OLIVARES_DSN=$other "$STACK" "$cmd" >"$E2E_TMP/otherdb.out" 2>"$E2E_TMP/otherdb.err" || rc=$?
	if ((rc != 0)) && grep -q "this stack last started on the database \"$(sed 's/[].[*^$\\]/\\&/g' "$OLIVARES_DATA/dsn")\"; the configuration now names \"$other\"" "$E2E_TMP/otherdb.err"; then
		ok "$cmd on another database: refused, naming both"
	else
		not_ok "$cmd on another database: refused, naming both (exit $rc, $(short "$(cat "$E2E_TMP/otherdb.err")"))"
	fi
	is "$cmd on another database: the same server still runs, admin_token kept" "$pid_before $TOKEN" \
		"$(cat "$OLIVARES_DATA/run/olivares-fcgi.pid" 2>/dev/null) $(cat "$OLIVARES_DATA/admin_token")"
done
is "nothing was written to the other database" "0" \
	"$(OLIVARES_DSN=$other "$OLIVARES_BUILD/olivares-admin" tenant list 2>/dev/null | wc -l)"
printf '[scorer]\nadapter = exec:no-such-scorer\n' >"$E2E_TMP/bad-scorer.conf"
rc=0
OLIVARES_CONF=$E2E_TMP/bad-scorer.conf "$OLIVARES_BUILD/olivares-fcgi" --check-config >/dev/null 2>"$E2E_TMP/check.err" || rc=$?
is "--check-config fails on a scorer that start-up could not build" 1 "$rc"

# ---- restart: down and up, on the running port even without OLIVARES_PORT
pid_before=$(cat "$OLIVARES_DATA/run/olivares-fcgi.pid" 2>/dev/null)
rc=0
env -u OLIVARES_PORT "$STACK" restart >"$E2E_TMP/restart.out" 2>"$E2E_TMP/restart.err" || rc=$?
is "restart (no OLIVARES_PORT): exit 0, url= of the port it ran on" "0 $OLIVARES_URL" \
	"$rc $(sed -n 's/^url=//p' "$E2E_TMP/restart.out")"
isnt "restart: a new olivares-fcgi" "$pid_before" "$(cat "$OLIVARES_DATA/run/olivares-fcgi.pid" 2>/dev/null)"
req "$OLV_VIEWER_TOKEN" GET /v1/modules
is_status "the API answers after restart" 200
is "the generated nginx: the pool's read timeout is 85 s with this configuration (request_seconds_max 70)" \
	"85s 85s" "$(sed -n 's/^[[:space:]]*fastcgi_read_timeout \([0-9]*s\);$/\1/p' "$OLIVARES_DATA/nginx/olivares.conf" | grep -v '^10s$\|^20s$' | paste -sd' ')"

if grep -q "note: a request that waits for its run can take up to 70 s here" "$OLIVARES_DATA/log/olivares-fcgi.log"; then
	ok "the server notes at start how long a request can wait, over nginx's default 60 s"
else
	not_ok "the server notes at start how long a request can wait, over nginx's default 60 s"
fi

# ---- a shorter [server] wait_max_seconds: a request holds its worker at
# most 20 + 10 s, nginx waits 60 s (its floor), and nothing is noted; a
# longer [runner] timeout_ms changes nothing (the executors run the runs)
awk -v extra="timeout_ms = 40000" '{ print } /^[[:space:]]*\[runner\]/ { print extra }' "$OLIVARES_CONF" >"$E2E_TMP/long.conf"
# and a socket of its own, relative to the file: nginx is pointed at it
mkdir -p "$E2E_TMP/sock"
printf '[server]\nsocket = sock/pool.sock\nwait_max_seconds = 20\n' >>"$E2E_TMP/long.conf"
rc=0
OLIVARES_CONF=$E2E_TMP/long.conf "$STACK" restart >"$E2E_TMP/long.out" 2>"$E2E_TMP/long.err" || rc=$?
is "restart with [runner] timeout_ms = 40000, [server] socket and wait_max_seconds = 20: exit 0" 0 "$rc"
req "$OLV_VIEWER_TOKEN" GET /v1/modules
is_status "the API answers through the configured socket" 200
if grep -q "fastcgi_pass unix:$E2E_TMP/sock/pool.sock;" "$OLIVARES_DATA/nginx/olivares.conf"; then
	ok "nginx connects to [server] socket"
else
	not_ok "nginx connects to [server] socket ($(grep -m1 fastcgi_pass "$OLIVARES_DATA/nginx/olivares.conf"))"
fi
is "the generated nginx: read timeout 60 s for /v1/ and /admin" "60s 60s" \
	"$(sed -n 's/^[[:space:]]*fastcgi_read_timeout \([0-9]*s\);$/\1/p' "$OLIVARES_DATA/nginx/olivares.conf" | grep -v '^10s$\|^20s$' | paste -sd' ')"
if grep -q "note: a request that waits for its run can take up to 30 s" "$OLIVARES_DATA/log/olivares-fcgi.log"; then
	not_ok "no note of the longest request under 60 s"
else
	ok "no note of the longest request under 60 s"
fi
"$STACK" restart >/dev/null 2>&1
req "$OLV_VIEWER_TOKEN" GET /v1/modules
is_status "back on the test's configuration" 200

# ---- down while a run is in progress: its executor, stopped last, ends
# it failed and says so (a run is never left running); up finds it ended
if [[ -x ${OLV_AGENTS_DIR:-}/slow ]] && "$OLIVARES_BUILD/olivares-runner" --preflight namespaces >/dev/null 2>&1; then
	module_on "$OLV_ADMIN_TOKEN" || true
	req "$OLV_EDITOR_TOKEN" POST /v1/m/sandbox/scenarios '{"name":"drain","steps":[{"key":"k","input":"x"}]}'
	DSID=$(jqb '.id // empty')
	E2E_NO_WAIT=1 req "$OLV_EDITOR_TOKEN" POST "/v1/m/sandbox/scenarios/$DSID/runs" '{"variant":"slow","backend":"namespaces"}'
	is_status "a slow run: 202 at once" 202
	DRID=$(jqb '.id // empty')
	for ((i = 0; i < 200; i++)); do
		req "$OLV_VIEWER_TOKEN" GET "/v1/m/sandbox/runs/$DRID"
		[[ $(jqb .status) == running ]] && break
		sleep 0.05
	done
	is "the slow run is running" running "$(jqb .status)"
	"$STACK" down >"$E2E_TMP/drain-down.out" 2>&1
	"$STACK" up >/dev/null 2>&1
	req "$OLV_VIEWER_TOKEN" GET "/v1/m/sandbox/runs/$DRID"
	is "down during a slow run: the run ended failed" failed "$(jqb .status)"
	case $(jqb .reason) in
	"executor "*" stopped before the run ended (0 of 1 steps done)") ok "its reason: its executor stopped before the run ended" ;;
	*) not_ok "its reason: its executor stopped before the run ended (got: $(jqb .reason))" ;;
	esac
	req "$OLV_VIEWER_TOKEN" GET "/v1/m/sandbox/runs?scenario=$DSID"
	is "the run is recorded once" "200 1" "$STATUS $(jqb '.runs|length')"
else
	ok "# SKIP down during a slow run: no slow agent or no namespaces backend"
fi
done_testing
