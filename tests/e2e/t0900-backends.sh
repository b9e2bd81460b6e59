#!/usr/bin/env bash
# Isolation backends: the backends listing and its preflights, the
# page's walkthrough on every backend this host can run (same outputs, same
# counters, isolated and destroyed, the backend recorded), fail closed on a
# backend it cannot run, the tenant policy (422, nothing written), agent
# programs named by variants (run on an OS-level backend, refused on
# inproc-mock, refused when they escape the agents directory); then the
# robustness fixes of the same round (403 names the role, unknown module,
# a burst of parallel requests, a locked SQLite database gives a 503).
#
# tests/e2e/run.sh --fresh sets the policy (OLIVARES_CONF): tenant demo may
# use all four backends, default inproc-mock; tenant $OLV_RESTRICTED_TENANT
# only inproc-mock; agents in $OLV_AGENTS_DIR: profile (the example agent
# olivares-agent-profile-bot), escape (a symlink to /bin/sh) and dangling
# (../../x). Against another stack the checks that need them are skipped
# with a "# skip" line (not counted).
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

RUNNER=$OLIVARES_BUILD/olivares-runner
BACKENDS="inproc-mock namespaces gvisor firecracker"

# show CMD...: print the command and its output as comments, keep the
# output in OUT, stderr in ERR and the exit status in RC
show() {
	echo "# \$ $*"
	RC=0
	OUT=$("$@" 2>"$E2E_TMP/stderr") || RC=$?
	ERR=$(cat "$E2E_TMP/stderr")
	printf '%s\n' "$OUT" | head -n 30 | sed 's/^/#   /'
	if [[ -n $ERR ]]; then printf '%s\n' "$ERR" | sed 's/^/#   stderr: /'; fi
}
skip() { echo "# skip - $1"; }

module_on "$OLV_ADMIN_TOKEN" || true
export OLIVARES_TOKEN=$OLV_EDITOR_TOKEN

# ---- the listing: policy of the caller's tenant, preflight as the runner says
req "$OLV_VIEWER_TOKEN" GET /v1/m/sandbox/backends
is_status "GET /v1/m/sandbox/backends as a viewer" 200
cp "$BODY_FILE" backends.json
is "the four backends, in order" "$BACKENDS" "$(jqb '[.backends[].name]|join(" ")')"
is "each item is {name, allowed, default, preflight:{ok, reason}}" \
	'["allowed","default","name","preflight"]|["ok","reason"]' \
	"$(jqb '[.backends[]|(keys|tojson) + "|" + (.preflight|keys|tojson)]|unique|join(",")')"
declare -A PF_OK PF_REASON ALLOWED
for b in $BACKENDS; do
	# the server's answer is the one runs are judged by; the runner asked
	# directly on this host must say the same
	PF_OK[$b]=$(jq -r --arg b "$b" '.backends[]|select(.name==$b)|.preflight.ok' backends.json)
	PF_REASON[$b]=$(jq -r --arg b "$b" '.backends[]|select(.name==$b)|.preflight.reason // ""' backends.json)
	ALLOWED[$b]=$(jq -r --arg b "$b" '.backends[]|select(.name==$b)|.allowed' backends.json)
	direct=$("$RUNNER" --preflight "$b" 2>/dev/null)
	is "$b: preflight in the listing is the runner's own" "$(jq -c '{ok,reason}' <<<"$direct")" \
		"$(jq -c --arg b "$b" '.backends[]|select(.name==$b)|.preflight' backends.json)"
	echo "# $b: allowed ${ALLOWED[$b]}, preflight ${PF_OK[$b]} ${PF_REASON[$b]}"
done
is "inproc-mock passes its preflight" true "${PF_OK[inproc-mock]}"
is "namespaces passes its preflight here" true "${PF_OK[namespaces]}"
# scripts/test sets it where gvisor must run (root, runsc installed): its
# walkthrough and agent checks are then never skipped uncounted
if [[ ${OLIVARES_REQUIRE_GVISOR:-0} == 1 ]]; then
	is "gvisor passes its preflight here (OLIVARES_REQUIRE_GVISOR)" true "${PF_OK[gvisor]}"
