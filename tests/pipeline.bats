#!/usr/bin/env bats
# Whole pipelines: pgn2pos | uci-eval | softtarget | posdump keeps every
# record, its order and everything earlier stages added; records flow
# through a pipeline while the producer is still running.

load helper

GAMES="$TESTDATA/lichess_db_10k.pgn"
MKREC="$BUILD_DIR/tests/tools/mkrec"

@test "pgn2pos | uci-eval | softtarget keeps every record, in order, with all data" {
	pgn2pos -q "$GAMES" | uci-eval -d 2 -m all --no-newgame 2>/dev/null |
		softtarget --value tanh > out.pos
	pgn2pos -q "$GAMES" > pos.pos
	# Same records, same order, same core fields and metadata.
	diff <(posdump --fields fen,game,ply,move,result,meta,clock pos.pos) \
		<(posdump --fields fen,game,ply,move,result,meta,clock out.pos)
	n=$(posdump -c pos.pos | cut -d' ' -f1)
	[ "$n" -gt 200 ]
	# Every record has an evaluation; every record that is not terminal
	# has a policy over all its legal moves summing to 65535, and a value.
	run jq -r -s '
		[ .[] | select((.flags | index("mate") or index("stalemate")) | not) ]
		| map(
			([.exts[] | select(.type == "eval")] | length) >= 1 and
			([.exts[] | select(.type == "policy")][0].moves
			    | map(.q) | add) == 65535 and
			([.exts[] | select(.type == "movescores")][0].moves | length) ==
			([.exts[] | select(.type == "policy")][0].moves | length) and
			([.exts[] | select(.type == "value")] | length) == 1)
		| all' <(posdump -j out.pos)
	assert_output true
}

@test "a pipeline passes records on while its producer is still running" {
	# The producer writes one game, then waits until the end of the
	# pipeline has shown it before it ends; if any stage held the record
	# back until its input ended, the producer gives up after 20 s and
	# leaves a mark.
	pgn2pos -q "$GAMES" --max-plies 3 | head -c 100000 > first.pos
	mkfifo shown
	(
		cat first.pos
		if timeout 20 head -n 1 shown > /dev/null; then
			:
		else
			echo held > held.mark
		fi
	) | softtarget --policy none --value tanh | posdump --fields ply > shown
	[ ! -e held.mark ]
}

@test "a damaged stream in the middle of a pipeline: exit 1 there, every good record on" {
	pgn2pos -q "$GAMES" > pos.pos
	size=$(stat -c %s pos.pos)
	head -c $((size / 2)) pos.pos > half.pos
	run bash -c 'cat half.pos | softtarget --policy none --value tanh 2>err |
		posdump -c; echo "rc=${PIPESTATUS[1]}"'
	assert_line --index 1 "rc=1"
	n=$(echo "${lines[0]}" | cut -d' ' -f1)
	[ "$n" -gt 0 ]
	grep -q 'truncated' err
}

@test "after a lost block, every tool numbers the records as the reader does, the lost ones counted" {
	for i in 1 2; do echo "startpos game=$i eval=cp:$i@depth:3"; done | "$MKREC" > a.pos
	for i in 3 4 5; do echo "startpos game=$i eval=cp:$i@depth:3"; done | "$MKREC" > b.pos
	# a byte of b's block (its payload starts at 16 + 24)
	printf '\x55' | dd of=b.pos bs=1 seek=50 conv=notrunc 2>/dev/null
	printf '%s\n' 'startpos game=6 eval=cp:6@depth:3' 'startpos game=7 ext=2:00' |
		"$MKREC" > c.pos
	cat a.pos b.pos c.pos > n.pos
	for t in posdump "posfilter --count known(eval)" posstat complexity\ --mode\ nodes; do
		run --separate-stderr $t n.pos
		assert_failure 1
		[[ "$stderr" == *"n.pos: block 3 at offset 282: checksum mismatch (records 3..5 lost)"* ]] ||
			fail "$t: $stderr"
		[[ "$stderr" == *"n.pos: record 7: malformed"* ]] || fail "$t: $stderr"
	done
}

# The Python reader printed in posflow(5) EXAMPLES, with mandoc's escapes
# undone.
man_python_reader() {
	awk '/^Reading a stream in Python/ { want = 1 }
	    want && /^\.Bd -literal/ { on = 1; next }
	    on && /^\.Ed/ { exit }
	    on { print }' "$BATS_TEST_DIRNAME/../man/man5/posflow.5" |
		sed 's/\\e/\\/g'
}

@test "posflow(5)'s Python reader reads what the tools write, and the checksums it names verify" {
	pgn2pos -q "$GAMES" | softtarget --policy none --value linear > s.pos
	man_python_reader > reader.py
	grep -q 'def records' reader.py
	run /usr/bin/python3 reader.py < s.pos
	assert_success
	# game (decimal) and ply of every record, as posdump shows them.
	printf '%s\n' "$output" | /usr/bin/python3 -c 'import sys
for line in sys.stdin:
    game, ply = line.split()[:2]
    print("%016x %s" % (int(game), ply))' > python.txt
	posdump --fields game,ply s.pos | sed 's/game=//; s/ply=//' > posdump.txt
	cmp python.txt posdump.txt
	[ "$(printf '%s\n' "$output" | wc -l)" -gt 200 ]
	# Every block's checksum, computed with the xxhash package as
	# posflow(5) says: XXH3-64 under header flag 0x0001, else XXH64.
	cat > check.py <<'PY'
import struct, sys, xxhash
data = open(sys.argv[1], 'rb').read()
off = blocks = 0
while off < len(data):
    magic, version, flags, hlen = struct.unpack_from('<4sHHI', data, off)
    assert magic == b'\x89PFS', magic
    off += hlen
    while True:
        magic, size, count, _, xxh = struct.unpack_from('<4sIIIQ', data, off)
        assert magic == b'\x89PFB'
        payload = data[off + 24:off + 24 + size]
        want = (xxhash.xxh3_64_intdigest(payload) if flags & 1
                else xxhash.xxh64_intdigest(payload))
        assert want == xxh, (blocks, hex(want), hex(xxh))
        blocks += 1
        off += 24 + size
        if size == 0:
            break
print(blocks, flags)
PY
	run /usr/bin/python3 check.py s.pos
	assert_success
	assert_output --regexp '^[0-9]+ 1$'
	# A flipped payload byte is caught there too.
	cp s.pos bad.pos
	printf '\x55' | dd of=bad.pos bs=1 seek=200 conv=notrunc 2>/dev/null
	run /usr/bin/python3 check.py bad.pos
	assert_failure
}
