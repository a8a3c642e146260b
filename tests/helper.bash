# Shared bats setup: built binaries first on PATH, LC_ALL=C, bats-support
# and bats-assert loaded, each test working in its own BATS_TEST_TMPDIR.
# Use:  load helper   (from tests/<tool>.bats)

bats_require_minimum_version 1.5.0

TOP="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
BUILD_DIR="${POSFLOW_BUILD:-$TOP/build}"
export PATH="${POSFLOW_BIN:-$BUILD_DIR/bin}:$PATH"
export LC_ALL=C
TESTDATA="$TOP/testdata"
# Not the flags of the make that runs the tests (make -s check): the
# dataset builds pass an enclosing make's MAKEFLAGS on, as they should,
# and a -s there silences the commands their tests look for.
unset MAKEFLAGS MFLAGS MAKELEVEL

for d in /usr/lib/bats /usr/local/lib/bats /usr/lib/node_modules; do
	if [ -f "$d/bats-support/load.bash" ]; then
		load "$d/bats-support/load.bash"
		load "$d/bats-assert/load.bash"
		break
	fi
done

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# Stockfish as Debian installs it, or on PATH.
stockfish_path() {
	command -v stockfish 2>/dev/null || echo /usr/games/stockfish
}

# Debian's python3 with NumPy (another python3 may come first on PATH), set
# up for the Python module: PY, PYTHONPATH and POSFLOW_LIB exported.  A
# library built with AddressSanitizer needs its runtime loaded first, so
# python3 then runs through a wrapper that preloads it (python3 only: the
# other programs of the tests are not built with it).  Call it from
# setup_file; returns 1 with a message when there is no such python3.
setup_python() {
	local p
	PY=
	for p in /usr/bin/python3 python3; do
		if "$p" -c 'import numpy' 2>/dev/null; then
			PY=$p
			break
		fi
	done
	if [ -z "$PY" ]; then
		echo "no python3 with numpy: run make check as root (python3-numpy)" >&3
		return 1
	fi
	export PYTHONPATH="$TOP/scripts"
	export POSFLOW_LIB="$BUILD_DIR/libposflow.so"
	if ldd "$POSFLOW_LIB" | grep -q libasan; then
		cat > "$BATS_FILE_TMPDIR/python3-asan" <<-EOF
		#!/bin/sh
		LD_PRELOAD="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)" \\
		ASAN_OPTIONS=detect_leaks=0 exec "$PY" "\$@"
		EOF
		chmod +x "$BATS_FILE_TMPDIR/python3-asan"
		PY="$BATS_FILE_TMPDIR/python3-asan"
	fi
	export PY
}

# Append the n-byte little-endian hex of a (possibly negative) number to
# HEX.  No subshells: the test helpers that build extensions make many
# bytes.
le() {
	local v=$1 n=$2 i b
	for ((i = 0; i < n; i++)); do
		printf -v b '%02x' $(((v >> (8 * i)) & 255))
		HEX+=$b
	done
}

# Set HEX to an eval extension's payload (posflow(5)): an engine's, searched
# to depth 12, of score $1 in score kind $2 (0 cp, 1 mate; 2 is a kind
# posflow(5) does not define, which every reader must refuse).
eval_hex() {
	HEX=
	le 0 1; le 1 1; le "$2" 1; le 0 1; le "$1" 4; le 12 8
	le 0 2; le 0 2; le 0 2; le 12 2; le 12 2; le 0 2; le 1000 8
	le 1 4; le 1 2; le 0 2; le 0 1
}

# Set MV to a move as posflow's u16 (from | to << 6) from UCI squares.
move16() {
	local f F
	printf -v f '%d' "'${1:0:1}"
	printf -v F '%d' "'${1:2:1}"
	MV=$((f - 97 + 8 * (${1:1:1} - 1) | (F - 97 + 8 * (${1:3:1} - 1)) << 6))
}

# A shard directory's shards as "file records checksum" lines, from its
# manifest (dataset builds compare them).
shards() {
	jq -r '.shards[] | "\(.file) \(.records) \(.xxh3)"' "$1/manifest.json"
}

# Wait until file is larger than n bytes (10 s at most: the loop only
# bounds the wait; no timing is measured), then print its size.
size_after() {
	for _ in $(seq 100); do
		[ "$(stat -c %s "$1")" -gt "$2" ] && break
		sleep 0.1
	done
	stat -c %s "$1"
}

# A tmpfs of $1 at ./mnt ($MNT), for a full disk; unmount_fs (from
# teardown) unmounts it.  The tests run as root: a test that needs one
# fails without it rather than pass untested.
small_fs() {
	mkdir mnt
	mount -t tmpfs -o "size=$1" tmpfs mnt ||
		fail "cannot mount a tmpfs at $PWD/mnt (run the tests as root)"
	MNT=$PWD/mnt
}

unmount_fs() {
	if [ -n "${MNT:-}" ] && mountpoint -q "$MNT"; then
		umount "$MNT" || umount -l "$MNT"
	fi
}
