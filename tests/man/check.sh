#!/usr/bin/env bash
# tests/man/check.sh [BUILD]: the manual pages of docs/man against the
# programs of the build directory BUILD (default $OLIVARES_BUILD, else
# ./build):
#
#   - every page renders without a warning, by man(1) and by groff -ww;
#   - olivares.1 has a subsection (.SS) for every command that
#     `olivares --help` and the groups' --help list, naming every option of
#     the command's --help, and names every global option, environment
#     variable and exit status of `olivares --help`;
#   - olivares-admin.8 has a subsection for every command that
#     `olivares-admin --help` lists, naming its options, and names the
#     environment variables;
#   - olivares-fcgi.8 names every option and environment variable of
#     `olivares-fcgi --help`;
#   - olivares.conf.5 names every section and key that
#     `olivares-fcgi --check-config` prints (with a [tenant NAME] section).
#
# One line per check ("ok - ..." or "not ok - ..."), then "N passed, M
# failed"; exit 1 on any failure. Needs man-db and groff.
#
# Environment: OLIVARES_MAN_CONF_REQUIRED=1 fails when olivares.conf.5 is
# missing (by default that check is skipped with a note).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
MAN_DIR=docs/man
BUILD=${1:-${OLIVARES_BUILD:-build}}
CONF_PAGE_REQUIRED=${OLIVARES_MAN_CONF_REQUIRED:-1}

PASSED=0
FAILED=0
pass() {
	PASSED=$((PASSED + 1))
	echo "ok - $1"
}
fail() {
	FAILED=$((FAILED + 1))
	echo "not ok - $1"
}
finish() {
	echo "$PASSED passed, $FAILED failed"
	((FAILED == 0))
}

