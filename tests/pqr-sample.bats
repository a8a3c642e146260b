#!/usr/bin/env bats
# pqr-sample: Q is the position after the move played and R after another
# legal move (checked by replaying the moves with pgn2pos), R uniform over
# the other moves (chi-square), reproducible from seed, game and ply only
# (order and chunking never change a sample), --per-position and
# --min-legal, records not sampled, a rerun replaces; stream handling; the
# usage table.

load helper

MKREC="$BUILD_DIR/tests/tools/mkrec"
AFTER_E4='rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'

# The PQR extensions of stream $1 as "q r r_move", one line each.
triples() {
	posdump --json "$1" |
	    jq -r '.exts[] | select(.type == "pqr") | "\(.q)|\(.r)|\(.r_move)"'
}

# The FEN after UCI move $2 from FEN $1, by pgn2pos.
after() {
	printf '[FEN "%s"]\n\n%s *\n' "$1" "$2" > a.pgn
	pgn2pos a.pgn 2>/dev/null | posdump --fields fen | sed -n 2p
}

@test "golden: Q after the move played, R after another legal move, as FENs" {
	printf '%s\n' "startpos game=7 ply=0 move=e2e4" | "$MKREC" > in.pos
	run pqr-sample in.pos -o out.pos
	assert_success
	assert_output --partial "1 records: 1 sampled (1 triples)"
	IFS='|' read -r q r m < <(triples out.pos)
	[ "$q" = "$AFTER_E4" ]
	[ "$m" != "e2e4" ]
	[ "$r" = "$(after 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1' "$m")" ]
	# every other extension passes through, the record unchanged
	cmp <(posdump --fields fen,game,ply,move in.pos) <(posdump --fields fen,game,ply,move out.pos)
}

@test "R is uniform over the other legal moves and never the move played" {
	# 19 other moves from the start: 1900 games, about 100 each
	for i in $(seq 1900); do echo "startpos game=$i ply=0 move=e2e4"; done |
	    "$MKREC" > in.pos
	pqr-sample in.pos -o out.pos 2>/dev/null
	triples out.pos | cut -d'|' -f3 | sort | uniq -c > counts
	[ "$(wc -l < counts)" -eq 19 ]
	! grep -q ' e2e4$' counts
	# chi-square with 18 degrees of freedom below 42.3 (p = 0.001)
	run awk '{ d = $1 - 100; x += d * d / 100 } END { print (x < 42.3) ? "ok" : "chi2 " x }' counts
	assert_output ok
}

@test "reproducible: the seed, the game and the ply decide, not the order or the chunk" {
	for i in $(seq 40); do echo "startpos game=$i ply=0 move=d2d4"; done | "$MKREC" > a.pos
	for i in $(seq 40 -1 1); do echo "startpos game=$i ply=0 move=d2d4"; done | "$MKREC" > b.pos
	pqr-sample --seed 5 a.pos -o a5.pos 2>/dev/null
	pqr-sample --seed 5 b.pos -o b5.pos 2>/dev/null
	pqr-sample --seed 5 a.pos -o again.pos 2>/dev/null
	pqr-sample --seed 6 a.pos -o a6.pos 2>/dev/null
	cmp <(triples a5.pos) <(triples again.pos)
	cmp <(triples a5.pos) <(triples b5.pos | tac)
	! cmp -s <(triples a5.pos) <(triples a6.pos)
	# in chunks: the first 20 and the last 20 records apart
	for i in $(seq 20); do echo "startpos game=$i ply=0 move=d2d4"; done | "$MKREC" > c1.pos
	for i in $(seq 21 40); do echo "startpos game=$i ply=0 move=d2d4"; done | "$MKREC" > c2.pos
	cat <(pqr-sample --seed 5 c1.pos 2>/dev/null) <(pqr-sample --seed 5 c2.pos 2>/dev/null) > chunks.pos
	cmp <(triples a5.pos) <(triples chunks.pos)
}