fi
if [[ -e /dev/kvm ]] && [[ -x /usr/bin/firecracker || -x /usr/local/bin/firecracker ]]; then
	skip "firecracker preflight: this host has /dev/kvm and firecracker"
else
	is "firecracker fails its preflight here (no /dev/kvm or no firecracker)" false "${PF_OK[firecracker]}"
	if [[ ${PF_REASON[firecracker]} =~ (/dev/kvm|firecracker) ]]; then
		ok "firecracker's preflight names what is missing (${PF_REASON[firecracker]})"
	else
		not_ok "firecracker's preflight names what is missing (got $(short "${PF_REASON[firecracker]}"))"
	fi
fi
is "exactly one default" 1 "$(jq '[.backends[]|select(.default)]|length' backends.json)"
# ?preflight=false: the same policy, no preflight (the admin view's forms)
req "$OLV_VIEWER_TOKEN" GET "/v1/m/sandbox/backends?preflight=false"
is_status "GET /v1/m/sandbox/backends?preflight=false" 200
is "preflight=false: the same names, allowed and default, preflight null" \
	"$(jq -c '[.backends[]|{name,allowed,default,preflight:null}]' backends.json)" \
	"$(jq -c '[.backends[]|{name,allowed,default,preflight}]' "$BODY_FILE")"
req "$OLV_VIEWER_TOKEN" GET "/v1/m/sandbox/backends?preflight=maybe"
is_status "GET /v1/m/sandbox/backends?preflight=maybe is malformed" 400
have_policy=0
if [[ -n ${OLV_AGENTS_DIR:-} && -n ${OLV_RESTRICTED_TENANT:-} ]]; then
	have_policy=1
	is "demo: all four allowed, inproc-mock the default" \
		"inproc-mock:true:true namespaces:true:false gvisor:true:false firecracker:true:false" \
		"$(jq -r '[.backends[]|"\(.name):\(.allowed):\(.default)"]|join(" ")' backends.json)"
fi

show olivares sandbox backends
is "olivares sandbox backends: exit 0" 0 "$RC"
is "table header" "NAME ALLOWED DEFAULT PREFLIGHT REASON" "$(head -n 1 <<<"$OUT" | tr -s ' ')"
for b in $BACKENDS; do
	want=$([[ ${PF_OK[$b]} == true ]] && echo ok || echo failed)
	is "table: $b preflight $want" "$want" "$(awk -v b="$b" '$1==b {print $4}' <<<"$OUT")"
done
if [[ ${PF_OK[firecracker]} == false ]]; then
	line=$(grep '^firecracker ' <<<"$OUT")
	if [[ $line == *"${PF_REASON[firecracker]:0:40}"* ]]; then
		ok "table: firecracker row shows the reason"
	else
		not_ok "table: firecracker row shows the reason (got $(short "$line"))"
	fi
fi
show olivares sandbox backends -o json
is "olivares sandbox backends -o json is the API's answer" "$(jq -c '[.backends[]|{name,allowed,default}]' backends.json)" \
	"$(jq -c '[.backends[]|{name,allowed,default}]' <<<"$OUT" 2>/dev/null)"

# ---- the page's walkthrough on every backend this host can run
printf '%s' '{{subject_kind}}:user{{index}}@example.test' >seed.txt
printf '%s\n' '[{"resource":"agent:user1@example.test","response":"first synthetic account"},
 {"resource":"profile:agent:user1@example.test","response":"Ada","variant":"profile"}]' >mocks.json
olivares sandbox generate --count 2 --seed-file seed.txt -o json >steps.json
show olivares sandbox scenarios create --name backends --steps-file steps.json --mocks-file mocks.json -o json
is "scenario created" 0 "$RC"
SID=$(jq -r '.id // empty' <<<"$OUT" 2>/dev/null)

