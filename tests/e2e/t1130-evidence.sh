#!/usr/bin/env bash
# Signed, chained evidence (docs/evidence.md): a settled comparison's bundle
# (the comparison, its two runs and their outputs, the chain segment that
# covers them, signed with the server's Ed25519 key) fetched with the CLI
# and with curl through nginx, then verified offline:
#   - the key: GET /v1/evidence/key (public), `sandbox evidence-key`; its
#     key_id is the SHA-256 of the raw public key (checked with openssl);
#   - the bundle: `sandbox comparisons evidence ID` is byte for byte the
#     curl answer; every link's hash recomputed here from its definition,
#     the signature checked with openssl;
#   - `sandbox verify`: 0 on the bundle; 1 on a byte changed at several
#     positions, an output or a verdict changed, a dropped link, a wrong
#     key; no server call (a --url nothing answers on);
#   - `sandbox gate --evidence`: the verdict's exit status (improved 0,
#     regressed 1, inconclusive 1), a bundle that does not verify 1, a
#     bundle of another scenario 3, usage 2;
#   - GET .../evidence of a pending comparison 409, another tenant's 404;
#   - the private key file is mode 0600 in the data dir and survives a
#     restart: same key_id, the same bundle byte for byte.
#
# Needs the builtin scorer on tests/fixtures/suites (tests/e2e/run.sh
# --fresh sets it and exports OLV_SUITES_DIR).
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

AD=$OLV_ADMIN_TOKEN
ED=$OLV_EDITOR_TOKEN
VW=$OLV_VIEWER_TOKEN
SUITE=compare-steps
STACK=$OLV_ROOT/scripts/stack
# nothing listens here: the offline commands must not need it
DEAD_URL=http://127.0.0.1:9

# show CMD...: print the command and its output as comments; OUT, ERR, RC
show() {
	echo "# \$ $*"
	RC=0
	OUT=$("$@" 2>"$E2E_TMP/stderr") || RC=$?
	ERR=$(cat "$E2E_TMP/stderr")
	printf '%s\n' "$OUT" | head -n 10 | cut -c1-300 | sed 's/^/#   /'
	if [[ -n $ERR ]]; then printf '%s\n' "$ERR" | head -n 10 | sed 's/^/#   stderr: /'; fi
}

# has DESC NEEDLE: the last stderr holds NEEDLE
has() {
	if [[ $ERR == *"$2"* ]]; then ok "$1"; else not_ok "$1 (stderr $(short "$ERR") lacks $(short "$2"))"; fi
}

if [[ -z ${OLV_SUITES_DIR:-} || ! -f ${OLV_SUITES_DIR}/$SUITE.json ]]; then
	echo "# skip - this stack was not started by run.sh --fresh with the builtin scorer on tests/fixtures/suites"
	ok "evidence: skipped (no builtin scorer with suite $SUITE on this stack)"
	done_testing
fi

module_on "$AD" || exit 1

# as in t1100: base resolves q1 q2 (0.5), up q1 q2 q3 (0.75), down q1 (0.25)
STEPS='[{"key":"s1","input":"q1"},{"key":"s2","input":"q2"},{"key":"s3","input":"q3"},{"key":"s4","input":"q4"}]'
MOCKS='[{"resource":"q1","response":"a1"},
 {"resource":"q2","response":"a2","variant":"base"},
 {"resource":"q2","response":"a2","variant":"up"},
 {"resource":"q3","response":"a3","variant":"up"}]'
req "$ED" POST /v1/m/sandbox/scenarios "{\"name\":\"evidence\",\"steps\":$STEPS,\"mocks\":$MOCKS}"
is_status "scenario created" 201
SID=$(jqb '.id // empty')
[[ -n $SID ]] || done_testing

