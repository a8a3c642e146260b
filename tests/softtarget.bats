#!/usr/bin/env bats
# softtarget: policy and value targets (METHODS.md sections 1 and 2),
# checked through posdump's JSON; pass-through, games for the linear
# reward, and every kind of bad input.  Streams are made with mkrec
# (tests/tools/mkrec.c); raw extensions with ext=TYPE:HEX.

load helper
bats_require_minimum_version 1.5.0

MKREC="$BUILD_DIR/tests/tools/mkrec"
GEN="$BUILD_DIR/tests/tools/softtarget-gen"

START='rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
# Fool's mate, 1. f3 e5 2. g4 Qh4#: black wins in 4 plies.
P1='rnbqkbnr/pppppppp/8/8/8/5P2/PPPPP1PP/RNBQKBNR b KQkq - 0 1'
P2='rnbqkbnr/pppp1ppp/8/4p3/8/5P2/PPPPP1PP/RNBQKBNR w KQkq - 0 2'
P3='rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2'
MATED='rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3'
# White to move has exactly one legal move, Kxb2.
ONE='7k/8/8/8/8/8/1r6/K1r5 w - - 0 1'

# The policy of each record as "move:quanta ..." (moves with quanta > 0),
# or "-" for a record without one.
policy() {
	posdump -j "$@" | jq -r '[.exts[] | select(.type == "policy")] |
	    if length == 0 then "-" else .[0].moves |
	    map(select(.q > 0) | "\(.move):\(.q)") | join(" ") end'
}

# The value targets of each record as "method:target" rounded to 6
# decimals, or "-".
values() {
	posdump -j "$@" | jq -r '[.exts[] | select(.type == "value") |
	    "\(.method):\(.target * 1e6 | round / 1e6)"] |
	    if length == 0 then "-" else join(" ") end'
}

# le and move16 (tests/helper.bash) build the bytes.

# table LIMIT FLAGS DEPTH MOVE:cp|mate:N ...: a movescores extension
# (ext=3:HEX) of the given depth searched with LIMIT (depth:D); FLAGS 1
# marks it complete, 3 complete and intermediate (uci-eval --keep-depths).
table() {
	local limit=$1 flags=$2 depth=$3 e m k v HEX=
	shift 3
	le 1 1; le "$flags" 1; le "$depth" 2; le "${limit#*:}" 8; le $# 2
	for e in "$@"; do
		IFS=: read -r m k v <<< "$e"
		move16 "$m"
		le "$MV" 2
		if [ "$k" = mate ]; then le 1 1; else le 0 1; fi
		le "$depth" 1
		le "$v" 4
	done
	echo "ext=3:$HEX"
}

# Five legal moves: a1b1, a2a3, a2a4, b2b3, b2b4.
FIVE='k7/8/8/8/8/8/PP6/K7 w - - 0 1'

# The zeman policy of METHODS.md section 2 recomputed from lines "DEPTH
# MOVE CP" (a table's moves best first, mates already in cp) for the
# depths LO..HI, averaged with equal weights: "move:quanta" (65535 times
# the probability, not rounded to the stored sum) in decreasing order.
avg_zeman() {
	/usr/bin/python3 - "$@" <<-'EOF'
	import math, sys
	lo, hi, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
	tables = {}
	for line in open(path):
	    d, m, cp = line.split()
	    tables.setdefault(int(d), []).append((m, int(cp)))
	acc = {}
	for d in range(lo, hi + 1):
	    t = tables[d]
	    n = len(t)
	    order = sorted(range(n), key=lambda i: (-t[i][1], i))
	    kept = order[:n - min(math.floor(0.25 * n), n - 1)]
	    top, low = t[kept[0]][1], t[kept[-1]][1]
	    w = {m: 0.0 for m, _ in t}
	    for i in kept:
	        x = (t[i][1] - low) / (top - low) if top > low else 1.0
	        w[t[i][0]] = x ** 4
	    s = sum(w.values())
	    if s == 0:
	        w = {t[i][0]: 1.0 for i in kept}
	        s = len(kept)
	    for m, v in w.items():
	        acc[m] = acc.get(m, 0.0) + v / s / (hi - lo + 1)
	print(" ".join("%s:%.3f" % (m, 65535 * p) for m, p in
	    sorted(acc.items(), key=lambda kv: -kv[1]) if p > 0))
	EOF
}

# Is the stored policy B ("move:quanta", moves with quanta > 0) within a
# quantum of the recomputed A for every move (a move missing: 0), with
# its moves in A's order?
close_to() {
	/usr/bin/python3 - "$1" "$2" <<-'EOF'
	import sys
	a = [(m, float(q)) for m, q in (x.split(":") for x in sys.argv[1].split())]
	b = [(m, float(q)) for m, q in (x.split(":") for x in sys.argv[2].split())]
	da, db = dict(a), dict(b)
	ok = all(abs(da.get(m, 0) - db.get(m, 0)) <= 1 for m in set(da) | set(db))
	ok &= [m for m, _ in a if m in db] == [m for m, _ in b]
	sys.exit(0 if ok else 1)
	EOF
}

# A raw movescores payload (ext=3:HEX) for the start position listing
# e2e4 (cp 50) and the illegal e2e5 (cp 30).
ILLEGAL_TABLE='3:01000a000a000000000000000200''0c07000a32000000''0c09000a1e000000'

@test "zeman golden: 50 40 20 0 -> 81/97, 16/97, 0, dropped; every legal move listed" {
	"$MKREC" <<< "$START scores=e2e4:cp:50,d2d4:cp:40,g1f3:cp:20,c2c4:cp:0@depth:10" > in.pos
	run softtarget -o out.pos in.pos
	assert_success
	assert_output ""
	run policy out.pos
	assert_output "e2e4:54725 d2d4:10810"
	run jq -r '.exts[] | select(.type == "policy") |
	    "\(.method) \(.param1) \(.param2) \(.moves | length) \(.moves | map(.q) | add) \(.moves[0:4] | map(.move) | join(","))"' \
	    <(posdump -j out.pos)
	assert_output "zeman 0.25 4 20 65535 e2e4,d2d4,g1f3,c2c4"
}