declare -A DIGEST
ran=""  # backends the walkthrough ran on
made="" # backends of every run recorded on $SID
for b in $BACKENDS; do
	if [[ ${PF_OK[$b]} != true ]]; then
		echo "# walkthrough: $b skipped here (preflight: ${PF_REASON[$b]})"
		continue
	fi
	if [[ ${ALLOWED[$b]} != true ]]; then
		skip "walkthrough on $b: not allowed by this stack's policy"
		continue
	fi
	show olivares sandbox scenarios run "$SID" --variant candidate --backend "$b" -o json
	is "$b: scenarios run exit 0" 0 "$RC"
	RUN=$OUT
	RID=$(jq -r '.id // empty' <<<"$RUN")
	is "$b: status completed, 2/1/1" "completed 2 1 1" \
		"$(jq -r '"\(.status) \(.steps_total) \(.steps_ok) \(.steps_error)"' <<<"$RUN")"
	is "$b: isolated true, destroyed true" "true true" "$(jq -r '"\(.isolated) \(.destroyed)"' <<<"$RUN")"
	is "$b: the run records backend $b" "$b" "$(jq -r .backend <<<"$RUN")"
	is "$b: no reason" null "$(jq -r .reason <<<"$RUN")"
	req "$OLV_VIEWER_TOKEN" GET "/v1/m/sandbox/runs/$RID/outputs"
	is "$b: the page's outputs" \
		'first synthetic account|ok|null [[mock-miss:agent:user2@example.test]]|error|mock_miss' \
		"$(jqb '[.outputs[]|"\(.output)|\(.status)|\(.error_kind)"]|join(" ")')"
	DIGEST[$b]=$(jq -r .output_digest <<<"$RUN")
	ran="$ran $b"
	made="$made $b"
done
for b in $ran; do
	is "$b: same output digest as inproc-mock" "${DIGEST[inproc-mock]}" "${DIGEST[$b]}"
done

# ---- fail closed: firecracker, whose preflight fails on hosts without
# /dev/kvm, the firecracker binary or the guest images (like ours)
fail_closed() {
	local b=$1 before after reason
	before=$(state_counts "$OLV_ADMIN_TOKEN")
	show olivares sandbox scenarios run "$SID" --variant candidate --backend "$b" -o json
	is "$b (preflight fails): the run is recorded (exit 0)" 0 "$RC"
	RUN=$OUT
	is "$b: the CLI says on stderr that the run failed, and why" \
		"olivares: run $(jq -r .id <<<"$RUN") failed: $(jq -r .reason <<<"$RUN")" "$ERR"
	made="$made $b"
	is "$b: status failed, isolated false, zero steps" "failed false 0 0 0" \
		"$(jq -r '"\(.status) \(.isolated) \(.steps_total) \(.steps_ok) \(.steps_error)"' <<<"$RUN")"
	is "$b: the run records backend $b (no fallback)" "$b" "$(jq -r .backend <<<"$RUN")"
	reason=$(jq -r .reason <<<"$RUN")
	# no executor offers it (their preflight failed): the run fails at once
	# with the preflight's reason
	if [[ $reason == "no live executor offers backend $b: "?* ]]; then
		ok "$b: the reason names the missing primitive ($reason)"
	else
		not_ok "$b: the reason names the missing primitive (got $(short "$reason"))"
	fi
	req "$OLV_VIEWER_TOKEN" GET "/v1/m/sandbox/runs/$(jq -r .id <<<"$RUN")/outputs"
	is "$b: no output" 0 "$(jqb '.outputs|length')"
	after=$(state_counts "$OLV_ADMIN_TOKEN")
	is "$b: one more run, nothing else" "$(awk '{split($2,a,"=");print $1, "runs=" a[2]+1}' <<<"$before")" \
		"$(awk '{print $1, $2}' <<<"$after")"
}
if [[ ${PF_OK[firecracker]} == false && ${ALLOWED[firecracker]} == true ]]; then
	fail_closed firecracker
