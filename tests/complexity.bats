#!/usr/bin/env bats
# complexity: the board complexity of METHODS.md section 3 over per-depth
# move tables (depth mode) and the shallow-against-deep view of seed 003
# (nodes mode), checked through posdump's JSON; real Stockfish at low
# depth on a deep surprise and on an obvious recapture; hand-made records
# at the thresholds' edges; pass-through, --min, --require, and every
# kind of bad input.  Streams are made with mkrec (tests/tools/mkrec.c);
# per-depth tables and evaluations with the helpers below, as raw
# extensions.

load helper
bats_require_minimum_version 1.5.0

MKREC="$BUILD_DIR/tests/tools/mkrec"

START='rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
MATED='rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3'

# le and move16 (tests/helper.bash) build the bytes.

# table LIMIT FLAGS DEPTH MOVE:cp|mate:N ...: a movescores extension
# (ext=3:HEX) of the given depth searched with LIMIT (depth:D or
# nodes:N); FLAGS 2 marks an intermediate table.
table() {
	local limit=$1 flags=$2 depth=$3 e m k v kind=1 HEX=
	shift 3
	[ "${limit%%:*}" = nodes ] && kind=2
	le $kind 1; le "$flags" 1; le "$depth" 2; le "${limit#*:}" 8; le $# 2
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

# ev LIMIT cp|mate:N DEPTH BEST: an engine evaluation (ext=2:HEX).
ev() {
	local limit=$1 score=$2 depth=$3 kind=1 HEX=00
	[ "${limit%%:*}" = nodes ] && kind=2
	le $kind 1
	if [ "${score%%:*}" = mate ]; then le 1 1; else le 0 1; fi
	HEX+=00
	le "${score#*:}" 4; le "${limit#*:}" 8
	HEX+=000000000000
	le "$3" 2; le "$3" 2
	move16 "$4"
	le "$MV" 2; le 0 8; le 0 4
	echo "ext=2:${HEX}0100000000"
}

# The complexity extension of each record as compact JSON, or "-".
cx() {
	posdump -j "$@" | jq -c '[.exts[] | select(.type == "complexity")] |
	    if length == 0 then "-" else .[0] end'
}

# "complexity move p_first p_decide" of each record (probabilities to 4
# decimals), or "-".
depthview() {
	posdump -j "$@" | jq -r '[.exts[] | select(.type == "complexity")] |
	    if length == 0 then "-" else .[0] |
	    "\(.complexity) \(.move) \(.p_first * 1e4 | round / 1e4) \(.p_decide * 1e4 | round / 1e4)" end'
}

# A record with a deep surprise at depth 3: g1f3 is dropped (p 0) at
# depth 1 and the most probable move at depth 3.  Zeman at depth 3 keeps
# g1f3 120, e2e4 100, d2d4 50: 1 / (1 + (50/70)^4) = 0.7935.
surprise() {
	echo "$START $(table depth:3 0 3 g1f3:cp:120 e2e4:cp:100 d2d4:cp:50 c2c4:cp:0)" \
	    "$(table depth:3 2 1 e2e4:cp:100 d2d4:cp:90 g1f3:cp:80 c2c4:cp:0)" \
	    "$(table depth:3 2 2 e2e4:cp:100 g1f3:cp:60 d2d4:cp:50 c2c4:cp:0)"
}

# The same, but e2e4 stays on top.
steady() {
	echo "$START $(table depth:3 0 3 e2e4:cp:120 g1f3:cp:100 d2d4:cp:50 c2c4:cp:0)" \
	    "$(table depth:3 2 1 e2e4:cp:100 d2d4:cp:90 g1f3:cp:80 c2c4:cp:0)" \
	    "$(table depth:3 2 2 e2e4:cp:100 g1f3:cp:60 d2d4:cp:50 c2c4:cp:0)"
}

@test "depth golden: a move dropped at depth 1 on top at depth 3 gives 3; a steady one 0" {
	{ surprise; steady; } | "$MKREC" > in.pos
	run --separate-stderr complexity -o out.pos in.pos
	assert_success
	# tables of 4 of the 20 moves: said
	[ "$stderr" = "complexity: 2 records: 2 with per-depth tables, 1 complex (50.0%), 0 without, 0 terminal; 2 written
complexity: 2 records were measured on a first-depth table of some of the moves (uci-eval --multipv K): a move it does not list counts as probability 0, so more positions look complex (uci-eval --multipv all --keep-depths lists them all)" ]
	run depthview out.pos
	# Depth 1 keeps e2e4 100, d2d4 90, g1f3 80: 1 / (1 + 0.5^4) = 0.9412.
	assert_line --index 0 "3 g1f3 0 0.7935"
	assert_line --index 1 "0 e2e4 0.9412 0"
	run jq -c '.exts[-1] | [.type, .mode, .depth, .first_depth, .low, .high, .policy]' <(posdump -j out.pos | head -1)
	assert_output '["complexity","depth",3,1,0.05,0.4,"zeman"]'
	run posdump --fields complexity out.pos
	assert_line --index 0 "complexity{mode=depth complexity=3 depth=3 first_depth=1 move=g1f3 p_first=0 p_decide=0.79345673 low=0.05 high=0.4 policy=zeman}"
}

@test "the thresholds are strict: exactly --low is not below, exactly --high not above" {
	# --drop 0 --power 1: four equal moves at depth 1 get 0.25 each, two
	# equal at depth 2 get 0.5 each; g1f3, listed first, is the most
	# probable at depth 2.
	echo "$START $(table depth:2 0 2 g1f3:cp:100 e2e4:cp:100 d2d4:cp:0 c2c4:cp:0 b1c3:cp:0)" \
	    "$(table depth:2 2 1 e2e4:cp:100 d2d4:cp:100 g1f3:cp:100 c2c4:cp:100 b1c3:cp:0)" |
		"$MKREC" > in.pos
	t() { complexity --drop 0 --power 1 "$@" -o out.pos in.pos 2>/dev/null; depthview out.pos; }
	run t --low 0.25 --high 0.4
	assert_output "0 g1f3 0.25 0"
	run t --low 0.2500001 --high 0.4
	assert_output "2 g1f3 0.25 0.5"
	run t --low 0.2500001 --high 0.5
	assert_output "0 g1f3 0.25 0"
	run t --low 0.2500001 --high 0.4999999
	assert_output "2 g1f3 0.25 0.5"
}

@test "the defaults are 0.05 and 0.40, and --low and --high move them" {
	surprise | "$MKREC" > in.pos
	# g1f3 at depth 3 has 0.7935: above 0.40, not above 0.8.
	run bash -c "complexity --high 0.8 in.pos 2>/dev/null | posdump -j | jq -r '.exts[-1].complexity'"
	assert_output 0
	run bash -c "complexity --high 0.79 in.pos 2>/dev/null | posdump -j | jq -r '.exts[-1].complexity'"
	assert_output 3
	# p at depth 1 is 0, so no --low can keep it out but 0.
	run bash -c "complexity --low 0 in.pos 2>/dev/null | posdump -j | jq -r '.exts[-1].complexity'"
	assert_output 0
}

@test "the first deciding depth counts, tables in any order, mates mapped" {
	# g1f3 wins from depth 2 on (mate 3 = 31700 cp at depth 4); the
	# tables are stored final first, then depths 3, 1, 2.
	echo "$START $(table depth:4 0 4 g1f3:mate:3 e2e4:cp:100 d2d4:cp:50 c2c4:cp:0)" \
	    "$(table depth:4 2 3 g1f3:cp:300 e2e4:cp:100 d2d4:cp:50 c2c4:cp:0)" \
	    "$(table depth:4 2 1 e2e4:cp:100 d2d4:cp:90 g1f3:cp:80 c2c4:cp:0)" \
	    "$(table depth:4 2 2 g1f3:cp:200 e2e4:cp:100 d2d4:cp:50 c2c4:cp:0)" |
		"$MKREC" > in.pos
	run --separate-stderr complexity -o out.pos in.pos
	assert_success
	run depthview out.pos
	# Depth 2: 1 / (1 + (50/150)^4) = 0.9878.
	assert_output "2 g1f3 0 0.9878"
	run jq -r '.exts[-1].depth' <(posdump -j out.pos)
	assert_output 4
}

@test "--policy softmax and its temperature are the shared policy code's" {
	surprise | "$MKREC" > in.pos
	run bash -c "complexity --policy softmax --temperature 5 in.pos 2>/dev/null | posdump -j | jq -c '.exts[-1] | [.complexity, .policy, (.p_first * 1e4 | round / 1e4), (.p_decide * 1e4 | round / 1e4)]'"
	# Depth 1: e^-4 / (1 + e^-2 + e^-4 + e^-20) = 0.0159; depth 3:
	# 1 / (1 + e^-4 + e^-14 + e^-24) = 0.9820.
	assert_output '[3,"softmax",0.0159,0.982]'
	# A softer softmax keeps g1f3 above --low at depth 1.
	run bash -c "complexity --policy softmax --temperature 10 in.pos 2>/dev/null | posdump -j | jq -c '.exts[-1] | [.complexity, .move]'"
	assert_output '[0,"g1f3"]'
}

# A deep surprise, found by experiment: the positions of the bundled
# games (pgn2pos testdata/lichess_db_*.pgn) evaluated at depth 1 and at
# depth 12 (uci-eval -d 1 | uci-eval -d 12), the records where complexity
# --mode nodes saw the deeper search change the best move and raise Q by
# 0.25 or more searched again with --multipv all --keep-depths -d 12, and
# of those the one whose surprising move is quiet (no capture, no check).
# From a Lichess blitz game: white, a rook up for little, faces Qg2 mate
# threats; 29. Qf2! (offering the queen trade) has 0.7% at depth 1, where
# Rd3 leads, and becomes the most probable move at depth 7 (0.51) as the
# evaluation climbs to about +4.  Stockfish 15.1, one thread; each
# position is its own game, so the hash is cleared between them.
DEEP='8/p2R1pkp/1p2p1p1/2p1P3/2P2P1P/1P3q1b/P2Q3P/2B3K1 w - - 7 29'
QUIET=d2f2
# The obvious recapture: the queen has just taken on d5.
RECAPTURE='3rk3/8/8/3Q4/8/8/8/4K3 b - - 0 1'
RECAPTURE_MOVE=d8d5

@test "real Stockfish: a quiet move that wins only at depth 7 gets complexity 7; a recapture gets 0" {
	printf '%s\n' "$DEEP game=1" "$RECAPTURE game=2" | "$MKREC" > in.pos
	run uci-eval -e "$(stockfish_path)" -d 8 --multipv all --keep-depths \
	    -o sf.pos in.pos
	assert_success
	run --separate-stderr complexity -o out.pos sf.pos
	assert_success
	[ "$stderr" = "complexity: 2 records: 2 with per-depth tables, 1 complex (50.0%), 0 without, 0 terminal; 2 written" ]
	# -m 3: tables of some of the moves, said
	run uci-eval -e "$(stockfish_path)" -d 2 -m 3 --keep-depths -o sf3.pos \
	    in.pos
	assert_success
	run --separate-stderr complexity -o /dev/null sf3.pos
	assert_success
	[[ "$stderr" == *"complexity: 2 records were measured on a first-depth table of some of the moves (uci-eval --multipv K)"* ]] || fail "$stderr"
	run cx out.pos
	[ "$(jq -r .move <<< "${lines[0]}")" = "$QUIET" ]
	[ "$(jq -r .complexity <<< "${lines[0]}")" -ge 7 ]
	[ "$(jq -r '.p_first < 0.05 and .p_decide > 0.4' <<< "${lines[0]}")" = true ]
	[ "$(jq -r .complexity <<< "${lines[1]}")" = 0 ]
	[ "$(jq -r .move <<< "${lines[1]}")" = "$RECAPTURE_MOVE" ]
	[ "$(jq -r '.p_first > 0.9' <<< "${lines[1]}")" = true ]
	# The same records as a puzzle miner: only the surprise is kept.
	run bash -c "complexity --min 7 sf.pos 2>/dev/null | posdump --fields fen"
	assert_output "$DEEP"
}

@test "nodes mode: a changed best move that loses --loss cp in the deep table, at the edge" {
	# Shallow best e2e4, deep best d2d4; the deep table lists e2e4 L cp
	# below d2d4.  Q of 20 and 30 cp differ by 0.03.
	for L in 99 100; do
		echo "$START $(ev nodes:100 cp:20 3 e2e4) $(ev nodes:100000 cp:30 12 d2d4) $(table nodes:100000 1 12 d2d4:cp:30 e2e4:cp:$((30 - L)) g1f3:cp:-200)"
	done | "$MKREC" > in.pos
	run --separate-stderr complexity --mode nodes -o out.pos in.pos
	assert_success
	run bash -c "posdump -j out.pos | jq -c '.exts[-1] | [.complexity, .moves_differ, .loss, .fired, .shallow_best, .deep_best]'"
	assert_line --index 0 '[0,true,99,[],"e2e4","d2d4"]'
	assert_line --index 1 '[1,true,100,["move"],"e2e4","d2d4"]'
	run bash -c "posdump -j out.pos | jq -c '.exts[-1] | [.mode, .depth, .shallow_limit, .shallow_limit_value, .shallow_depth, .deep_limit, .deep_limit_value, .min_loss, .threshold]' | sort -u"
	assert_output '["nodes",12,"nodes",100,3,"nodes",100000,100,0.55]'
	run bash -c "complexity --mode nodes --loss 99 in.pos 2>/dev/null | posdump -j | jq -r '.exts[-1].complexity'"
	assert_output "$(printf '1\n1')"
}

@test "nodes mode: the Q criterion, and a changed move the deep table does not price" {
	# Q(0) = 0 and Q(170) = 2/(1+e^-1)-1 = 0.462117.
	echo "$START $(ev depth:1 cp:0 1 e2e4) $(ev depth:12 cp:170 12 d2d4)" | "$MKREC" > in.pos
	t() { complexity --mode nodes "$@" in.pos 2>/dev/null | posdump -j | jq -c '.exts[-1] | [.complexity, .loss, .fired, (.q_deep * 1e6 | round / 1e6)]'; }
	run t
	assert_output '[0,null,[],0.462117]'
	run t --threshold 0.4621
	assert_output '[1,null,["q"],0.462117]'
	run t --threshold 0.4622
	assert_output '[0,null,[],0.462117]'
	# Both criteria, and the text form.
	echo "$START $(ev depth:1 cp:0 1 e2e4) $(ev depth:12 mate:2 12 d2d4) $(table depth:12 1 12 d2d4:mate:2 e2e4:cp:-300)" | "$MKREC" > both.pos
	run bash -c "complexity --mode nodes both.pos 2>/dev/null | posdump --fields complexity"
	assert_output "complexity{mode=nodes complexity=1 depth=12 shallow=depth:1 shallow_depth=1 deep=depth:12 shallow_best=e2e4 deep_best=d2d4 differ loss=32100 q_shallow=0 q_deep=1 fired=move,q min_loss=100 threshold=0.55}"
}

@test "nodes mode: --shallow and --deep pick the evaluations; one evaluation is not two" {
	echo "$START $(ev depth:1 cp:0 1 e2e4) $(ev depth:5 cp:300 5 d2d4) $(ev depth:12 cp:0 12 e2e4)" > lines
	echo "$START $(ev depth:12 cp:0 12 e2e4)" >> lines
	"$MKREC" < lines > in.pos
	run bash -c "complexity --mode nodes in.pos 2>/dev/null | posdump -j | jq -c '[.exts[] | select(.type == \"complexity\") | .complexity]'"
	assert_line --index 0 '[0]'
	assert_line --index 1 '[]'
	run bash -c "complexity --mode nodes --deep depth:5 in.pos 2>/dev/null | posdump -j | jq -c '[.exts[] | select(.type == \"complexity\") | .complexity]'"
	assert_line --index 0 '[1]'
	# a deep evaluation of a score kind posflow(5) does not define (900
	# of kind 2) is malformed, not 900 cp: named, the record unchanged
	eval_hex 900 2
	echo "$START $(ev depth:1 cp:0 1 e2e4) ext=2:$HEX" | "$MKREC" > k.pos
	run --separate-stderr complexity --mode nodes -o out.pos k.pos
	assert_failure 1
	[[ "$stderr" == *"complexity: k.pos: record 1: malformed evaluation"* ]]
	[ "$(posdump -j out.pos)" = "$(posdump -j k.pos)" ]
	run --separate-stderr complexity --mode nodes --shallow depth:5 --deep first -o out.pos in.pos
	assert_success
	[[ "$stderr" == *"2 records: 1 with both evaluations, 1 complex (100.0%), 1 without"* ]]
	[[ "$stderr" == *"1 records without both evaluations were passed through unmeasured (uci-eval -n 100 | uci-eval -n 100000 --multipv all writes them)"* ]]
	run --separate-stderr complexity --mode nodes --require -o out.pos in.pos
	assert_failure 1
	[[ "$stderr" == *"complexity: in.pos: record 2: no two evaluations for --shallow shallowest and --deep deepest (--require; uci-eval -n 100 | uci-eval -n 100000 --multipv all writes them)"* ]]
	run posdump -c out.pos
	assert_output "2 out.pos"
}

@test "records without per-depth tables pass through, counted, with the command that makes them" {
	"$MKREC" > in.pos <<-EOF
	$(surprise)
	$START game=2 ext=40000:beef
	$START game=3 scores=e2e4:cp:10,d2d4:cp:0@depth:8
	$MATED game=4
	EOF
	run --separate-stderr complexity -o out.pos in.pos
	assert_success
	[[ "$stderr" == *"complexity: 4 records: 1 with per-depth tables, 1 complex (100.0%), 2 without, 1 terminal; 4 written"* ]]
	[[ "$stderr" == *"complexity: 2 records without per-depth tables were passed through unmeasured (uci-eval --multipv all --keep-depths writes them)"* ]]
	run depthview out.pos
	assert_output "$(printf '%s\n' '3 g1f3 0 0.7935' - - -)"
	run bash -c "posdump -j out.pos | sed -n '2,4p'"
	assert_output "$(posdump -j in.pos | sed -n '2,4p')"
	# with --min they are left out, and said so
	run --separate-stderr complexity --min 1 -o out.pos in.pos
	assert_success
	[[ "$stderr" == *"complexity: 2 records without per-depth tables were left out unmeasured (uci-eval --multipv all --keep-depths writes them)"* ]]
	run posdump -c out.pos
	assert_output "1 out.pos"
}

@test "--require: a record without tables is an error naming it and uci-eval" {
	"$MKREC" > in.pos <<-EOF
	$(surprise)
	$START game=2
	$MATED game=3
	EOF
	run --separate-stderr complexity --require -o out.pos in.pos
	assert_failure 1
	[[ "$stderr" == *"complexity: in.pos: record 2: no per-depth move tables (--require; uci-eval --multipv all --keep-depths writes them)"* ]]
	[[ "$stderr" != *"record 3"* ]]
	run posdump -c out.pos
	assert_output "3 out.pos"
}

@test "--min keeps only the records of at least that complexity" {
	{ surprise; steady; echo "$START game=9"; surprise; } | "$MKREC" > in.pos
	run --separate-stderr complexity --min 3 -o out.pos in.pos
	assert_success
	[[ "$stderr" == *"4 records: 3 with per-depth tables, 2 complex (66.7%), 1 without, 0 terminal; 2 written"* ]]
	run depthview out.pos
	assert_output "$(printf '%s\n' '3 g1f3 0 0.7935' '3 g1f3 0 0.7935')"
	run bash -c "complexity --min 4 in.pos 2>/dev/null | posdump -c"
	assert_output "0 stdin"
	run bash -c "complexity --min 1 --mode nodes in.pos 2>/dev/null | posdump -c"
	assert_output "0 stdin"
}

@test "every other extension passes through; a rerun replaces its own of the same mode" {
	echo "$(surprise) ext=40000:deadbeef clock=1000,2000 ext=40001: $(ev depth:1 cp:0 1 e2e4) $(ev depth:3 cp:300 3 g1f3)" |
		"$MKREC" > in.pos
	complexity -o once.pos in.pos 2>/dev/null
	run bash -c "posdump -j once.pos | jq -c '[.exts[] | select(.type != \"complexity\")]'"
	assert_output "$(posdump -j in.pos | jq -c '.exts')"
	complexity -o twice.pos once.pos 2>/dev/null
	cmp once.pos twice.pos
	complexity --mode nodes --shallow depth:1 --deep depth:3 -o both.pos twice.pos 2>/dev/null
	complexity --high 0.9 -o again.pos both.pos 2>/dev/null
	run bash -c "posdump -j again.pos | jq -c '[.exts[] | select(.type == \"complexity\") | [.mode, .complexity]]'"
	assert_output '[["nodes",1],["depth",0]]'
}

@test "a table with a move twice or an unknown score kind: exit 1, record unchanged" {
	twice="$START $(table depth:2 0 2 g1f3:cp:100 e2e4:cp:90 g1f3:cp:0) $(table depth:2 2 1 e2e4:cp:100 d2d4:cp:90 g1f3:cp:0)"
	kind=$(table depth:2 2 1 e2e4:cp:100 d2d4:cp:90)
	kind=${kind:0:$((${#kind} - 12))}07${kind: -10}
	"$MKREC" > in.pos <<-EOF
	$(surprise)
	$twice
	$START $(table depth:2 0 2 e2e4:cp:100) $kind
	$(surprise)
	EOF
	run --separate-stderr complexity -o out.pos in.pos
	assert_failure 1
	[[ "$stderr" == *"complexity: in.pos: record 2: per-move scores (depth 2): move g1f3 (0x0546) is listed twice"* ]]
	[[ "$stderr" == *"complexity: in.pos: record 3: per-move scores (depth 1): unknown score kind"* ]]
	# (posdump names the table of kind 7 malformed too)
	run --separate-stderr depthview out.pos
	assert_output "$(printf '%s\n' '3 g1f3 0 0.7935' - - '3 g1f3 0 0.7935')"
	[ "$stderr" = "posdump: out.pos: record 3: malformed movescores extension (30 bytes)" ]
	run bash -c "posdump -j out.pos 2>/dev/null | sed -n 2,3p"
	assert_output "$(posdump -j in.pos 2>/dev/null | sed -n 2,3p)"
	# An intermediate table that counts more entries than it holds.
	short="ext=3:010201000200000000000000""0500""0c07000164000000"
	echo "$START $(table depth:2 0 2 e2e4:cp:100) $short" | "$MKREC" > short.pos
	run --separate-stderr complexity -o out.pos short.pos
	assert_failure 1
	[[ "$stderr" == *"short.pos: record 1: per-move scores (depth 1): malformed extension"* ]]
}

@test "empty input: an empty stream, exit 0" {
	run --separate-stderr complexity -o out.pos < /dev/null
	assert_success
	[ "$stderr" = "complexity: 0 records: 0 with per-depth tables, 0 complex (0.0%), 0 without, 0 terminal; 0 written" ]
	run posdump -c out.pos
	assert_output "0 out.pos"
	: > empty.pos
	run complexity -o out.pos empty.pos
	assert_success
	run posdump -c out.pos
	assert_output "0 out.pos"
}

@test "concatenated streams and several operands" {
	surprise | "$MKREC" > a.pos
	steady | "$MKREC" > b.pos
	cat a.pos b.pos > ab.pos
	run bash -c "cat ab.pos | complexity 2>/dev/null | posdump -c"
	assert_output "2 stdin"
	complexity ab.pos - a.pos < b.pos > out.pos 2>/dev/null
	run depthview out.pos
	assert_output "$(printf '%s\n' '3 g1f3 0 0.7935' '0 e2e4 0.9412 0' '0 e2e4 0.9412 0' '3 g1f3 0 0.7935')"
}

@test "corrupt block: exit 1 naming it, the other records still written" {
	for g in 1 2 3; do echo "$(surprise) game=$g"; done | "$MKREC" -F > in.pos
	size=$(stat -c %s in.pos)
	off=$((16 + (size - 16 - 24) / 3 + 60))
	printf '\xff' | dd of=in.pos bs=1 seek=$off conv=notrunc 2>/dev/null
	run --separate-stderr complexity -o out.pos in.pos
	assert_failure 1
	[[ "$stderr" == *"complexity: in.pos: block 2"*"checksum mismatch"* ]]
	run bash -c "posdump -j out.pos | jq -r .game"
	assert_output "$(printf '%s\n' 0000000000000001 0000000000000003)"
	run depthview out.pos
	assert_output "$(printf '%s\n' '3 g1f3 0 0.7935' '3 g1f3 0 0.7935')"
}

@test "truncated input: exit 1, every complete record before the cut written" {
	for g in 1 2 3; do echo "$(surprise) game=$g"; done | "$MKREC" > in.pos
	size=$(stat -c %s in.pos)
	head -c $((size - 24 - 40)) in.pos > cut.pos
	run --separate-stderr complexity -o out.pos cut.pos
	assert_failure 1
	[[ "$stderr" == *"complexity: cut.pos: truncated"*"after record 2"* ]]
	run bash -c "posdump -j out.pos | jq -r .game"
	assert_output "$(printf '%s\n' 0000000000000001 0000000000000002)"
	run depthview out.pos
	assert_output "$(printf '%s\n' '3 g1f3 0 0.7935' '3 g1f3 0 0.7935')"
}

@test "a missing file is reported and the next operand still processed" {
	surprise | "$MKREC" > a.pos
	run --separate-stderr complexity -o out.pos nonexistent.pos a.pos
	assert_failure 1
	[[ "$stderr" == *"complexity: nonexistent.pos"* ]]
	run posdump -c out.pos
	assert_output "1 out.pos"
}

@test "-z and a .zst name write zstd; the result reads back" {
	surprise | "$MKREC" > a.pos
	complexity -z -o out.pos a.pos 2>/dev/null
	[ "$(head -c 4 out.pos | od -An -tx1 | tr -d ' ')" = "28b52ffd" ]
	complexity -o out.pos.zst a.pos 2>/dev/null
	run depthview out.pos.zst
	assert_output "3 g1f3 0 0.7935"
}

@test "invalid calls: exit 2, usage on stderr, nothing on stdout" {
	surprise | "$MKREC" > a.pos
	while read -r args; do
		run --separate-stderr complexity $args a.pos
		[ "$status" -eq 2 ] || fail "complexity $args: status $status"
		[ -z "$output" ] || fail "complexity $args wrote to stdout"
		[[ "$stderr" == *"usage: complexity"* ]] ||
			fail "complexity $args: no usage: $stderr"
		[[ "$stderr" == *"complexity: "* ]] ||
			fail "complexity $args: no reason: $stderr"
	done <<-EOF
	--bogus
	--mode
	--mode breadth
	--policy none
	--policy frobnicate
	--drop 1
	--drop x
	--power 0
	--temperature 10
	--temperature 0 --policy softmax
	--drop 0.1 --policy softmax
	--low -0.1
	--low 1.5
	--low nan
	--high abc
	--shallow depth:1
	--deep deepest
	--loss 50
	--threshold 0.3
	--mode nodes --low 0.1
	--mode nodes --high 0.5
	--mode nodes --policy softmax
	--mode nodes --policy zeman
	--policy zeman --mode nodes
	--mode nodes --drop 0.1
	--mode nodes --shallow bogus
	--mode nodes --deep depth:x
	--mode nodes --loss -1
	--mode nodes --loss 1.5
	--mode nodes --loss 64001
	--mode nodes --threshold 2.5
	--mode nodes --threshold -1
	--min 0
	--min 65536
	--min x
	--min
	EOF
}

@test "the reasons for invalid calls are clear" {
	run --separate-stderr complexity --low 1.5
	assert_failure 2
	[[ "$stderr" == *"complexity: --low: 1.5: too large (want 0 to 1)"* ]]
	run --separate-stderr complexity --shallow depth:1
	assert_failure 2
	[[ "$stderr" == *"--shallow, --deep, --loss and --threshold need --mode nodes"* ]]
	run --separate-stderr complexity --mode nodes --power 2
	assert_failure 2
	[[ "$stderr" == *"--policy, --drop, --power, --temperature, --low and --high need --mode depth"* ]]
	run --separate-stderr complexity --mode nodes --deep bogus
	assert_failure 2
	[[ "$stderr" == *"--deep: bogus: unknown selector (deepest, first, last, pgn, depth:N, nodes:N, movetime:N)"* ]]
	run --separate-stderr complexity --policy none
	assert_failure 2
	[[ "$stderr" == *"--policy: none: unknown method"* ]]
}