# compare BASE CAND [SUITE]: a comparison, waited for; its id in CID
compare() {
	req "$AD" POST /v1/m/sandbox/comparisons \
		"{\"scenario_id\":\"$SID\",\"baseline\":\"$1\",\"candidate\":\"$2\",\"suite\":\"${3:-$SUITE}\"}"
	CID=$(jqb '.id // empty')
}
compare base up
is "comparison base -> up: 201 improved" "201 improved" "$STATUS $(jqb .verdict)"
C_UP=$CID
BRUN=$(jqb .baseline.run_id)
CRUN=$(jqb .candidate.run_id)
compare base down
is "comparison base -> down: 201 regressed" "201 regressed" "$STATUS $(jqb .verdict)"
C_DOWN=$CID
compare base up no-such-suite
is "comparison with an unknown suite: 201 inconclusive" "201 inconclusive" "$STATUS $(jqb .verdict)"
C_INC=$CID

# ---- the key ------------------------------------------------------------------
req "" GET /v1/evidence/key
is_status "GET /v1/evidence/key without a token (curl via nginx): 200" 200
is "the key: algorithm Ed25519, a PEM public key" "Ed25519 -----BEGIN PUBLIC KEY-----" \
	"$(jqb '"\(.algorithm) \(.public_key|split("\n")[0])"')"
KID=$(jqb .key_id)
jqb .public_key >key-curl.pem
cp "$BODY_FILE" key-curl.json
if [[ $KID =~ ^[0-9a-f]{64}$ ]]; then ok "key_id is 64 hex digits"; else not_ok "key_id is 64 hex digits (got $(short "$KID"))"; fi
raw_kid=$(openssl pkey -pubin -in key-curl.pem -outform DER 2>/dev/null | tail -c 32 | sha256sum | cut -d' ' -f1)
is "key_id is the SHA-256 of the raw 32-byte public key (openssl)" "$KID" "$raw_kid"

show env OLIVARES_TOKEN= olivares sandbox evidence-key
is "CLI evidence-key without a token: exit 0" 0 "$RC"
printf '%s\n' "$OUT" >key-cli.pem
is "CLI evidence-key prints the PEM the API serves" "$(cat key-curl.pem)" "$OUT"
show olivares sandbox evidence-key -o json
is "CLI evidence-key -o json: the key id" "0 $KID" "$RC $(jq -r .key_id <<<"$OUT" 2>/dev/null)"
show olivares sandbox evidence-key --file key-file.pem
is "CLI evidence-key --file: exit 0, nothing on stdout" "0 " "$RC $OUT"
is "CLI evidence-key --file: the PEM" "$(cat key-curl.pem)" "$(cat key-file.pem 2>/dev/null)"

# ---- the bundle -----------------------------------------------------------------
req "$VW" GET "/v1/m/sandbox/comparisons/$C_UP/evidence"
is_status "viewer GET /comparisons/ID/evidence (curl via nginx): 200" 200
cp "$BODY_FILE" up-curl.json
show env OLIVARES_TOKEN="$VW" olivares sandbox comparisons evidence "$C_UP"
is "CLI comparisons evidence (viewer): exit 0" 0 "$RC"
OLIVARES_TOKEN=$VW olivares sandbox comparisons evidence "$C_UP" >up.json 2>/dev/null
if cmp -s up.json up-curl.json; then ok "the CLI writes the bundle byte for byte as curl got it"; else not_ok "the CLI writes the bundle byte for byte as curl got it"; fi
show olivares sandbox comparisons evidence "$C_UP" --file up-file.json
is "CLI comparisons evidence --file: exit 0, nothing on stdout" "0 " "$RC $OUT"
if cmp -s up-file.json up-curl.json; then ok "--file holds the same bytes"; else not_ok "--file holds the same bytes"; fi
is "the file ends with one newline" "$(printf '}\n' | od -An -c)" "$(tail -c 2 up.json | od -An -c)"
is "bundle: format, comparison, verdict, key_id, suite null" \
	"olivares-evidence/1 $C_UP improved $KID null" \
	"$(jq -r '"\(.format) \(.comparison.id) \(.comparison.verdict) \(.key_id) \(.suite)"' up.json)"
is "bundle: exactly its members" '["comparison","format","key_id","links","outputs","runs","signature","suite"]' \
	"$(jq -c keys up.json)"