else
	skip "fail closed on firecracker: its preflight passes here or it is not allowed"
fi

# ---- runs list shows the backend of each run
show olivares sandbox runs list --scenario "$SID" -o json
is "runs list: exit 0" 0 "$RC"
want=$(for b in $made; do echo "$b"; done | sort | tr '\n' ' ')
is "runs list: each run with the backend it ran on" "$want" \
	"$(jq -r '[.runs[].backend]|sort|join(" ")+" "' <<<"$OUT")"
show olivares sandbox runs list --scenario "$SID"
is "runs list table has a BACKEND column" BACKEND "$(head -n 1 <<<"$OUT" | tr -s ' ' | cut -d' ' -f5)"
is "runs list table: backend of each run" "$want" \
	"$(tail -n +2 <<<"$OUT" | tr -s ' ' | cut -d' ' -f5 | sort | tr '\n' ' ')"

# ---- policy: a backend the tenant may not use is refused, nothing written
before=$(state_counts "$OLV_ADMIN_TOKEN")
req "$OLV_EDITOR_TOKEN" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate","backend":"bogus"}'
is_error "unknown backend -> 422 invalid" 422 invalid
is "unknown backend: the message says it is unknown, and the known ones" \
	'unknown backend "bogus" (known: inproc-mock, namespaces, gvisor, firecracker)' \
	"$(jqb .error.message)"
req "$OLV_EDITOR_TOKEN" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate","backend":""}'
is "empty backend: 422, said to be empty" "422 backend is empty (known: inproc-mock, namespaces, gvisor, firecracker)" \
	"$STATUS $(jqb .error.message)"
req "$OLV_EDITOR_TOKEN" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"backend":7}'
is_error "backend not a string -> 400" 400 malformed
req "$OLV_EDITOR_TOKEN" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"backend":"inproc-mock","agent":"/bin/sh"}'
is_error "a request cannot name an agent path -> 400" 400 malformed
is "refused run requests wrote nothing" "$before" "$(state_counts "$OLV_ADMIN_TOKEN")"

if ((have_policy)); then
	R_ADMIN=$(new_tenant_token "$OLV_RESTRICTED_TENANT" admin)
	R_EDITOR=$(admin_cli token create --tenant "$OLV_RESTRICTED_TENANT" --role editor)
	module_on "$R_ADMIN" || true
	req "$R_EDITOR" GET /v1/m/sandbox/backends
	is "restricted tenant: only inproc-mock allowed, and default" \
		"inproc-mock:true:true namespaces:false:false gvisor:false:false firecracker:false:false" \
		"$(jqb '[.backends[]|"\(.name):\(.allowed):\(.default)"]|join(" ")')"
	req_file "$R_EDITOR" POST /v1/m/sandbox/scenarios <(jq -n --slurpfile s steps.json \
		'{name:"restricted",steps:$s[0],mocks:[{resource:"agent:user1@example.test",response:"first synthetic account"}]}')
	is_status "restricted tenant: scenario created" 201
	RSID=$(jqb .id)
	before=$(state_counts "$R_ADMIN")
	for b in namespaces gvisor firecracker; do
		req "$R_EDITOR" POST "/v1/m/sandbox/scenarios/$RSID/runs" "{\"variant\":\"candidate\",\"backend\":\"$b\"}"
		is_error "restricted tenant: $b -> 422 invalid" 422 invalid
		is "restricted tenant: $b refused by policy" \
			"backend $b is not allowed by policy (allowed: inproc-mock; the server's [runner] or [tenant NAME] backends set it)" "$(jqb .error.message)"
	done
	OLIVARES_TOKEN=$R_EDITOR show olivares sandbox scenarios run "$RSID" --backend namespaces
	is "restricted tenant: the CLI exits 1 on the refusal" 1 "$RC"
	if [[ $ERR == *"not allowed by policy"* ]]; then ok "restricted tenant: the CLI prints the server's reason"; else not_ok "restricted tenant: the CLI prints the server's reason (got $(short "$ERR"))"; fi
	is "restricted tenant: refusals wrote nothing" "$before" "$(state_counts "$R_ADMIN")"
	req "$R_EDITOR" POST "/v1/m/sandbox/scenarios/$RSID/runs" '{"variant":"candidate"}'
	is_status "restricted tenant: a run without backend uses its default" 201
	is "restricted tenant: default run on inproc-mock, page's counters" "inproc-mock completed 2 1 1 true" \
		"$(jqb '"\(.backend) \(.status) \(.steps_total) \(.steps_ok) \(.steps_error) \(.isolated)"')"
