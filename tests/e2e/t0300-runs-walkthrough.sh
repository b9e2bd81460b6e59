#!/usr/bin/env bash
# The page's walkthrough ("Exécuter un scénario généré"), with the CLI exactly
# as the page writes it, every stated value asserted; then the same with
# --seed-file - (stdin), and with a template ending in a newline (which then
# no longer matches the mock).
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

# show CMD...: print the command and its output as comments, keep the
# output in OUT and the exit status in RC
show() {
	echo "# \$ $*"
	RC=0
	OUT=$("$@" 2>"$E2E_TMP/stderr") || RC=$?
	printf '%s\n' "$OUT" | head -n 60 | sed 's/^/#   /'
	local n
	n=$(printf '%s\n' "$OUT" | wc -l)
	if ((n > 60)); then echo "#   ... ($((n - 60)) more lines)"; fi
	if [[ -s $E2E_TMP/stderr ]]; then sed 's/^/#   stderr: /' "$E2E_TMP/stderr"; fi
}

# olivares modules on sandbox (an admin act)
OLIVARES_TOKEN=$OLV_ADMIN_TOKEN show olivares modules on sandbox
is "olivares modules on sandbox: exit 0" 0 "$RC"
OLIVARES_TOKEN=$OLV_ADMIN_TOKEN show olivares modules list -o json
is "modules list shows sandbox enabled" true "$(jq -r '(if type=="array" then . else .modules end)[]|select(.name=="sandbox")|.enabled' <<<"$OUT" 2>/dev/null)"

export OLIVARES_TOKEN=$OLV_EDITOR_TOKEN

# walk SEED_MODE: the five commands of the page. SEED_MODE "file" uses
# seed.txt, "stdin" pipes the template into --seed-file -.
walk() {
	local mode=$1 tmpl=$2
	echo "# --- walkthrough ($mode)"
	echo "# \$ printf '%s' ${tmpl@Q} > seed.txt"
	printf '%s' "$tmpl" >seed.txt
	printf '%s\n' '[{"resource":"agent:user1@example.test","response":"first synthetic account"}]' >mocks.json
	echo "# \$ cat mocks.json"
	sed 's/^/#   /' mocks.json
	if [[ $mode == stdin ]]; then
		echo "# \$ printf '%s' ${tmpl@Q} | olivares sandbox generate --count 2 --seed-file - -o json > steps.json"
		RC=0
		printf '%s' "$tmpl" | olivares sandbox generate --count 2 --seed-file - -o json >steps.json 2>"$E2E_TMP/stderr" || RC=$?
	else
		echo "# \$ olivares sandbox generate --count 2 --seed-file seed.txt -o json > steps.json"
		RC=0
		olivares sandbox generate --count 2 --seed-file seed.txt -o json >steps.json 2>"$E2E_TMP/stderr" || RC=$?
	fi
	sed 's/^/#   /' steps.json
	is "$mode: generate exit 0" 0 "$RC"
	GEN_INPUTS=$(jq -c 'map(.input)' steps.json 2>/dev/null)

	show olivares sandbox scenarios create --name generated --steps-file steps.json --mocks-file mocks.json -o json
	is "$mode: scenarios create exit 0" 0 "$RC"
	SID=$(jq -r '.id // empty' <<<"$OUT" 2>/dev/null)
	if [[ $SID =~ ^[0-9a-f]{32}$ ]]; then ok "$mode: scenario id is 32 hex"; else not_ok "$mode: scenario id is 32 hex (got $(short "$SID"))"; fi
	is "$mode: scenario name" generated "$(jq -r .name <<<"$OUT" 2>/dev/null)"
	is "$mode: scenario steps are the generated ones" "$GEN_INPUTS" "$(jq -c '[.steps[].input]' <<<"$OUT" 2>/dev/null)"
	is "$mode: scenario mock" '[{"resource":"agent:user1@example.test","response":"first synthetic account"}]' "$(jq -c '[.mocks[]|{resource,response}]' <<<"$OUT" 2>/dev/null)"

	show olivares sandbox scenarios run "$SID" --variant candidate -o json
	is "$mode: scenarios run exit 0" 0 "$RC"
	RID=$(jq -r '.id // empty' <<<"$OUT" 2>/dev/null)
	RUN_FROM_CREATE=$(jq -S 'del(.created_by)' <<<"$OUT" 2>/dev/null)
	if [[ $RID =~ ^[0-9a-f]{32}$ ]]; then ok "$mode: run id is 32 hex"; else not_ok "$mode: run id is 32 hex (got $(short "$RID"))"; fi

	show olivares sandbox runs get "$RID" -o json
	is "$mode: runs get exit 0" 0 "$RC"
	RUN=$OUT
	is "$mode: runs get gives the run that run returned" "$RUN_FROM_CREATE" "$(jq -S 'del(.created_by)' <<<"$RUN" 2>/dev/null)"

	show olivares sandbox runs outputs "$RID" -o json
	is "$mode: runs outputs exit 0" 0 "$RC"
	OUTS=$(jq -c 'if type=="array" then . else .outputs end' <<<"$OUT" 2>/dev/null)
}

runf() { jq -r "$1" <<<"$RUN" 2>/dev/null; }
outf() { jq -r "$1" <<<"$OUTS" 2>/dev/null; }

