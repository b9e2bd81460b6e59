# shellcheck shell=bash
# olv_deps: install the Debian packages the build, the stack and the tests
# need, only those missing. apt is not touched at all when everything is
# present; otherwise, as root, `apt-get update` once and one
# `apt-get install`. Not root and something missing: say what, and fail.

OLV_DEPS_PACKAGES=(
	build-essential autoconf automake libtool pkg-config
	libfcgi-dev libfcgi-bin unixodbc unixodbc-dev libsqliteodbc odbc-postgresql
	libjansson-dev libxml2-dev libssl-dev libcurl4-openssl-dev libinih-dev
	libseccomp-dev check libxml2-utils
	nginx-light postgresql spawn-fcgi wrk jq curl sqlite3 valgrind
	runsc
)

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