@test "zeman: one legal move gets everything, n < 4 drops none, equal moves share" {
	"$MKREC" > in.pos <<-EOF
	$ONE scores=a1b2:cp:-900
	$START scores=e2e4:cp:100,d2d4:cp:50,g1f3:cp:0
	$START scores=e2e4:cp:10,d2d4:cp:10,g1f3:cp:10,c2c4:cp:10
	$START scores=e2e4:cp:10,d2d4:cp:10,g1f3:cp:10
	EOF
	run softtarget -o out.pos in.pos
	assert_success
	run policy out.pos
	assert_line --index 0 "a1b2:65535"
	assert_line --index 1 "e2e4:61680 d2d4:3855"
	assert_line --index 2 "e2e4:21845 d2d4:21845 g1f3:21845"
	assert_line --index 3 "e2e4:21845 d2d4:21845 g1f3:21845"
}

@test "zeman: mate scores are mapped to cp before the transform" {
	# mate 2 = 31800, mate 5 = 31500, then 0 and -50 (dropped):
	# 31500/31800 scaled to 0.990566, power 4 -> 0.509478 / 0.490522.
	"$MKREC" <<< "$START scores=e2e4:mate:2,d2d4:mate:5,g1f3:cp:0,c2c4:cp:-50" > in.pos
	run softtarget -o out.pos in.pos
	assert_success
	run policy out.pos
	assert_output "e2e4:33389 d2d4:32146"
}

@test "zeman --drop and --power" {
	"$MKREC" <<< "$START scores=e2e4:cp:100,d2d4:cp:50,g1f3:cp:0" > in.pos
	run softtarget --drop 0 --power 2 -o out.pos in.pos
	assert_success
	run policy out.pos
	assert_output "e2e4:52428 d2d4:13107"
	run jq -r '.exts[] | select(.type == "policy") | "\(.param1) \(.param2)"' <(posdump -j out.pos)
	assert_output "0 2"
}

@test "softmax and winprob golden, and the temperature limits" {
	"$MKREC" <<< "$START scores=e2e4:cp:100,d2d4:cp:0" > in.pos
	run softtarget --policy softmax --temperature 100 -o out.pos in.pos
	assert_success
	run policy out.pos
	assert_output "e2e4:47910 d2d4:17625"
	run softtarget --policy softmax --temperature 1e-6 -o out.pos in.pos
	run policy out.pos
	assert_output "e2e4:65535"
	run softtarget --policy softmax --temperature 1e9 -o out.pos in.pos
	run policy out.pos
	assert_output "e2e4:32768 d2d4:32767"
	run softtarget --policy winprob --wdl-b 100 --temperature 0.1 -o out.pos in.pos
	assert_success
	run policy out.pos
	assert_output "e2e4:59620 d2d4:5915"
	run jq -r '.exts[] | select(.type == "policy") | "\(.method) \(.param1 * 100 | round)"' <(posdump -j out.pos)
	assert_output "winprob 10"
}

@test "tanh reproduces Table 5.1 of seed 004 (two decimals)" {
	for p in 1 3 5 9 12 14 17 20; do
		echo "$START eval=cp:-$((p * 100))@depth:10"
	done | "$MKREC" > in.pos
	run softtarget --value tanh -o out.pos in.pos
	assert_success
	run bash -c "posdump -j out.pos | jq -r '.exts[1].target | -. * 100 | round / 100'"
	assert_output "$(printf '%s\n' 0.1 0.29 0.46 0.72 0.83 0.89 0.94 0.96)"
}

@test "value golden: tanh, logistic, wdl sigmoid and engine W/D/L, tagged" {
	"$MKREC" > in.pos <<-EOF
	$START result=1-0 eval=cp:100@depth:10
	$START result=1-0 eval=cp:100@depth:10 wdl=500,300,200
	EOF
	run softtarget --value tanh --value logistic --value wdl --wdl-a 20 --wdl-b 80 -o out.pos in.pos
	assert_success
	run values out.pos
	# tanh(0.1), 2/(1+e^(-100/170))-1, 1/(1+e^(-(100-20)/80)), (500+150)/1000
	assert_line --index 0 "tanh:0.099668 logistic:0.28592 wdl:0.731059"
	assert_line --index 1 "tanh:0.099668 logistic:0.28592 wdl_engine:0.65"
	run jq -r '.exts[] | select(.type == "value") | "\(.method) \(.scale) \(.param1 * 100 | round) \(.param2) \(.lambda)"' \
	    <(posdump -j out.pos | head -1)
	assert_line --index 0 "tanh Q 20 0 1"
	assert_line --index 1 "logistic Q 17000 0 1"
	assert_line --index 2 "wdl S 2000 80 1"
	run policy out.pos
	assert_output "$(printf -- '-\n-')"
}

