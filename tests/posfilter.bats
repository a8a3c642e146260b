#!/usr/bin/env bats
# posfilter: every field and operator against hand-built records, missing
# values, errors pointing at the column; the sampling rules (--keep,
# --wdl-skip against the model within binomial bounds, --piece-curve,
# --early-skip) reproducible from seed, game and ply; --invert splits the
# input in two; --count; records kept unchanged; damaged input.

load helper

MKREC="$BUILD_DIR/tests/tools/mkrec"

# Nine hand-built records (see the comments) in fields.pos.
fields_stream() {
	# complexity (depth mode, complexity 5), repair (candidates, class 1),
	# merge (3 twins), value (target 0.5) on record 5; two value targets
	# (0.25, then 0.75: the last is the one) on record 7
	local cx="ext=7:01010500$(printf '0%.0s' $(seq 48))"
	local rp="ext=8:0101$(printf '0%.0s' $(seq 36))"
	local mg="ext=10:03$(printf '0%.0s' $(seq 30))"
	local va="ext=6:0100$(printf '0%.0s' $(seq 28))0000003f"
	local va1="ext=6:0100$(printf '0%.0s' $(seq 28))0000803e"
	local va2="ext=6:0100$(printf '0%.0s' $(seq 28))0000403f"
	printf '%s\n' \
	    'startpos game=1 ply=0 result=1-0 move=e2e4 eval=cp:35@depth:10 wdl=300,600,100 best=e2e4 meta=1500,1700,180+2,1' \
	    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 game=1 ply=1 result=1-0 move=d7d5 eval=cp:-50@depth:1 best=d7d5 eval=cp:-20@depth:10 best=e7e5' \
	    'rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2 game=1 ply=2 result=1-0 move=e4d5 eval=mate:3@depth:12 best=e4d5' \
	    '4k3/8/8/8/8/8/8/4R1K1 b - - 0 40 game=2 ply=79 result=1/2-1/2 move=e8d8 meta=0,2400,-,2' \
	    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 5 10 game=3 ply=18 result=0-1 move=e1g1 eval=cp:10@depth:8 best=e1g1 $cx $rp $mg $va" \
	    '8/P7/8/8/8/8/8/k6K w - - 0 50 game=4 ply=98 move=a7a8q flags=0x10' \
	    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3 game=5 ply=4 move=e5f6 eval=cp:90@depth:8 best=d2d4 $va1 $va2" \
	    '7k/5Q2/6K1/8/8/8/8/8 b - - 0 60 game=6 ply=119 result=1/2-1/2' \
	    '7k/6Q1/6K1/8/8/8/8/8 b - - 0 60 game=7 ply=119 result=1-0' |
	    "$MKREC" > fields.pos
}

# How many records of fields.pos expression $1 keeps.
count() {
	posfilter --count -- "$1" fields.pos 2>/dev/null
}

# Check "expression<TAB>count" lines from stdin.
check_table() {
	local expr want got bad=0
	while IFS=$'\t' read -r expr want; do
		[ -n "$expr" ] || continue
		got=$(count "$expr")
		if [ "$got" != "$want" ]; then
			echo "'$expr': $got records, want $want" >&2
			bad=1
		fi
	done
	return $bad
}

@test "every field against hand-built records" {
	fields_stream
	check_table <<-'EOF'
	ply == 0	1
	ply >= 79	4
	move == 2	1
	move == 60	2
	halfmove == 5	1
	side == black	4
	side == white	5
	result == 1	4
	result == -1	1
	result == 0	2
	!known(result)	2
	outcome == win	2
	outcome == loss	3
	outcome == draw	2
	check	2
	checkmate	1
	stalemate	1
	last	1
	chess960	0
	truncated	0
	game == 3	1
	played	7
	capture	2
	!capture	7
	promotion	1
	castling	1
	pieces == 32	4
	pieces == 3	4
	material == 78	4
	material == 5	1
	imbalance == -5	1
	imbalance == 1	1
	legal == 20	2
	legal == 4	1
	legal == 0	2
	white_elo == 1500	1
	black_elo == 2400	1
	elo == 1500	1
	elo == 2400	1
	opp_elo == 1700	1
	known(opp_elo)	1
	avg_elo == 1600	1
	known(avg_elo)	1
	base == 180 && inc == 2	1
	known(base)	1
	termination == normal	1
	termination == time	1
	known(termination)	2
	eval == 35	1
	eval == -20	1
	eval[depth:1] == -50	1
	eval[ depth:10 ] == -20	1
	eval[nodes:1] == -50	0
	eval[deepest] == -20	1
	eval[first] == -50	1
	eval[last] == -20	1
	mate == 3	1
	eval == 31700	1
	depth == 12	1
	depth[first] == 1	1
	w == 300 && d == 600 && l == 100	1
	known(w)	1
	known(eval)	5
	best_capture	1
	known(best_capture)	5
	best_capture[depth:12]	1
	best_capture[depth:1]	0
	best_played	3
	known(best_played)	5
	best_played[depth:1]	1
	best_played[depth:8]	1
	capture && !best_capture	1
	castling && best_played	1
	complexity == 5	1
	repair == 1	1
	twins == 3	1
	twins == 1	8
	value == 0.5	1
	value == 0.75	1
	value == 0.25	0
	known(value)	2
	EOF
}

