#!/usr/bin/env bats
# scripts/bench-policy: a small run (a few positions, shallow depths)
# prints a complete table, every setting once with figures in range, and
# a recommended: line that parses and names a setting of the table whose
# distance is within the floor.  No timing is asserted.

load helper

@test "a small run prints the table and a recommended line that parses" {
	cd "$TOP"
	run --separate-stderr env BUILD="${BUILD_DIR#$TOP/}" scripts/bench-policy --depth 5 --positions 6 --seed 3 testdata/lichess_db_100k.pgn
	assert_success
	echo "$output" > "$BATS_TEST_TMPDIR/out"
	[[ "${lines[0]}" == "bench-policy: 6 positions of testdata/lichess_db_100k.pgn, reference -d 5 -m all -O Hash=16, -j 2" ]]
	# the rows: name, then time, mean, p90 (numbers) and same (a share)
	for name in reference floor d3 d1 m1t1 m3t1 m5t1 avg3 floor-avg3 avg1 floor-avg1; do
		grep -q "^$name " "$BATS_TEST_TMPDIR/out" || fail "no row $name: $output"
	done
	awk 'NR > 2 && !/^recommended:/ {
		n = NF; to = $n; same = $(n - 1); p90 = $(n - 2); mean = $(n - 3); t = $(n - 4)
		if (t <= 0 || mean < 0 || mean > 1 || p90 < mean || p90 > 1 || same < 0 || same > 1)
			{ print "bad row: " $0; exit 1 }
	}' "$BATS_TEST_TMPDIR/out"
	# the reference against itself
	grep -Eq '^reference .* 1\.000 +0\.0000 +0\.0000 +1\.000 +reference$' "$BATS_TEST_TMPDIR/out"
	# the last line
	last=${lines[${#lines[@]} - 1]}
	[[ "$last" =~ ^recommended:\ uci-eval\ (.*)\ \|\ softtarget\ ?(.*)\ time\ ([0-9.]+)\ tv\ ([0-9.]+)\ floor\ ([0-9.]+)$ ]] || fail "last line: $last"
	tv=${BASH_REMATCH[4]} floor=${BASH_REMATCH[5]}
	awk -v a="$tv" -v b="$floor" 'BEGIN { exit !(a <= b) }'
}