@test "--eval repaired: values from repair-mark's repaired value, not the evaluation" {
	# a panda repair extension (posflow(5)): definite, re-scored,
	# original 100 cp, repaired 100 cp the engine said -100
	rep=0201010000000000000000006400000064000000	# repaired 100
	neg=0201010000000000000000006400000038ffffff	# repaired -200
	"$MKREC" > in.pos <<-EOF
	$START result=1-0 eval=cp:-100@depth:10 wdl=100,300,600 ext=8:$rep
	$START result=1-0 eval=cp:-100@depth:10 ext=8:$neg
	$START result=1-0 eval=cp:-100@depth:10
	EOF
	run softtarget --policy none --value logistic --value wdl --wdl-a 20 --wdl-b 80 --eval repaired -o out.pos in.pos
	assert_success
	run values out.pos
	# logistic(100) and the sigmoid (no engine W/D/L for a repaired value)
	assert_line --index 0 "logistic:0.28592 wdl:0.731059"
	# logistic(-200) = -0.52863, 1/(1+e^((200+20)/80)) = 0.060087
	assert_line --index 1 "logistic:-0.528625 wdl:0.060087"
	# no repaired value: no value target, or an error with --require
	assert_line --index 2 "-"
	run softtarget --policy none --value logistic --eval repaired --require -o out.pos in.pos
	assert_failure 1
	assert_output --partial "in.pos: record 3: no repaired value (repair-mark --mode panda) to make a logistic value from (--require)"
	# the evaluation's own value for comparison: -0.28592
	run softtarget --policy none --value logistic -o ev.pos in.pos
	run values ev.pos
	assert_line --index 0 "logistic:-0.28592"
}

@test "mate evaluations: mate 0 is -32000, mate 3 is 31700" {
	"$MKREC" > in.pos <<-EOF
	$MATED eval=mate:0
	$START eval=mate:3
	EOF
	run softtarget --value tanh --value logistic -o out.pos in.pos
	assert_success
	run values out.pos
	assert_line --index 0 "tanh:-1 logistic:-1"
	assert_line --index 1 "tanh:1 logistic:1"
	# A checkmated position gets no policy target.
	"$MKREC" <<< "$MATED scores=" > in2.pos
	run softtarget --require -o out2.pos in2.pos
	assert_success
	run policy out2.pos
	[ "$output" = "-" ]
}

@test "--lambda blends with the result from the side to move's view" {
	"$MKREC" > in.pos <<-EOF
	$START result=1-0 eval=cp:100@depth:10
	$P1 result=1-0 eval=cp:-100@depth:10
	$START result=1/2-1/2 eval=cp:100@depth:10
	$START result=* eval=cp:100@depth:10
	EOF
	run softtarget --value tanh --value wdl --lambda 0.75 -o out.pos in.pos
	assert_success
	run values out.pos
	# Q: 0.75 * 0.099668 + 0.25 * (2r - 1); S: 0.75 * S + 0.25 * r.
	assert_line --index 0 "tanh:0.324751 wdl:0.693269"
	assert_line --index 1 "tanh:-0.324751 wdl:0.306731"
	assert_line --index 2 "tanh:0.074751 wdl:0.568269"
	assert_line --index 3 "-"
	run jq -r '.exts[1].lambda' <(posdump -j out.pos | head -1)
	assert_output "0.75"
	run --separate-stderr softtarget --policy none --value tanh --lambda 0.75 --require -o out.pos in.pos
	assert_failure 1
	[[ "$stderr" == *"in.pos: record 4: unknown game result"* ]]
}

@test "--eval picks the evaluation, and the per-move table likewise" {
	"$MKREC" > in.pos <<-EOF
	$START eval=cp:100@depth:5 eval=cp:300@depth:12 eval=cp:200@nodes:1 scores=e2e4:cp:50,d2d4:cp:0@depth:5 scores=d2d4:cp:60,e2e4:cp:10@depth:12
	EOF
	# A PGN %eval of 500 cp (source 1), appended raw.
	pgn="2:01000000f4010000$(printf '0%.0s' {1..74})"
	"$MKREC" <<< "$START eval=cp:100@depth:5 ext=$pgn" > pgn.pos
	t() { softtarget --value tanh "$@" -o out.pos in.pos && values out.pos; }
	run t
	assert_output "tanh:0.291313"
	run policy out.pos
	assert_output "d2d4:65535"
	run t --eval depth:5
	assert_output "tanh:0.099668"
	run policy out.pos
	assert_output "e2e4:65535"
	run t --eval first
	assert_output "tanh:0.099668"
	run t --eval last
	assert_output "tanh:0.197375"
	run t --eval nodes:1
	assert_output "tanh:0.197375"
	run --separate-stderr t --eval depth:7
	[ "$output" = "-" ]
	# no record given a target: said once, not an error
	[ "$stderr" = "softtarget: 1 records, none given a target: a policy needs per-move scores (uci-eval --multipv), a value target --value and an evaluation; the records pass through, less any old target of these methods" ] || fail "$stderr"
	run softtarget --value tanh --eval pgn -o out.pos pgn.pos
	assert_success
	run values out.pos
	assert_output "tanh:0.462117"
	run softtarget --value tanh -o out.pos pgn.pos
	run values out.pos
	assert_output "tanh:0.099668"
}

@test "an intermediate per-move table is never used" {
	# depth 20, flags intermediate, one entry: d2d4 cp 99.
	mid='3:010214001400000000000000''0100''cb060014''63000000'
	"$MKREC" <<< "$START scores=e2e4:cp:50,d2d4:cp:0@depth:10 ext=$mid" > in.pos
	run softtarget -o out.pos in.pos
	assert_success
	run policy out.pos
	assert_output "e2e4:65535"
}

