#!/usr/bin/env bash
# The agent a run ran: the agents listing (name, size, sha256 as sha256sum
# says, interpreter and whether the jail holds it), each run's agent
# {name, sha256} (the built-in ones, a program's digest), an agent whose
# interpreter is not inside the jail refused naming [runner] binds, a
# comparison of the built-in agent with itself (same_agent, the CLI's
# warning; none when the mocks differ), JUnit's agent properties, and the
# credential formats refused with 422 naming the field.
#
# Needs the agents directory of tests/e2e/run.sh --fresh (profile, slow)
# for the listing and the program runs, the namespaces backend for those,
# and the builtin scorer on tests/fixtures/suites for the comparisons:
# otherwise those checks are skipped with a "# skip" line.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1
M=/v1/m/sandbox

show() {
	echo "# \$ $*"
	RC=0
	OUT=$("$@" 2>"$E2E_TMP/stderr") || RC=$?
	ERR=$(cat "$E2E_TMP/stderr")
	printf '%s\n' "$OUT" | head -n 20 | sed 's/^/#   /'
	if [[ -n $ERR ]]; then printf '%s\n' "$ERR" | sed 's/^/#   stderr: /'; fi
}

module_on "$OLV_ADMIN_TOKEN" || exit 1
ED=$OLV_EDITOR_TOKEN
AGENTS=${OLV_AGENTS_DIR:-}
HAVE_AGENTS=0
[[ -x $AGENTS/profile && -x $AGENTS/slow ]] && HAVE_AGENTS=1
HAVE_NS=0
"$OLIVARES_BUILD/olivares-runner" --preflight namespaces >/dev/null 2>&1 && HAVE_NS=1
VENV=/opt/olv-e2e-no-venv-$$/bin/python

# ---- the listing ----------------------------------------------------------------
if ((HAVE_AGENTS)); then
	printf '%s\n' "#!$VENV" 'print("hello")' >"$AGENTS/venvbot"
	chmod 0755 "$AGENTS/venvbot"
	req "$OLV_VIEWER_TOKEN" GET $M/agents
	is_status "GET $M/agents as a viewer" 200
	cp "$BODY_FILE" agents.json
	is "agents_dir is the configured one, and it exists" "$AGENTS true" \
		"$(jq -r '"\(.agents_dir) \(.agents_dir_exists)"' agents.json)"
	is "profile: its sha256 is sha256sum's" "$(sha256sum "$AGENTS/profile" | cut -d' ' -f1)" \
		"$(jq -r '.agents[]|select(.name=="profile")|.sha256' agents.json)"
	is "profile: its size is the file's" "$(stat -c %s "$AGENTS/profile")" \
		"$(jq -r '.agents[]|select(.name=="profile")|.size' agents.json)"
	is "profile, a binary: no interpreter" "null null" \
		"$(jq -r '.agents[]|select(.name=="profile")|"\(.interpreter) \(.interpreter_in_jail)"' agents.json)"
	is "slow, a /bin/sh script: its interpreter, inside the jail" "/bin/sh true" \
		"$(jq -r '.agents[]|select(.name=="slow")|"\(.interpreter) \(.interpreter_in_jail)"' agents.json)"
	is "venvbot: its interpreter is not inside the jail, and why" \
		"$VENV false agent program venvbot: its interpreter $VENV is not inside the jail (add its directory to [runner] binds)" \
		"$(jq -r '.agents[]|select(.name=="venvbot")|"\(.interpreter) \(.interpreter_in_jail) \(.reason)"' agents.json)"
	is "escape and dangling (out of the directory) are not listed" "" \
		"$(jq -r '[.agents[].name|select(.=="escape" or .=="dangling")]|join(" ")' agents.json)"
	is "sorted by name" "$(jq -r '[.agents[].name]|sort|join(" ")' agents.json)" \
		"$(jq -r '[.agents[].name]|join(" ")' agents.json)"
	export OLIVARES_TOKEN=$OLV_VIEWER_TOKEN
	show olivares sandbox agents list -o json
	is "olivares sandbox agents list -o json: the API's agents" "$(jq -c .agents agents.json)" \
		"$(jq -c .agents <<<"$OUT" 2>/dev/null)"
	show olivares sandbox agents list
	is "olivares sandbox agents list: the table's header" "NAME SIZE SHA256 INTERPRETER IN_JAIL REASON" \
		"$(head -n 1 <<<"$OUT" | tr -s ' ')"
	is "olivares sandbox agents list: venvbot's row says NO" "NO" \
		"$(awk '$1=="venvbot"{print $5}' <<<"$OUT")"
