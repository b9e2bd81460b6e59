# shellcheck shell=bash
# olv_deps: install the Debian packages the build, the stack and the tests
# need, only those missing. apt is not touched at all when everything is
# present; otherwise, as root, `apt-get update` once and one
# `apt-get install`. Not root and something missing: say what, and fail.

OLV_DEPS_PACKAGES=(
	build-essential autoconf automake libtool pkg-config
	libfcgi-dev libfcgi-bin unixodbc unixodbc-dev libsqliteodbc odbc-postgresql
	libjansson-dev libxml2-dev libssl-dev libcurl4-openssl-dev libinih-dev
	libseccomp-dev check libxml2-utils clang-format man-db groff-base python3-yaml
	nginx-light apache2 postgresql spawn-fcgi wrk jq curl sqlite3 valgrind python3
	prometheus
	runsc node-llhttp
	debhelper lintian
	chromium
)
# The browser tests (tests/browser, run by tests/e2e/t1300-admin.sh) drive
# Debian's chromium through playwright-core from npm. node and npm come
# from Debian only on a machine that has no node at all: a node installed
# otherwise (nodesource's nodejs, which carries npm) conflicts with
# Debian's nodejs package. playwright-core wants node >= 20.
if ! command -v node >/dev/null 2>&1; then
	OLV_DEPS_PACKAGES+=(nodejs npm)
fi

# tests/browser, where olv_browser_deps installs playwright-core
OLV_BROWSER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../tests/browser" 2>/dev/null && pwd)

# olv_deps_missing: print the packages of OLV_DEPS_PACKAGES not installed.
olv_deps_missing() {
	local p st
	for p in "${OLV_DEPS_PACKAGES[@]}"; do
		st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
		# "ii " = installed; anything else (absent, half-installed) is missing
		if [[ $st != ii* ]]; then
			printf '%s\n' "$p"
		fi
	done
}

olv_deps() {
	local missing
	mapfile -t missing < <(olv_deps_missing)
	if ((${#missing[@]} == 0)); then
		return 0
	fi
	if ((EUID != 0)); then
		printf 'error: missing packages: %s\n' "${missing[*]}" >&2
		printf 'install them with: sudo apt-get install %s\n' "${missing[*]}" >&2
		return 1
	fi
	printf 'installing: %s\n' "${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >&2
	apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

# olv_browser_deps: the npm packages of the browser tests (playwright-core,
# pinned by tests/browser/package-lock.json), with `npm ci` from the npm
# registry, when tests/browser/node_modules is missing. playwright-core
# downloads no browser (the tests use /usr/bin/chromium). Fails when npm is
# missing or the install fails.
olv_browser_deps() {
	if [[ -z $OLV_BROWSER_DIR || ! -f $OLV_BROWSER_DIR/package-lock.json ]]; then
		printf 'error: tests/browser/package-lock.json not found\n' >&2
		return 1
	fi
	if [[ -d $OLV_BROWSER_DIR/node_modules/playwright-core ]]; then
		return 0
	fi
	if ! command -v npm >/dev/null 2>&1; then
		printf 'error: npm not found (needed for tests/browser)\n' >&2
		return 1
	fi
	printf 'installing: npm packages of tests/browser (npm ci)\n' >&2
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix "$OLV_BROWSER_DIR" --no-audit --no-fund >&2
}

# olv_openapi_deps: the npm package that validates the OpenAPI document
# (@seriousme/openapi-schema-validator, pinned by
# tests/openapi/package-lock.json; tests/openapi/check.sh runs it), with
# `npm ci` from the npm registry, when tests/openapi/node_modules lacks it.
# Once installed it runs offline. Fails when npm is missing or the install
# fails.
olv_openapi_deps() {
	local dir
	dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../tests/openapi" 2>/dev/null && pwd)
	if [[ -z $dir || ! -f $dir/package-lock.json ]]; then
		printf 'error: tests/openapi/package-lock.json not found\n' >&2
		return 1
	fi
	if [[ -x $dir/node_modules/.bin/validate-api ]]; then
		return 0
	fi
	if ! command -v npm >/dev/null 2>&1; then
		printf 'error: npm not found (needed for tests/openapi)\n' >&2
		return 1
	fi
	printf 'installing: npm packages of tests/openapi (npm ci)\n' >&2
	npm ci --prefix "$dir" --no-audit --no-fund >&2
}