else
	skip "policy of a restricted tenant: run.sh --fresh sets it"
fi

# a tenant whose configured default is namespaces, not the built-in
# inproc-mock: a run that names no backend runs there
if ((have_policy)) && [[ -n ${OLV_DEFAULT_TENANT:-} ]]; then
	D_ADMIN=$(new_tenant_token "$OLV_DEFAULT_TENANT" admin)
	module_on "$D_ADMIN" || true
	req "$D_ADMIN" GET /v1/m/sandbox/backends
	is "default tenant: namespaces allowed and its default" \
		"inproc-mock:true:false namespaces:true:true gvisor:false:false firecracker:false:false" \
		"$(jqb '[.backends[]|"\(.name):\(.allowed):\(.default)"]|join(" ")')"
	req_file "$D_ADMIN" POST /v1/m/sandbox/scenarios <(jq -n --slurpfile s steps.json \
		'{name:"default namespaces",steps:$s[0],mocks:[{resource:"agent:user1@example.test",response:"first synthetic account"}]}')
	is_status "default tenant: scenario created" 201
	DSID=$(jqb .id)
	req "$D_ADMIN" POST "/v1/m/sandbox/scenarios/$DSID/runs" '{"variant":"candidate"}'
	is_status "default tenant: a run without backend" 201
	is "default tenant: it ran on namespaces, isolated, page's counters" "namespaces completed 2 1 1 true" \
		"$(jqb '"\(.backend) \(.status) \(.steps_total) \(.steps_ok) \(.steps_error) \(.isolated)"')"
else
	skip "a tenant's configured default: run.sh --fresh sets it"
fi