TMP=$(mktemp -d /tmp/olivares-man.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

for tool in man groff; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		fail "$tool is installed (Debian: man-db, groff-base)"
		finish
		exit 1
	fi
done
for prog in olivares olivares-admin olivares-fcgi; do
	if [[ ! -x $BUILD/$prog ]]; then
		fail "$BUILD/$prog is built"
		finish
		exit 1
	fi
done

# roff_text FILE: the page's source with the escapes that do not change
# what a word says taken out (fonts, \- \& \% \: \e \(dq \(aq), comments
# dropped, macro lines kept as they are otherwise.
roff_text() {
	sed -e '/^\.\\"/d' \
		-e 's/\\f[BIRP]//g; s/\\f(..//g; s/\\f\[[^]]*\]//g' \
		-e 's/\\-/-/g; s/\\&//g; s/\\%//g; s/\\://g' \
		-e 's/\\(dq/"/g; s/\\(aq/'"'"'/g; s/\\e/\\/g' "$1"
}

# section TEXT SH: the lines of section SH (.SH SH) of a roff_text.
section() {
	awk -v want="$2" '
		/^\.SH / { t = substr($0, 5); gsub(/"/, "", t); on = (t == want); next }
		on { print }' "$1"
}

# subsection TEXT WORDS: the lines of the first .SS whose title is WORDS
# or starts with WORDS and a space; nothing (exit 1) when there is none.
subsection() {
	awk -v want="$2" '
		/^\.S[HS] / {
			if (on) exit
			if ($0 ~ /^\.SS /) {
				t = substr($0, 5); gsub(/"/, "", t)
				if (t == want || index(t, want " ") == 1) { on = 1; found = 1 }
			}
			next
		}
		on { print }
		END { exit !found }' "$1"
}

# names TEXT WORD: does TEXT (a file) hold WORD, not as part of a longer
# option or identifier?
names() {
	# shellcheck disable=SC2001 # every regex character of WORD escaped
	grep -q -E -e "(^|[^A-Za-z0-9_-])$(sed 's/[][\.*^$|+?(){}]/\\&/g' <<<"$2")([^A-Za-z0-9_-]|$)" "$1"
}

# ---- every page renders without warnings ----------------------------------
shopt -s nullglob
pages=("$MAN_DIR"/*.[1-8])
if ((${#pages[@]} == 0)); then
	fail "pages in $MAN_DIR"
fi
for page in "${pages[@]}"; do
	out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null || echo "man exit $?")
	if [[ -z $out ]]; then
		pass "$page: man --warnings -l says nothing"
	else
		fail "$page: man --warnings -l: $out"
	fi
	out=$(groff -man -ww -z "$page" 2>&1 || echo "groff exit $?")
	if [[ -z $out ]]; then
		pass "$page: groff -man -ww -z says nothing"
	else
		fail "$page: groff -man -ww -z: $out"
	fi
done

# ---- olivares.1: the CLI's commands, options, environment, exit status ------
page=$MAN_DIR/olivares.1
cli=$BUILD/olivares
roff_text "$page" >"$TMP/cli.txt"

# block HELP TITLE: the lines after the line TITLE of a --help output, up to
# the first blank line.
block() {
	awk -v want="$2" '$0 == want { on = 1; next } on && /^$/ { exit } on { print }' <<<"$1"
}

# walk PATH...: check the command PATH (words after "olivares"), and, for a
# group, each of its commands.
walk() {
	local help sub words=("$@") opt missing
	help=$("$cli" "${words[@]}" --help)
	if grep -q '^Commands:$' <<<"$help"; then
		for sub in $(block "$help" "Commands:" | awk '{ print $1 }'); do
			walk "${words[@]}" "$sub"
		done
		return
	fi
	if ! subsection "$TMP/cli.txt" "${words[*]}" >"$TMP/ss.txt"; then
		fail "$page: a subsection (.SS) for 'olivares ${words[*]}'"
		return
	fi
	missing=
	for opt in $(block "$help" "Options:" | sed -n 's/^  \(--[a-z][a-z-]*\) .*/\1/p'); do
		names "$TMP/ss.txt" "$opt" || missing+=" $opt"
	done
	if [[ -z $missing ]]; then
		pass "$page: 'olivares ${words[*]}' and its options"
	else
		fail "$page: 'olivares ${words[*]}' does not name$missing"
	fi
}
root_help=$("$cli" --help)
for group in $(block "$root_help" "Commands:" | awk '{ print $1 }'); do
	walk "$group"
done

section "$TMP/cli.txt" OPTIONS >"$TMP/sh.txt"
missing=
for opt in $(block "$root_help" "Global options (also accepted after the command):" |
	grep -o -E -e '(^| )--?[a-z][a-z-]*' | tr -d ' '); do
	names "$TMP/sh.txt" "$opt" || missing+=" $opt"
done
if [[ -z $missing ]]; then pass "$page: OPTIONS names the global options"; else fail "$page: OPTIONS does not name$missing"; fi

section "$TMP/cli.txt" ENVIRONMENT >"$TMP/sh.txt"
missing=
for var in $(block "$root_help" "Environment:" | grep -o -E '^  OLIVARES_[A-Z_]+'); do
	names "$TMP/sh.txt" "$var" || missing+=" $var"
done
if [[ -z $missing ]]; then pass "$page: ENVIRONMENT names the variables of --help"; else fail "$page: ENVIRONMENT does not name$missing"; fi

section "$TMP/cli.txt" "EXIT STATUS" >"$TMP/sh.txt"
missing=
for status in $(sed -n '/^Exit status:/,/^$/p' <<<"$root_help" | grep -o -E '(:|;) [0-9]+ ' | tr -dc '0-9\n'); do
	grep -q -x -e "\.B $status" "$TMP/sh.txt" || missing+=" $status"
done
if [[ -z $missing ]]; then pass "$page: EXIT STATUS has every status of --help"; else fail "$page: EXIT STATUS lacks$missing"; fi

# ---- olivares-admin.8: its commands and their options --------------------
page=$MAN_DIR/olivares-admin.8
roff_text "$page" >"$TMP/admin.txt"
admin_help=$("$BUILD/olivares-admin" --help)
# "  olivares-admin tenant create NAME | tenant list": each alternative's
# leading lowercase words are the command ("enable|disable": both).
n=0
while IFS= read -r alt; do
	read -r -a w <<<"$alt"
	cmd=${w[0]}
	subs=()
	if [[ ${#w[@]} -gt 1 && ${w[1]} =~ ^[a-z][a-z|]*$ ]]; then
		IFS='|' read -r -a subs <<<"${w[1]}"
	fi
	((${#subs[@]})) || subs=("")
	for sub in "${subs[@]}"; do
		command=$cmd${sub:+ $sub}
		n=$((n + 1))
		if ! subsection "$TMP/admin.txt" "$command" >"$TMP/ss.txt"; then
			fail "$page: a subsection (.SS) for 'olivares-admin $command'"
			continue
		fi
		missing=
		for opt in $(grep -o -E -e '--[a-z][a-z-]*' <<<"$alt" || true); do
			names "$TMP/ss.txt" "$opt" || missing+=" $opt"
		done
		if [[ -z $missing ]]; then
			pass "$page: 'olivares-admin $command' and its options"
		else
			fail "$page: 'olivares-admin $command' does not name$missing"
		fi
	done
done < <(sed -n 's/^ *olivares-admin \([a-z]\)/\1/p' <<<"$admin_help" | sed 's/ | /\n/g')
if ((n == 0)); then fail "$page: no command found in olivares-admin --help"; fi
section "$TMP/admin.txt" ENVIRONMENT >"$TMP/sh.txt"
missing=
mapfile -t vars < <(grep -o -E 'OLIVARES_[A-Z_]+' <<<"$admin_help" | sort -u)
for var in "${vars[@]}"; do
	names "$TMP/sh.txt" "$var" || missing+=" $var"
done
if [[ -z $missing ]]; then pass "$page: ENVIRONMENT names the variables of --help"; else fail "$page: ENVIRONMENT does not name$missing"; fi

# ---- olivares-fcgi.8: options and environment ------------------------------
page=$MAN_DIR/olivares-fcgi.8
roff_text "$page" >"$TMP/fcgi.txt"
fcgi_help=$("$BUILD/olivares-fcgi" --help)
section "$TMP/fcgi.txt" OPTIONS >"$TMP/sh.txt"
missing=
for opt in $(grep -o -E -e '(^| |\[)--?[a-z][a-z-]*' <<<"$fcgi_help" | tr -d ' [' | sort -u); do
	names "$TMP/sh.txt" "$opt" || missing+=" $opt"
done
if [[ -z $missing ]]; then pass "$page: OPTIONS names the options of --help"; else fail "$page: OPTIONS does not name$missing"; fi
section "$TMP/fcgi.txt" ENVIRONMENT >"$TMP/sh.txt"
missing=
mapfile -t vars < <(grep -o -E 'OLIVARES_[A-Z_]+' <<<"$fcgi_help" | sort -u)
for var in "${vars[@]}"; do
	names "$TMP/sh.txt" "$var" || missing+=" $var"
done
if [[ -z $missing ]]; then pass "$page: ENVIRONMENT names the variables of --help"; else fail "$page: ENVIRONMENT does not name$missing"; fi

# ---- olivares.conf.5: every section and key of --check-config --------------
page=$MAN_DIR/olivares.conf.5
if [[ ! -f $page ]]; then
	if [[ $CONF_PAGE_REQUIRED == 1 ]]; then
		fail "$page exists"
	else
		echo "# skip - $page is not in the tree: its sections and keys are not checked"
	fi
else
	roff_text "$page" >"$TMP/conf.txt"
	mkdir -p "$TMP/data"
	printf '[tenant example]\nbackends = inproc-mock\ndefault_backend = inproc-mock\n' >"$TMP/olivares.conf"
	if ! env -u OLIVARES_DSN OLIVARES_DATA="$TMP/data" OLIVARES_CONF="$TMP/olivares.conf" \
		"$BUILD/olivares-fcgi" --check-config >"$TMP/check-config.txt" 2>"$TMP/check-config.err"; then
		fail "olivares-fcgi --check-config runs: $(tr '\n' ' ' <"$TMP/check-config.err")"
	else
		missing=
		n=0
		while IFS= read -r line; do
			case $line in
			'#'* | '') ;;
			'[tenant '*) names "$TMP/conf.txt" "[tenant" || missing+=" [tenant NAME]" ;;
			'['*) grep -q -F -e "$line" "$TMP/conf.txt" || missing+=" $line" ;;
			*' = '*)
				n=$((n + 1))
				names "$TMP/conf.txt" "${line%% = *}" || missing+=" ${line%% = *}"
				;;
			esac
		done <"$TMP/check-config.txt"
		if ((n == 0)); then
			fail "$page: no key found in olivares-fcgi --check-config"
		elif [[ -z $missing ]]; then
			pass "$page: every section and key of olivares-fcgi --check-config ($n keys)"
		else
			fail "$page: does not name$missing"
		fi
	fi
fi

finish