# The per-depth tables of FIVE as one search to depth 4: a record line
# (the final table first, then the intermediate ones, as uci-eval
# --keep-depths writes them) into in.pos, and "DEPTH MOVE CP" lines (mate
# 9 is 32000 - 900 cp) into scores.
five_tables() {
	local spec=(
	"4 a2a4:cp:45 b2b4:cp:40 b2b3:cp:15 a2a3:cp:0 a1b1:cp:-10"
	"1 b2b4:cp:40 a2a4:cp:30 a2a3:cp:10 b2b3:cp:0 a1b1:cp:-20"
	"2 a2a4:mate:9 b2b4:cp:30 b2b3:cp:5 a2a3:cp:0 a1b1:cp:-50"
	"3 a2a4:cp:50 b2b3:cp:20 b2b4:cp:10 a2a3:cp:10 a1b1:cp:-30"
	) line="$FIVE" t d e m k v flags
	: > scores
	for t in "${spec[@]}"; do
		set -- $t
		d=$1
		shift
		flags=3
		[ "$d" = 4 ] && flags=1
		line+=" $(table depth:4 $flags "$d" "$@")"
		for e in "$@"; do
			IFS=: read -r m k v <<< "$e"
			[ "$k" = mate ] && v=$((32000 - 100 * v))
			echo "$d $m $v"
		done >> scores
	done
	"$MKREC" <<< "$line" > in.pos
}

@test "--policy-depths: the average of the per-depth zeman policies, as recomputed here" {
	five_tables
	for r in 1-4 2-4 1-3 3-3 2-2; do
		run --separate-stderr softtarget --policy-depths $r -o out.pos in.pos
		assert_success
		[ -z "$stderr" ] || fail "$r: $stderr"
		got=$(policy out.pos)
		want=$(avg_zeman "${r%-*}" "${r#*-}" scores)
		close_to "$want" "$got" || fail "$r: got '$got', want '$want'"
	done
	# Every legal move listed once, the quanta summing to 65535.
	run jq -r '.exts[] | select(.type == "policy") | "\(.method) \(.moves | length) \(.moves | map(.q) | add) \(.moves | map(.move) | unique | length)"' <(posdump -j out.pos)
	assert_output "zeman 5 65535 5"
	# The average is not any one table's policy.
	softtarget -o def.pos in.pos
	softtarget --policy-depths 1-4 -o avg.pos in.pos
	[ "$(policy def.pos)" != "$(policy avg.pos)" ]
	# One depth: the bytes the single-table path writes for that table.
	softtarget --policy-depths 4-4 -o one.pos in.pos
	cmp def.pos one.pos
	softtarget --policy softmax --temperature 30 -o def.pos in.pos
	softtarget --policy softmax --temperature 30 --policy-depths 4-4 -o one.pos in.pos
	cmp def.pos one.pos
}

@test "real Stockfish: --policy-depths over uci-eval --keep-depths tables equals the recomputation" {
	ITAL='r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3'
	printf '%s\n' "$P2 game=1" "$FIVE game=2" "$ITAL game=3" | "$MKREC" > in.pos
	run uci-eval -e "$(stockfish_path)" -d 6 --multipv all --keep-depths \
	    -o sf.pos in.pos
	assert_success
	run --separate-stderr softtarget --policy-depths 3-6 -o out.pos sf.pos
	assert_success
	[ -z "$stderr" ]
	policy out.pos > got
	for i in 1 2 3; do
		posdump -j sf.pos | sed -n "${i}p" | jq -r '.exts[] |
		    select(.type == "movescores") | .depth as $d | .moves[] |
		    "\($d) \(.move) \(.cp // (if .mate > 0 then 32000 - 100 * .mate
		    else -32000 - 100 * .mate end))"' > scores
		[ "$(cut -d' ' -f1 scores | sort -un | tr '\n' ' ')" = "1 2 3 4 5 6 " ]
		want=$(avg_zeman 3 6 scores)
		close_to "$want" "$(sed -n "${i}p" got)" ||
			fail "record $i: got '$(sed -n "${i}p" got)', want '$want'"
	done
	softtarget -o def.pos sf.pos
	softtarget --policy-depths 6-6 -o one.pos sf.pos
	cmp def.pos one.pos
}

@test "--policy-depths: without a complete table of every depth, the final table's policy, counted; an error with --require" {
	all="$(table depth:4 1 4 a2a4:cp:45 b2b4:cp:40 b2b3:cp:15 a2a3:cp:0 a1b1:cp:-10)"
	t2="$(table depth:4 3 2 b2b4:cp:30 a2a4:cp:20 b2b3:cp:5 a2a3:cp:0 a1b1:cp:-50)"
	t3="$(table depth:4 3 3 a2a4:cp:50 b2b3:cp:20 b2b4:cp:10 a2a3:cp:10 a1b1:cp:-30)"
	# depth 3 lacking a1b1 (incomplete, as -m 4 writes it)
	part3="$(table depth:4 2 3 a2a4:cp:50 b2b3:cp:20 b2b4:cp:10 a2a3:cp:10)"
	# depths 2 and 3 of another search (depth:6) after the final table
	o2="$(table depth:6 3 2 b2b4:cp:30 a2a4:cp:20 b2b3:cp:5 a2a3:cp:0 a1b1:cp:-50)"
	o3="$(table depth:6 3 3 a2a4:cp:50 b2b3:cp:20 b2b4:cp:10 a2a3:cp:10 a1b1:cp:-30)"
	"$MKREC" > in.pos <<-EOF
	$FIVE game=1 $all $t2 $t3
	$FIVE game=2 $all
	$FIVE game=3 $all $t2 $part3
	$MATED game=4 scores=
	$FIVE game=5 $all $o2 $o3
	EOF
	softtarget -o def.pos in.pos
	run --separate-stderr softtarget --policy-depths 2-4 -o out.pos in.pos
	assert_success
	[ "$stderr" = "softtarget: --policy-depths 2-4: 3 of 4 records lacked a complete per-move table of some depth in the range: their policy is the final table's alone" ]
	policy def.pos > def
	policy out.pos > out
	# Records 2, 3 and 5 get the final table's policy; the checkmate none.
	[ "$(sed -n 2,5p def)" = "$(sed -n 2,5p out)" ]
	[ "$(sed -n 4p out)" = "-" ]
	[ "$(sed -n 1p def)" != "$(sed -n 1p out)" ]
	# A range beyond the search: every record falls back.
	run --separate-stderr softtarget --policy-depths 2-5 -o out.pos in.pos
	assert_success
	[[ "$stderr" == *"4 of 4 records lacked"* ]]
	cmp def.pos out.pos
	# --require: those records are errors, written as they came.
	run --separate-stderr softtarget --policy-depths 2-4 --require -o out.pos in.pos
	assert_failure 1
	[[ "$stderr" == *"in.pos: record 2: no complete per-move table of every depth 2-4 (--require)"* ]]
	[[ "$stderr" == *"in.pos: record 3: no complete per-move table"* ]]
	[[ "$stderr" == *"in.pos: record 5: no complete per-move table"* ]]
	[[ "$stderr" != *"record 4"* ]]
	[[ "$stderr" != *"lacked"* ]]
	run policy out.pos
	assert_output "$(printf '%s\n' "$(sed -n 1p out)" - - - -)"
	run bash -c "posdump -j out.pos | sed -n 2p"
	assert_output "$(posdump -j in.pos | sed -n 2p)"
}