RUNS_SORTED=$(printf '%s\n' "$BRUN" "$CRUN" | sort | tr '\n' ' ')
is "bundle: the two runs, baseline first, and their outputs" "$BRUN $CRUN|${RUNS_SORTED% }" \
	"$(jq -r '"\([.runs[].id]|join(" "))|\(.outputs|keys|join(" "))"' up.json)"
is "bundle: the candidate's outputs as recorded" "a1|a2|a3|[[mock-miss:q4]]" \
	"$(jq -r --arg r "$CRUN" '[.outputs[$r][].output]|join("|")' up.json)"
is "bundle: a link for each run and for the comparison" "comparison:$C_UP $(printf 'run:%s\n' "$BRUN" "$CRUN" | sort | tr '\n' ' ' | sed 's/ $//')" \
	"$(jq -r '[.links[]|"\(.kind):\(.id)"]|sort|join(" ")' up.json)"
is "bundle: the links' seqs are consecutive" true \
	"$(jq '[.links[].seq] as $s | $s == [range($s[0]; $s[0] + ($s|length))]' up.json)"
is "bundle: the signature is 64 bytes of base64" 64 "$(jq -r .signature up.json | base64 -d 2>/dev/null | wc -c)"
# every link's hash from its definition: SHA-256 of
# "olivares-evidence/1\n" SEQ "\n" KIND "\n" ID "\n" PREV "\n" BODY_SHA256 "\n"
bad=0
prev=
while IFS=' ' read -r seq kind id p body hash; do
	h=$(printf 'olivares-evidence/1\n%s\n%s\n%s\n%s\n%s\n' "$seq" "$kind" "$id" "$p" "$body" | sha256sum | cut -d' ' -f1)
	[[ $h == "$hash" ]] || bad=$((bad + 1))
	[[ -z $prev || $p == "$prev" ]] || bad=$((bad + 1))
	prev=$hash
done < <(jq -r '.links[]|"\(.seq) \(.kind) \(.id) \(.prev) \(.body_sha256) \(.hash)"' up.json)
is "every link's hash is recomputed here, each prev is the hash before" 0 "$bad"

# the signature with openssl alone: over the file's bytes without its
# "signature" member (still the canonical form: keys stay sorted)
python3 - <<'EOF'
import base64, re
s = open("up.json", "rb").read().rstrip(b"\n")
m = re.search(rb',"signature":"([A-Za-z0-9+/=]*)"', s)
open("unsigned.json", "wb").write(s[:m.start()] + s[m.end():])
open("sig.bin", "wb").write(base64.b64decode(m.group(1)))
EOF
if openssl pkeyutl -verify -rawin -pubin -inkey key-curl.pem -sigfile sig.bin -in unsigned.json >openssl.out 2>&1; then
	ok "openssl verifies the Ed25519 signature over the bundle without its signature"
else
	not_ok "openssl verifies the Ed25519 signature over the bundle without its signature ($(short "$(cat openssl.out)"))"
fi
printf 'x' >>unsigned.json
if openssl pkeyutl -verify -rawin -pubin -inkey key-curl.pem -sigfile sig.bin -in unsigned.json >/dev/null 2>&1; then
	not_ok "openssl refuses the signature over other bytes"
else
	ok "openssl refuses the signature over other bytes"
fi

# ---- verify ---------------------------------------------------------------------
show olivares sandbox verify --url "$DEAD_URL" --key key-cli.pem up.json
is "verify (no server call: --url nothing answers on): exit 0" 0 "$RC"
is "verify prints what it verified" "verified: comparison $C_UP improved" "$OUT"
show olivares sandbox verify --url "$DEAD_URL" --key key-curl.json up-curl.json -o json
is "verify with the JSON of GET /v1/evidence/key as the key, -o json: the comparison" \
	"0 $C_UP improved" "$RC $(jq -r '"\(.id) \(.verdict)"' <<<"$OUT" 2>/dev/null)"
show olivares sandbox verify --key key-cli.pem - <up.json
is "verify reads the bundle from stdin with '-'" "0 verified: comparison $C_UP improved" "$RC $OUT"