page_values() {
	local mode=$1
	is "$mode: two inputs agent:user1@example.test, agent:user2@example.test" '["agent:user1@example.test","agent:user2@example.test"]' "$GEN_INPUTS"
	is "$mode: output 1 is the mock's response" "first synthetic account" "$(outf '.[0].output')"
	is "$mode: output 1 status ok" ok "$(outf '.[0].status')"
	is "$mode: output 2 is the mock-miss marker" "[[mock-miss:agent:user2@example.test]]" "$(outf '.[1].output')"
	is "$mode: output 2 status error, kind mock_miss" "error mock_miss" "$(outf '.[1].status + " " + .[1].error_kind')"
	is "$mode: outputs in seq order with their inputs" "1 agent:user1@example.test|2 agent:user2@example.test" "$(outf 'map("\(.seq) \(.input)")|join("|")')"
	is "$mode: status completed" completed "$(runf .status)"
	is "$mode: steps_total 2" 2 "$(runf .steps_total)"
	is "$mode: steps_ok 1" 1 "$(runf .steps_ok)"
	is "$mode: steps_error 1" 1 "$(runf .steps_error)"
	is "$mode: isolated true" true "$(runf .isolated)"
	is "$mode: destroyed true" true "$(runf .destroyed)"
	is "$mode: variant candidate" candidate "$(runf .variant)"
	is "$mode: backend inproc-mock" inproc-mock "$(runf .backend)"
	is "$mode: kind simulation" simulation "$(runf .kind)"
	is "$mode: not scored (no scoring asked)" "false null null" "$(runf '"\(.scored) \(.score) \(.passed)"')"
	is "$mode: ran scenario version 1 of $SID" "$SID 1" "$(runf '"\(.scenario_id) \(.scenario_version)"')"
	if [[ $(runf .output_digest) =~ ^[0-9a-f]{64}$ ]]; then ok "$mode: output digest is a SHA-256"; else not_ok "$mode: output digest is a SHA-256 (got $(runf .output_digest))"; fi
	# each step timed by the runner: above 0, and all of them within the
	# run (its timestamps are to the ms: the run took under wall + 1 ms)
	local wall
	wall=$(($(date -u -d "$(runf .finished_at)" +%s%3N) - $(date -u -d "$(runf .started_at)" +%s%3N)))
	is "$mode: every output has a duration_ms above 0" true "$(outf 'map(.duration_ms|type == "number" and . > 0)|(length == 2 and all)')"
	is "$mode: the steps' durations fit in the run's wall time ($wall ms)" true \
		"$(jq -r --argjson w "$wall" 'map(.duration_ms)|all(type == "number") and add < $w + 1' <<<"$OUTS" 2>/dev/null)"
}

walk file '{{subject_kind}}:user{{index}}@example.test'
page_values file
digest_file=$(runf .output_digest)
rid_file=$RID

walk stdin '{{subject_kind}}:user{{index}}@example.test'
page_values stdin
is "same outputs, same digest (file and stdin runs)" "$digest_file" "$(runf .output_digest)"
isnt "two runs, two ids" "$rid_file" "$RID"

# a template ending in a newline: the inputs end in "\n" and the first no
# longer matches the mock (exact bytes)
walk newline $'{{subject_kind}}:user{{index}}@example.test\n'
is "newline: inputs keep the final newline" '["agent:user1@example.test\n","agent:user2@example.test\n"]' "$GEN_INPUTS"
is "newline: output 1 is a mock-miss with the newline" '"[[mock-miss:agent:user1@example.test\n]]"' "$(outf '.[0].output|tojson')"
is "newline: output 2 is a mock-miss with the newline" '"[[mock-miss:agent:user2@example.test\n]]"' "$(outf '.[1].output|tojson')"
is "newline: status completed" completed "$(runf .status)"
is "newline: steps_total 2, steps_ok 0, steps_error 2" "2 0 2" "$(runf '"\(.steps_total) \(.steps_ok) \(.steps_error)"')"
is "newline: isolated and destroyed" "true true" "$(runf '"\(.isolated) \(.destroyed)"')"

# the runs list knows the runs
show olivares sandbox runs list -o json
is "runs list exit 0" 0 "$RC"
is "runs list holds the walkthrough runs" true "$(jq --arg a "$rid_file" --arg b "$RID" '(if type=="array" then . else .runs end)|map(.id)|(index($a)!=null and index($b)!=null)' <<<"$OUT" 2>/dev/null)"

# viewer reads the same run (the page: a viewer may inspect)
req "$OLV_VIEWER_TOKEN" GET "/v1/m/sandbox/runs/$RID/outputs"
is_status "viewer reads the outputs" 200
# the table of outputs shows each step's duration (the JSON's, as printed)
show olivares sandbox runs outputs "$RID"
is "runs outputs (table): a DURATION_MS column before OUTPUT" "SEQ KEY STATUS DURATION_MS OUTPUT" "$(head -n 1 <<<"$OUT" | tr -s ' ')"
# (the STATUS cell may hold a space: the column is found by its title)
cell=$(awk 'NR==1{p=index($0,"DURATION_MS")} NR==2{split(substr($0,p),f," "); print f[1]; exit}' <<<"$OUT")
is "runs outputs (table): step 1's duration_ms ($cell)" true \
	"$(jq -n --argjson c "${cell:-null}" --argjson w "$(jqb '.outputs[0].duration_ms')" '$c == $w and $c > 0' 2>/dev/null)"
# isolated: true stands on the runner's seccomp filter: the runner installs
# it as a run does and shows what it refuses
for op in open socket fork exec; do
	out=$("$OLIVARES_BUILD/olivares-runner" --probe "$op" --backend inproc-mock 2>/dev/null)
	is "runner confinement: $op refused once the filter is in" false "$(jq -r .allowed <<<"$out" 2>/dev/null)"
done
done_testing