# ---- agents named by variants
if ((have_policy)); then
	before=$(state_counts "$OLV_ADMIN_TOKEN")
	req "$OLV_EDITOR_TOKEN" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"profile"}'
	is_error "agent variant on inproc-mock (the default) -> 422 invalid" 422 invalid
	is "agent on inproc-mock: the message says to choose an OS-level backend" \
		"variant profile runs agent program profile from the agents directory; backend inproc-mock cannot run programs; choose an OS-level backend" \
		"$(jqb .error.message)"
	req "$OLV_EDITOR_TOKEN" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"profile","backend":"inproc-mock"}'
	is_error "agent variant on inproc-mock asked explicitly -> 422" 422 invalid
	for v in escape dangling; do
		req "$OLV_EDITOR_TOKEN" POST "/v1/m/sandbox/scenarios/$SID/runs" "{\"variant\":\"$v\",\"backend\":\"namespaces\"}"
		is_error "variant $v (symlink out of the agents directory) -> 422 invalid" 422 invalid
		if [[ $v == escape ]]; then
			is "escape: refused as outside the agents directory" \
				"variant escape names an agent program outside the agents directory (refused)" \
				"$(jqb .error.message)"
		fi
	done
	# the backends run an agent as an unprivileged user: a file others may
	# not read and execute is refused, not a run that fails
	install -m 0700 "$OLV_AGENTS_DIR/profile" "$OLV_AGENTS_DIR/private"
	printf '#!/bin/sh\nexit 0\n' >"$OLV_AGENTS_DIR/hidden-script"
	chmod 0711 "$OLV_AGENTS_DIR/hidden-script"
	req "$OLV_EDITOR_TOKEN" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"private","backend":"namespaces"}'
	is "an agent others may not execute (0700) -> 422, the message says why" \
		"422 variant private names an agent program that other users may not execute (mode 0700): the backends run it as an unprivileged user (chmod o+rx)" \
		"$STATUS $(jqb .error.message)"
	req "$OLV_EDITOR_TOKEN" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"hidden-script","backend":"namespaces"}'
	is "a script others may not read (0711) -> 422" \
		"422 variant hidden-script names an agent program that other users may not read (mode 0711): the backends run it as an unprivileged user (chmod o+rx)" \
		"$STATUS $(jqb .error.message)"
	# a program too: gVisor reads it to load it
	install -m 0711 "$OLV_AGENTS_DIR/profile" "$OLV_AGENTS_DIR/unreadable"
	req "$OLV_EDITOR_TOKEN" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"unreadable","backend":"gvisor"}'
	is "a program others may not read (0711) -> 422" "422 invalid" "$STATUS $(jqb .error.code)"
	rm -f "$OLV_AGENTS_DIR/private" "$OLV_AGENTS_DIR/hidden-script" "$OLV_AGENTS_DIR/unreadable"
	is "refused agent requests wrote nothing" "$before" "$(state_counts "$OLV_ADMIN_TOKEN")"

	for b in namespaces gvisor; do
		if [[ ${PF_OK[$b]} != true ]]; then
			echo "# profile agent on $b skipped here (preflight: ${PF_REASON[$b]})"
			continue
		fi
		show olivares sandbox scenarios run "$SID" --variant profile --backend "$b" -o json
		is "profile agent on $b: exit 0" 0 "$RC"
		RUN=$OUT
		is "profile agent on $b: completed 2/1/1, isolated, destroyed" "completed 2 1 1 true true $b" \
			"$(jq -r '"\(.status) \(.steps_total) \(.steps_ok) \(.steps_error) \(.isolated) \(.destroyed) \(.backend)"' <<<"$RUN")"
		req "$OLV_VIEWER_TOKEN" GET "/v1/m/sandbox/runs/$(jq -r .id <<<"$RUN")/outputs"
		is "profile agent on $b: its own outputs (the variant's mock)" \
			'hello Ada|ok|null hello [[mock-miss:profile:agent:user2@example.test]]|error|mock_miss' \
			"$(jqb '[.outputs[]|"\(.output)|\(.status)|\(.error_kind)"]|join(" ")')"
	done
	# a variant that cannot name a file (.., /) never reaches the agents
	# directory: the built-in mock agent runs it
	req "$OLV_EDITOR_TOKEN" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"../agents/profile","backend":"namespaces"}'
	is_status "variant ../agents/profile names no agent (mock agent runs)" 201
	is "variant ../agents/profile: the mock agent's outputs" \
		"completed 2 1 1 namespaces" "$(jqb '"\(.status) \(.steps_total) \(.steps_ok) \(.steps_error) \(.backend)"')"
else
	skip "agent variants: run.sh --fresh provisions the agents directory"
fi

# ---- robustness fixes of the same round
req "$OLV_VIEWER_TOKEN" POST "/v1/m/sandbox/scenarios/$SID/runs" '{}'
is_error "viewer runs -> 403" 403 forbidden
is "403 names the role required and the token's" "requires role editor; your token has viewer" "$(jqb .error.message)"
req "$OLV_EDITOR_TOKEN" PUT /v1/modules/sandbox '{"enabled":true}'
is "403 for an editor on an admin route" "requires role admin; your token has editor" "$(jqb .error.message)"
OLIVARES_TOKEN=$OLV_ADMIN_TOKEN show olivares modules on bogus
is "olivares modules on bogus: exit 1" 1 "$RC"
if [[ $ERR == *"unknown module bogus"* ]]; then ok "olivares modules on bogus says unknown module"; else not_ok "olivares modules on bogus says unknown module (got $(short "$ERR"))"; fi
req "$OLV_ADMIN_TOKEN" PUT /v1/modules/bogus '{"enabled":true}'
is_error "PUT /v1/modules/bogus -> 404 not_found" 404 not_found
req "$OLV_ADMIN_TOKEN" GET /v1/modules
is "unknown module: the modules are unchanged" '[{"name":"sandbox","enabled":true}]' "$(jqb '.modules|map({name,enabled})|tojson')"