# flip BYTE-OFFSET IN OUT: IN with the byte at the offset changed (another byte)
flip() {
	python3 - "$1" "$2" "$3" <<'EOF'
import sys
off, src, dst = int(sys.argv[1]), sys.argv[2], sys.argv[3]
b = bytearray(open(src, 'rb').read())
b[off] = ord('0') if b[off] != ord('0') else ord('1')
open(dst, 'wb').write(b)
EOF
}
# offset STRING: the offset of the first byte after STRING in up.json
offset() {
	python3 -c 'import sys; s=open("up.json","rb").read(); i=s.find(sys.argv[1].encode()); print(i+len(sys.argv[1]) if i>=0 else -1)' "$1"
}
size=$(wc -c <up.json)
positions="0 1 $((size / 5)) $((2 * size / 5)) $((3 * size / 5)) $((4 * size / 5)) $((size - 2)) $((size - 1))"
for s in '"signature":"' '"key_id":"' '"hash":"' '"body_sha256":"' '"prev":"' '"verdict":"' '"output":"' '"seq":'; do
	positions="$positions $(offset "$s")"
done
nfail=0
nbad=0
for pos in $positions; do
	((pos >= 0)) || continue
	flip "$pos" up.json flipped.json
	if cmp -s flipped.json up.json; then
		nbad=$((nbad + 1))
		continue
	fi
	RC=0
	olivares sandbox verify --key key-cli.pem flipped.json >flipped.out 2>flipped.err || RC=$?
	if [[ $RC == 1 && ! -s flipped.out ]] && grep -q 'flipped.json: does not verify: ' flipped.err; then
		nfail=$((nfail + 1))
	else
		not_ok "verify of the bundle with byte $pos changed: exit 1, nothing on stdout, says why (exit $RC: $(short "$(cat flipped.out flipped.err)"))"
	fi
done
is "every one-byte change (16 positions) makes verify exit 1 and say why" 16 "$nfail"
is "and each was a change" 0 "$nbad"

# edit FROM TO: up.json with the first FROM replaced by TO, into edited.json
# (bytes elsewhere kept: still the canonical form, only the record differs)
edit() {
	python3 -c 'import sys; s=open("up.json","rb").read(); a=sys.argv[1].encode(); assert a in s; open("edited.json","wb").write(s.replace(a, sys.argv[2].encode(), 1))' "$1" "$2"
}
edit '"output":"a3"' '"output":"a4"'
show olivares sandbox verify --key key-cli.pem edited.json
is "an output changed: exit 1" 1 "$RC"
has "an output changed: the candidate run's body hash does not match" "run $CRUN: body hash mismatch"
edit '"verdict":"improved"' '"verdict":"unchanged"'
show olivares sandbox verify --key key-cli.pem edited.json
is "the verdict changed: exit 1" 1 "$RC"
has "the verdict changed: the comparison's body hash does not match" "comparison $C_UP: body hash mismatch"

# drop N: up.json without links[N] (its bytes and one comma removed, the
# rest kept), into dropped.json
drop() {
	python3 - "$1" <<'EOF'
import sys
s = open("up.json", "rb").read()
a = s.index(b'"links":[') + len(b'"links":[')
e = s.index(b']', a)
items = s[a + 1:e - 1].split(b'},{')
del items[int(sys.argv[1])]
open("dropped.json", "wb").write(s[:a] + b'{' + b'},{'.join(items) + b'}' + s[e:])
EOF
}
nlinks=$(jq '.links|length' up.json)
drop 1
is "a dropped link: one link fewer, the rest as it was" "$((nlinks - 1)) $(jq -c '.links|del(.[1])' up.json)" \
	"$(jq '.links|length' dropped.json) $(jq -c .links dropped.json)"
show olivares sandbox verify --key key-cli.pem dropped.json
is "a dropped link in the middle: exit 1" 1 "$RC"
s0=$(jq '.links[0].seq' up.json)
has "a dropped link in the middle: the chain says a link is missing" \
	"link $((s0 + 2)): seq does not follow link $s0 (a link is missing)"
