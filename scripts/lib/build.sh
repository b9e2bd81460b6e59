# shellcheck shell=bash
# olv_build DIR [CONFIGURE-ARGS...]: build the tree out of tree into DIR
# (autogen when the generated build system is missing or older than its
# sources, configure once per set of arguments, make -j2).

olv_autogen() {
	local root=$OLV_ROOT f
	if [[ ! -x $root/configure || ! -f $root/Makefile.in ]]; then
		(cd "$root" && ./autogen.sh) >&2
		return
	fi
	for f in configure.ac Makefile.am; do
		if [[ $root/$f -nt $root/configure || $root/$f -nt $root/Makefile.in ]]; then
			(cd "$root" && ./autogen.sh) >&2
			return
		fi
	done
}

olv_build() {
	local dir=$1 stamp args
	shift
	if [[ -f $OLV_ROOT/config.status && $(olv_abspath "$dir") != "$OLV_ROOT" ]]; then
		printf 'error: %s was configured in tree; run "make distclean" there first (out-of-tree builds need a clean source tree)\n' "$OLV_ROOT" >&2
		return 1
	fi
	olv_autogen || return 1
	mkdir -p "$dir"
	args="$*"
	stamp=$dir/.olivares-configure-args
	if [[ ! -f $dir/Makefile || ! -f $stamp || $(<"$stamp") != "$args" ]]; then
		(cd "$dir" && "$OLV_ROOT/configure" "$@") >&2 || return 1
		printf '%s' "$args" >"$stamp"
	fi
	make -C "$dir" -j2 >&2
}