@test "--policy-depths averages the tables of the search --eval picks" {
	a4="$(table depth:4 1 4 a2a4:cp:45 b2b4:cp:40 b2b3:cp:15 a2a3:cp:0 a1b1:cp:-10)"
	a3="$(table depth:4 3 3 a2a4:cp:50 b2b3:cp:20 b2b4:cp:10 a2a3:cp:10 a1b1:cp:-30)"
	b6="$(table depth:6 1 6 b2b4:cp:45 a2a4:cp:40 b2b3:cp:15 a2a3:cp:0 a1b1:cp:-10)"
	b4="$(table depth:6 3 4 b2b3:cp:30 a2a4:cp:20 b2b4:cp:5 a2a3:cp:0 a1b1:cp:-50)"
	b3="$(table depth:6 3 3 b2b4:cp:50 b2b3:cp:20 a2a4:cp:10 a2a3:cp:-10 a1b1:cp:-30)"
	"$MKREC" > in.pos <<-EOF
	$FIVE $a4 $a3 $b6 $b4 $b3
	$FIVE $a4 $a3
	$FIVE $b6 $b4 $b3
	EOF
	run softtarget --policy-depths 3-4 --eval depth:4 -o out.pos in.pos
	assert_success
	policy out.pos > a
	run softtarget --policy-depths 3-4 -o out.pos in.pos
	assert_success
	policy out.pos > b
	[ "$(sed -n 1p a)" = "$(sed -n 2p a)" ]
	[ "$(sed -n 1p b)" = "$(sed -n 3p b)" ]
	[ "$(sed -n 1p a)" != "$(sed -n 1p b)" ]
}

@test "--policy-depths: an illegal move in an averaged table is an error naming its depth" {
	all="$(table depth:4 1 4 a2a4:cp:45 b2b4:cp:40 b2b3:cp:15 a2a3:cp:0 a1b1:cp:-10)"
	bad="$(table depth:4 3 3 a2a4:cp:50 e2e4:cp:20 b2b4:cp:10 a2a3:cp:10 a1b1:cp:-30)"
	"$MKREC" > in.pos <<-EOF
	$FIVE game=1 $all $bad
	$FIVE game=2 $all
	EOF
	run --separate-stderr softtarget --policy-depths 3-4 -o out.pos in.pos
	assert_failure 1
	[[ "$stderr" == *"in.pos: record 1: per-move scores: move e2e4 (0x070c) is not legal (depth 3)"* ]]
	run bash -c "posdump -j out.pos | sed -n 1p"
	assert_output "$(posdump -j in.pos | sed -n 1p)"
	# Outside the range it is not read.
	run softtarget --policy-depths 4-4 -o out.pos in.pos
	assert_success
}

@test "linear reward over a whole game: -+k/N for the side to move" {
	"$MKREC" > in.pos <<-EOF
	$START game=7 ply=0 result=0-1 move=f2f3
	$P1 game=7 ply=1 result=0-1 move=e7e5
	$P2 game=7 ply=2 result=0-1 move=g2g4
	$P3 game=7 ply=3 result=0-1 move=d8h4
	$MATED game=7 ply=4 result=0-1 flags=0x13
	$START game=8 ply=0 result=1/2-1/2
	$P1 game=8 ply=1 result=1/2-1/2 flags=0x10
	EOF
	run softtarget --value linear -o out.pos in.pos
	assert_success
	run values out.pos
	assert_output "$(printf '%s\n' linear:0 linear:0.25 linear:-0.5 linear:0.75 linear:-1 linear:0 linear:0)"
	run jq -r '.exts[0] | "\(.param1) \(.lambda) \(.scale)"' <(posdump -j out.pos | sed -n 5p)
	assert_output "4 0 Q"
	# Beside other targets, with no policy target.
	run softtarget --policy none --value linear --value tanh -o out.pos in.pos
	assert_success
	run values out.pos
	assert_line --index 1 "linear:0.25"
	# in the order the options are given, like every value
	"$MKREC" > ev.pos <<-EOF
	$START game=9 ply=0 result=1-0 move=e2e4 eval=cp:0@depth:10
	$P1 game=9 ply=1 result=1-0 flags=0x10 eval=cp:0@depth:10
	EOF
	for v in "linear tanh" "tanh linear" "wdl linear tanh" "linear"; do
		softtarget --policy none $(printf -- '--value %s ' $v) ev.pos -o v.pos
		[ "$(values v.pos | sed -n 2p | sed 's/:[^ ]*//g')" = "$v" ] ||
			fail "$v: $(values v.pos | sed -n 2p)"
	done
	[ "$(values v.pos)" = "$(printf 'linear:0\nlinear:-1')" ]
}