drop 0
show olivares sandbox verify --key key-cli.pem dropped.json
is "the first link dropped: exit 1" 1 "$RC"
has "the first link dropped: its record has no link" "$(jq -r '.links[0]|"\(.kind) \(.id): no link in the chain"' up.json)"

openssl genpkey -algorithm ed25519 -out other.key 2>/dev/null
openssl pkey -in other.key -pubout -out other.pem 2>/dev/null
show olivares sandbox verify --key other.pem up.json
is "verify under another Ed25519 key: exit 1" 1 "$RC"
has "another key: says the bundle is signed by another key" "bundle is signed by key $KID, not by the given key"
printf 'not a key\n' >junk.pem
show olivares sandbox verify --key junk.pem up.json
is "verify with a file that is no key: exit 1" 1 "$RC"
has "no key: says so" "not an Ed25519 key"
show olivares sandbox verify up.json
is "verify without --key: usage, exit 2" 2 "$RC"
show olivares sandbox verify --key key-cli.pem
is "verify without BUNDLE: usage, exit 2" 2 "$RC"
show olivares sandbox verify --key key-cli.pem no-such-file.json
is "verify of a missing file: exit 1" 1 "$RC"

# ---- gate --evidence ------------------------------------------------------------
OLIVARES_TOKEN=$VW olivares sandbox comparisons evidence "$C_DOWN" --file down.json
OLIVARES_TOKEN=$VW olivares sandbox comparisons evidence "$C_INC" --file inc.json
show olivares sandbox gate --url "$DEAD_URL" --evidence up.json --key key-cli.pem
is "gate --evidence on the improved bundle (no server call): exit 0" 0 "$RC"
is "gate --evidence prints verdict, delta and comparison" "verdict=improved delta=0.25 comparison=$C_UP" "$OUT"
show olivares sandbox gate --url "$DEAD_URL" --evidence up.json --key key-cli.pem --scenario "$SID"
is "gate --evidence --scenario of the bundle's scenario: exit 0" 0 "$RC"
show olivares sandbox gate --url "$DEAD_URL" --evidence down.json --key key-cli.pem
is "gate --evidence on the regressed bundle: exit 1" 1 "$RC"
is "gate --evidence prints the regression" "verdict=regressed delta=-0.25 comparison=$C_DOWN" "$OUT"
has "gate --evidence regressed: stderr says why the gate is closed" "the candidate regressed"
show olivares sandbox gate --url "$DEAD_URL" --evidence inc.json --key key-cli.pem
is "gate --evidence on the inconclusive bundle: exit 1" 1 "$RC"
has "gate --evidence inconclusive: stderr says so" "inconclusive"
show olivares sandbox gate --url "$DEAD_URL" --evidence dropped.json --key key-cli.pem
is "gate --evidence on a bundle that does not verify: exit 1" 1 "$RC"
is "gate --evidence on a bundle that does not verify: no verdict on stdout" "" "$OUT"
has "gate --evidence on a bundle that does not verify: says why" "no link in the chain"
show olivares sandbox gate --url "$DEAD_URL" --evidence up.json --key other.pem
is "gate --evidence under another key: exit 1" 1 "$RC"
show olivares sandbox gate --url "$DEAD_URL" --evidence up.json --key key-cli.pem --scenario "$(repeat_char 0 32)"
is "gate --evidence --scenario of another scenario: exit 3" 3 "$RC"
has "another scenario: stderr says so" "the bundle is a comparison of scenario $SID"
show olivares sandbox gate --evidence up.json
is "gate --evidence without --key: usage, exit 2" 2 "$RC"
show olivares sandbox gate --key key-cli.pem
is "gate --key without --evidence: usage, exit 2" 2 "$RC"
show olivares sandbox gate --url "$DEAD_URL" --evidence up.json --key key-cli.pem --require-approval
is "gate --evidence --require-approval: usage, exit 2 (a bundle holds no approvals)" 2 "$RC"
has "  and says why" "cannot go with --evidence"

