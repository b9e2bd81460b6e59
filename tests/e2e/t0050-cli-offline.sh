#!/usr/bin/env bash
# t0050: what the olivares CLI does without a server: --help on every command,
# --version, usage errors (exit 2), unreadable or invalid input files (exit
# 1, nothing sent), missing OLIVARES_TOKEN, connection refused, the
# configuration file (precedence, mode, errors), the bash completion and the
# example CI pipelines of docs/examples. No token ever appears in any output.
#
# Usage: OLIVARES_CLI=/path/to/olivares tests/e2e/t0050-cli-offline.sh
# Prints "ok - …" / "not ok - …" per check and "N passed, M failed"; exits 1
# on any failure.
set -u

CLI=${OLIVARES_CLI:-./olivares}
case $CLI in
/*) ;;
*) CLI=$PWD/$CLI ;;
esac
if [ ! -x "$CLI" ]; then
	echo "not ok - CLI not found or not executable: $CLI"
	echo "0 passed, 1 failed"
	exit 1
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

# No configuration file of the user's: a HOME of our own, without one until
# the configuration file's checks write it.
export HOME=$T/home
mkdir -p "$HOME"
unset XDG_CONFIG_HOME OLIVARES_CONFIG

# Nothing listens on port 1 of the loopback (binding it needs root and no
# service uses it), so a request gets "connection refused" at once.
REFUSED_URL=http://127.0.0.1:1
TOKEN=olv_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
export OLIVARES_URL=$REFUSED_URL
export OLIVARES_TOKEN=$TOKEN

pass=0
fail=0
ok() {
	echo "ok - $1"
	pass=$((pass + 1))
}
not_ok() {
	echo "not ok - $1"
	fail=$((fail + 1))
	[ -s out ] && sed 's/^/#   stdout: /' out | head -5
	[ -s err ] && sed 's/^/#   stderr: /' err | head -5
	echo "#   exit status: $rc"
}

# run CMD...: run the CLI, keep stdout in ./out, stderr in ./err, status in $rc
rc=0
run() {
	"$CLI" "$@" >out 2>err
	rc=$?
}

# expect NAME RC STREAM REGEX: last run exited RC and STREAM (out|err)
# matches the extended regex (an empty REGEX checks the status only); the
# token must not appear anywhere.
expect() {
	local name=$1 want=$2 stream=$3 re=$4
	if [ "$rc" -ne "$want" ]; then
		not_ok "$name (exit $rc, want $want)"
		return
	fi
	if [ -n "$re" ] && ! grep -Eq -- "$re" "$stream"; then
		not_ok "$name ($stream does not match /$re/)"
		return
	fi
	if grep -qF -- "$TOKEN" out err; then
		not_ok "$name (the token was printed)"
		return
	fi
	ok "$name"
}

# ---- help and version ------------------------------------------------------
run --help
expect "olivares --help exits 0 and lists the commands" 0 out '^  sandbox '
grep -q '^  modules ' out && grep -q 'OLIVARES_TOKEN' out && grep -q -- '--version' out &&
	ok "olivares --help names modules, OLIVARES_TOKEN and --version" ||
	not_ok "olivares --help names modules, OLIVARES_TOKEN and --version"

run -h
expect "olivares -h is --help" 0 out '^Usage: olivares '

run --version
expect "olivares --version" 0 out '^olivares [0-9]+\.[0-9]+'
# the version configure knows (AC_INIT's), first on the line
version=$(sed -n 's/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p' "$ROOT/configure.ac")
if [ -n "$version" ] && grep -q "^olivares $version " out && [ ! -s err ]; then
	ok "olivares --version prints olivares $version"
else
	not_ok "olivares --version prints olivares $version (the version of AC_INIT)"
fi

# every command and subcommand: --help exits 0 on stdout, lists its flags and
# the common ones
help_case() {
	local flags=$1
	shift
	local f missing=""
	run "$@" --help
	for f in $flags -o --url --token --help; do
		grep -q -- "$f" out || missing="$missing $f"
	done
	if [ "$rc" -ne 0 ] || [ -n "$missing" ] || [ -s err ]; then
		not_ok "olivares $* --help lists:$flags (missing:$missing)"
	else
		ok "olivares $* --help lists:${flags:- common options}"
	fi
}
help_case "list on off" modules
help_case "" modules list
help_case "" modules on
help_case "" modules off
help_case "generate scenarios runs" sandbox
help_case "--count --subject --seed-file" sandbox generate
help_case "create update list get delete run" sandbox scenarios
help_case "--name --description --subject --steps-file --mocks-file" sandbox scenarios create
help_case "--name --description --subject --steps-file --mocks-file" sandbox scenarios update
help_case "--limit --offset" sandbox scenarios list
help_case "" sandbox scenarios get
help_case "" sandbox scenarios delete
help_case "--variant" sandbox scenarios run
help_case "list get outputs" sandbox runs
help_case "--scenario --status --limit --offset" sandbox runs list
help_case "" sandbox runs get
help_case "" sandbox runs outputs

run sandbox scenarios get -h
expect "-h after a command is its help, the ID is not needed" 0 out '^Usage: olivares sandbox scenarios get ID'

# ---- usage errors: exit 2, a hint to --help, nothing on stdout --------------
usage_case() {
	local name=$1 re=$2
	shift 2
	run "$@"
	if [ "$rc" -eq 2 ] && [ ! -s out ] && grep -Eq -- "$re" err &&
		grep -q -- "--help'" err; then
		ok "$name"
	else
		not_ok "$name (want exit 2, /$re/ and a --help hint on stderr)"
	fi
}
usage_case "no command" 'missing command'
usage_case "unknown command" "unknown command 'frobnicate'" frobnicate
usage_case "unknown subcommand" "unknown command 'nope'" sandbox nope
usage_case "group without subcommand" 'missing command' sandbox scenarios
usage_case "unknown global option" "unknown option '--bogus'" --bogus modules list
usage_case "unknown command option" "unknown option '--bogus'" sandbox generate --bogus 1
usage_case "option without its value" "option '--count' requires a value" sandbox generate --count
usage_case "-o with a bad format" "-o expects 'json' or 'table', got 'yaml'" -o yaml modules list
usage_case "-o after the command with a bad format" "got 'xml'" sandbox runs list -o xml
usage_case "--count not an integer" "--count expects an integer, got '2x'" sandbox generate --count 2x
usage_case "--count empty" "--count expects an integer" sandbox generate --count ''
usage_case "--limit not an integer" "--limit expects an integer" sandbox scenarios list --limit ten
usage_case "--offset not an integer" "--offset expects an integer" sandbox runs list --offset -
usage_case "get without ID" 'missing ID' sandbox scenarios get
usage_case "get with an empty ID" 'missing ID' sandbox runs get ''
usage_case "get with two IDs" "expected one ID" sandbox runs get a b
usage_case "list takes no argument" "unexpected argument 'extra'" sandbox scenarios list extra
usage_case "modules on without a module" 'missing MODULE' modules on
usage_case "create without --name" '--name is required' sandbox scenarios create --steps-file x.json
usage_case "create without --steps-file" '--steps-file is required' sandbox scenarios create --name n
usage_case "steps and mocks both from stdin" 'cannot both read stdin' \
	sandbox scenarios create --name n --steps-file - --mocks-file -
usage_case "--subject not UTF-8" '--subject must be UTF-8' sandbox generate --subject $'\xff'

# ---- input files: exit 1, a message naming the file, nothing sent ----------
# A file error must win over the (refused) network: "cannot reach" in these
# answers would mean the request was attempted.
file_case() {
	local name=$1 re=$2
	shift 2
	run "$@"
	if [ "$rc" -eq 1 ] && [ ! -s out ] && grep -Eq -- "$re" err && ! grep -q 'cannot reach' err; then
		ok "$name"
	else
		not_ok "$name (want exit 1 and /$re/ on stderr, no request)"
	fi
}
file_case "seed file missing" '^olivares: nosuch\.txt: No such file or directory$' \
	sandbox generate --seed-file nosuch.txt
mkdir adir
file_case "seed file is a directory" '^olivares: adir: Is a directory$' sandbox generate --seed-file adir
if [ "$(id -u)" -ne 0 ]; then
	printf 'x' >noread.txt
	chmod 000 noread.txt
	file_case "seed file not readable" '^olivares: noread\.txt: Permission denied$' \
		sandbox generate --seed-file noread.txt
fi
printf 'agent:\xff\xfeuser{{index}}' >latin.txt
file_case "seed file not UTF-8" '^olivares: latin\.txt: not valid UTF-8 text$' \
	sandbox generate --seed-file latin.txt
printf '\xed\xa0\x80' >surrogate.txt
file_case "seed file with an encoded surrogate" 'surrogate\.txt: not valid UTF-8' \
	sandbox generate --seed-file surrogate.txt
printf 'a\0b' >nul.txt
file_case "seed file with a NUL byte" '^olivares: nul\.txt: contains a NUL byte at offset 1' \
	sandbox generate --seed-file nul.txt
run sandbox generate --seed-file - <latin.txt
if [ "$rc" -eq 1 ] && grep -q '<stdin>: not valid UTF-8' err; then
	ok "seed from stdin not UTF-8"
else
	not_ok "seed from stdin not UTF-8"
fi
head -c 1048577 /dev/zero | tr '\0' 'a' >over.txt
file_case "seed file of 1 MiB + 1 bytes" '^olivares: over\.txt: larger than 1048576 bytes' \
	sandbox generate --seed-file over.txt
run sandbox generate --seed-file - <over.txt
if [ "$rc" -eq 1 ] && grep -q '<stdin>: larger than 1048576 bytes' err; then
	ok "seed from stdin of 1 MiB + 1 bytes"
else
	not_ok "seed from stdin of 1 MiB + 1 bytes"
fi
# the exact limit passes the local check: the failure is then the network
head -c 1048576 /dev/zero | tr '\0' 'a' >exact.txt
run sandbox generate --seed-file exact.txt
expect "seed file of exactly 1 MiB is read and sent" 1 err "^olivares: cannot reach $REFUSED_URL: "

printf '[{"key":"step-1","input":"x"},]' >badsteps.json
file_case "steps file with invalid JSON" \
	'^olivares: badsteps\.json: invalid JSON at line 1 column 31: ' \
	sandbox scenarios create --name n --steps-file badsteps.json
printf '[\n  {"input": "a"}\n  {"input": "b"}\n]\n' >line3.json
file_case "invalid JSON reports the line" '^olivares: line3\.json: invalid JSON at line 3 column ' \
	sandbox scenarios create --name n --steps-file line3.json
: >empty.json
file_case "empty steps file" '^olivares: empty\.json: invalid JSON at line ' \
	sandbox scenarios create --name n --steps-file empty.json
printf '[{"input":"a","input":"b"}]' >dup.json
file_case "steps file with a duplicate key" '^olivares: dup\.json: invalid JSON .*duplicate' \
	sandbox scenarios create --name n --steps-file dup.json
printf '{"count":2}' >nosteps.json
file_case "steps object without steps or samples" \
	'nosteps\.json: expected a JSON array of steps, or an object with a "steps" or "samples" array' \
	sandbox scenarios create --name n --steps-file nosteps.json
printf '["agent:user1@example.test"]' >strings.json
file_case "steps array of strings" '^olivares: strings\.json: step 1 is not a JSON object$' \
	sandbox scenarios create --name n --steps-file strings.json
printf '[{"input":"a"}]' >steps.json
file_case "steps file missing" '^olivares: nosuch\.json: No such file or directory$' \
	sandbox scenarios create --name n --steps-file nosuch.json
file_case "mocks file missing" '^olivares: nomocks\.json: No such file or directory$' \
	sandbox scenarios create --name n --steps-file steps.json --mocks-file nomocks.json
printf '{"resource":"r","response":"x"}' >mockobj.json
file_case "mocks object without a mocks array" \
	'mockobj\.json: expected a JSON array of mocks, or an object with a "mocks" array' \
	sandbox scenarios create --name n --steps-file steps.json --mocks-file mockobj.json
printf '[{"resource":"r","response":"x"}' >badmocks.json
file_case "mocks file with invalid JSON" '^olivares: badmocks\.json: invalid JSON at line 1 column ' \
	sandbox scenarios create --name n --steps-file steps.json --mocks-file badmocks.json
printf '[{"input":"\\u0000"}]' >nulesc.json
file_case "steps with an escaped NUL" '^olivares: nulesc\.json: invalid JSON ' \
	sandbox scenarios create --name n --steps-file nulesc.json

# the accepted shapes pass the local checks (then meet the refused network)
printf '{"count":1,"samples":[{"key":"step-1","input":"x"}]}' >samples.json
printf '{"mocks":[{"resource":"x","response":"y"}]}' >mocks.json
run sandbox scenarios create --name n --steps-file samples.json --mocks-file mocks.json
expect "an object with samples and an object with mocks are accepted" 1 err "cannot reach $REFUSED_URL"
run sandbox scenarios create --name n --steps-file - --mocks-file mocks.json <steps.json
expect "steps from stdin are accepted" 1 err "cannot reach $REFUSED_URL"

# ---- token and connection ----------------------------------------------------
OLIVARES_TOKEN='' run modules list
expect "missing OLIVARES_TOKEN" 1 err \
	"^olivares: no API token: set OLIVARES_TOKEN, pass --token or put token = \\.\\.\\. in $HOME/\\.config/olivares/config\$"
OLIVARES_TOKEN='' OLIVARES_CONFIG='' run modules list
expect "missing OLIVARES_TOKEN, no configuration file" 1 err \
	'^olivares: no API token: set OLIVARES_TOKEN or pass --token$'
(unset OLIVARES_TOKEN; "$CLI" sandbox runs get abc >out 2>err; echo $? >rc.txt)
rc=$(cat rc.txt)
expect "unset OLIVARES_TOKEN" 1 err '^olivares: no API token'
run --token "$TOKEN"$'\r\nX-Evil: 1' modules list
expect "a token with control characters is refused, not echoed" 1 err \
	'^olivares: the API token contains spaces or control characters$'
grep -q 'X-Evil' err && not_ok "refused token not echoed" || ok "refused token not echoed"

run modules list
expect "connection refused" 1 err "^olivares: cannot reach $REFUSED_URL: "
[ ! -s out ] && ok "connection refused prints nothing on stdout" ||
	not_ok "connection refused prints nothing on stdout"
run --url "$REFUSED_URL/" sandbox scenarios list -o json
expect "--url with a trailing slash, -o after the command" 1 err "^olivares: cannot reach $REFUSED_URL: "
run --token "$TOKEN" sandbox scenarios run abc --variant candidate
expect "--token is never printed" 1 err "cannot reach"
# (a stack may be up on the default port: then the fake token gets a 401)
OLIVARES_URL='' run modules list
expect "empty OLIVARES_URL means the default URL" 1 err \
	'^olivares: cannot reach http://127\.0\.0\.1:8080: |\(unauthorized, HTTP 401\)$'
run --url ftp://127.0.0.1:1 modules list
expect "a non-HTTP URL is refused" 1 err '^olivares: cannot reach ftp://127\.0\.0\.1:1: '

# ---- the configuration file ---------------------------------------------------
# Which URL a command used shows in the refused connection's message; which
# token it used shows through a token the request refuses ("contains
# spaces"). Nothing listens on ports 1..4 of the loopback.
CONF=$HOME/.config/olivares/config
FILE_TOKEN=olv_filetoken0123456789abcdef0123456789abcdef0123456789abcdef01
mkdir -p "$(dirname "$CONF")"
# write_conf FILE MODE LINE...: the file with these lines, in this mode
write_conf() {
	local f=$1 mode=$2
	shift 2
	printf '%s\n' "$@" >"$f"
	chmod "$mode" "$f"
}
# no_token_printed NAME: neither token is in the last run's output
no_token_printed() {
	if grep -qF -e "$FILE_TOKEN" -e "$TOKEN" out err; then
		not_ok "$1 (a token was printed)"
	else
		ok "$1"
	fi
}
# conf_refused NAME REGEX: the last run refused the file: exit 2, REGEX on
# stderr, nothing on stdout, no request sent
conf_refused() {
	if [ "$rc" -eq 2 ] && [ ! -s out ] && grep -Eq -- "$2" err && ! grep -q 'cannot reach' err &&
		! grep -qF -e "$FILE_TOKEN" -e "SECRETVALUE" err; then
		ok "$1"
	else
		not_ok "$1 (want exit 2, /$2/ on stderr, no request, no value)"
	fi
}

write_conf "$CONF" 600 "url = http://127.0.0.1:2" "token = $FILE_TOKEN"
(unset OLIVARES_URL OLIVARES_TOKEN; "$CLI" modules list >out 2>err; echo $? >rc.txt)
rc=$(cat rc.txt)
expect "url and token from the file when the environment has neither" 1 err \
	'^olivares: cannot reach http://127\.0\.0\.1:2: '
no_token_printed "the file's token is never printed"
run modules list
expect "OLIVARES_URL wins over the file's url" 1 err '^olivares: cannot reach http://127\.0\.0\.1:1: '
run --url http://127.0.0.1:3 modules list
expect "--url wins over OLIVARES_URL and the file" 1 err '^olivares: cannot reach http://127\.0\.0\.1:3: '
OLIVARES_URL='' run modules list
expect "an empty OLIVARES_URL leaves the file's url" 1 err '^olivares: cannot reach http://127\.0\.0\.1:2: '

write_conf "$CONF" 600 "[olivares]" "url = http://127.0.0.1:2" "token = has a space"
run modules list
expect "OLIVARES_TOKEN wins over the file's token" 1 err '^olivares: cannot reach http://127\.0\.0\.1:1: '
OLIVARES_TOKEN='' run modules list
expect "the file's token in [olivares] is used without OLIVARES_TOKEN" 1 err \
	'^olivares: the API token contains spaces or control characters$'
OLIVARES_TOKEN='' run --token "$TOKEN" modules list
expect "--token wins over the file's token" 1 err '^olivares: cannot reach http://127\.0\.0\.1:1: '

mkdir -p xdg/olivares
write_conf xdg/olivares/config 600 "url = http://127.0.0.1:4"
OLIVARES_URL='' XDG_CONFIG_HOME=$T/xdg run modules list
expect "\$XDG_CONFIG_HOME/olivares/config instead of ~/.config" 1 err \
	'^olivares: cannot reach http://127\.0\.0\.1:4: '
write_conf other.conf 600 "url = http://127.0.0.1:3"
OLIVARES_URL='' OLIVARES_CONFIG=$T/other.conf run modules list
expect "OLIVARES_CONFIG names another file" 1 err '^olivares: cannot reach http://127\.0\.0\.1:3: '
OLIVARES_CONFIG=$T/nosuch.conf run modules list
conf_refused "a file OLIVARES_CONFIG names must exist" \
	"^olivares: $T/nosuch\\.conf: No such file or directory \\(named by OLIVARES_CONFIG\\)\$"

# a file that group or others may read or write holds a token they may see
for mode in 644 640 604 620 602; do
	write_conf "$CONF" $mode "url = http://127.0.0.1:2" "token = $FILE_TOKEN"
	run modules list
	conf_refused "a file of mode $mode is refused, nothing sent" \
		"^olivares: $CONF: mode 0$mode lets group or others read or write it.*\\(chmod 600 $CONF\\)\$"
done
run --help
expect "--help needs no configuration file (one of mode 602 there)" 0 out '^Files:'
if grep -q 'OLIVARES_CONFIG' out && grep -q '\.config/olivares/config' out &&
	grep -q 'XDG_CONFIG_HOME' out; then
	ok "--help names OLIVARES_CONFIG and the file"
else
	not_ok "--help names OLIVARES_CONFIG and the file"
fi
OLIVARES_CONFIG='' run modules list
expect "OLIVARES_CONFIG='' reads no file (not the refused one)" 1 err \
	'^olivares: cannot reach http://127\.0\.0\.1:1: '
rm -f "$CONF"
mkdir "$CONF"
run modules list
conf_refused "a directory in the file's place" "^olivares: $CONF: not a regular file\$"
rmdir "$CONF"

# malformed files: the line, never a value
write_conf "$CONF" 600 "# olivares" "token = SECRETVALUE" "SECRETVALUE"
run modules list
conf_refused "a line that is no key = value" "^olivares: $CONF: line 3: not a \\[section\\], a key = value or a comment\$"
write_conf "$CONF" 600 "token = SECRETVALUE" "[olivares" "url = x"
run modules list
conf_refused "an unterminated section" "^olivares: $CONF: line 2: not a \\[section\\]"
write_conf "$CONF" 600 "url = http://127.0.0.1:2" "tokne = SECRETVALUE"
run modules list
conf_refused "an unknown key" "^olivares: $CONF: line 2: unknown key 'tokne' \\(the keys are url and token\\)\$"
write_conf "$CONF" 600 "[server]" "url = http://127.0.0.1:2"
run modules list
conf_refused "an unknown section" "^olivares: $CONF: line 2: unknown section \\[server\\]"
write_conf "$CONF" 600 "token = SECRETVALUE" "" "[olivares]" "token = SECRETVALUE"
run modules list
conf_refused "a key given twice" "^olivares: $CONF: line 4: token given twice \\(first on line 1\\)\$"
write_conf "$CONF" 600 "url ="
run modules list
conf_refused "an empty value" "^olivares: $CONF: line 1: url has an empty value\$"
write_conf "$CONF" 600 "url = http://127.0.0.1:2/$(head -c 300 /dev/zero | tr '\0' a)"
run modules list
conf_refused "a line too long" "^olivares: $CONF: line 1: longer than [0-9]+ bytes\$"
rm -f "$CONF"

# ---- bash completion ---------------------------------------------------------
# The script, sourced in bash, completes from `olivares __complete`.
# complete_case NAME WANT WORD...: COMPREPLY for the words (the last is the
# one being completed) is WANT, the candidates joined with spaces (in any
# order: file names come in the directory's).
complete_case() {
	local name=$1 want="" got
	# shellcheck disable=SC2086 # split on purpose: one candidate a word
	[ -z "$2" ] || want=$(printf '%s\n' $2 | sort | tr '\n' ' ')
	shift 2
	got=$(
		# shellcheck source=/dev/null
		. "$ROOT/cli/completion/olivares" || exit 1
		COMP_WORDS=("$CLI" "$@")
		COMP_CWORD=$#
		_olivares
		[ ${#COMPREPLY[@]} -eq 0 ] || printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
	)
	if [ "$got" = "$want" ]; then
		ok "completion: $name"
	else
		not_ok "completion: $name (got '$got', want '$want')"
	fi
}
complete_case "olivares sa<TAB>" "sandbox" sa
complete_case "olivares <TAB>" "modules sandbox" ''
complete_case "olivares sandbox scenarios <TAB>" "create update list get delete run" \
	sandbox scenarios ''
complete_case "olivares sandbox scenarios run --<TAB>" \
	"--variant --backend --suite --record --idempotency-key --no-wait --output --url --token --help" \
	sandbox scenarios run --
complete_case "olivares sandbox scenarios run ID --v<TAB>" "--variant" sandbox scenarios run abc --v
complete_case "after global options: olivares -o json --url U mo<TAB>" "modules" \
	-o json --url http://x mo
complete_case "olivares -o <TAB>" "json table" -o ''
complete_case "olivares modules list -o t<TAB>" "table" modules list -o t
complete_case "olivares --v<TAB>" "--version" --v
complete_case "a group offers --help only: olivares sandbox --<TAB>" "--help" sandbox --
complete_case "an ID is not guessed: olivares sandbox runs get <TAB>" "" sandbox runs get ''
complete_case "an unknown command offers nothing" "" nosuch ''
complete_case "a value is not a command: --variant run <TAB>" "" \
	sandbox scenarios run abc --variant ''
touch steps-a.json steps-b.json
complete_case "a FILE value completes file names" "steps-a.json steps-b.json" \
	sandbox scenarios create --steps-file steps-
run __complete sandbox g
expect "__complete prints one candidate a line" 0 out '^gate$'
if grep -qx generate out && [ "$(wc -l <out)" -eq 2 ]; then
	ok "__complete sandbox g: generate and gate"
else
	not_ok "__complete sandbox g: generate and gate"
fi
run --help
if grep -q '__complete' out; then
	not_ok "__complete stays out of --help"
else
	ok "__complete stays out of --help"
fi

# ---- the example CI pipelines (docs/examples) ----------------------------------
# Each parses as YAML, runs `sandbox compare` then `sandbox gate` with options
# these commands have, and takes the token from the CI's secret store: no
# token in the file.
if ! python3 -c 'import yaml' 2>/dev/null; then
	not_ok "PyYAML for the CI examples' check (Debian: python3-yaml, scripts/lib/deps.sh)"
else
	"$CLI" __complete sandbox compare -- >compare.opts
	"$CLI" __complete sandbox gate -- >gate.opts
	for ex in github-actions gitlab-ci; do
		if python3 - "$ROOT/docs/examples/$ex.yml" compare.opts gate.opts >yaml.err 2>&1 <<'PY'; then
import re, sys, yaml

path, compare_opts, gate_opts = sys.argv[1:4]
text = open(path).read()
doc = yaml.safe_load(text)
assert isinstance(doc, dict), "not a mapping"
opts = {"compare": set(open(compare_opts).read().split()),
        "gate": set(open(gate_opts).read().split())}
assert not re.search(r"olv_[0-9a-f]{8}", text), "a token in the file"

# every shell line of the pipeline, in order
lines = []
def walk(node, key=None):
    if isinstance(node, dict):
        for k, v in node.items():
            walk(v, k)
    elif isinstance(node, list):
        for v in node:
            walk(v, key)
    elif isinstance(node, str) and key in ("run", "script", "before_script"):
        lines.extend(node.replace("\\\n", " ").splitlines())
walk(doc)
found = []
for line in lines:
    m = re.search(r"\bolivares sandbox (compare|gate)\b(.*)", line)
    if not m:
        continue
    cmd = m.group(1)
    found.append(cmd)
    for o in re.findall(r"(?<!\S)--[a-z-]+", m.group(2)):
        assert o in opts[cmd], "sandbox %s has no option %s" % (cmd, o)
    if cmd == "compare":
        for o in ("--scenario", "--baseline", "--candidate", "--suite"):
            assert o in m.group(2), "compare without " + o
assert found == ["compare", "gate"], "compare then gate, got %r" % found

if "jobs" in doc:  # GitHub Actions: the token from the secrets
    envs = [j.get("env", {}) for j in doc["jobs"].values()]
    assert any(e.get("OLIVARES_TOKEN") == "${{ secrets.OLIVARES_TOKEN }}" for e in envs), \
        "OLIVARES_TOKEN is not ${{ secrets.OLIVARES_TOKEN }}"
else:  # GitLab CI: the token is a CI/CD variable, never in the file
    assert "OLIVARES_TOKEN" not in doc.get("variables", {}), "OLIVARES_TOKEN in variables"
    assert "stages" in doc, "no stages"
PY
			ok "docs/examples/$ex.yml: YAML, compare then gate, the token from the secrets"
		else
			not_ok "docs/examples/$ex.yml: YAML, compare then gate, the token from the secrets"
			sed 's/^/#   /' yaml.err | tail -3
		fi
	done
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
