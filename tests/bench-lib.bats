#!/usr/bin/env bats
# scripts/bench-lib's promise, kept by the scripts that wrap its timing in
# a function of their own: a run that fails stops the benchmark with its
# error, never timed as a result.  (bash clears set -e inside a command
# substitution, so a wrapper called as v=$(wrapper ...) must pass the
# failure on itself.)

load helper

@test "bench-pgn2pos: a peer that fails stops the benchmark with its error" {
	cd "$TOP"
	mkdir "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho "pgn-extract: broken" >&2\nexit 3\n' \
	    > "$BATS_TEST_TMPDIR/bin/pgn-extract"
	chmod +x "$BATS_TEST_TMPDIR/bin/pgn-extract"
	run --separate-stderr env PATH="$BATS_TEST_TMPDIR/bin:$PATH" \
	    BUILD="${BUILD_DIR#$TOP/}" BENCH_MB=1 BENCH_RUNS=1 \
	    scripts/bench-pgn2pos
	assert_failure
	[[ "$stderr" == *"pgn-extract: broken"* ]] || fail "no error: $stderr"
	[[ "$stderr" == *"bench-pgn2pos: failed: "*"pgn-extract"* ]] ||
		fail "no failed: line: $stderr"
	# stopped there: no timing line for it, nor anything after it
	[[ "$output" != *"pgn-extract -Wepd "*" s "* ]] || fail "timed: $output"
	[[ "$output" != *"ratio"* ]] || fail "went on: $output"
}