# ---- pending, other tenants, unknown ids -----------------------------------------
req "$ED" POST /v1/m/sandbox/scenarios \
	'{"name":"evidence-slow","steps":[{"key":"s1","input":"q1"}],"mocks":[{"resource":"q1","response":"a1","delay_ms":3000}]}'
SLOW=$(jqb '.id // empty')
E2E_NO_WAIT=1 req "$AD" POST /v1/m/sandbox/comparisons \
	"{\"scenario_id\":\"$SLOW\",\"baseline\":\"base\",\"candidate\":\"up\",\"suite\":\"$SUITE\"}"
C_PEND=$(jqb '.id // empty')
is "a comparison of a slow scenario, not waited for: 202 pending" "202 pending" "$STATUS $(jqb .status)"
req "$VW" GET "/v1/m/sandbox/comparisons/$C_PEND/evidence"
is_error "GET .../evidence of a pending comparison: 409" 409 conflict
show olivares sandbox comparisons evidence "$C_PEND"
is "CLI comparisons evidence of a pending comparison: exit 1, nothing on stdout" "1 " "$RC $OUT"
for _ in $(seq 1 60); do
	req "$VW" GET "/v1/m/sandbox/comparisons/$C_PEND"
	[[ $(jqb .status) == pending ]] || break
	sleep 0.5
done
req "$VW" GET "/v1/m/sandbox/comparisons/$C_PEND/evidence"
is_status "once settled, its evidence: 200" 200
cp "$BODY_FILE" pend.json
show olivares sandbox verify --key key-cli.pem pend.json
is "and it verifies" "0 verified: comparison $C_PEND $(jq -r .comparison.verdict pend.json)" "$RC $OUT"

OT=$(new_tenant_token "$(unique evidence-other)" admin)
if [[ -z $OT ]]; then
	not_ok "another tenant's admin token created"
else
	module_on "$OT" || true
	req "$OT" GET "/v1/m/sandbox/comparisons/$C_UP/evidence"
	is_error "another tenant GET .../evidence of our comparison: 404" 404 not_found
	show env OLIVARES_TOKEN="$OT" olivares sandbox comparisons evidence "$C_UP"
	is "another tenant: CLI comparisons evidence exits 1, nothing on stdout" "1 " "$RC $OUT"
fi
req "$VW" GET "/v1/m/sandbox/comparisons/$(repeat_char 0 32)/evidence"
is_error "GET .../evidence of a comparison that does not exist: 404" 404 not_found
req "" GET "/v1/m/sandbox/comparisons/$C_UP/evidence"
is "GET .../evidence without a token: 401" 401 "$STATUS"

# ---- the key file, and a restart ---------------------------------------------------
is "the private key is mode 0600 in the data dir" 600 "$(stat -c %a "$OLIVARES_DATA/evidence-ed25519.pem" 2>&1)"
is "the public key file beside it is the PEM the API serves" "$(cat key-curl.pem)" \
	"$(cat "$OLIVARES_DATA/evidence-ed25519.pub.pem" 2>&1)"
if "$STACK" down >down.out 2>&1; then ok "scripts/stack down"; else not_ok "scripts/stack down ($(cat down.out))"; fi
if "$STACK" up >up.out 2>&1; then ok "scripts/stack up again"; else not_ok "scripts/stack up again ($(tail -n 20 up.out))"; fi
req "" GET /v1/evidence/key
is "after the restart: the same key_id" "200 $KID" "$STATUS $(jqb .key_id)"
req "$VW" GET "/v1/m/sandbox/comparisons/$C_UP/evidence"
if cmp -s "$BODY_FILE" up.json; then
	ok "after the restart: the same bundle, byte for byte"
else
	not_ok "after the restart: the same bundle, byte for byte (HTTP $STATUS)"
fi
show olivares sandbox verify --key key-cli.pem "$BODY_FILE"
is "after the restart: the bundle verifies with the key fetched before" 0 "$RC"
is "the private key is still mode 0600" 600 "$(stat -c %a "$OLIVARES_DATA/evidence-ed25519.pem" 2>&1)"

done_testing