@test "linear: a game without its last record gets none (an error with --require)" {
	"$MKREC" > in.pos <<-EOF
	$START game=7 ply=0 result=0-1
	$P1 game=7 ply=1 result=0-1
	$START game=9 ply=0 result=1-0
	$P1 game=9 ply=1 result=1-0 flags=0x10
	EOF
	run softtarget --value linear -o out.pos in.pos
	assert_success
	run values out.pos
	assert_output "$(printf '%s\n' - - linear:0 linear:-1)"
	run --separate-stderr softtarget --policy none --value linear --require -o out.pos in.pos
	assert_failure 1
	[[ "$stderr" == *"in.pos: record 2: game 0000000000000007 ends without its last position"* ]]
	run values out.pos
	assert_output "$(printf '%s\n' - - linear:0 linear:-1)"
}

@test "linear: a game cut short (truncated) gets none" {
	"$MKREC" > in.pos <<-EOF
	$START game=7 ply=0 result=0-1
	$P1 game=7 ply=1 result=0-1 flags=0x30
	$START game=8 ply=0 result=1-0
	$P1 game=8 ply=1 result=1-0 flags=0x10
	EOF
	run softtarget --value linear -o out.pos in.pos
	assert_success
	run values out.pos
	assert_output "$(printf '%s\n' - - linear:0 linear:-1)"
	run --separate-stderr softtarget --policy none --value linear --require -o out.pos in.pos
	assert_failure 1
	[[ "$stderr" == *"in.pos: record 2: game 0000000000000007 was cut short (truncated)"* ]]
}

@test "linear: --max-game-plies bounds the game held" {
	"$MKREC" > in.pos <<-EOF
	$START game=7 ply=0 result=0-1
	$P1 game=7 ply=1 result=0-1
	$P2 game=7 ply=2 result=0-1
	$P3 game=7 ply=3 result=0-1
	$MATED game=7 ply=4 result=0-1 flags=0x13
	$START game=8 ply=0 result=1-0
	$P1 game=8 ply=1 result=1-0 flags=0x10
	EOF
	run --separate-stderr softtarget --value linear --max-game-plies 3 -o out.pos in.pos
	assert_failure 1
	[[ "$stderr" == *"in.pos: record 4: game 0000000000000007 has more than 3 positions"* ]]
	run values out.pos
	assert_output "$(printf '%s\n' - - - - - linear:0 linear:-1)"
}

@test "records of a game get the same targets as the records alone" {
	# softtarget derives a board from the previous record's by the move
	# played when the packed bytes agree; records 3 and 4 break the
	# chain (a skipped ply, a different game), record 5 has no move.
	cat > lines <<-EOF
	$START game=7 ply=0 move=f2f3 scores=e2e4:cp:30,d2d4:cp:20,g1f3:cp:-5,c2c4:cp:0
	$P1 game=7 ply=1 move=e7e5 scores=e7e5:cp:10,d7d5:cp:9,g8f6:cp:5,a7a6:cp:-80
	$P3 game=7 ply=3 move=d8h4 scores=d8h4:mate:1,d8e7:cp:40,g8f6:cp:30,a7a6:cp:0
	$MATED game=8 ply=4 flags=0x13 scores=
	$P2 game=9 ply=2 scores=g2g4:cp:-300,e2e4:cp:10,d2d4:cp:12,b1c3:cp:0
	EOF
	"$MKREC" < lines > in.pos
	run softtarget -o out.pos in.pos
	assert_success
	policy out.pos > together
	while read -r line; do
		"$MKREC" <<< "$line" | softtarget | policy /dev/stdin
	done < lines > alone
	run cat together
	assert_line --index 0 "e2e4:54725 d2d4:10810"
	assert_line --index 2 "d8h4:65535"
	[ "${#lines[@]}" -eq 5 ]
	diff together alone
}

@test "unknown extensions pass through byte for byte; records without scores unchanged" {
	"$MKREC" > in.pos <<-EOF
	$START game=3 result=1-0 ext=40000:deadbeef clock=1000,2000 scores=e2e4:cp:5 ext=40001:
	$P1 game=3 ply=1 move=e7e5 ext=40002:00ff eval=cp:12@depth:3
	EOF
	run softtarget -o out.pos in.pos
	assert_success
	run bash -c "posdump -j out.pos | jq -c '[.exts[] | select(.type != \"policy\")]'"
	assert_output "$(posdump -j in.pos | jq -c '.exts')"
	run bash -c "posdump -j out.pos | jq -c 'del(.exts)'"
	assert_output "$(posdump -j in.pos | jq -c 'del(.exts)')"
	run bash -c "posdump -j out.pos | jq -r '[.exts[].type] | join(\",\")'"
	assert_line --index 0 "40000,clock,movescores,40001,policy"
	assert_line --index 1 "40002,eval"
}

@test "a second run replaces its own targets and keeps other methods" {
	"$MKREC" <<< "$START result=1-0 eval=cp:50@depth:4 scores=e2e4:cp:50,d2d4:cp:0" > in.pos
	softtarget --value tanh --policy zeman -o once.pos in.pos
	softtarget --value tanh --policy zeman -o twice.pos once.pos
	run bash -c "posdump -j twice.pos | jq -r '[.exts[].type] | join(\",\")'"
	assert_output "eval,movescores,policy,value"
	cmp once.pos twice.pos
	softtarget --policy softmax --value logistic -o more.pos once.pos
	run bash -c "posdump -j more.pos | jq -r '[.exts[] | .method // .type] | join(\",\")'"
	assert_output "eval,movescores,zeman,tanh,softmax,logistic"
}

