#!/usr/bin/env bash
# Synthetic data (POST /v1/m/sandbox/synthetic-data and `olivares sandbox
# generate`): the page's example, defaults, the only two placeholders, one
# left-to-right pass, bytes kept as they are, the audit event holding only the
# count, and generation writing no scenario.
. "$(dirname "$0")/lib.sh"
e2e_require
module_on "$OLV_ADMIN_TOKEN" || exit 1
ED=$OLV_EDITOR_TOKEN
G=/v1/m/sandbox/synthetic-data

before=$(state_counts "$OLV_ADMIN_TOKEN")

# the page's request, as written there
req "$ED" POST $G '{"subject_kind":"agent","count":2,"seed":"{{subject_kind}}:user{{index}}@example.test"}'
is_status "page example: 200" 200
is "page example: count 2" 2 "$(jqb .count)"
is "page example: two samples" 2 "$(jqb '.samples|length')"
is "page example: first input" "agent:user1@example.test" "$(jqb '.samples[0].input')"
is "page example: second input" "agent:user2@example.test" "$(jqb '.samples[1].input')"
is "page example: keys step-1, step-2" "step-1 step-2" "$(jqb '[.samples[].key]|join(" ")')"
is "page example: samples hold key and input only" '["input","key"]' "$(jqb '[.samples[]|keys]|unique|.[0]|tojson')"

# defaults: subject agent, count 10, template {{subject_kind}}-sample-{{index}}
req "$ED" POST $G '{}'
is_status "defaults: 200" 200
is "defaults: count 10" 10 "$(jqb '.samples|length')"
is "defaults: first input agent-sample-1" "agent-sample-1" "$(jqb '.samples[0].input')"
is "defaults: last input agent-sample-10" "agent-sample-10" "$(jqb '.samples[9].input')"
is "defaults: last key step-10" "step-10" "$(jqb '.samples[9].key')"

req "$ED" POST $G '{"subject_kind":"bot","count":3}'
is "subject only: default template with subject bot" "bot-sample-1 bot-sample-2 bot-sample-3" "$(jqb '[.samples[].input]|join(" ")')"

# only {{index}} and {{subject_kind}}; every other text literal
req "$ED" POST $G '{"count":1,"seed":"{{INDEX}}|{{ index }}|{{foo}}|{index}|{{Subject_Kind}}|{{index}}"}'
is "other placeholders stay literal" "{{INDEX}}|{{ index }}|{{foo}}|{index}|{{Subject_Kind}}|1" "$(jqb '.samples[0].input')"

# one pass: substituted text is never scanned again
req "$ED" POST $G '{"subject_kind":"{{index}}","count":2,"seed":"{{subject_kind}}/{{index}}"}'
is "substituted subject is not expanded again" "{{index}}/2" "$(jqb '.samples[1].input')"

# stray braces around a placeholder
req "$ED" POST $G '{"count":1,"seed":"{{{index}}}{{"}'
is "stray braces kept" "{1}{{" "$(jqb '.samples[0].input')"

# CR, LF and a final newline are kept byte for byte
req "$ED" POST $G '{"count":2,"seed":"a\r\n{{index}}\n"}'
is "CR and final newline kept" '"a\r\n2\n"' "$(jqb '.samples[1].input|tojson')"

# UTF-8 text passes through
req "$ED" POST $G '{"subject_kind":"agénte","count":1,"seed":"{{subject_kind}}→{{index}}"}'
is "UTF-8 subject and template" "agénte→1" "$(jqb '.samples[0].input')"

# the audit event of a generation holds only the count
req "$OLV_ADMIN_TOKEN" GET '/v1/m/sandbox/audit?limit=500'
is_status "audit readable by admin" 200
is "audit: generate events carry only {count}" '[["count"]]' "$(jqb '[.events[]|select(.action=="sandbox.generate")|.detail|keys]|unique|tojson')"
n=$(jqb '[.events[]|select(.action=="sandbox.generate")]|length')
if [[ $n =~ ^[0-9]+$ ]] && ((n >= 8)); then ok "audit: one event per generation ($n)"; else not_ok "audit: one event per generation (expected >= 8, got $n)"; fi
if grep -q 'user1@example.test\|sample-1\|agénte' "$BODY_FILE"; then
	not_ok "audit: no generated input recorded"
else
	ok "audit: no generated input recorded"
fi
is "audit: count of the page example recorded" "true" "$(jqb '[.events[]|select(.action=="sandbox.generate")|.detail.count]|index(2) != null')"

after=$(state_counts "$OLV_ADMIN_TOKEN")
is "generation writes no scenario and no run" "${before% audit=*}" "${after% audit=*}"

# the CLI
cd "$E2E_TMP" || exit 1
printf '%s' '{{subject_kind}}:user{{index}}@example.test' >seed.txt
if out=$(OLIVARES_TOKEN=$ED olivares sandbox generate --count 2 --seed-file seed.txt -o json 2>err); then
	is "cli generate: the steps array" '[{"key":"step-1","input":"agent:user1@example.test"},{"key":"step-2","input":"agent:user2@example.test"}]' "$(jq -c 'map({key,input})' <<<"$out")"
else
	not_ok "cli generate --seed-file exited non-zero: $(cat err)"
fi
out=$(printf '%s' '{{subject_kind}}:user{{index}}@example.test' | OLIVARES_TOKEN=$ED olivares sandbox generate --count 2 --seed-file - -o json 2>err)
is "cli generate --seed-file - (stdin)" "agent:user1@example.test agent:user2@example.test" "$(jq -r 'map(.input)|join(" ")' <<<"$out" 2>/dev/null)"
out=$(OLIVARES_TOKEN=$ED olivares sandbox generate --subject bot --count 3 -o json 2>err)
is "cli generate --subject --count with the default template" "bot-sample-1 bot-sample-2 bot-sample-3" "$(jq -r 'map(.input)|join(" ")' <<<"$out" 2>/dev/null)"
out=$(OLIVARES_TOKEN=$ED olivares sandbox generate -o json 2>err)
is "cli generate: default count 10" 10 "$(jq 'length' <<<"$out" 2>/dev/null)"
printf 'x{{index}}\n' >seed-nl.txt
out=$(OLIVARES_TOKEN=$ED olivares sandbox generate --count 1 --seed-file seed-nl.txt -o json 2>err)
is "cli generate: file read byte for byte (final newline kept)" '"x1\n"' "$(jq -c '.[0].input' <<<"$out" 2>/dev/null)"
if out=$(OLIVARES_TOKEN=$ED olivares sandbox generate --count 2 --seed-file seed.txt -o table 2>err) && [[ $out == *agent:user2@example.test* ]]; then
	ok "cli generate -o table shows the inputs"
else
	not_ok "cli generate -o table shows the inputs (got $(short "$out"))"
fi
if OLIVARES_TOKEN=$ED olivares sandbox generate --count 101 -o json >out 2>err; then
	not_ok "cli generate --count 101 fails (exit 0)"
else
	if [[ -s err && ! -s out ]]; then ok "cli generate --count 101: exit non-zero, message on stderr, nothing on stdout"; else not_ok "cli generate --count 101: message on stderr only (stdout $(short "$(cat out)"), stderr $(short "$(cat err)"))"; fi
fi
done_testing