@test "operators, precedence, functions and missing values" {
	fields_stream
	check_table <<-'EOF'
	ply + 1 == 1	1
	ply - 79 == 0	1
	ply * 2 == 158	1
	ply / 2 == 49	1
	ply % 2 == 1	4
	-ply == -1	1
	- - ply == 1	1
	!(ply > 0)	1
	!!check	2
	ply < 2 && side == white || ply == 79	2
	ply < 2 && (side == white || ply == 79)	1
	1 + 2 * 3 == 7	9
	(1 + 2) * 3 == 9	9
	2 * 3 % 4 == 2	9
	10 - 4 - 3 == 3	9
	12 / 2 / 3 == 2	9
	ply <= 1	2
	ply < 1	1
	ply > 98	2
	ply >= 98	3
	ply != 0	8
	abs(eval) == 20	1
	min(ply, 5) == 5	5
	max(ply, 100) == 100	7
	known(1 / 0)	0
	known(ply % 0)	0
	eval != 0	5
	!(eval > 0)	5
	eval + 1 > -1000000	5
	known(eval) || ply == 0	5
	true	9
	false	0
	0.5 < 1	9
	.5 == 0.5	9
	ply > 1e-400	8
	1e-400 == 0	9
	ply > 1e-320	8
	EOF
}

@test "game compared with an integer literal is exact past 2^53, as posdump shows the id" {
	# three games whose ids differ in bits a double does not hold
	printf '%s\n' 'startpos game=0xc2c753673ff1fbd4 ply=0' \
	    'startpos game=0xc2c753673ff1fbd5 ply=0' \
	    'startpos game=0xc2c753673ff1fbd6 ply=0' | "$MKREC" > g.pos
	[ "$(posdump --json g.pos | jq -r .game | sed -n 2p)" = c2c753673ff1fbd5 ]
	check() {
		run --separate-stderr posfilter --count -- "$1" g.pos
		assert_success
		[ "$output" = "$2" ] || fail "$1: $output, want $2"
	}
	check 'game == 0xc2c753673ff1fbd5' 1
	check 'game == 0xC2C753673FF1FBD5 && ply == 0' 1
	check 'game != 0xc2c753673ff1fbd5' 2
	check 'game > 0xc2c753673ff1fbd4' 2
	check 'game >= 0xc2c753673ff1fbd6' 1
	check 'game < 0xc2c753673ff1fbd5' 1
	check 'game <= 0xc2c753673ff1fbd5' 2
	check 'game == 14035278466643000277' 1
	# in arithmetic the id is a double (posfilter(1)): all three alike
	check 'game + 0 == 0xc2c753673ff1fbd5' 3
	# a literal past every id (2^64 or more) is above them all
	printf '%s\n' 'startpos game=18446744073709551615' \
	    'startpos game=18446744073709550592' 'startpos game=1' |
	    "$MKREC" > g.pos
	check 'game < 0x10000000000000000' 3
	check 'game == 0x10000000000000000' 0
	check 'game != 18446744073709551616' 3
	check 'game >= 18446744073709551616' 0
	check 'game == 0xffffffffffffffff' 1
	check 'game > 18446744073709550592' 1
	# the literal first: the same, mirrored
	check '0xffffffffffffffff == game' 1
	check '18446744073709550592 < game' 1
	check '18446744073709550592 >= game' 2
	check '0x10000000000000000 > game' 3
	# an integer too large for a double is still above every id
	big=1$(printf '0%.0s' $(seq 400))
	check "game < $big" 3
	check "$big <= game" 0
}