@test "--per-position draws different R moves; --min-legal; records not sampled are counted" {
	printf '%s\n' "startpos game=1 ply=0 move=e2e4" | "$MKREC" > one.pos
	pqr-sample --per-position 5 one.pos -o five.pos 2>/dev/null
	[ "$(triples five.pos | cut -d'|' -f3 | sort -u | wc -l)" -eq 5 ]
	[ "$(triples five.pos | cut -d'|' -f1 | sort -u)" = "$AFTER_E4" ]
	# more than there are: one for each other move
	run pqr-sample --per-position 64 one.pos -o all.pos
	assert_output --partial "1 sampled (19 triples)"
	# a bare king in the corner has 3 legal moves: below --min-legal 4
	printf '%s\n' \
	    'k7/8/8/8/8/8/8/K7 w - - 0 1 game=2 ply=0 move=a1b2' \
	    'startpos game=3 ply=0' \
	    '7k/5Q2/6K1/8/8/8/8/8 b - - 0 1 game=4 ply=0' |
	    "$MKREC" > in.pos
	run pqr-sample --min-legal 4 in.pos -o out.pos
	assert_success
	# the mated side has no move played either: counted as such
	assert_output --partial "3 records: 0 sampled (0 triples); not sampled: 2 without a move, 0 terminal, 1 with fewer than 4 legal moves"
	run pqr-sample in.pos -o out.pos
	assert_output --partial "1 sampled"
	[ "$(posdump -c out.pos | cut -d' ' -f1)" -eq 3 ]
}

@test "a rerun replaces its own extensions; Chess960 castling in R" {
	printf '%s\n' "startpos game=1 ply=0 move=g1f3" | "$MKREC" > in.pos
	pqr-sample --per-position 3 in.pos 2>/dev/null | pqr-sample --per-position 2 -o out.pos 2>/dev/null
	[ "$(triples out.pos | wc -l)" -eq 2 ]
	# a Chess960 position (king b1, rooks a1 and g1) that can castle both
	# ways: R moves in king-takes-rook form, R the position after them
	fen='7k/8/8/8/8/8/8/RK4R1 w AG - 0 1'
	printf '%s\n' "$fen game=9 ply=0 move=b1b2" | "$MKREC" > c.pos
	pqr-sample --per-position 64 c.pos -o c.out 2>/dev/null
	[ "$(triples c.out | wc -l)" -eq 24 ]
	triples c.out | cut -d'|' -f3 | grep -qx 'b1g1'
	triples c.out | cut -d'|' -f3 | grep -qx 'b1a1'
	while IFS='|' read -r q r m; do
		[ "$r" = "$(after "$fen" "$m")" ] || fail "R after $m: $r"
	done < <(triples c.out | grep -e '|b1g1$' -e '|b1a1$' -e '|g1g8$')
}

@test "empty, concatenated, corrupt and truncated input" {
	"$MKREC" < /dev/null > empty.pos
	run pqr-sample empty.pos -o out.pos
	assert_success
	[ "$(posdump -c out.pos | cut -d' ' -f1)" -eq 0 ]
	printf '%s\n' 'startpos game=1 move=e2e4' | "$MKREC" > a.pos
	cat a.pos a.pos > two.pos
	run pqr-sample two.pos a.pos -o out.pos
	assert_success
	assert_output --partial "3 records: 3 sampled"
	for i in $(seq 40); do echo "startpos game=$i move=e2e4"; done | "$MKREC" -F > many.pos
	size=$(stat -c %s many.pos)
	cp many.pos bad.pos
	printf '\377' | dd of=bad.pos bs=1 seek=$((size - 40)) conv=notrunc 2>/dev/null
	run pqr-sample bad.pos -o out.pos
	assert_failure 1
	assert_output --partial "bad.pos"
	[ "$(posdump -c out.pos | cut -d' ' -f1)" -ge 38 ]
	head -c $((size - 60)) many.pos > cut.pos
	run pqr-sample cut.pos -o out.pos
	assert_failure 1
	assert_output --partial "cut.pos"
	[ "$(posdump -c out.pos | cut -d' ' -f1)" -ge 38 ]
}

@test "--help, --version, invalid calls: exit 2, usage on stderr, nothing on stdout" {
	run pqr-sample --help
	assert_success
	assert_output --partial "usage: pqr-sample"
	run pqr-sample --version
	assert_output --partial "pqr-sample (posflow)"
	printf 'startpos\n' | "$MKREC" > in.pos
	while read -r args; do
		eval "set -- $args"
		run bash -c 'pqr-sample "$@" in.pos 2>/dev/null' _ "$@"
		[ "$status" -eq 2 ] || { echo "status $status for: $args"; false; }
		[ -z "$output" ] || { echo "stdout for: $args"; false; }
		run bash -c 'pqr-sample "$@" in.pos 2>&1 >/dev/null' _ "$@"
		[[ "$output" == *"usage: pqr-sample"* ]] || { echo "no usage for: $args"; false; }
	done <<-'EOF'
	--per-position 0 -f
	--per-position 65 -f
	--per-position x -f
	--min-legal 1 -f
	--min-legal 300 -f
	--seed -1 -f
	--seed x -f
	--bogus -f
	EOF
}
