# Shared bats setup: built binaries first on PATH, LC_ALL=C, bats-support
# and bats-assert loaded, each test working in its own BATS_TEST_TMPDIR.
# Use:  load helper   (from tests/<tool>.bats)

bats_require_minimum_version 1.5.0

TOP="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
BUILD_DIR="${POSFLOW_BUILD:-$TOP/build}"
export PATH="${POSFLOW_BIN:-$BUILD_DIR/bin}:$PATH"
export LC_ALL=C
TESTDATA="$TOP/testdata"

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