@test "errors point at the column and exit 2" {
	fields_stream
	while IFS=$'\t' read -r expr col msg; do
		run posfilter -- "$expr" fields.pos
		[ "$status" -eq 2 ] || fail "'$expr': exit $status"
		assert_output --partial "posfilter: expression: column $col: $msg"
		# the caret line points at the column
		caret=$(printf '%s\n' "$output" | tail -n 1)
		[ "${#caret}" -eq $((col + 2)) ] || fail "'$expr': caret '$caret'"
	done <<-'EOF'
	ply >= 16 && && x	14	expected a number, a field or '('
	plyy > 3	1	unknown field 'plyy'
	ply = 3	5	'=' is not an operator: use '=='
	ply > 1 > 0	9	comparisons do not chain
	eval[depth:x] > 0	6	depth:x: limit: not a whole number
	ply[depth:1] > 0	4	'ply' takes no selector
	abs(ply > 0	12	expected ')'
	foo(1) > 0	1	unknown function 'foo'
	ply > 0)	8	unbalanced ')'
	ply 3	5	expected an operator
	ply >	6	unexpected end of expression
	min(ply) > 0	8	'min' takes two arguments
	max(ply, 1, 2) > 0	11	'max' takes two arguments
	abs(ply, 1) > 0	8	'abs' takes one argument
	ply > 1.2.3	7	bad number
	ply > 0 & check	9	'&' is not an operator: use '&&'
	eval[depth:3 > 0	5	expected ']'
	EOF
}

@test "kept records pass unchanged, in input order; -e; no expression keeps all" {
	"$BUILD_DIR/bin/pgn2pos" "$TESTDATA/lichess_db_10k.pgn" -o g.pos 2>/dev/null
	run posfilter 'ply >= 16 && !check && !capture' g.pos -o out.pos
	assert_success
	n=$(posdump -c g.pos | cut -d' ' -f1)
	k=$(posdump -c out.pos | cut -d' ' -f1)
	assert_output "posfilter: $n records, $k kept; expression $k/$n"
	# the same records, byte for byte, as an independent selection from
	# the JSON (ply, check flag, capture from the SAN)
	posdump --json g.pos | jq -c 'select(.ply >= 16 and (.flags | index("check") | not) and (.san | test("x") | not))' > want
	posdump --json out.pos > got
	[ "$(wc -l < want)" -eq "$k" ]
	cmp want got
	# -e: every operand is an input
	posfilter -e 'ply >= 16 && !check && !capture' g.pos g.pos -o twice.pos 2>/dev/null
	[ "$(posdump -c twice.pos | cut -d' ' -f1)" -eq $((2 * k)) ]
	# no expression: everything passes, and the summary says so alone
	run --separate-stderr posfilter -o all.pos < g.pos
	assert_success
	[ "$stderr" = "posfilter: $n records, $n kept" ] || fail "summary: $stderr"
	cmp <(posdump --json g.pos) <(posdump --json all.pos)
	posfilter '' g.pos -o all2.pos 2>/dev/null
	cmp <(posdump --json g.pos) <(posdump --json all2.pos)
}

@test "--keep: the share within binomial bounds, reproducible, independent of order and chunks; --invert splits" {
	for i in $(seq 4000); do echo "startpos game=$i ply=$((i % 7))"; done | "$MKREC" > a.pos
	posfilter --keep 0.25 --seed 3 '' a.pos -o k.pos 2>/dev/null
	n=$(posdump -c k.pos | cut -d' ' -f1)
	# 1000 expected, sd 27.4: within 4 sd
	[ "$n" -gt 890 ] && [ "$n" -lt 1110 ] || fail "kept $n of 4000"
	posfilter --keep 0.25 --seed 3 '' a.pos -o again.pos 2>/dev/null
	cmp k.pos again.pos
	posfilter --keep 0.25 --seed 4 '' a.pos -o other.pos 2>/dev/null
	! cmp -s <(posdump --fields game k.pos) <(posdump --fields game other.pos)
	# reversed order, and in two chunks: the same records kept
	for i in $(seq 4000 -1 1); do echo "startpos game=$i ply=$((i % 7))"; done | "$MKREC" > r.pos
	cmp <(posfilter --keep 0.25 --seed 3 '' r.pos 2>/dev/null | posdump --fields game | sort) \
	    <(posdump --fields game k.pos | sort)
	cmp <(cat <(posfilter --keep 0.25 --seed 3 '' <(head -c 100000 a.pos) 2>/dev/null) \
	    <(posfilter --keep 0.25 --seed 3 '' a.pos 2>/dev/null) | posdump --fields game | sort -u) \
	    <(posdump --fields game k.pos | sort)
	# --invert keeps the rest: together every record once
	run posfilter --keep 0.25 --seed 3 --invert '' a.pos -o inv.pos
	assert_output "posfilter: 4000 records, $((4000 - n)) kept (inverted); keep $n/4000"
	cat <(posdump --fields game k.pos) <(posdump --fields game inv.pos) | sort > both
	posdump --fields game a.pos | sort > all
	cmp both all
}

@test "--keep-games: whole games, their share within binomial bounds, reproducible; --invert splits the games; no game's records by position" {
	# 2000 games of 3 records each (plies 0 to 2)
	for i in $(seq 2000); do for p in 0 1 2; do echo "startpos game=$i ply=$p"; done; done | "$MKREC" > g.pos
	run posfilter --keep-games 0.25 --seed 3 '' g.pos -o k.pos
	assert_success
	posdump --fields game k.pos | sort | uniq -c | awk '{print $1}' | sort -u > sizes
	[ "$(cat sizes)" = 3 ] || fail "a game split: $(cat sizes)"
	n=$(posdump --fields game k.pos | sort -u | wc -l)
	# 500 games expected, sd 19.4: within 4 sd
	[ "$n" -gt 422 ] && [ "$n" -lt 578 ] || fail "kept $n of 2000 games"
	assert_output "posfilter: 6000 records, $((3 * n)) kept; keep-games $((3 * n))/6000"
	cmp k.pos <(posfilter --keep-games 0.25 --seed 3 '' g.pos 2>/dev/null)
	! cmp -s k.pos <(posfilter --keep-games 0.25 --seed 4 '' g.pos 2>/dev/null)
	# --invert: the other games, whole; together every record once
	posfilter --keep-games 0.25 --seed 3 --invert '' g.pos -o inv.pos 2>/dev/null
	[ -z "$(comm -12 <(posdump --fields game k.pos | sort -u) <(posdump --fields game inv.pos | sort -u))" ]
	cmp <(cat <(posdump --fields game,ply k.pos) <(posdump --fields game,ply inv.pos) | sort) \
	    <(posdump --fields game,ply g.pos | sort)
	# --keep draws each record apart: most games fall on both sides
	posfilter --keep 0.25 --seed 3 '' g.pos -o kr.pos 2>/dev/null
	posdump --fields game kr.pos | sort | uniq -c | awk '{print $1}' | sort -u > sizes
	grep -qx 1 sizes
	# records of no game (id 0), drawn by position less the clocks: one
	# position at other move numbers falls on one side
	# 8 positions (the kings on rank 1 to 8), each at 2 move numbers
	r=8/8/8/8/8/8/8/8
	for i in 0 1 2 3 4 5 6 7; do
		b=${r:0:$((2 * i))}K6k${r:$((2 * i + 1))}
		echo "$b w - - 0 1"
		echo "$b w - - 9 77"
	done | "$MKREC" > z.pos
	some=0
	for s in 1 2 3 4 5 6 7 8; do
		posfilter --keep-games 0.5 --seed $s '' z.pos 2>/dev/null |
		    posdump --fields fen | cut -d' ' -f1 | sort | uniq -c > kept
		[ -z "$(awk '$1 != 2' kept)" ] || fail "seed $s: a position split: $(cat kept)"
		c=$(wc -l < kept)
		[ "$c" -gt 0 ] && [ "$c" -lt 8 ] && some=1
	done
	[ "$some" = 1 ] || fail "the positions were not drawn apart"
	run posfilter --keep-games 1.5 '' g.pos
	assert_failure 2
}

@test "--wdl-skip keeps P(result | eval) of the records under nnue-pytorch's model, within binomial bounds" {
	# 3 x 3000 records: eval +100 cp at ply 40, white to move, each result
	for r in 1-0 1/2-1/2 0-1; do
		for i in $(seq 3000); do
			echo "startpos game=$i ply=40 result=$r eval=cp:100@depth:8"
		done | "$MKREC" > "w$(echo $r | tr -d /)".pos
	done
	# the model, independently: a, b polynomials of m = ply/64, b * 1.5
	read -r pw pd pl < <(awk 'BEGIN {
		m = 40 / 64; x = 100
		a = ((-3.68389304 * m + 30.07065921) * m - 60.52878723) * m + 149.53378557
		b = (((-2.0181857 * m + 15.85685038) * m - 29.83452023) * m + 47.59078827) * 1.5
		w = 1 / (1 + exp((a - x) / b)); l = 1 / (1 + exp((a + x) / b))
		print w, 1 - w - l, l }')
	for f in w1-0:$pw w12-12:$pd w0-1:$pl; do
		file=${f%%:*}.pos p=${f#*:}
		run --separate-stderr posfilter --wdl-skip --seed 9 --count "" "$file"
		k=${lines[0]}
		run awk -v k="$k" -v p="$p" 'BEGIN { n = 3000; e = n * p; sd = sqrt(n * p * (1 - p))
			d = k - e; if (d < 0) d = -d; print (d <= 4 * sd) ? "ok" : "kept " k " want " e " sd " sd }'
		assert_output ok
	done
	# a black to move record takes the result from its own view: 0-1 is
	# its win, as 1-0 is white's
	for i in $(seq 3000); do
		echo "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 game=$i ply=40 result=0-1 eval=cp:100@depth:8"
	done | "$MKREC" > b.pos
	run --separate-stderr posfilter --wdl-skip --seed 9 --count "" b.pos
	run awk -v k="${lines[0]}" -v p="$pw" 'BEGIN { e = 3000 * p; sd = sqrt(3000 * p * (1 - p)); d = k - e; if (d < 0) d = -d; print (d <= 4 * sd) ? "ok" : "kept " k " want " e }'
	assert_output ok
	# --eval chooses the evaluation; records without one (or without a
	# result) are kept and counted
	printf '%s\n' 'startpos game=1 ply=40 result=1-0' 'startpos game=2 ply=40 eval=cp:0@depth:3' |
	    "$MKREC" > none.pos
	run posfilter --wdl-skip --eval depth:3 -o out.pos '' none.pos
	assert_success
	assert_output --partial "2 records, 2 kept; wdl-skip 2/2"
	assert_output --partial "2 not judged by --wdl-skip"
}

@test "--piece-curve keeps each piece count at its rate; --early-skip as nnue-pytorch's" {
	{
		for i in $(seq 2000); do echo "startpos game=$i ply=20"; done
		for i in $(seq 2000); do echo "4k3/8/8/8/8/8/8/4K2R w K - 0 40 game=$i ply=79"; done
	} | "$MKREC" > p.pos
	printf '# kings included\n30-32 0.25\n  5 0.0 \n' > curve
	run posfilter --piece-curve curve --seed 2 --count '' p.pos
	# 2000 x 0.25 = 500, sd 19.4; the 3-piece records all kept
	k=$(( ${lines[0]} - 2000 ))
	[ "$k" -gt 422 ] && [ "$k" -lt 578 ] || fail "32 pieces: kept $k"
	assert_output --partial "piece-curve ${lines[0]}/4000"
	printf '3 0\n' > zero
	run posfilter --piece-curve zero --count '' p.pos
	[ "${lines[0]}" -eq 2000 ]
	for bad in '33 0.5' '3 1.5' '3' '9-4 1' 'x 1'; do
		printf '%s\n' "$bad" > badcurve
		run posfilter --piece-curve badcurve '' p.pos
		assert_failure 2
		assert_output --partial "badcurve: line 1"
	done
	# a piece count given twice is an error, not the last line winning
	printf '10-20 0.5\n# comment\n16 0.1\n' > twice
	run posfilter --piece-curve twice '' p.pos
	assert_failure 2
	assert_output --partial "--piece-curve twice: line 3: 16 pieces given on line 1 too"
	run posfilter --piece-curve /nonexistent '' p.pos
	assert_failure 2
	# a damaged occupancy of 33 or 64 squares is a count no file names:
	# kept (its rate was read past the table: 33 dropped)
	printf '%s\n' 'startpos game=1' \
	    "- game=2 pos=ffffffff01$(printf '0%.0s' $(seq 46))" \
	    "- game=3 pos=ffffffffffffffff$(printf '0%.0s' $(seq 40))" |
	    "$MKREC" > occ.pos
	printf '2-32 0\n' > none
	run posfilter --piece-curve none --count '' occ.pos
	assert_success
	[ "${lines[0]}" -eq 2 ] || fail "kept ${lines[0]}"
	# --early-skip N drops ply <= N (early_fen_skipping)
	for i in $(seq 0 30); do echo "startpos game=1 ply=$i"; done | "$MKREC" > e.pos
	run posfilter --early-skip 16 --count '' e.pos
	[ "${lines[0]}" -eq 14 ]
	assert_output --partial "early-skip 14/31"
}

@test "rules run in order, each counted on what reached it" {
	for i in $(seq 1000); do echo "startpos game=$i ply=$((i % 40)) result=1-0 eval=cp:50@depth:8"; done | "$MKREC" > a.pos
	run posfilter --early-skip 9 --keep 0.5 --wdl-skip --seed 1 'ply % 2 == 0' a.pos -o out.pos
	assert_success
	k=$(posdump -c out.pos | cut -d' ' -f1)
	# 500 even plies, of which 375 above 9
	[[ "${lines[0]}" =~ ^posfilter:\ 1000\ records,\ $k\ kept\;\ expression\ 500/1000,\ early-skip\ 375/500,\ wdl-skip\ ([0-9]+)/375,\ keep\ $k/([0-9]+)$ ]] ||
	    fail "summary: ${lines[0]}"
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
	# --count writes no records
	run posfilter --count 'ply == 3' a.pos
	assert_success
	[ "${lines[0]}" -eq 25 ]
}

@test "damage: records before it kept, the next input read, invalid positions named" {
	for i in $(seq 40); do echo "startpos game=$i"; done | "$MKREC" -F > many.pos
	size=$(stat -c %s many.pos)
	head -c $((size - 60)) many.pos > cut.pos
	run posfilter 'ply == 0' cut.pos many.pos -o out.pos
	assert_failure 1
	assert_output --partial "posfilter: cut.pos"
	n=$(posdump -c out.pos | cut -d' ' -f1)
	[ "$n" -ge 78 ] || fail "kept $n"
	# a position that does not unpack: an expression that needs the board
	# names the record and drops it; one that does not passes it
	printf '%s\n' 'startpos game=1' \
	    "- game=2 pos=ffff000000000000$(printf '0%.0s' $(seq 40))" \
	    'startpos game=3' | "$MKREC" > badpos.pos
	run posfilter 'legal > 0' badpos.pos -o out.pos
	assert_failure 1
	assert_output --partial "posfilter: badpos.pos: record 2: invalid position"
	[ "$(posdump -c out.pos | cut -d' ' -f1)" -eq 2 ]
	run posfilter 'ply == 0' badpos.pos -o out.pos
	assert_success
	# --count's number that cannot be written is an error
	run bash -c "posfilter --count '' many.pos > /dev/full"
	assert_failure 1
	assert_output --partial "posfilter: stdout: No space left on device"
}

@test "an evaluation of a score kind posflow(5) does not define is malformed: named and dropped, never taken for centipawns" {
	eval_hex 900 2
	printf '%s\n' "startpos game=1 eval=cp:300@depth:12" \
	    "startpos game=2 ext=2:$HEX" | "$MKREC" > k.pos
	run --separate-stderr posfilter 'eval > 100' k.pos -o out.pos
	assert_failure 1
	[[ "$stderr" == *"posfilter: k.pos: record 2: malformed evaluation extension; dropped"* ]]
	[ "$(posdump --fields game out.pos)" = "game=0000000000000001" ]
}

@test "--help, --version, invalid calls: exit 2, usage on stderr, nothing on stdout" {
	run posfilter --help
	assert_success
	assert_output --partial "usage: posfilter"
	run posfilter --version
	assert_output --partial "posfilter (posflow)"
	printf 'startpos\n' | "$MKREC" > in.pos
	for args in "--keep 1.5" "--keep x" "--keep-games -0.1" "--early-skip -1" "--seed x" "--eval depth:" "--bogus" "--count -o x.pos" "--count -z"; do
		run --separate-stderr posfilter $args '' in.pos
		[ "$status" -eq 2 ] || fail "$args: exit $status"
		[ -z "$output" ] || fail "$args: stdout '$output'"
	done
}
