#!/usr/bin/env bash
# tests/package/check.sh: build the Debian package (scripts/package into a
# temporary dir), extract it into a throw-away root (dpkg-deb -x), check
# the files it must hold (programs, manual pages, the conffile, the units,
# the data dir) and run `systemd-analyze verify` on its units (copies whose
# /usr/bin paths point into the root, MANPATH the root's manual pages).
# One line per check ("ok - ..." or "not ok - ..."), then "N passed, M
# failed"; exit 1 on any failure.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
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
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
finish() {
	echo "$PASSED passed, $FAILED failed"
	((FAILED == 0))
	exit $?
}

TMP=$(mktemp -d /tmp/olivares-package-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
if scripts/package "$TMP/out" >"$TMP/package.log" 2>&1; then
	pass "scripts/package built the .deb, lintian reports no error"
else
	tail -n 30 "$TMP/package.log"
	fail "scripts/package built the .deb, lintian reports no error"
	finish
fi
DEB=$(tail -n 1 "$TMP/package.log")
ROOT=$TMP/root
check "dpkg-deb -x into a throw-away root" dpkg-deb -x "$DEB" "$ROOT"

for p in olivares olivares-admin olivares-fcgi olivares-executor olivares-runner \
	olivares-gateway olivares-gateway-egress olivares-agent-mock olivares-agent-exec; do
	check "program usr/bin/$p" test -x "$ROOT/usr/bin/$p"
done
check "olivares-runner is still static-pie (no interpreter)" \
	bash -c "! readelf -l '$ROOT/usr/bin/olivares-runner' | grep -q 'INTERP'"
for m in man1/olivares.1 man5/olivares.conf.5 man8/olivares-fcgi.8 man8/olivares-executor.8 \
	man8/olivares-admin.8 man8/olivares-gateway.8; do
	check "manual page usr/share/man/$m.gz" test -f "$ROOT/usr/share/man/$m.gz"
done
check "etc/olivares/olivares.conf is a conffile" \
	bash -c "dpkg-deb --ctrl-tarfile '$DEB' | tar -xO ./conffiles | grep -qx /etc/olivares/olivares.conf"
check "the configuration names the data dir /var/lib/olivares" \
	grep -q '^data_dir = /var/lib/olivares$' "$ROOT/etc/olivares/olivares.conf"
check "the configuration loads (olivares-fcgi --check-config)" \
	bash -c "'$ROOT/usr/bin/olivares-fcgi' --config '$ROOT/etc/olivares/olivares.conf' --check-config >/dev/null 2>&1"
check "var/lib/olivares is shipped" test -d "$ROOT/var/lib/olivares"
check "the postinst makes the user olivares" \
	bash -c "dpkg-deb --ctrl-tarfile '$DEB' | tar -xO ./postinst | grep -q 'adduser --system'"
check "the Python module for agents" test -f "$ROOT/usr/share/olivares/python/olivares_agent.py"
check "the nginx template" test -f "$ROOT/usr/share/olivares/nginx/olivares.conf.template"
check "the Apache template" test -f "$ROOT/usr/share/olivares/apache/olivares.conf.template"
for f in 400.json 404.json 413.json 503.json 504.json index.txt; do
	check "the Apache template's page usr/share/olivares/apache/pages/$f" test -s "$ROOT/usr/share/olivares/apache/pages/$f"
done
check "the Apache pages are JSON" bash -c "jq -e .error.code '$ROOT'/usr/share/olivares/apache/pages/*.json >/dev/null"
# the shipped virtual host, its placeholders filled with the package's
# paths (pages and www/ from the root), passes apache2 -t in a minimal
# server with the modules docs/apache.md names
if [[ -x /usr/sbin/apache2 && -r /usr/lib/apache2/modules/mod_proxy_fcgi.so ]]; then
	mkdir -p "$TMP/apache"
	sed -e "s|@LISTEN@|127.0.0.1:8080|g; s|@SOCKET@|/run/olivares/olivares.sock|g" \
		-e "s|@WWW@|$ROOT/usr/share/olivares/www|g; s|@PAGES@|$ROOT/usr/share/olivares/apache/pages|g" \
		-e "s|@ACCESS_LOG@|$TMP/apache/access.log|g; s|@READ_TIMEOUT@|60|g" \
		"$ROOT/usr/share/olivares/apache/olivares.conf.template" >"$TMP/apache/olivares.conf"
	{
		printf 'ServerRoot %s\nPidFile %s/apache.pid\nErrorLog %s/error.log\nListen 127.0.0.1:8080\n' \
			"$TMP/apache" "$TMP/apache" "$TMP/apache"
		for m in mpm_event authz_core authz_host alias headers mime setenvif reqtimeout proxy proxy_fcgi; do
			printf 'LoadModule %s_module /usr/lib/apache2/modules/mod_%s.so\n' "$m" "$m"
		done
		printf 'Include %s/olivares.conf\n' "$TMP/apache"
	} >"$TMP/apache/apache2.conf"
	if out=$(/usr/sbin/apache2 -t -f "$TMP/apache/apache2.conf" 2>&1); then
		pass "the Apache template, filled in, passes apache2 -t"
	else
		echo "$out" | sed 's/^/# /'
		fail "the Apache template, filled in, passes apache2 -t"
	fi
else
	echo "# skip - no apache2 here: the Apache template is not parsed"
fi
UNITS=(olivares-fcgi.socket olivares-fcgi.service olivares-executor.service)
mkdir -p "$TMP/units"
for u in "${UNITS[@]}"; do
	check "unit lib/systemd/system/$u" test -f "$ROOT/lib/systemd/system/$u"
	sed "s|/usr/bin/|$ROOT/usr/bin/|g" "$ROOT/lib/systemd/system/$u" >"$TMP/units/$u"
done
check "the pool takes the socket on fd 0" grep -qx 'StandardInput=socket' "$TMP/units/olivares-fcgi.service"
check "the executor restarts on failure" grep -qx 'Restart=on-failure' "$TMP/units/olivares-executor.service"
if out=$(cd "$TMP/units" && MANPATH=$ROOT/usr/share/man systemd-analyze verify "${UNITS[@]/#/./}" 2>&1); then
	pass "systemd-analyze verify of the units"
else
	echo "$out" | sed 's/^/# /'
	fail "systemd-analyze verify of the units"
fi
finish
