# shellcheck shell=bash
# A throw-away PostgreSQL (15, from Debian's postgresql package) for the
# tests: olv_pg_start DIR [DB...] initialises a cluster in DIR (trust auth,
# listening on 127.0.0.1 only, a free port, its unix socket in DIR), creates
# the databases and sets OLV_PG_PORT and OLV_PG_DIR; olv_pg_dsn DB prints the
# ODBC connection string (TCP), olv_pg_socket_dsn DB the one through the unix
# socket; olv_pg_stop stops it. As root the server runs as
# the postgres user (PostgreSQL refuses to run as root), so DIR is chown'd to
# it and its parents made traversable.

OLV_PG_DIR=
OLV_PG_PORT=

olv_pg_bindir() {
	local d
	for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
		if [[ -x $d/initdb && -x $d/pg_ctl ]]; then
			printf '%s\n' "$d"
			return 0
		fi
	done
	echo "error: PostgreSQL server binaries not found (package postgresql)" >&2
	return 1
}

# run a command as the cluster's owner
olv_pg_as() {
	if ((EUID == 0)); then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

olv_pg_start() {
	local dir=$1 bin port db try p
	shift
	bin=$(olv_pg_bindir) || return 1
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if ((EUID == 0)); then
		chown postgres: "$dir"
		# the server (user postgres) must reach DIR: make every parent
		# traversable (x only, nothing readable is added)
		p=$dir
		while [[ $p != / ]]; do
			p=$(dirname "$p")
			chmod o+x "$p" 2>/dev/null || true
		done
	fi
	chmod 0700 "$dir"
	olv_pg_as "$bin/initdb" -A trust -U postgres -E UTF8 --no-locale -D "$dir/data" >"$dir/initdb.log" 2>&1 || {
		echo "error: initdb failed:" >&2
		tail -n 20 "$dir/initdb.log" >&2
		return 1
	}
	for try in 1 2 3 4 5; do
		port=$(olv_free_port)
		if olv_pg_as "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 \
			-o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=off -c max_connections=100" \
			start >"$dir/pg_ctl.log" 2>&1; then
			OLV_PG_DIR=$dir
			OLV_PG_PORT=$port
			break
		fi
		echo "note: PostgreSQL did not start on port $port (try $try)" >&2
	done
	if [[ -z $OLV_PG_PORT ]]; then
		echo "error: PostgreSQL did not start:" >&2
		tail -n 20 "$dir/postgres.log" >&2
		return 1
	fi
	for db in "$@"; do
		olv_pg_as "$bin/createdb" -h 127.0.0.1 -p "$OLV_PG_PORT" -U postgres "$db" || return 1
	done
}

# olv_pg_dsn DB: the ODBC connection string of database DB
olv_pg_dsn() {
	printf 'Driver=PostgreSQL Unicode;Servername=127.0.0.1;Port=%s;Database=%s;Username=postgres;SSLmode=disable\n' \
		"$OLV_PG_PORT" "$1"
}

# olv_pg_socket_dsn DB: the same through the server's unix socket directory
# (psqlODBC hands a Servername that is a path to libpq as the socket's
# directory): reachable from a network namespace of its own
olv_pg_socket_dsn() {
	printf 'Driver=PostgreSQL Unicode;Servername=%s;Port=%s;Database=%s;Username=postgres;SSLmode=disable\n' \
		"$OLV_PG_DIR" "$OLV_PG_PORT" "$1"
}

olv_pg_stop() {
	local bin
	[[ -n $OLV_PG_DIR && -d $OLV_PG_DIR/data ]] || return 0
	bin=$(olv_pg_bindir) || return 1
	olv_pg_as "$bin/pg_ctl" -D "$OLV_PG_DIR/data" -m fast -w -t 30 stop >/dev/null 2>&1 || true
	OLV_PG_DIR=
	OLV_PG_PORT=
}
