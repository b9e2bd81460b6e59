#!/usr/bin/env bash
# Comparisons with repeats (docs/scoring.md, "Repeats"): "repeats": R runs
# each side R times, repeat r of the baseline paired with repeat r of the
# candidate, and the verdict comes from the paired deltas (mean, fixed-seed
# bootstrap 95% interval, exact sign test).
#
# On the page's walkthrough scored against the walkthrough suite
# (tests/fixtures/suites/README.md: step-1 equals "first synthetic account"
# weight 2, every step not a mock miss):
#   - a deterministic pair on inproc-mock, repeats 5: "base" resolves step-1
#     only (0.75), "better" step-2 too (a mock tagged with it, 1.0): every
#     delta 0.25, so improved with ci_low == ci_high == 0.25, p 0.0625;
#   - repeats 1: the single-run rules, stats.method "single-run", no
#     interval; no repeats at all reads as 1;
#   - repeats 0, 21, "5", 2.5: 400, nothing queued;
#   - the CLI: compare --repeats, comparisons get (the statistics section);
#   - on namespaces, the agent "right" (always 1.0) against "halfright"
#     (tests/fixtures/agents/half_right.sh: right on even OLIVARES_REPEAT,
#     "wrong account" on step-1 on odd ones, 0.5), repeats 5: deltas
#     0, -0.5, 0, -0.5, 0: inconclusive (the interval [-0.4, 0] is neither
#     above, below nor within tolerance 0) with repeats_needed 8 and the
#     candidate's step-1 as its flaky step; asked twice, the same verdict
#     and statistics bit for bit.
#
# Needs the builtin scorer on tests/fixtures/suites (tests/e2e/run.sh
# --fresh); the namespaces part needs run.sh's "right" and "halfright"
# agents and a host where namespaces' preflight passes.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

AD=$OLV_ADMIN_TOKEN
VW=$OLV_VIEWER_TOKEN
SUITE=walkthrough
M=/v1/m/sandbox

# show CMD...: print the command and its output as comments; OUT, ERR, RC
show() {
	echo "# \$ $*"
	RC=0
	OUT=$("$@" 2>"$E2E_TMP/stderr") || RC=$?
	ERR=$(cat "$E2E_TMP/stderr")
	printf '%s\n' "$OUT" | head -n 60 | sed 's/^/#   /'
	if [[ -n $ERR ]]; then printf '%s\n' "$ERR" | sed 's/^/#   stderr: /'; fi
}

if [[ -z ${OLV_SUITES_DIR:-} || ! -f ${OLV_SUITES_DIR}/$SUITE.json ]]; then
	echo "# skip - this stack was not started by run.sh --fresh with the builtin scorer on tests/fixtures/suites"
	ok "repeats: skipped (no builtin scorer with suite $SUITE on this stack)"
	done_testing
fi

module_on "$AD" || exit 1

STEPS='[{"key":"step-1","input":"agent:user1@example.test"},{"key":"step-2","input":"agent:user2@example.test"}]'
MOCKS='[{"resource":"agent:user1@example.test","response":"first synthetic account"},
 {"resource":"agent:user2@example.test","response":"second synthetic account","variant":"better"}]'

req "$AD" POST $M/scenarios "{\"name\":\"repeats\",\"steps\":$STEPS,\"mocks\":$MOCKS}"
is_status "walkthrough scenario created" 201
SID=$(jqb '.id // empty')
[[ -n $SID ]] || done_testing