@test "a per-move table with an illegal or repeated move: exit 1, record passed unchanged" {
	"$MKREC" > in.pos <<-EOF
	$START game=1 scores=e2e4:cp:1
	$START game=2 ext=$ILLEGAL_TABLE
	$START game=3 scores=d2d4:cp:1
	EOF
	run --separate-stderr softtarget -o out.pos in.pos
	assert_failure 1
	[[ "$stderr" == *"softtarget: in.pos: record 2: per-move scores: move e2e5 (0x090c) is not legal"* ]]
	run policy out.pos
	assert_output "$(printf '%s\n' e2e4:65535 - d2d4:65535)"
	run bash -c "posdump -j out.pos | sed -n 2p"
	assert_output "$(posdump -j in.pos | sed -n 2p)"
	twice='3:0000000000000000000000000200''0c07000032000000''0c07000032000000'
	"$MKREC" <<< "$START ext=$twice" > dup.pos
	run --separate-stderr softtarget -o out.pos dup.pos
	assert_failure 1
	[[ "$stderr" == *"dup.pos: record 1: per-move scores: move e2e4 is listed twice"* ]]
}

@test "the zeman policy is the default, beside values; --policy none leaves it out" {
	"$MKREC" <<< "$START eval=cp:100@depth:5 scores=e2e4:cp:50,d2d4:cp:0" > in.pos
	softtarget --value tanh -o out.pos in.pos
	run bash -c "posdump -j out.pos | jq -r '[.exts[] | .method // .type] | join(\",\")'"
	assert_output "eval,movescores,zeman,tanh"
	softtarget --policy none --value tanh -o out.pos in.pos
	run bash -c "posdump -j out.pos | jq -r '[.exts[] | .method // .type] | join(\",\")'"
	assert_output "eval,movescores,tanh"
}

@test "--require: a record without per-move scores is an error" {
	"$MKREC" > in.pos <<-EOF
	$START scores=e2e4:cp:1
	$START
	EOF
	run softtarget -o out.pos in.pos
	assert_success
	run --separate-stderr softtarget --require -o out.pos in.pos
	assert_failure 1
	[[ "$stderr" == "softtarget: in.pos: record 2: no per-move scores (--require)" ]]
	run policy out.pos
	assert_output "$(printf '%s\n' e2e4:65535 -)"
	run --separate-stderr softtarget --require --value tanh --policy zeman -o out.pos in.pos
	assert_failure 1
	[[ "$stderr" == *"record 1: no evaluation to make a tanh value from"* ]]
}

@test "empty input: an empty stream, exit 0" {
	run softtarget -o out.pos < /dev/null
	assert_success
	run posdump -c out.pos
	assert_output "0 out.pos"
	: > empty.pos
	run softtarget -o out.pos empty.pos
	assert_success
	run posdump -c out.pos
	assert_output "0 out.pos"
}

@test "concatenated streams and several operands" {
	"$MKREC" <<< "$START scores=e2e4:cp:1" > a.pos
	"$MKREC" <<< "$P1 scores=e7e5:cp:1,d7d5:cp:0" > b.pos
	cat a.pos b.pos > ab.pos
	run bash -c "cat ab.pos | softtarget | posdump -c"
	assert_output "2 stdin"
	run bash -c "softtarget ab.pos - a.pos < b.pos | posdump --fields policy"
	assert_line --index 0 --partial "e2e4:1.0000"
	assert_line --index 1 --partial "e7e5:1.0000"
	assert_line --index 2 --partial "e7e5:1.0000"
	assert_line --index 3 --partial "e2e4:1.0000"
	[ "${#lines[@]}" -eq 4 ]
}

@test "corrupt block: exit 1 naming it, the other records still written" {
	for g in 1 2 3; do echo "$START game=$g scores=e2e4:cp:$g"; done |
		"$MKREC" -F > in.pos
	size=$(stat -c %s in.pos)
	# Flip a byte in the middle of the second of three equal blocks.
	off=$((16 + (size - 16 - 24) / 3 + 60))
	printf '\xff' | dd of=in.pos bs=1 seek=$off conv=notrunc 2>/dev/null
	run --separate-stderr softtarget -o out.pos in.pos
	assert_failure 1
	[[ "$stderr" == *"in.pos"*"block"* ]]
	run bash -c "posdump -j out.pos | jq -r .game"
	assert_output "$(printf '%s\n' 0000000000000001 0000000000000003)"
	run policy out.pos
	assert_output "$(printf '%s\n' e2e4:65535 e2e4:65535)"
}

@test "truncated input: exit 1, every complete record before the cut written" {
	for g in 1 2 3; do echo "$START game=$g scores=e2e4:cp:$g"; done |
		"$MKREC" > in.pos
	size=$(stat -c %s in.pos)
	head -c $((size - 24 - 40)) in.pos > cut.pos
	run --separate-stderr softtarget -o out.pos cut.pos
	assert_failure 1
	[[ "$stderr" == *"cut.pos"*"trunc"* ]]
	run bash -c "posdump -j out.pos | jq -r .game"
	assert_output "$(printf '%s\n' 0000000000000001 0000000000000002)"
	run policy out.pos
	assert_output "$(printf '%s\n' e2e4:65535 e2e4:65535)"
}

@test "a missing file is reported and the next operand still processed" {
	"$MKREC" <<< "$START scores=e2e4:cp:1" > a.pos
	run --separate-stderr softtarget -o out.pos nonexistent.pos a.pos
	assert_failure 1
	[[ "$stderr" == *"softtarget: nonexistent.pos"* ]]
	run posdump -c out.pos
	assert_output "1 out.pos"
}

@test "-z and a .zst name write zstd; the result reads back" {
	"$MKREC" <<< "$START scores=e2e4:cp:1" > a.pos
	softtarget -z -o out.pos a.pos
	[ "$(head -c 4 out.pos | od -An -tx1 | tr -d ' ')" = "28b52ffd" ]
	softtarget -o out.pos.zst a.pos
	[ "$(head -c 4 out.pos.zst | od -An -tx1 | tr -d ' ')" = "28b52ffd" ]
	run policy out.pos.zst
	assert_output "e2e4:65535"
}