# a burst of 150 parallel requests: all answered by the pool (the listen
# backlog holds them), none gets nginx's 502
seq 150 | xargs -P 150 -I{} curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 \
	-H "Authorization: Bearer $OLV_VIEWER_TOKEN" "$OLIVARES_URL/v1/modules" >burst.txt 2>/dev/null
is "burst of 150 parallel requests: all 200" "150 200" "$(sort burst.txt | uniq -c | awk '{print $1, $2}' | tr '\n' ' ' | sed 's/ $//')"

# a locked SQLite database: the client gets the app's JSON 503 well before
# nginx's 60 s read timeout, and the write is not half-done
db=$OLIVARES_DATA/olivares.db
if [[ -z ${OLIVARES_DSN:-} && -f $db ]] && command -v sqlite3 >/dev/null; then
	before=$(state_counts "$OLV_ADMIN_TOKEN")
	# sqlite3 holds a write lock (BEGIN EXCLUSIVE) while we talk to it
	# through a fifo, then rolls back and quits
	mkfifo lock.fifo
	sqlite3 "$db" <lock.fifo >lock.out 2>&1 &
	locker=$!
	exec 7>lock.fifo
	printf '.timeout 5000\nBEGIN EXCLUSIVE;\nSELECT 1;\n' >&7
	for _ in 1 2 3 4 5 6 7 8 9 10; do [[ -s lock.out ]] && break; sleep 0.2; done
	t0=$(date +%s%N)
	req "$OLV_EDITOR_TOKEN" POST /v1/m/sandbox/scenarios '{"name":"while locked","steps":[{"key":"k","input":"i"}]}'
	t1=$(date +%s%N)
	printf 'ROLLBACK;\n.quit\n' >&7
	exec 7>&-
	wait "$locker" 2>/dev/null
	is_error "write on a locked database -> 503 storage_unavailable" 503 storage_unavailable
	ms=$(((t1 - t0) / 1000000))
	if ((ms < 15000)); then ok "the 503 came in ${ms} ms (< 15 s)"; else not_ok "the 503 came in ${ms} ms (expected < 15 s)"; fi
	is "the locked write left nothing" "$before" "$(state_counts "$OLV_ADMIN_TOKEN")"
	req "$OLV_EDITOR_TOKEN" POST /v1/m/sandbox/scenarios '{"name":"after the lock","steps":[{"key":"k","input":"i"}]}'
	is_status "once the lock is gone, writes work again" 201
else
	skip "locked database: SQLite stacks only"
fi

# [tenant NAME] naming no tenant at start-up: a note in the server's log
# (run.sh --fresh names olv-slots-b before t0950 creates it; demo exists
# from the stack's bootstrap on)
LOG=$OLIVARES_DATA/log/olivares-fcgi.log
if [[ -n ${OLV_SLOTS_TENANTS:-} && -r $LOG ]]; then
	if grep -q 'note: \[tenant olv-slots-b\] names no tenant of the database yet' "$LOG"; then
		ok "the log notes a [tenant NAME] that names no tenant yet"
	else
		not_ok "the log notes a [tenant NAME] that names no tenant yet"
	fi
	if grep -q 'note: \[tenant demo\]' "$LOG"; then
		not_ok "no note for [tenant demo], an existing tenant"
	else
		ok "no note for [tenant demo], an existing tenant"
	fi
else
	skip "start-up notes of [tenant NAME]: run.sh --fresh only"
fi
done_testing