# compare BASE CAND EXTRA: POST a comparison as the admin; EXTRA is appended
# to the body's members; the answer is kept in cmp-N.json, named by LAST
NCMP=0
compare() {
	req "$AD" POST $M/comparisons \
		"{\"scenario_id\":\"$SID\",\"baseline\":\"$1\",\"candidate\":\"$2\",\"suite\":\"$SUITE\"${3:-}}"
	NCMP=$((NCMP + 1))
	LAST=$E2E_TMP/cmp-$NCMP.json
	cp "$BODY_FILE" "$LAST"
}
jl() { jq -r "$1" "$LAST" 2>/dev/null; }
jlc() { jq -cS "$1" "$LAST" 2>/dev/null; }
# view PATH: GET an admin view page as the viewer into view.html; vx XPATH
# reads it (text squeezed)
view() {
	VSTATUS=$(curl -s -S -o "$E2E_TMP/view.html" -w '%{http_code}' --max-time 60 \
		-H "Authorization: Bearer $VW" "$OLIVARES_URL$1" 2>/dev/null) || VSTATUS=000
}
vx() { xmllint --html --xpath "$1" "$E2E_TMP/view.html" 2>/dev/null | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'; }
# the decision of the last comparison, for a bit-for-bit comparison
decision() { jlc '{verdict, delta, reason, stats, pass_k, flaky_steps}'; }

# ---- a deterministic pair, repeats 5 -----------------------------------------
compare base better ',"repeats":5'
is_status "base -> better, repeats 5: 201 (decided)" 201
CID=$(jl .id)
is "repeats 5: verdict improved" improved "$(jl .verdict)"
is "repeats 5: recorded" 5 "$(jl .repeats)"
is "repeats 5: stats method paired-bootstrap, n 5" "paired-bootstrap 5" "$(jl '"\(.stats.method) \(.stats.n)"')"
is "repeats 5: delta 0.25, interval [0.25, 0.25]" "0.25 0.25 0.25" \
	"$(jl '"\(.stats.delta) \(.stats.ci_low) \(.stats.ci_high)"')"
is "repeats 5: a zero-width interval above 0 (ci_low == ci_high > 0)" true \
	"$(jl '.stats.ci_low == .stats.ci_high and .stats.ci_low > 0')"
is "repeats 5: the comparison's delta is the mean delta" 0.25 "$(jl .delta)"
is "repeats 5: sign test p 0.0625 (5 positive of 5: 2/32)" 0.0625 "$(jl .stats.p_value)"
is "repeats 5: no repeats_needed when decided" null "$(jl '.stats.repeats_needed')"
is "repeats 5: 5 runs per side, 10 distinct" "5 5 10" \
	"$(jl '"\(.runs.baseline|length) \(.runs.candidate|length) \(.runs.baseline + .runs.candidate|unique|length)"')"
is "repeats 5: baseline/candidate run_id are the first repeat's" true \
	"$(jl '.baseline.run_id == .runs.baseline[0] and .candidate.run_id == .runs.candidate[0]')"
is "repeats 5: nothing flaky (same outputs in every repeat)" '[]' "$(jlc .flaky_steps)"
# the suite's lines: step-1 equals, step-1 and step-2 not a mock miss;
# base misses step-2 every time: 2 of 3 held in every repeat
is "repeats 5: pass^k baseline 2/3, candidate 1" "0.666666667 1" \
	"$(jl '"\(.pass_k.baseline) \(.pass_k.candidate)"')"
all_scored=1
for rid in $(jl '.runs.baseline[]'); do
	req "$VW" GET "$M/runs/$rid"
	[[ $(jqb '"\(.status) \(.scored) \(.score) \(.variant)"') == "completed true 0.75 base" ]] || all_scored=0
done
for rid in $(jl '.runs.candidate[]'); do
	req "$VW" GET "$M/runs/$rid"
	[[ $(jqb '"\(.status) \(.scored) \(.score) \(.variant)"') == "completed true 1 better" ]] || all_scored=0
done
is "repeats 5: every baseline run 0.75, every candidate run 1 (GET each)" 1 "$all_scored"
FIRST=$(decision)
req "$VW" GET "$M/comparisons/$CID"
is_status "GET the comparison (viewer): 200" 200
is "GET shows the same repeats, runs, stats, pass_k, flaky_steps" \
	"$(jq -cS '{repeats, runs, stats, pass_k, flaky_steps}' "$LAST")" \
	"$(jqb '{repeats, runs, stats, pass_k, flaky_steps}' | jq -cS .)"
view "/admin/comparisons/$CID"
is "admin view: comparison page 200" 200 "$VSTATUS"
is "admin view: Statistics section (repeats, method, n)" "5|paired-bootstrap|5" \
	"$(vx 'string(//*[@id="stats-repeats"])')|$(vx 'string(//*[@id="stats-method"])')|$(vx 'string(//*[@id="stats-n"])')"
is "admin view: mean delta, interval, p-value, repeats needed" "+0.2500|[+0.2500, +0.2500]|0.0625|—" \
	"$(vx 'string(//*[@id="stats-delta"])')|$(vx 'string(//*[@id="stats-ci"])')|$(vx 'string(//*[@id="stats-p-value"])')|$(vx 'string(//*[@id="stats-repeats-needed"])')"
is "admin view: pass^k per side" "0.666666667|1.0000" \
	"$(vx 'string(//*[@id="pass-k-baseline"])')|$(vx 'string(//*[@id="pass-k-candidate"])')"
is "admin view: 5 runs per side, each linking its page" "5 5 1" \
	"$(vx 'count(//*[@id="baseline-runs"]//li/a)') $(vx 'count(//*[@id="candidate-runs"]//li/a)') $(vx "count(//*[@id=\"candidate-runs\"]//a[@href=\"/admin/runs/$(jl '.runs.candidate[4]')\"])")"
is "admin view: no flaky step, said" "1 0" "$(vx 'count(//*[@id="no-flaky-steps"])') $(vx 'count(//table[@id="flaky-steps"])')"
compare base better ',"repeats":5'
is "the same comparison again: identical verdict and statistics" "$FIRST" "$(decision)"
isnt "the same comparison again: another comparison" "$CID" "$(jl .id)"

# ---- repeats 1, and no repeats -----------------------------------------------
compare base better ',"repeats":1'
is_status "repeats 1: 201" 201
is "repeats 1: the single-run rules (improved, delta 0.25)" "improved 0.25" "$(jl '"\(.verdict) \(.delta)"')"
is "repeats 1: stats single-run, n 1, delta 0.25, no interval nor p-value" \
	'{"ci_high":null,"ci_low":null,"delta":0.25,"method":"single-run","n":1,"p_value":null}' \
	"$(jlc .stats)"
is "repeats 1: one run per side" "1 1" "$(jl '"\(.runs.baseline|length) \(.runs.candidate|length)"')"
view "/admin/comparisons/$(jl .id)"
is "admin view, repeats 1: single-run, no interval (said)" "single-run|— (no variance estimate)|—" \
	"$(vx 'string(//*[@id="stats-method"])')|$(vx 'string(//*[@id="stats-ci"])')|$(vx 'string(//*[@id="stats-p-value"])')"
compare base better
is "no repeats: recorded as 1, single-run" "1 single-run" "$(jl '"\(.repeats) \(.stats.method)"')"

# ---- repeats out of range: 400, nothing queued -------------------------------
before=$(state_counts "$AD")
ncmp_before=$(count_all "$AD" $M/comparisons comparisons)
for bad in 0 21 '"5"' 2.5 -1 null; do
	compare base better ",\"repeats\":$bad"
	is_status "repeats $bad: 400" 400
	is "repeats $bad: the error names repeats" repeats "$(jl '.error.field // .field // empty')"
done
is "bad repeats: no scenario, run or audit event added" "$before" "$(state_counts "$AD")"
is "bad repeats: no comparison added" "$ncmp_before" "$(count_all "$AD" $M/comparisons comparisons)"

# ---- the CLI ------------------------------------------------------------------
export OLIVARES_TOKEN=$AD
show olivares sandbox compare --scenario "$SID" --baseline base --candidate better --suite $SUITE --repeats 3 -o json
is "CLI compare --repeats 3: exit 0" 0 "$RC"
is "CLI compare --repeats 3: improved, 3 runs per side, [0.25, 0.25]" "improved 3 3 0.25 0.25" \
	"$(jq -r '"\(.verdict) \(.runs.baseline|length) \(.runs.candidate|length) \(.stats.ci_low) \(.stats.ci_high)"' <<<"$OUT" 2>/dev/null)"
CLI_CID=$(jq -r .id <<<"$OUT" 2>/dev/null)
show olivares sandbox comparisons get "$CLI_CID"
is "CLI comparisons get: exit 0" 0 "$RC"
is "CLI comparisons get: repeats field" "repeats 3" "$(grep -E '^repeats +' <<<"$OUT" | tr -s ' ')"
is "CLI comparisons get: statistics method" "method paired-bootstrap" "$(grep -E '^method +' <<<"$OUT" | tr -s ' ')"
is "CLI comparisons get: the interval" "ci_low 0.25|ci_high 0.25" \
	"$(grep -E '^ci_(low|high) +' <<<"$OUT" | tr -s ' ' | paste -sd'|')"
is "CLI comparisons get: pass^k per side" "pass_k_baseline 0.666666667|pass_k_candidate 1" \
	"$(grep -E '^pass_k_' <<<"$OUT" | tr -s ' ' | paste -sd'|')"
is "CLI comparisons get: runs (3 + 3 rows) and no flaky step" "runs (6):|flaky steps (0):" \
	"$(grep -E '^(runs|flaky steps) \(' <<<"$OUT" | paste -sd'|')"
is "CLI comparisons get: candidate repeat 2's run" 1 \
	"$(grep -cE "^candidate +2 +$(jq -r '.runs.candidate[2]' <<<"$(olivares sandbox comparisons get "$CLI_CID" -o json)")\$" <<<"$OUT")"
show olivares sandbox compare --scenario "$SID" --baseline base --candidate better --suite $SUITE --repeats x
is "CLI compare --repeats x: usage error (2)" 2 "$RC"
show olivares sandbox compare --scenario "$SID" --baseline base --candidate better --suite $SUITE --repeats 21
is "CLI compare --repeats 21: refused by the server (1)" 1 "$RC"
show olivares sandbox gate --scenario "$SID"
is "CLI gate on the newest (repeats 3, improved): exit 0" 0 "$RC"

# ---- half right against right, on namespaces -----------------------------------
need_os_agent halfright "repeats: the half-right agent"
need_os_agent right "repeats: the right agent"
compare right halfright ',"repeats":5,"backend":"namespaces"'
is_status "right -> halfright, repeats 5, namespaces: 201" 201
is "half right: every run completed and scored" "completed true completed true" \
	"$(jl '"\(.baseline.status) \(.baseline.scored) \(.candidate.status) \(.candidate.scored)"')"
is "half right: verdict inconclusive" inconclusive "$(jl .verdict)"
is "half right: mean delta -0.2 (0, -0.5, 0, -0.5, 0)" -0.2 "$(jl .stats.delta)"
is "half right: interval [-0.4, 0], p 0.5 (2 negative of 2)" "-0.4 0 0.5" \
	"$(jl '"\(.stats.ci_low) \(.stats.ci_high) \(.stats.p_value)"')"
is "half right: repeats_needed 8 (ceil(3.8416 * 0.075 / 0.04))" 8 "$(jl .stats.repeats_needed)"
is "half right: flaky steps: the candidate's step-1" '[{"key":"step-1","seq":1,"side":"candidate"}]' \
	"$(jlc .flaky_steps)"
is "half right: pass^k baseline 1, candidate 2/3" "1 0.666666667" "$(jl '"\(.pass_k.baseline) \(.pass_k.candidate)"')"
is "half right: the reason says why and how many repeats would decide" \
	"the 95% interval [-0.4, 0] of the mean delta -0.2 crosses the tolerance 0; about 8 repeats would likely decide it" \
	"$(jl .reason)"
scores=""
for rid in $(jl '.runs.candidate[]'); do
	req "$VW" GET "$M/runs/$rid"
	scores="$scores $(jqb .score)"
done
is "half right: candidate runs score 1, 0.5, 1, 0.5, 1 by repeat" " 1 0.5 1 0.5 1" "$scores"
view "/admin/comparisons/$(jl .id)"
is "admin view, half right: verdict, interval, repeats needed" "inconclusive|[-0.4000, +0.0000]|8" \
	"$(vx 'string(//*[@id="verdict"])')|$(vx 'string(//*[@id="stats-ci"])')|$(vx 'string(//*[@id="stats-repeats-needed"])')"
is "admin view, half right: the flaky step (side, step, key)" "1|candidate 1 step-1" \
	"$(vx 'count(//table[@id="flaky-steps"]//tr[@class="flaky-step"])')|$(vx 'string(//tr[@class="flaky-step"]/td[@class="side"])') $(vx 'string(//tr[@class="flaky-step"]/td[@class="seq"])') $(vx 'string(//tr[@class="flaky-step"]/td[@class="key"])')"
HALF=$(decision)
compare right halfright ',"repeats":5,"backend":"namespaces"'
is "half right again: identical verdict and statistics" "$HALF" "$(decision)"

done_testing