else
	echo "# skip - no agents directory of run.sh --fresh: the listing's values"
fi

# ---- a run's agent --------------------------------------------------------------
req "$ED" POST $M/scenarios '{"name":"identity","steps":[{"key":"step-1","input":"agent:user1@example.test"}],"mocks":[{"resource":"agent:user1@example.test","response":"first synthetic account"}]}'
is_status "a one-step scenario" 201
SID=$(jqb '.id // empty')
req "$ED" POST "$M/scenarios/$SID/runs" '{"backend":"inproc-mock"}'
is_status "a run on inproc-mock, no variant" 201
is "its agent is the built-in inproc-mock one, no sha256" '{"name":"builtin:inproc-mock","sha256":null}' \
	"$(jqb '.agent|tojson')"
is "its mocks_digest is 64 hex" 64 "$(jqb '.mocks_digest|length')"
if ((HAVE_NS)); then
	req "$ED" POST "$M/scenarios/$SID/runs" '{"backend":"namespaces","variant":"no-such-agnet"}'
	is_status "a run on namespaces whose variant names no program" 201
	is "its agent is the built-in mock agent, visible" '{"name":"builtin:mock-agent","sha256":null}' \
		"$(jqb '.agent|tojson')"
	if ((HAVE_AGENTS)); then
		req "$ED" POST "$M/scenarios/$SID/runs" '{"backend":"namespaces","variant":"profile"}'
		is_status "a run of agent program profile on namespaces" 201
		PRID=$(jqb '.id // empty')
		is "its agent: profile and the file's sha256" \
			"profile $(sha256sum "$AGENTS/profile" | cut -d' ' -f1)" "$(jqb '"\(.agent.name) \(.agent.sha256)"')"
		req "$OLV_VIEWER_TOKEN" GET "$M/runs/$PRID"
		is "GET the run: the same agent" "profile" "$(jqb '.agent.name')"
		req "$OLV_VIEWER_TOKEN" GET "$M/runs/$PRID/junit"
		is_status "its JUnit" 200
		if grep -q '<property name="agent" value="profile"/>' "$BODY_FILE" &&
			grep -q "<property name=\"agent_sha256\" value=\"$(sha256sum "$AGENTS/profile" | cut -d' ' -f1)\"/>" "$BODY_FILE"; then
			ok "JUnit carries the agent and agent_sha256 properties"
		else
			not_ok "JUnit carries the agent and agent_sha256 properties (got $(short "$BODY"))"
		fi
		curl -s -S -o "$E2E_TMP/page.html" -H "Authorization: Bearer $OLV_VIEWER_TOKEN" "$OLIVARES_URL/admin/runs/$PRID"
		is "the admin view's run page: #run-agent and #run-agent-sha256" \
			"profile|$(sha256sum "$AGENTS/profile" | cut -d' ' -f1)" \
			"$(for id in run-agent run-agent-sha256; do xmllint --html --xpath "string(//dl[@id=\"run-summary\"]//dd[@id=\"$id\"])" "$E2E_TMP/page.html" 2>/dev/null | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'; done | paste -sd'|')"
		export OLIVARES_TOKEN=$OLV_VIEWER_TOKEN
		show olivares sandbox runs get "$PRID"
		if grep -q "^agent .*profile" <<<"$OUT"; then ok "olivares sandbox runs get shows the agent"; else not_ok "olivares sandbox runs get shows the agent"; fi
		req "$ED" POST "$M/scenarios/$SID/runs" '{"backend":"namespaces","variant":"venvbot"}'
		is_error "a variant whose interpreter is not inside the jail: 422" 422 invalid
		is "the refusal names the variant, the interpreter and [runner] binds" \
			"variant|agent program venvbot: its interpreter $VENV is not inside the jail (add its directory to [runner] binds)" \
			"$(jqb '"\(.error.field)|\(.error.message)"')"
	else
		echo "# skip - no agents directory: program runs"
	fi
else
	echo "# skip - the namespaces backend's preflight fails here: OS-level runs"
fi
[[ -n $AGENTS ]] && rm -f "$AGENTS/venvbot"

# ---- comparisons of the same agent -------------------------------------------------
if [[ -n ${OLV_SUITES_DIR:-} && -f $OLV_SUITES_DIR/walkthrough.json ]]; then
	req "$OLV_ADMIN_TOKEN" POST $M/comparisons "{\"scenario_id\":\"$SID\",\"baseline\":\"v1\",\"candidate\":\"v2\",\"suite\":\"walkthrough\"}"
	is_status "a comparison of v1 and v2, neither naming a program" 201
	is "same_agent: true, both sides the built-in agent" "true builtin:inproc-mock builtin:inproc-mock" \
		"$(jqb '"\(.same_agent) \(.baseline.agent.name) \(.candidate.agent.name)"')"
	export OLIVARES_TOKEN=$OLV_ADMIN_TOKEN
	show olivares sandbox compare --scenario "$SID" --baseline v1 --candidate v2 --suite walkthrough -o json
	is "olivares sandbox compare: exit 0, same_agent in its JSON" "0 true" "$RC $(jq -r .same_agent <<<"$OUT" 2>/dev/null)"
	if [[ $ERR == *"olivares: warning: both sides ran the same agent program (builtin:inproc-mock) with the same mocks"* ]]; then
		ok "olivares sandbox compare warns on stderr: the same agent with the same mocks"
	else
		not_ok "olivares sandbox compare warns on stderr (got $(short "$ERR"))"
	fi
	export OLIVARES_TOKEN=$OLV_VIEWER_TOKEN
	show olivares sandbox gate --scenario "$SID"
	if [[ $ERR == *"olivares: warning: both sides ran the same agent program"* ]]; then
		ok "olivares sandbox gate warns too"
	else
		not_ok "olivares sandbox gate warns too (got $(short "$ERR"))"
	fi
	# a mock of v2's own: the sides see other mocks, nothing to warn about
	req "$ED" POST $M/scenarios '{"name":"identity-2","steps":[{"key":"step-1","input":"agent:user1@example.test"}],"mocks":[{"resource":"agent:user1@example.test","response":"first synthetic account"},{"resource":"agent:user1@example.test","response":"other","variant":"v2"}]}'
	SID2=$(jqb '.id // empty')
	export OLIVARES_TOKEN=$OLV_ADMIN_TOKEN
	show olivares sandbox compare --scenario "$SID2" --baseline v1 --candidate v2 --suite walkthrough -o json
	is "other mocks: same_agent false, no warning" "false " "$(jq -r .same_agent <<<"$OUT" 2>/dev/null) $(grep -c 'same agent program' <<<"$ERR" | sed 's/^0$//')"
else
	echo "# skip - no builtin scorer on tests/fixtures/suites: comparisons"
fi

# ---- credential formats -------------------------------------------------------------
HEX=$(repeat_char a 32)$(repeat_char 0 32)
refused() {
	req "$ED" POST $M/scenarios "{\"name\":\"secret\",\"steps\":[{\"key\":\"k\",\"input\":$1}]}"
	is_status "$2 in a step input: 422" 422
	if [[ $(jqb '(.error.field // "") + " " + .error.message') == *"steps[0].input"*credential* ]]; then
		ok "$2: the error names the field"
	else
		not_ok "$2: the error names the field (got $(short "$BODY"))"
	fi
}
refused '"-----begin rsa private key-----\nMIIE"' "a lower-case PEM label"
refused '"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----"' "an SSH2 private key"
refused '"PuTTY-User-Key-File-3: ssh-ed25519"' "a PuTTY key"
refused '"Authorization: Basic dXNlcjpwYXNz"' "Basic credentials"
refused '"https://alice:s3cret@example.test/"' "a URL with a password"
refused "\"token $HEX\"" "a token's 64 hex without olv_"
refused "\"olv%5F$HEX\"" "a URL-encoded token"
req "$ED" POST "$M/scenarios/$SID/runs" "{\"variant\":\"https://u:p@h\"}"
is_error "a variant with a URL password: 422" 422 invalid
is "the variant is the field named" variant "$(jqb '.error.field')"
# near misses: kept
req "$ED" POST $M/scenarios "{\"name\":\"near-misses\",\"steps\":[{\"key\":\"k\",\"input\":\"ssh://git@example.test/repo\"}],\"mocks\":[{\"resource\":\"ssh://git@example.test/repo\",\"response\":\"{\\\"sha256\\\": \\\"$HEX\\\", \\\"image\\\": \\\"app@sha256:$HEX\\\", \\\"auth\\\": \\\"Basic <credentials>\\\"}\"}]}"
is_status "a user@host URL and labelled digests are accepted" 201

done_testing