@test "a closed pipe ends the run quietly with status 0" {
	"$GEN" -n 50000 > big.pos
	run bash -c 'softtarget big.pos | head -c 100 > /dev/null; echo "${PIPESTATUS[0]}"'
	assert_output "0"
}

@test "invalid calls: exit 2, usage on stderr, nothing on stdout" {
	"$MKREC" <<< "$START scores=e2e4:cp:1" > a.pos
	while read -r args; do
		run --separate-stderr softtarget $args a.pos
		[ "$status" -eq 2 ] || fail "softtarget $args: status $status"
		[ -z "$output" ] || fail "softtarget $args wrote to stdout"
		[[ "$stderr" == *"usage: softtarget"* ]] ||
			fail "softtarget $args: no usage: $stderr"
		[[ "$stderr" == *"softtarget: "* ]] ||
			fail "softtarget $args: no reason: $stderr"
	done <<-EOF
	--bogus
	--policy frobnicate
	--value frobnicate
	--value tanh --value tanh
	--temperature -1 --policy softmax
	--temperature 0 --policy softmax
	--temperature nan --policy softmax
	--temperature abc --policy softmax
	--temperature 10
	--drop 1
	--drop -0.1
	--drop nan
	--power 0
	--power inf
	--drop 0.5 --policy softmax
	--spread 0.2
	--spread -1 --value tanh
	--alpha 0 --value logistic
	--wdl-b 0 --value wdl
	--wdl-a 10
	--lambda 1.5 --value tanh
	--lambda nan --value tanh
	--lambda 0.5
	--lambda 0.5 --value linear
	--eval bogus --value tanh
	--eval depth:x --value tanh
	--eval depth:-3 --value tanh
	--eval depth:0 --value tanh
	--eval nodes:0 --value tanh
	--max-game-plies 0 --value linear
	--max-game-plies 10
	--policy none
	--policy
	--policy-depths 8
	--policy-depths 12-8
	--policy-depths 0-5
	--policy-depths 1-256
	--policy-depths a-b
	--policy-depths -12
	--policy-depths 8-
	--policy-depths 8-10-12
	--policy-depths 8-12 --policy none --value tanh
	--policy-depths
	EOF
}

@test "the reasons for invalid calls are clear" {
	run --separate-stderr softtarget --policy softmax --temperature -5
	assert_failure 2
	[[ "$stderr" == *"--temperature: -5: too small"* ]]
	run --separate-stderr softtarget --value tanh --spread nan
	assert_failure 2
	[[ "$stderr" == *"--spread: nan: not a decimal number"* ]]
	run --separate-stderr softtarget --policy frobnicate
	assert_failure 2
	[[ "$stderr" == *"--policy: frobnicate: unknown method"* ]]
	run --separate-stderr softtarget --policy-depths 12-8
	assert_failure 2
	[[ "$stderr" == *"--policy-depths: 12-8: the first is above the last"* ]]
	run --separate-stderr softtarget --policy-depths 12
	assert_failure 2
	[[ "$stderr" == *"--policy-depths: 12: want A-B (1 <= A <= B <= 255)"* ]]
	run --separate-stderr softtarget --policy-depths 0-12
	assert_failure 2
	[[ "$stderr" == *"--policy-depths: 0-12: first number too small"* ]]
	run --separate-stderr softtarget --policy none --value tanh --policy-depths 8-12
	assert_failure 2
	[[ "$stderr" == *"--policy-depths needs a policy"* ]]
}

@test "a malformed evaluation is an error naming the record, not a value" {
	# 45 bytes that claim a 1000-move PV; then a W/D/L of 60000/5000/0.
	long="2:000100006400000005000000000000000000000000000500000000000000000000000000000000000100e80300"
	wdl="2:0001000164000000050000000000000060ea881300000500000000000000000000000000000000000100000000"
	# and a score of a kind posflow(5) does not define (900 of kind 2)
	eval_hex 900 2
	"$MKREC" > in.pos <<-EOF
	$START eval=cp:100@depth:5
	$START ext=$long
	$START ext=$wdl
	$START ext=2:$HEX
	EOF
	run --separate-stderr softtarget --policy none --value wdl -o out.pos in.pos
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"record 2: malformed evaluation"* ]]
	[[ "$stderr" == *"record 3: malformed evaluation"* ]]
	[[ "$stderr" == *"record 4: malformed evaluation"* ]]
	run posdump -c out.pos
	assert_output "4 out.pos"
	run bash -c "posdump --fields value out.pos | grep -c value"
	assert_output 1
}

@test "an invalid position is an error naming the record, whatever the targets; the record passes without them" {
	# two white kings: a position that does not unpack
	printf '%s\n' "startpos game=1 eval=cp:20@depth:5" \
	    "- game=2 eval=cp:20@depth:5 pos=ffff000000000000$(printf '0%.0s' $(seq 40))" \
	    "startpos game=3 eval=cp:20@depth:5" | "$MKREC" > bad.pos
	for opts in "--policy none --value tanh" "--value tanh"; do
		run --separate-stderr softtarget $opts -o out.pos bad.pos
		[ "$status" -eq 1 ] || fail "$opts: exit $status"
		[[ "$stderr" == *"softtarget: bad.pos: record 2: bad position"* ]] ||
			fail "$opts: $stderr"
		run posdump -c out.pos
		assert_output "3 out.pos"
		# the others have their value target, the bad one none
		run bash -c "posdump -j out.pos 2>/dev/null | jq -c '[.game, ([.exts[] | select(.type == \"value\")] | length)]'"
		assert_output "$(printf '%s\n' '["0000000000000001",1]' '["0000000000000002",0]' '["0000000000000003",1]')"
	done
}
