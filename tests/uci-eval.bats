#!/usr/bin/env bats
# uci-eval: the protocol against real Stockfish at low depth (scores, mate,
# W/D/L, MultiPV all, keep-depths, hybrid tables with --tail-depth and
# --tail-nodes, terminal positions, cache, --skip-done,
# -j ordering, results identical to Stockfish driven directly), stream
# handling (empty, concatenated, corrupt, truncated input, invalid
# positions), every engine fault through the scripted fake engine
# (tests/tools/fake-engine.c), signals, and the usage table.

load helper

FAKE="$BUILD_DIR/tests/tools/fake-engine"
BADPOS="$BUILD_DIR/tests/tools/uci-badpos"
SF="$(stockfish_path)"

START='rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
MATE_IN_1='6k1/5ppp/8/8/8/8/8/K3R3 w - - 0 1'
MATED='4R1k1/5ppp/8/8/8/8/8/K7 b - - 1 1'
STALEMATE='k7/8/1Q6/8/8/8/8/K7 b - - 0 1'
KIWIPETE='r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1'
C960='bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9'

# Records from FEN lines (each its own game).
fens() {
	printf '%s\n' "$@" > in.epd
	pgn2pos --epd in.epd 2>/dev/null
}

# Positions of the first $1 games of the bundled PGN, at most $2 plies each.
games() {
	awk -v n="$1" '/^\[Event /{g++} g<=n' "$TESTDATA/lichess_db_10k.pgn" \
	    > g.pgn
	pgn2pos --max-plies "$2" g.pgn 2>/dev/null
}

# "score best" per record, from posdump's eval field.
scores() {
	posdump --fields eval "$@" |
	    sed -n 's/.*score=\([a-z]*\):\(-*[0-9]*\).* best=\([a-h1-8qrbn-]*\).*/\1 \2 \3/p'
}

@test "golden: Stockfish scores, mate in 1, W/D/L, engine id, input order" {
	fens "$START" "$MATE_IN_1" "$KIWIPETE" > in.pos
	run uci-eval -d 5 -j 1 in.pos -o out.pos
	assert_success
	assert_output --partial "3 records: 3 searched"
	run posdump --fields fen,eval out.pos
	assert_line --index 0 --partial "$START | eval{src=engine limit=depth:5 score=cp:"
	assert_line --index 1 --partial "$MATE_IN_1 | eval{src=engine limit=depth:5 score=mate:1 wdl=1000,0,0"
	assert_line --index 1 --partial "best=e1e8 pv=e1e8 engine=\"Stockfish"
	assert_line --index 2 --partial "$KIWIPETE | eval{"
	[ "${#lines[@]}" -eq 3 ]
	# every eval carries depth 5, a W/D/L summing to 1000 and the engine
	run sh -c "posdump -j out.pos | jq -r '.exts[-1] | \"\(.depth) \(.wdl[0]+.wdl[1]+.wdl[2]) \(.engine) \(.limit) \(.limit_value)\"' | sort -u"
	assert_output "5 1000 Stockfish 15.1 depth 5"
	# the other extensions (pgn2pos metadata) pass through byte for byte
	run sh -c "posdump -j in.pos | jq -c '.exts' > a; posdump -j out.pos | jq -c '.exts[:-1]' > b; cmp a b"
	assert_success
}

@test "results are identical to Stockfish driven directly (-j 1, same settings)" {
	games 3 12 > in.pos
	uci-eval -d 6 -j 1 --cache-mem 0 -O Hash=16 -O Threads=1 in.pos > out.pos
	scores out.pos > ours
	# the same commands by hand: ucinewgame at each new game
	{
		echo uci
		echo "setoption name UCI_ShowWDL value true"
		echo "setoption name Hash value 16"
		echo "setoption name Threads value 1"
		echo isready
		posdump --fields game,fen in.pos | while read -r game fen; do
			if [ "$game" != "${last:-}" ]; then
				echo ucinewgame
				echo isready
				last=$game
			fi
			echo "position fen $fen"
			echo "go depth 6"
		done
		# absorbs the stop that end of input sends
		echo "position startpos"
		echo "go depth 30"
	} > cmds
	sed -i 's/^game=//' cmds
	"$SF" < cmds | awk '
	    /^info .* multipv 1 / && !/bound/ {
		for (i = 1; i < NF; i++) if ($i == "score") s = $(i+1) " " $(i+2)
	    }
	    /^bestmove/ { print s, $2 }' | head -n "$(posdump -c in.pos | cut -d" " -f1)" > theirs
	[ "$(wc -l < ours)" -eq 36 ]
	run diff ours theirs
	assert_success
}

@test "-j 2 writes the records in input order, each evaluated" {
	games 6 16 > in.pos
	run uci-eval -d 4 -j 2 in.pos -o j2.pos
	assert_success
	uci-eval -d 4 -j 1 in.pos > j1.pos 2>/dev/null
	posdump --fields game,ply,fen in.pos > want
	posdump --fields game,ply,fen j2.pos > got2
	posdump --fields game,ply,fen j1.pos > got1
	cmp want got2
	cmp want got1
	[ "$(posdump --fields eval j2.pos | grep -c 'src=engine limit=depth:4')" -eq "$(wc -l < want)" ]
}

@test "without -j, as many engines as processors it may run on: a CPU set (taskset, a Slurm job's) bounds them" {
	command -v taskset > /dev/null || skip "no taskset"
	games 8 2 > in.pos
	# (an engine the run ends before it has begun logs nothing: at most)
	FAKE_LOG=all.log uci-eval -d 1 -e "$FAKE" in.pos > /dev/null 2>&1
	want=$(nproc)
	[ "$want" -gt 256 ] && want=256
	[ "$(grep -c '^# pid' all.log)" -le "$want" ]
	FAKE_LOG=one.log taskset -c 0 uci-eval -d 1 -e "$FAKE" in.pos > one.pos 2>/dev/null
	[ "$(grep -c '^# pid' one.log)" -eq 1 ]
	[ "$(posdump -c one.pos | cut -d' ' -f1)" -eq "$(posdump -c in.pos | cut -d' ' -f1)" ]
}

@test "--nodes and --movetime reach the engine and tag the evaluation; --window 1 keeps order" {
	games 2 6 > in.pos
	n=$(posdump -c in.pos | cut -d' ' -f1)
	FAKE_LOG=log uci-eval -n 300 -j 1 -e "$FAKE" in.pos > n.pos 2>/dev/null
	[ "$(grep -c '^go nodes 300$' log)" -eq "$(grep -c '^go' log)" ]
	[ "$(posdump --fields eval n.pos | grep -c 'limit=nodes:300 ')" -eq "$n" ]
	rm log
	FAKE_LOG=log uci-eval -t 7 -j 1 -e "$FAKE" in.pos > t.pos 2>/dev/null
	[ "$(grep -c '^go movetime 7$' log)" -eq "$(grep -c '^go' log)" ]
	[ "$(posdump --fields eval t.pos | grep -c 'limit=movetime:7 ')" -eq "$n" ]
	run uci-eval -d 2 -j 2 --window 1 --cache-mem 0 in.pos -o w.pos
	assert_success
	cmp <(posdump --fields game,ply,fen in.pos) <(posdump --fields game,ply,fen w.pos)
	[ "$(posdump --fields eval w.pos | grep -c 'limit=depth:2 ')" -eq "$n" ]
}

@test "--multipv all: a complete table of every legal move" {
	fens "$KIWIPETE" "$START" > in.pos
	run uci-eval -d 3 -j 1 -m all in.pos -o out.pos
	assert_success
	for i in 1 2; do
		fen=$(posdump --fields fen out.pos | sed -n "${i}p")
		legal=$(printf 'position fen %s\ngo perft 1\n' "$fen" | "$SF" |
		    sed -n 's/^Nodes searched: //p')
		row=$(posdump --fields movescores out.pos | sed -n "${i}p")
		[[ "$row" == *"depth=3 complete n=$legal "* ]]
		# every move listed once
		moves=$(echo "$row" | grep -o '[a-h][1-8][a-h][1-8][qrbn]*:' | sort -u | wc -l)
		[ "$moves" -eq "$legal" ]
	done
	[ "$legal" -eq 20 ]
	run posdump --fields eval out.pos
	assert_line --index 0 --partial "multipv=0"
}

@test "--multipv K and --keep-depths: one table per completed depth" {
	fens "$START" > in.pos
	run uci-eval -d 4 -j 1 -m 3 -k in.pos -o out.pos
	assert_success
	run posdump --fields movescores out.pos
	assert_output --partial "movescores{limit=depth:4 depth=4 n=3 "
	assert_output --partial "depth=1 intermediate n=3 "
	assert_output --partial "depth=2 intermediate n=3 "
	assert_output --partial "depth=3 intermediate n=3 "
	[ "$(echo "$output" | grep -o 'movescores{' | wc -l)" -eq 4 ]
}

# The legal moves of FEN $1 as Stockfish lists them (go perft 1), sorted.
sf_legal() {
	printf 'position fen %s\ngo perft 1\n' "$1" | "$SF" |
	    sed -n 's/^\([a-h][1-8][a-h][1-8][qrbn]*\): 1$/\1/p' | sort
}

# Stockfish behind a logging wrapper: commands to cmds, replies to replies.
sf_logged() {
	printf '#!/bin/sh\ntee -a "%s/cmds" | "%s" | tee -a "%s/replies"\n' \
	    "$PWD" "$SF" "$PWD" > sf.sh
	chmod +x sf.sh
}

# The final per-move table of each record of $1 as one JSON line.
final_tables() {
	posdump --json "$1" | jq -c '[.exts[] |
	    select(.type == "movescores" and (.intermediate | not))][0]'
}

@test "--nodes: the table and the evaluation are of the last depth completed before the limit, never the lines Stockfish prints for the iteration it cut short" {
	# Stockfish prints the cut iteration's lines at its depth, the moves
	# not yet searched again with the scores of the depth before.  A
	# limit one node past the end of depth D stops the search as D + 1
	# begins: the table must be depth D's, as a search to depth D gives.
	fens 'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2' > in.pos
	sf_logged
	for D in 4 5 6 7 8; do
		rm -f replies
		uci-eval -d "$D" -m all -j 1 --cache-mem 0 -e "$PWD/sf.sh" in.pos -o "d$D.pos" 2>/dev/null
		n=$(grep " depth $D .* multipv 1 " replies | grep -v bound | tail -n 1 |
		    sed 's/.* nodes \([0-9]*\).*/\1/')
		[ -n "$n" ]
		run uci-eval -n $((n + 1)) -m all -k -j 1 --cache-mem 0 -e "$SF" in.pos -o "n$D.pos"
		assert_success
		[ "$(final_tables "n$D.pos" | jq .depth)" -eq "$D" ] ||
			fail "nodes $((n + 1)): table of depth $(final_tables "n$D.pos" | jq .depth), not $D"
		[ "$(final_tables "n$D.pos" | jq -c .moves)" = "$(final_tables "d$D.pos" | jq -c .moves)" ]
		# the final table first, then every shallower depth once, in order
		posdump --json "n$D.pos" | jq -r '.exts[] | select(.type == "movescores") | .depth' > depths
		[ "$(seq 1 "$D" | sed "1i $D" | sed '$d')" = "$(cat depths)" ] || fail "depths: $(cat depths)"
	done
	# one PV: the evaluation of a search so cut is depth D's, at depth D
	# (Stockfish repeats it at D + 1), with the nodes of the whole search
	for D in 4 5 6 7 8; do
		rm -f replies
		uci-eval -d "$D" -j 1 --cache-mem 0 -e "$PWD/sf.sh" in.pos -o "e$D.pos" 2>/dev/null
		n=$(grep " depth $D .* multipv 1 " replies | grep -v bound | tail -n 1 |
		    sed 's/.* nodes \([0-9]*\).*/\1/')
		run uci-eval -n $((n + 1)) -j 1 --cache-mem 0 -e "$SF" in.pos -o "m$D.pos"
		assert_success
		ev() { posdump --json "$1" | jq -c '[.exts[] | select(.type == "eval")][0] | [.depth, .score, .pv]'; }
		[ "$(ev "m$D.pos")" = "$(ev "e$D.pos")" ] || fail "nodes $((n + 1)): $(ev "m$D.pos"), not $(ev "e$D.pos")"
		[ "$(posdump --json "m$D.pos" | jq '[.exts[] | select(.type == "eval")][0].nodes')" -gt "$n" ]
	done
}

@test "MultiPV lines that name a move twice make no table: counted as the engine's fault, exit 1, the record kept with its evaluation" {
	fens "$START" "$KIWIPETE" > in.pos
	FAKE_DUP_MOVE=1 run --separate-stderr uci-eval -d 2 -m all -j 1 -e "$FAKE" in.pos -o out.pos
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"uci-eval: 2 positions without a complete per-move table: the engine named a move twice, or an illegal one, in its MultiPV lines"* ]] || fail "$stderr"
	[[ "$stderr" != *"the limit ended the search too early"* ]] || fail "$stderr"
	run posdump --json out.pos
	[ "$(jq -s 'length' <<< "$output")" -eq 2 ]
	[ "$(jq -s '[.[].exts[] | select(.type == "eval")] | length' <<< "$output")" -eq 2 ]
	[ "$(jq -s '[.[].exts[] | select(.type == "movescores")] | length' <<< "$output")" -eq 0 ]
	# such a result is not cached: a rerun with the cache searches it
	# again and says so again, with or without --reproducible, and with
	# a hybrid table (its main and its tail search faulted)
	for r in "" --reproducible "-m 2 --tail-depth 1"; do
		rm -f f.cache
		FAKE_DUP_MOVE=1 uci-eval -d 2 -m all -j 1 $r --cache f.cache -e "$FAKE" in.pos -o /dev/null 2>/dev/null || true
		FAKE_DUP_MOVE=1 run --separate-stderr uci-eval -d 2 -m all -j 1 $r --cache f.cache -e "$FAKE" in.pos -o out.pos
		[ "$status" -eq 1 ]
		[[ "$stderr" == *" 2 searched, 0 cache hits"* ]] || fail "$r: $stderr"
		[[ "$stderr" == *"2 positions without a complete per-move table: the engine named a move twice"* ]] || fail "$r: $stderr"
	done
	# the same engine without the fault: tables, exit 0
	run --separate-stderr uci-eval -d 2 -m all -j 1 -e "$FAKE" in.pos -o out.pos
	assert_success
	[[ "$stderr" != *"without a complete per-move table"* ]] || fail "$stderr"
}

@test "a depth limit the engine reports fewer MultiPV lines at (an engine ignoring MultiPV): no table, the engine's fault, exit 1, not cached" {
	fens "$START" "$KIWIPETE" > in.pos
	printf '#!/bin/sh\n"%s" | grep --line-buffered -v " multipv [2-9]"\n' \
	    "$FAKE" > onepv.sh
	chmod +x onepv.sh
	for pass in first rerun; do
		run --separate-stderr uci-eval -d 2 -m 3 -j 1 --cache f.cache \
		    -e ./onepv.sh in.pos -o out.pos
		[ "$status" -eq 1 ] || fail "$pass: status $status: $stderr"
		[[ "$stderr" == *"uci-eval: 2 positions without a complete per-move table: the engine reported fewer MultiPV lines than asked at the depth limit"* ]] || fail "$pass: $stderr"
		[[ "$stderr" != *"the limit ended the search too early"* ]] || fail "$pass: $stderr"
		# not cached: the rerun searches again
		[[ "$stderr" == *" 2 searched, 0 cache hits"* ]] || fail "$pass: $stderr"
	done
	run posdump --json out.pos
	[ "$(jq -s '[.[].exts[] | select(.type == "eval")] | length' <<< "$output")" -eq 2 ]
	[ "$(jq -s '[.[].exts[] | select(.type == "movescores")] | length' <<< "$output")" -eq 0 ]
}

@test "--tail-depth: a tail search without a complete table (an engine ignoring searchmoves) is the engine's fault, exit 1, not cached" {
	fens "$START" "$KIWIPETE" > in.pos
	# the fake engine answers "go ... searchmoves" with lines of every
	# legal move, in generation order
	for pass in first rerun; do
		run --separate-stderr uci-eval -d 2 -m 1 --tail-depth 1 -j 1 \
		    -e "$FAKE" --cache f.cache in.pos -o out.pos
		[ "$status" -eq 1 ] || fail "$pass: status $status: $stderr"
		[[ "$stderr" == *"uci-eval: 2 positions without a complete per-move table: the engine reported fewer MultiPV lines than asked at the depth limit"* ]] || fail "$pass: $stderr"
		[[ "$stderr" != *"the limit ended the search too early"* ]] || fail "$pass: $stderr"
		[[ "$stderr" == *" 2 searched, 0 cache hits"* ]] || fail "$pass: $stderr"
	done
	run posdump --json out.pos
	[ "$(jq -s '[.[].exts[] | select(.type == "movescores") | select(.complete)] | length' <<< "$output")" -eq 0 ]
}

@test "--tail-depth: every legal move once, the K best at the main depth, the rest at the tail depth, none above the K-th" {
	ONE_MOVE='7k/8/8/8/8/8/8/K5R1 b - - 0 1'
	fens "$START" "$KIWIPETE" "$MATE_IN_1" "$ONE_MOVE" > a.pos
	awk '/^\[Event /{g++} g<=2' "$TESTDATA/lichess_db_100k.pgn" > g.pgn
	pgn2pos --skip-plies 10 --per-game 2 --seed 7 g.pgn > b.pos 2>/dev/null
	cat a.pos b.pos > in.pos
	n=$(posdump -c in.pos | cut -d' ' -f1)
	[ "$n" -eq 8 ]
	sf_logged
	run uci-eval -d 6 -m 3 --tail-depth 3 -j 1 -e "$PWD/sf.sh" in.pos -o out.pos
	assert_success
	refute_output --partial "without a complete per-move table"
	final_tables out.pos > tables
	posdump --fields fen in.pos | cut -d' ' -f1-6 > fens
	[ "$(wc -l < tables)" -eq "$n" ]
	tails=0
	for i in $(seq "$n"); do
		fen=$(sed -n "${i}p" fens)
		t=$(sed -n "${i}p" tables)
		sf_legal "$fen" > legal
		jq -r '.moves[].move' <<< "$t" | sort > listed
		# complete: every legal move, each once
		diff legal listed || fail "record $i: not every legal move once"
		[ "$(jq '.complete' <<< "$t")" = true ] || fail "record $i: not complete"
		[ "$(jq '.depth' <<< "$t")" -eq 6 ] || [ ! -s legal ]
		k=$(wc -l < legal)
		[ "$k" -gt 3 ] && k=3 && tails=$((tails + 1))
		# the K best at depth 6, every other move at depth 3
		jq -e --argjson k "$k" '(.moves[:$k] | all(.depth == 6)) and
		    (.moves[$k:] | all(.depth == 3))' <<< "$t" > /dev/null ||
		    fail "record $i: depths $(jq -c '[.moves[].depth]' <<< "$t")"
		# no tail move above the K-th
		jq -e --argjson k "$k" '$k == 0 or
		    (.moves[$k - 1].cp as $c | .moves[$k:] | all(.cp <= $c))' \
		    <<< "$t" > /dev/null || fail "record $i: a tail move above the K-th"
	done
	# one-move, mate-in-1 and mated positions included
	[ "$tails" -eq 6 ]
	[ "$(grep -c '"moves":\[\]' tables)" -eq 1 ]
	# Each tail search follows its main search on the same engine, with no
	# ucinewgame between them, over the other moves, MultiPV their number.
	run awk '/^ucinewgame/ { ng = 1 }
	    /^setoption name MultiPV value / { mpv = $5 }
	    /^go depth 6$/ { main = 1; ng = 0; next }
	    /^go depth 3 searchmoves / {
		if (!main || ng) print "tail search not right after its main search"
		if (mpv != NF - 4) print "MultiPV " mpv " for " NF - 4 " moves"
		tails++
	    }
	    /^go/ { main = 0 }
	    END { print tails " tail searches" }' cmds
	assert_output "6 tail searches"
	# The clamp was needed: some tail search scored its best move above
	# the K-th of its main search (in cp, at the last depth of each).
	run awk '/^info .* score / && !/bound/ {
		for (i = 1; i < NF; i++) {
			if ($i == "depth") d = $(i + 1)
			if ($i == "multipv") m = $(i + 1)
			if ($i == "cp") c = $(i + 1)
			if ($i == "mate") c = "mate"
		}
		if (d > maxd) maxd = d
		if (d == 6 && m == 3) kth = c
		if (d == 3 && m == 1) top = c
	    }
	    /^bestmove/ {
		if (maxd == 6)
			main = kth
		else if (top != "mate" && main != "mate" && top + 0 > main + 0)
			above++
		maxd = 0
	    }
	    END { print above + 0 }' replies
	[ "$output" -ge 1 ]
	# the table of a nodes limit is complete too
	rm cmds
	fens "$START" "$KIWIPETE" > n.pos
	run uci-eval -n 30000 -m 2 --tail-nodes 8000 -j 1 -e "$PWD/sf.sh" n.pos -o nodes.pos
	assert_success
	[ "$(grep -c '^go nodes 8000 searchmoves ' cmds)" -eq 2 ]
	final_tables nodes.pos > tables
	for i in 1 2; do
		fen=$(posdump --fields fen n.pos | sed -n "${i}p" | cut -d' ' -f1-6)
		sf_legal "$fen" > legal
		sed -n "${i}p" tables | jq -r '.moves[].move' | sort > listed
		diff legal listed
		[ "$(sed -n "${i}p" tables | jq '.complete')" = true ]
	done
}

@test "--tail-depth: -j 2 writes what -j 1 writes" {
	awk '/^\[Event /{g++} g<=6' "$TESTDATA/lichess_db_100k.pgn" > g.pgn
	pgn2pos --max-plies 24 g.pgn > in.pos 2>/dev/null
	notime() { posdump --json "$1" | sed 's/"time_ms":[0-9]*,//g'; }
	uci-eval -d 6 -m 2 --tail-depth 3 -j 1 in.pos -o j1.pos 2>/dev/null
	notime j1.pos > want
	[ "$(grep -c '"complete":true' want)" -eq "$(posdump -c in.pos | cut -d' ' -f1)" ]
	uci-eval -d 6 -m 2 --tail-depth 3 -j 2 --window 16 in.pos -o j2.pos 2>/dev/null
	notime j2.pos > got
	diff want got > /dev/null || fail "$(diff want got | grep -c '^>') records differ"
}

@test "--tail-depth with --keep-depths, --skip-done and --cache" {
	fens "$START" "$KIWIPETE" > in.pos
	# -k: the main search's shallower tables (K moves), then the hybrid
	uci-eval -d 4 -m 2 -k --tail-depth 2 -j 1 in.pos -o k.pos 2>/dev/null
	run posdump --fields movescores k.pos
	assert_line --index 0 --regexp "^movescores\{limit=depth:4 depth=4 complete n=20 .* movescores\{limit=depth:4 depth=3 intermediate n=2 "
	[ "$(echo "${lines[0]}" | grep -o 'intermediate n=2 ' | wc -l)" -eq 3 ]
	# --skip-done: a plain -m 2 table lists 2 moves, so it is searched again
	uci-eval -d 4 -m 2 -j 1 in.pos -o plain.pos 2>/dev/null
	run uci-eval -d 4 -m 2 --tail-depth 2 --skip-done -j 1 plain.pos -o h.pos
	assert_success
	assert_output --partial "2 searched"
	[ "$(final_tables h.pos | grep -c '"complete":true')" -eq 0 ]
	[ "$(posdump --json h.pos | grep -c '"complete":true')" -eq 2 ]
	run uci-eval -d 4 -m 2 --tail-depth 2 --skip-done -j 1 h.pos -o h2.pos
	assert_output --partial "0 searched"
	assert_output --partial "2 skipped"
	cmp <(posdump h.pos) <(posdump h2.pos)
	# another tail depth is not done
	run uci-eval -d 4 -m 2 --tail-depth 3 --skip-done -j 1 h.pos -o h3.pos
	assert_output --partial "2 searched"
	# the cache: a plain entry is not a hybrid one, nor one tail another's
	run uci-eval -d 4 -m 2 -j 1 --cache c.db in.pos -o c0.pos
	assert_output --partial "2 searched, 0 cache hits"
	run uci-eval -d 4 -m 2 --tail-depth 2 -j 1 --cache c.db in.pos -o c1.pos
	assert_output --partial "2 searched, 0 cache hits"
	[ "$(posdump --json c1.pos | grep -c '"complete":true')" -eq 2 ]
	run uci-eval -d 4 -m 2 --tail-depth 2 -j 1 --cache c.db in.pos -o c2.pos
	assert_output --partial "0 searched, 2 cache hits"
	cmp <(posdump c1.pos) <(posdump c2.pos)
	run uci-eval -d 4 -m 2 --tail-depth 3 -j 1 --cache c.db in.pos -o c3.pos
	assert_output --partial "2 searched, 0 cache hits"
	run uci-eval -d 4 -m 2 -j 1 --cache c.db in.pos -o c4.pos
	assert_output --partial "0 searched, 2 cache hits"
	cmp <(posdump c0.pos) <(posdump c4.pos)
}

@test "--tail-depth, --tail-nodes: the bad combinations are refused, saying why" {
	fens "$START" > in.pos
	while IFS='|' read -r args msg; do
		eval "set -- $args"
		run --separate-stderr uci-eval "$@" in.pos
		[ "$status" -eq 2 ] || fail "$args: status $status"
		[ -z "$output" ] || fail "$args: stdout"
		[[ "$stderr" == *"uci-eval: $msg"* ]] || fail "$args: $stderr"
		[[ "$stderr" == *"usage: uci-eval"* ]] || fail "$args: no usage"
	done <<-'EOF'
	-d 6 --tail-depth 3 -f|--tail-depth 3: needs a count of best moves with -m (not all)
	-d 6 -m all --tail-depth 3 -f|--tail-depth 3: needs a count of best moves with -m (not all)
	-d 6 -m 3 --tail-depth 6 -f|--tail-depth 6: not below --depth 6
	-d 6 -m 3 --tail-depth 9 -f|--tail-depth 9: not below --depth 6
	-n 5000 -m 3 --tail-nodes 5000 -f|--tail-nodes 5000: not below --nodes 5000
	-n 5000 -m 3 --tail-depth 3 -f|--tail-depth 3: needs --depth as the main limit
	-d 6 -m 3 --tail-nodes 500 -f|--tail-nodes 500: needs --nodes as the main limit
	-t 100 -m 3 --tail-depth 3 -f|--tail-depth 3: needs --depth as the main limit
	-d 6 -m 3 --tail-depth 3 --tail-nodes 500 -f|--tail-depth and --tail-nodes: give only one
	-d 6 -m 3 --tail-depth 0 -f|--tail-depth 0: too small
	-d 6 -m 3 --tail-nodes x -f|--tail-nodes x: not a whole number
	EOF
}

@test "terminal positions are scored without the engine" {
	fens "$MATED" "$STALEMATE" > in.pos
	FAKE_LOG=log run uci-eval -d 5 -j 1 -e "$FAKE" in.pos -o out.pos
	assert_success
	assert_output --partial "2 terminal"
	run posdump --fields eval out.pos
	assert_line --index 0 --partial "src=terminal limit=depth:5 score=mate:0 wdl=0,0,1000"
	assert_line --index 1 --partial "src=terminal limit=depth:5 score=cp:0 wdl=0,1000,0"
	# the engine may not even have started: the log is empty or has no go
	[ "$(cat log 2>/dev/null | grep -c '^go')" -eq 0 ]
}

@test "Chess960 positions are sent with UCI_Chess960 and castle king-takes-rook" {
	fens "$C960" > in.pos
	run uci-eval -d 4 -j 1 -m all in.pos -o out.pos
	assert_success
	legal=$(printf 'setoption name UCI_Chess960 value true\nposition fen %s\ngo perft 1\n' "$C960" |
	    "$SF" | sed -n 's/^Nodes searched: //p')
	[ "$legal" -gt 20 ]
	run posdump --fields movescores out.pos
	assert_output --partial "complete n=$legal "
	FAKE_LOG=log uci-eval -d 1 -j 1 -e "$FAKE" in.pos > /dev/null 2>&1
	grep -q '^setoption name UCI_Chess960 value true$' log
}

@test "invalid positions never reach the engine: flagged, named, exit 1" {
	fens "$START" "$KIWIPETE" "$MATE_IN_1" | "$BADPOS" 2 > in.pos
	FAKE_LOG=log run uci-eval -d 1 -j 1 -e "$FAKE" in.pos -o out.pos
	assert_failure 1
	assert_output --partial "in.pos: record 2: invalid position"
	[ "$(grep -c '^position' log)" -eq 2 ]
	run sh -c "posdump --fields flags out.pos 2>/dev/null"
	assert_line --index 1 "flags=last,eval_failed"
	[ "${#lines[@]}" -eq 3 ]
	run uci-eval -d 1 -j 1 -e "$FAKE" --drop-failed in.pos -o out2.pos
	assert_failure 1
	assert_output --partial "2 records (1 failed ones dropped): "
	[ "$(posdump -c out2.pos 2>/dev/null | cut -d' ' -f1)" -eq 2 ]
}

@test "empty input gives an empty stream" {
	: > empty
	run uci-eval -d 1 -j 1 -e "$FAKE" empty -o out.pos
	assert_success
	run posdump -c out.pos
	assert_output "0 out.pos"
	uci-eval -d 1 -j 1 -e "$FAKE" < empty > out2.pos 2>/dev/null
	[ "$(posdump -c out2.pos | cut -d' ' -f1)" -eq 0 ]
}

@test "concatenated streams and several operands" {
	fens "$START" > a.pos
	fens "$KIWIPETE" "$MATE_IN_1" > b.pos
	cat a.pos b.pos | uci-eval -d 1 -j 1 -e "$FAKE" > out.pos 2>/dev/null
	[ "$(posdump -c out.pos | cut -d' ' -f1)" -eq 3 ]
	uci-eval -d 1 -j 1 -e "$FAKE" a.pos - < b.pos > out2.pos 2>/dev/null
	posdump --fields fen,eval out.pos > x
	posdump --fields fen,eval out2.pos > y
	cmp x y
}

@test "corrupt input: exit 1, the block named, records before it written" {
	games 1 200 > one.pos
	# two blocks: a good one, then a damaged one
	{ cat one.pos; cat one.pos; } > two.pos
	n=$(posdump -c one.pos | cut -d' ' -f1)
	size=$(stat -c %s one.pos)
	# flip a byte inside the second stream's first block payload
	cp two.pos bad.pos
	printf '\xff' | dd of=bad.pos bs=1 seek=$((size + 16 + 24 + 100)) conv=notrunc 2>/dev/null
	run uci-eval -d 1 -j 1 -e "$FAKE" bad.pos -o out.pos
	assert_failure 1
	assert_output --partial "bad.pos: "
	assert_output --partial "block"
	[ "$(posdump -c out.pos | cut -d' ' -f1)" -eq "$n" ]
}

@test "truncated input: exit 1, every complete record before the cut written" {
	fens "$START" "$KIWIPETE" "$MATE_IN_1" > in.pos
	size=$(stat -c %s in.pos)
	head -c $((size - 40)) in.pos > cut.pos
	run uci-eval -d 1 -j 1 -e "$FAKE" cut.pos -o out.pos
	assert_failure 1
	assert_output --regexp "cut.pos: truncated .* after record [0-9]+"
	got=$(posdump -c out.pos | cut -d' ' -f1)
	want=$(posdump -c cut.pos 2>/dev/null | cut -d' ' -f1)
	[ "$got" -ge 1 ]
	[ "$got" -eq "$want" ]
}

@test "--skip-done: a rerun over its own output searches nothing" {
	games 1 10 > in.pos
	uci-eval -d 2 -j 1 -e "$FAKE" in.pos > once.pos 2>/dev/null
	FAKE_LOG=log run uci-eval -d 2 -j 1 -e "$FAKE" --skip-done once.pos -o twice.pos
	assert_success
	assert_output --partial "0 searched"
	assert_output --partial "10 skipped"
	cmp <(posdump once.pos) <(posdump twice.pos)
	[ "$(cat log 2>/dev/null | grep -c '^go')" -eq 0 ]
	# another limit is not "done"
	run uci-eval -d 3 -j 1 -e "$FAKE" --skip-done once.pos -o thrice.pos
	assert_success
	[ "$(posdump --fields eval thrice.pos | grep -o 'eval{' | wc -l)" -eq 20 ]
}

@test "--skip-done -m 1: an evaluation made without -m (the same multipv, no table) is searched again" {
	games 1 4 > in.pos
	uci-eval -d 2 -j 1 -e "$FAKE" in.pos > plain.pos 2>/dev/null
	run uci-eval -d 2 -m 1 -j 1 -e "$FAKE" --skip-done plain.pos -o one.pos
	assert_success
	assert_output --partial "4 searched"
	[ "$(posdump one.pos | grep -c 'movescores{')" -eq 4 ]
	# its own output is done; and -m 1's is done without -m
	run uci-eval -d 2 -m 1 -j 1 -e "$FAKE" --skip-done one.pos -o two.pos
	assert_output --partial "0 searched"
	assert_output --partial "4 skipped"
	run uci-eval -d 2 -j 1 -e "$FAKE" --skip-done one.pos -o three.pos
	assert_output --partial "4 skipped"
}

@test "duplicates are searched once; --cache persists across runs and survives a torn tail" {
	fens "$START" "$KIWIPETE" > a.pos
	cat a.pos a.pos a.pos > in.pos
	run uci-eval -d 5 -j 1 in.pos -o m.pos
	assert_success
	assert_output --partial "6 records: 2 searched, 4 cache hits (66.7%)"
	run uci-eval -d 5 -j 1 --cache c.db a.pos -o first.pos
	assert_output --partial "2 searched, 0 cache hits"
	run uci-eval -d 5 -j 1 --cache c.db a.pos -o second.pos
	assert_success
	assert_output --partial "0 searched, 2 cache hits (100.0%)"
	cmp <(posdump first.pos) <(posdump second.pos)	# nodes, time too
	# a crash mid-write: the last entry is torn, only it is lost
	truncate -s -7 c.db
	run uci-eval -d 5 -j 1 --cache c.db a.pos -o third.pos
	assert_success
	assert_output --partial "cut off a torn tail"
	assert_output --partial "1 searched, 1 cache hits"
	# the entry that survived is the same evaluation; the lost one is redone
	[ "$(scores third.pos | head -n 1)" = "$(scores first.pos | head -n 1)" ]
	[ "$(scores third.pos | wc -l)" -eq 2 ]
	# a twin is the whole FEN: another half-move clock is another search
	# (Stockfish scales its score by the clock, and a clock at 100 is a
	# draw), and so is another full-move number (see below)
	K='8/8/4k3/8/8/3K4/3Q4/8 w - -'
	fens "$K 0 60" "$K 0 60" "$K 95 60" "$K 0 70" "$K 95 60" > k.pos
	run uci-eval -d 8 -j 1 --newgame position k.pos -o k.out
	assert_success
	assert_output --partial "5 records: 3 searched, 2 cache hits"
	run scores k.out
	[ "${lines[0]}" = "${lines[1]}" ] && [ "${lines[0]}" = "${lines[3]}" ]
	[ "${lines[2]}" = "${lines[4]}" ] && [ "${lines[2]}" != "${lines[0]}" ]
	read -r u a _ <<< "${lines[0]}"
	read -r v b _ <<< "${lines[2]}"
	[ "$u $v" = "cp cp" ] && [ "$a" -gt 300 ] && [ "$b" -lt 50 ] ||
		fail "${lines[*]}"
	# another limit misses
	run uci-eval -d 4 -j 1 --cache c.db a.pos -o other.pos
	assert_output --partial "2 searched, 0 cache hits"
	echo "this is not a cache file at all" > notcache
	run uci-eval -d 4 -j 1 --cache notcache a.pos -o x.pos
	assert_failure 1
	assert_output --partial "not a posflow evaluation cache"
	echo junk > notcache
	run uci-eval -d 4 -j 1 --cache notcache a.pos -o x.pos
	assert_failure 1
	assert_output --partial "not a posflow evaluation cache"
}

@test "Stockfish: the same position at another move number is another search (its W/D/L depends on the move number)" {
	P='r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2'
	fens "$P 3" "$P 40" "$P 3" > in.pos
	run uci-eval -d 8 -j 1 --newgame position --no-time --cache c.db in.pos -o out.pos
	assert_success
	assert_output --partial "3 records: 2 searched, 1 cache hits"
	# each W/D/L is the one Stockfish reports for its own FEN
	for n in 3 40; do
		printf 'uci\nsetoption name UCI_ShowWDL value true\nposition fen %s %s\ngo depth 8\n' "$P" "$n" |
		    (cat; sleep 2) | timeout 20 "$SF" |
		    sed -n 's/^info depth 8 .* wdl \([0-9]*\) \([0-9]*\) \([0-9]*\) .*/\1,\2,\3/p' | tail -n 1
	done > want
	posdump --fields eval out.pos | sed -n 's/.* wdl=\([0-9,]*\) .*/\1/p' > got
	[ "$(sed -n 1p got)" = "$(sed -n 1p want)" ] || fail "$(cat got want)"
	[ "$(sed -n 2p got)" = "$(sed -n 2p want)" ] || fail "$(cat got want)"
	[ "$(sed -n 3p got)" = "$(sed -n 1p want)" ] || fail "$(cat got want)"
	[ "$(sed -n 1p want)" != "$(sed -n 2p want)" ]
	# and from the cache file
	fens "$P 40" > b.pos
	run uci-eval -d 8 -j 1 --no-time --cache c.db b.pos -o b.out
	assert_output --partial "0 searched, 1 cache hits"
	[ "$(posdump --fields eval b.out | sed -n 's/.* wdl=\([0-9,]*\) .*/\1/p')" = "$(sed -n 2p want)" ]
}

@test "--history: each position goes to the engine with its game's moves since the last capture or pawn move" {
	# a pawn move begins the history again; another game, and a gap in
	# a game's plies, begin it with the position alone
	{
		printf '[Event "a"]\n\n1. Nf3 Nf6 2. e4 Nc6 3. Ng1 *\n\n'
		printf '[Event "b"]\n\n1. Nc3 d5 2. Nb1 Nf6 3. Nc3 Ng8 *\n'
	} | pgn2pos 2>/dev/null | posfilter 'ply != 5 || last' > in.pos 2>/dev/null
	FAKE_LOG=log run uci-eval --history -d 1 -j 1 --cache-mem 0 -e "$FAKE" in.pos -o out.pos
	assert_success
	S='rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
	E='rnbqkb1r/pppppppp/5n2/8/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 0 2'
	D='rnbqkbnr/ppp1pppp/8/3p4/8/2N5/PPPPPPPP/R1BQKBNR w KQkq'
	run grep '^position' log
	assert_output "position fen $S
position fen $S moves g1f3
position fen $S moves g1f3 g8f6
position fen $E
position fen $E moves b8c6
position fen $E moves b8c6 f3g1
position fen $S
position fen $S moves b1c3
position fen $D - 0 2
position fen $D - 0 2 moves c3b1
position fen $D - 0 2 moves c3b1 g8f6
position fen $D - 4 4"
	# without it, every position alone
	rm log
	FAKE_LOG=log uci-eval -d 1 -j 1 --cache-mem 0 -e "$FAKE" in.pos > /dev/null 2>&1
	[ "$(grep -c ' moves ' log)" -eq 0 ]
}

@test "--history: Stockfish sees a threefold repetition; twins by other moves are other searches" {
	# two rooks against a knight; the knight and a rook shuttle, and the
	# position after 44... Nb8 45. Ra1 (ply 10) has been there twice:
	# Nc6 repeats a position a third time, a draw
	printf '[Event "r"]\n[FEN "7k/8/2n5/8/8/8/3R4/1R4K1 b - - 0 40"]\n\n40... Nb8 41. Ra1 Nc6 42. Rb1 Nb8 43. Ra1 Nc6 44. Rb1 Nb8 45. Ra1 Nc6 46. Rb1 *\n' |
		pgn2pos > r.pos 2>/dev/null
	uci-eval -d 10 -j 1 r.pos -o plain.pos 2>/dev/null
	uci-eval --history -d 10 -j 1 r.pos -o hist.pos 2>/dev/null
	p10=$(posdump --fields ply,eval plain.pos | awk '$1 == "ply=10"' | grep -o 'score=[^ ]*')
	h10=$(posdump --fields ply,eval hist.pos | awk '$1 == "ply=10"' | grep -o 'score=[^ ]*')
	h2=$(posdump --fields ply,eval hist.pos | awk '$1 == "ply=2"' | grep -o 'score=[^ ]*')
	[ "$h10" = "score=cp:0" ] || fail "with the moves: $h10"
	[[ "$p10" =~ ^score=cp:-([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -gt 300 ] || fail "alone: $p10"
	# the first time there, nothing repeats yet
	[[ "$h2" =~ ^score=cp:-([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -gt 300 ] || fail "ply 2: $h2"
	# one position, one clock, reached by other moves (ply 4): alone,
	# twins (one search); with the moves, two.  The start positions are
	# twins either way.
	{
		printf '[Event "a"]\n\n1. Nf3 Nf6 2. Nc3 Nc6 *\n\n'
		printf '[Event "b"]\n\n1. Nc3 Nc6 2. Nf3 Nf6 *\n'
	} | pgn2pos > tw.pos 2>/dev/null
	run uci-eval -d 4 -j 1 tw.pos -o /dev/null
	assert_output --partial "10 records: 8 searched, 2 cache hits"
	run uci-eval --history -d 4 -j 1 tw.pos -o /dev/null
	assert_output --partial "10 records: 9 searched, 1 cache hits"
}

@test "ucinewgame only when the game changes, hash kept within a game" {
	games 3 8 > in.pos
	FAKE_LOG=log run uci-eval -d 1 -j 1 --cache-mem 0 -e "$FAKE" in.pos -o out.pos
	assert_success
	[ "$(grep -c '^ucinewgame' log)" -eq 3 ]
	[ "$(grep -c '^go depth 1' log)" -eq 24 ]
	# each ucinewgame is followed by a new game's first position
	run awk '/^ucinewgame/{n=1; next} n && /^position/{print; n=0}' log
	[ "${#lines[@]}" -eq 3 ]
	for never in --no-newgame '--newgame never'; do
		rm log
		# shellcheck disable=SC2086
		FAKE_LOG=log uci-eval -d 1 -j 1 --cache-mem 0 $never -e "$FAKE" in.pos > /dev/null 2>&1
		[ "$(grep -c '^ucinewgame' log)" -eq 0 ]
		[ "$(grep -c '^go depth 1' log)" -eq 24 ]
	done
	# --newgame position: a ucinewgame (and isready) before every search
	rm log
	FAKE_LOG=log FAKE_LOG_PID=1 uci-eval -d 1 -j 2 --cache-mem 0 --newgame position -e "$FAKE" in.pos > /dev/null 2>&1
	[ "$(grep -c ': ucinewgame$' log)" -eq 24 ]
	# each engine's every search follows its own ucinewgame
	run awk '$2 == "ucinewgame" { n[$1] = 1; next }
	    $2 == "go" { if (!n[$1]) print "go without ucinewgame"; n[$1] = 0 }' log
	assert_output ''
	# one-position games (as pgn2pos --epd makes them) share the hash
	rm log
	fens "$START" "$KIWIPETE" > e.pos
	FAKE_LOG=log uci-eval -d 1 -j 1 -e "$FAKE" e.pos > /dev/null 2>&1
	[ "$(grep -c '^ucinewgame' log)" -eq 0 ]
	rm log
	FAKE_LOG=log uci-eval -d 1 -j 1 --newgame position -e "$FAKE" e.pos > /dev/null 2>&1
	[ "$(grep -c '^ucinewgame' log)" -eq 2 ]
}

# The stretches of positions each engine got, from a FAKE_LOG_PID log:
# one line per stretch, "new" when it began with ucinewgame, "cont" when
# it began without, then each position's first four FEN fields; sorted.
segments() {
	awk '{ pid = $1; sub(/^[0-9]+: /, "")
	    if ($0 == "ucinewgame") {
		if (s[pid] != "") print s[pid]
		s[pid] = "new"
	    } else if ($1 == "position") {
		if (s[pid] == "") s[pid] = "cont"
		s[pid] = s[pid] " " $3 "_" $4 "_" $5 "_" $6
	    }
	} END { for (p in s) if (s[p] != "") print s[p] }' "$1" | sort
}

# What segments() must find for input $1: each game one stretch, from a
# ucinewgame, of its positions in order; with $2 = 1 (duplicates merged)
# without any position an earlier record of the input holds.
expected_segments() {
	posdump --fields game,fen "$1" | awk -v dedup="$2" '
	    { key = $2 "_" $3 "_" $4 "_" $5
	      if ($1 != g) { if (s != "") print s; s = ""; g = $1 }
	      if (dedup && (key in seen)) next
	      seen[key] = 1; s = (s == "" ? "new" : s) " " key }
	    END { if (s != "") print s }' | sort
}

@test "a game is searched by one engine, in order, at any -j; a duplicate is searched only where it first occurs" {
	# engines of uneven speed and a small window: the conditions under
	# which runs used to be split (an idle engine took another's game)
	awk '/^\[Event /{g++} g<=12' "$TESTDATA/lichess_db_100k.pgn" > g.pgn
	pgn2pos --max-plies 24 g.pgn > in.pos 2>/dev/null
	[ "$(posdump --fields game in.pos | sort -u | wc -l)" -eq 12 ]
	expected_segments in.pos 1 > want
	expected_segments in.pos 0 > want-all
	# the games share their openings: merging duplicates matters here
	[ "$(wc -w < want)" -lt "$(($(wc -w < want-all) - 24))" ]
	for j in 1 2 3; do
		for window in 6 4096; do
			rm -f log
			FAKE_LOG=log FAKE_LOG_PID=1 FAKE_GO_JITTER=4 uci-eval -d 1 -j "$j" \
			    --window "$window" -e "$FAKE" in.pos -o out.pos 2>/dev/null
			segments log > got
			diff want got || fail "-j $j --window $window: runs split or duplicates searched"
			rm -f log
			FAKE_LOG=log FAKE_LOG_PID=1 FAKE_GO_JITTER=4 uci-eval -d 1 -j "$j" \
			    --window "$window" --cache-mem 0 -e "$FAKE" in.pos -o out.pos 2>/dev/null
			segments log > got
			diff want-all got || fail "-j $j --window $window --cache-mem 0: runs split"
		done
	done
	# every record written, in input order
	cmp <(posdump --fields game,ply,fen in.pos) <(posdump --fields game,ply,fen out.pos)
}

@test "a duplicate in a later game copies the first occurrence's result at any -j" {
	# a game, then another, then the second again under another game id
	awk '/^\[Event /{g++} g==5' "$TESTDATA/lichess_db_100k.pgn" > a.pgn
	awk '/^\[Event /{g++} g==3' "$TESTDATA/lichess_db_100k.pgn" > b.pgn
	sed 's/^\[Site .*/[Site "copy"]/' b.pgn > copy.pgn
	cat a.pgn b.pgn copy.pgn > g.pgn
	pgn2pos --max-plies 16 g.pgn > in.pos 2>/dev/null
	posdump --fields game in.pos | uniq > ids
	[ "$(wc -l < ids)" -eq 3 ]
	for j in 1 2 3; do
		rm -f log
		FAKE_LOG=log FAKE_LOG_PID=1 FAKE_GO_JITTER=6 uci-eval -d 1 -j "$j" \
		    -e "$FAKE" in.pos -o out.pos 2>/dev/null
		# the copy never reaches an engine: the engines got the first
		# two games' new positions, each game from one engine
		diff <(expected_segments in.pos 1) <(segments log)
		# its records carry the evaluations of the game it copies
		posdump --fields game,eval out.pos > evals
		grep -c "$(sed -n 3p ids)" evals | grep -qx 16
		cmp <(grep "$(sed -n 2p ids)" evals | cut -d' ' -f2-) \
		    <(grep "$(sed -n 3p ids)" evals | cut -d' ' -f2-)
	done
}

@test "Stockfish: -j 2 and -j 3 write what -j 1 writes, every field but the search time" {
	awk '/^\[Event /{g++} g<=8' "$TESTDATA/lichess_db_100k.pgn" > g.pgn
	pgn2pos --max-plies 60 g.pgn > in.pos 2>/dev/null
	notime() { posdump --json "$1" | sed 's/"time_ms":[0-9]*,//g'; }
	uci-eval -d 6 -j 1 in.pos -o j1.pos 2>/dev/null
	notime j1.pos > want
	[ "$(grep -c '"source":"engine"' want)" -gt 300 ]
	for j in 2 3; do
		uci-eval -d 6 -j "$j" --window 16 in.pos -o j.pos 2>/dev/null
		notime j.pos > got
		diff want got > /dev/null || fail "-j $j: $(diff want got | grep -c '^>') records differ"
	done
	# the same with every legal move scored
	uci-eval -d 4 -m all -j 1 in.pos -o m1.pos 2>/dev/null
	uci-eval -d 4 -m all -j 2 in.pos -o m2.pos 2>/dev/null
	cmp <(notime m1.pos) <(notime m2.pos)
}

@test "Stockfish: EPD with --newgame position equals a fresh engine per position, at any -j" {
	awk '/^\[Event /{g++} g<=6' "$TESTDATA/lichess_db_100k.pgn" > g.pgn
	pgn2pos g.pgn 2>/dev/null | posdump --fields fen | awk 'NR % 23 == 5' | head -n 12 > in.epd
	[ "$(wc -l < in.epd)" -eq 12 ]
	pgn2pos --epd in.epd > in.pos 2>/dev/null
	notime() { posdump --json "$@" | sed 's/"time_ms":[0-9]*,//g'; }
	while read -r fen; do
		echo "$fen" > one.epd
		pgn2pos --epd one.epd 2>/dev/null | uci-eval -d 8 -j 1 2>/dev/null | notime
	done < in.epd > fresh
	[ "$(wc -l < fresh)" -eq 12 ]
	for j in 1 2; do
		uci-eval -d 8 -j "$j" --newgame position in.pos -o out.pos 2>/dev/null
		diff fresh <(notime out.pos) > /dev/null || fail "-j $j: not a fresh engine's results"
	done
	# without it, results depend on what the engine searched before
	uci-eval -d 8 -j 1 in.pos -o game.pos 2>/dev/null
	! diff -q fresh <(notime game.pos) > /dev/null
}

@test "engine crash: restarted, position retried, nothing lost" {
	games 2 10 > in.pos
	FAKE_CRASH_AFTER=3 run uci-eval -d 1 -j 2 -e "$FAKE" in.pos -o out.pos
	assert_success
	assert_output --partial "killed by signal 6"
	assert_output --regexp "[1-9][0-9]* restarts"
	[ "$(posdump --fields eval out.pos | grep -c 'src=engine')" -eq 20 ]
	cmp <(posdump --fields game,ply in.pos) <(posdump --fields game,ply out.pos)
}

@test "an engine that dies names what it said in the search (info string), and only that search's" {
	games 1 6 > in.pos
	# it says a line at every search, and dies at the third
	FAKE_SAY="ERROR: net file not loaded" FAKE_CRASH_AFTER=2 run uci-eval -d 1 -j 1 -e "$FAKE" in.pos -o out.pos
	assert_success
	assert_line --regexp 'uci-eval: in.pos: record 3: engine 1 \(pid [0-9]+\): engine died or closed its output during a search; it said "ERROR: net file not loaded" \(killed by signal 6\)$'
	refute_output --partial 'loaded / '
	# a long one is cut, marked
	long=$(printf 'x%.0s' $(seq 500))
	FAKE_SAY="$long" FAKE_CRASH_AFTER=0 run uci-eval -d 1 -j 1 --retries 0 -e "$FAKE" in.pos -o out.pos
	assert_failure 1
	assert_output --partial "it said \"xxxx"
	assert_output --partial 'xxx..." (killed by signal 6)'
	# a hang says nothing of it
	FAKE_SAY="hello" FAKE_HANG_AFTER=1 run uci-eval -d 1 -j 1 --timeout 300 -e "$FAKE" in.pos -o out.pos
	assert_output --partial "no bestmove in time (hung)"
	refute_output --partial "hello"
}

@test "an engine that fails every search and has made none is given up after jobs + 2 positions, not tried on every record" {
	games 3 10 > in.pos
	FAKE_CRASH_AFTER=0 run uci-eval -d 1 -j 2 --retries 1 -e "$FAKE" in.pos -o out.pos
	assert_failure 1
	assert_output --partial "uci-eval: every search of the first 4 positions failed, and none succeeded: the engine cannot search (see its messages above); stopped"
	n=$(grep -c "evaluation failed after 2 attempts" <<< "$output")
	[ "$n" -ge 3 ] && [ "$n" -le 6 ] || fail "$n positions tried"
	# one that has searched goes on through its failures
	FAKE_CRASH_ON=" w " run uci-eval -d 1 -j 1 --retries 0 -e "$FAKE" in.pos -o out.pos
	assert_failure 1
	refute_output --partial "the engine cannot search"
	[ "$(posdump -c out.pos | cut -d' ' -f1)" -eq 30 ]
}

@test "engine hang: killed after --timeout, retried" {
	games 1 6 > in.pos
	FAKE_HANG_AFTER=2 run uci-eval -d 1 -j 1 --timeout 300 -e "$FAKE" in.pos -o out.pos
	assert_success
	assert_output --partial "no bestmove in time (hung)"
	[ "$(posdump --fields eval out.pos | grep -c 'src=engine')" -eq 6 ]
}

@test "engine garbage: harmless lines ignored, endless garbage is a fault" {
	games 1 6 > in.pos
	FAKE_GARBAGE=1 run uci-eval -d 1 -j 1 -e "$FAKE" in.pos -o out.pos
	assert_success
	assert_output --partial "0 restarts"
	[ "$(posdump --fields eval out.pos | grep -c 'src=engine')" -eq 6 ]
	FAKE_GARBAGE_AFTER=2 run uci-eval -d 1 -j 1 -e "$FAKE" in.pos -o out.pos
	assert_success
	assert_output --partial "unparsable lines"
	[ "$(posdump --fields eval out.pos | grep -c 'src=engine')" -eq 6 ]
}

@test "an endless line is a fault, not a hang" {
	games 1 4 > in.pos
	FAKE_LONG_LINE_AFTER=1 run uci-eval -d 1 -j 1 -e "$FAKE" in.pos -o out.pos
	assert_success
	assert_output --partial "engine line longer than"
	[ "$(posdump --fields eval out.pos | grep -c 'src=engine')" -eq 4 ]
}

@test "a fault with no retries left reports the engine's reason intact" {
	# The reason is the engine's own error text; it must outlive the
	# engine (a use-after-free under ASan before it was copied).
	games 1 1 > in.pos
	FAKE_LONG_LINE_AFTER=0 run --separate-stderr uci-eval -d 1 \
		--retries 0 -e "$FAKE" in.pos -o out.pos
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"record 1: evaluation failed after 1 attempts: engine line longer than 262144 bytes"* ]]
	[[ "$stderr" != *AddressSanitizer* ]]
	run posdump --fields flags out.pos
	assert_output "flags=eval_failed"
}

@test "wrong bestmove and closed output: restarted and retried" {
	games 1 6 > in.pos
	FAKE_BAD_BESTMOVE_AFTER=2 run uci-eval -d 1 -j 1 -e "$FAKE" in.pos -o out.pos
	assert_success
	assert_output --partial 'illegal bestmove "a1a1"'
	[ "$(posdump --fields eval out.pos | grep -c 'src=engine')" -eq 6 ]
	FAKE_CLOSE_AFTER=2 run uci-eval -d 1 -j 1 -e "$FAKE" in.pos -o out.pos
	assert_success
	assert_output --partial "closed its output"
	[ "$(posdump --fields eval out.pos | grep -c 'src=engine')" -eq 6 ]
}

@test "blanks around readyok and uciok are allowed, as UCI allows them between tokens" {
	games 1 4 > in.pos
	printf '#!/bin/sh\n"%s" | sed -u "s/^readyok$/ readyok \\t/; s/^uciok$/uciok /"\n' \
	    "$FAKE" > blanks.sh
	chmod +x blanks.sh
	# isready at the start, then ucinewgame's isready
	run timeout 60 uci-eval -d 1 -j 1 --timeout 300 -e ./blanks.sh in.pos -o out.pos
	assert_success
	assert_output --partial "0 restarts"
	[ "$(posdump --fields eval out.pos | grep -c 'src=engine')" -eq 4 ]
}

@test "a score of mate 0 (the side to move mated) for a position with moves is no score" {
	fens "$START" > in.pos
	printf '#!/bin/sh\n"%s" | sed -u "s/score cp 100 /score mate 0 /"\n' \
	    "$FAKE" > mate0.sh
	chmod +x mate0.sh
	run timeout 60 uci-eval -d 1 -j 1 --retries 0 -e ./mate0.sh in.pos -o out.pos
	assert_failure 1
	assert_output --partial "in.pos: record 1: evaluation failed after 1 attempts: bestmove without a score line"
	run posdump --fields flags,eval out.pos
	assert_output "flags=last,eval_failed"
}

@test "a W/D/L that does not sum to 1000 (an engine rounding each) is left out; its score is kept" {
	fens "$START" "$KIWIPETE" > in.pos
	printf '#!/bin/sh\n"%s" | sed -u "s/wdl 300 400 300/wdl 300 400 299/"\n' \
	    "$FAKE" > wdl999.sh
	chmod +x wdl999.sh
	run timeout 60 uci-eval -d 1 -j 1 --retries 0 -e ./wdl999.sh in.pos -o out.pos
	assert_success
	assert_output --partial "2 searched"
	assert_output --partial "0 failed, 0 restarts"
	run posdump --fields flags,eval out.pos
	[ "$(grep -c 'src=engine.* score=cp:100 depth=1 ' <<< "$output")" -eq 2 ] || fail "$output"
}

@test "slow start is waited for" {
	fens "$START" > in.pos
	FAKE_SLOW_START=1200 run uci-eval -d 1 -j 1 --timeout 200 -e "$FAKE" in.pos -o out.pos
	assert_success
	assert_output --partial "0 restarts"
	assert_output --partial "1 searched"
}

@test "an engine given up leaves its game to the one left, also while that one waits for the rest of its own and the window is full" {
	games 3 4 > in.pos
	# engine 1 starts slowly and so takes the second game; engine 2
	# takes the first, hangs, and cannot be started again
	cat > flaky.sh <<-EOF
	#!/bin/sh
	n=1
	while ! mkdir "$PWD/spawn.\$n" 2>/dev/null; do n=\$((n + 1)); done
	case \$n in
	1) FAKE_SLOW_START=1000 exec "$FAKE" ;;
	2) FAKE_HANG_AFTER=0 exec "$FAKE" ;;
	esac
	exit 1
	EOF
	chmod +x flaky.sh
	# the window holds the first game and two records of the second
	run timeout 30 uci-eval -d 1 -j 2 --timeout 1500 --window 6 \
	    --cache-mem 0 -e ./flaky.sh in.pos -o out.pos
	assert_success
	assert_output --partial "giving up"
	assert_output --partial "12 records: 12 searched"
	[ "$(posdump -c out.pos | cut -d' ' -f1)" -eq 12 ]
}

@test "a position that always fails: flagged after --retries, or dropped" {
	fens "$START" "$KIWIPETE" "$MATE_IN_1" > in.pos
	FAKE_CRASH_ON=r3k2r run uci-eval -d 1 -j 1 --retries 1 -e "$FAKE" in.pos -o out.pos
	assert_failure 1
	assert_output --partial "in.pos: record 2: evaluation failed after 2 attempts"
	run posdump --fields flags,eval out.pos
	assert_line --index 0 --partial "src=engine"
	assert_line --index 1 "flags=last,eval_failed"
	assert_line --index 2 --partial "src=engine"
	FAKE_CRASH_ON=r3k2r run uci-eval -d 1 -j 1 --retries 0 --drop-failed -e "$FAKE" in.pos -o out2.pos
	assert_failure 1
	assert_output --partial "1 failed"
	[ "$(posdump -c out2.pos | cut -d' ' -f1)" -eq 2 ]
}

@test "an engine that cannot start: exit 1, clear message" {
	fens "$START" > in.pos
	run uci-eval -d 1 -j 1 -e /nonexistent/engine in.pos -o out.pos
	assert_failure 1
	assert_output --partial "cannot run /nonexistent/engine"
	assert_output --partial "no engine left"
	run uci-eval -d 1 -j 1 -e "$FAKE" -O NoSuchOption=1 in.pos -o out.pos
	assert_failure 1
	assert_output --partial 'no option "NoSuchOption"'
}

@test "-O values the engine's option does not allow are refused before they reach it" {
	fens "$START" > in.pos
	# Stockfish 15.1 aborts on "setoption name Hash value abc".
	while IFS='|' read -r opt msg; do
		run uci-eval -d 1 -j 1 -e "$SF" -O "$opt" in.pos -o out.pos
		[ "$status" -eq 1 ] || fail "-O $opt: status $status"
		[[ "$output" == *"uci-eval: -O $opt: $msg"* ]] || fail "-O $opt: $output"
		[[ "$output" != *terminate* && "$output" == *" 0 restarts"* ]] || fail "-O $opt reached the engine: $output"
	done <<-'EOF'
	Hash=abc|"Hash" takes a whole number from 1 to
	Hash=0|"Hash" takes a whole number from 1 to
	Hash|"Hash" needs a value
	Ponder=yes|"Ponder" takes true or false
	Clear Hash=1|"Clear Hash" is a button: give no value
	EOF
	for opt in Hash=8 "Clear Hash" Ponder=false; do
		run uci-eval -d 1 -j 1 -e "$SF" -O "$opt" in.pos -o out.pos
		[ "$status" -eq 0 ] || fail "-O $opt: status $status: $output"
	done
}

@test "SIGTERM: engines stopped, finished records written, exit 1, no leftovers" {
	games 1 10 > in.pos
	FAKE_HANG_AFTER=3 FAKE_LOG=log uci-eval -d 1 -j 1 --timeout 60000 -e "$FAKE" in.pos > out.pos 2> err &
	pid=$!
	for i in $(seq 50); do grep -q '^go' log 2>/dev/null && [ "$(grep -c '^go' log)" -ge 4 ] && break; sleep 0.1; done
	sleep 0.3
	kill -TERM "$pid"
	st=0
	wait "$pid" || st=$?
	[ "$st" -eq 1 ]
	grep -q "interrupted by signal 15: 7 records read but not written" err
	[ "$(posdump -c out.pos | cut -d' ' -f1)" -eq 3 ]
	# no engine left behind, not even a zombie (uci-eval reaped it)
	for p in $(sed -n 's/^# pid //p' log); do
		run kill -0 "$p"
		assert_failure
	done
}

@test "SIGTERM at -j 2: the summary counts the finished records that waited for earlier ones apart from those written" {
	# two games, one to each engine; each engine hangs at its 4th search:
	# game 1's first 3 written, game 2's first 3 finished but waiting
	games 2 10 > in.pos
	FAKE_HANG_AFTER=3 FAKE_LOG=log uci-eval -d 1 -j 2 --cache-mem 0 --timeout 60000 -e "$FAKE" in.pos > out.pos 2> err &
	pid=$!
	for i in $(seq 50); do [ "$(cat log 2>/dev/null | grep -c '^go')" -ge 8 ] && break; sleep 0.1; done
	sleep 0.3
	kill -TERM "$pid"
	st=0
	wait "$pid" || st=$?
	[ "$st" -eq 1 ]
	grep -q "interrupted by signal 15: 17 records read but not written" err || fail "$(cat err)"
	grep -q "uci-eval: 3 records written, 3 more finished but not written: 6 searched, 0 cache hits" err || fail "$(cat err)"
	[ "$(posdump -c out.pos 2>/dev/null | cut -d' ' -f1)" -eq 3 ]
}

@test "input from a pipe that stays open: every record written; SIGINT ends the wait" {
	games 3 30 > in.pos
	n=$(posdump -c in.pos | cut -d' ' -f1)
	mkfifo fifo
	FAKE_LOG=log uci-eval -d 1 -j 2 -e "$FAKE" -o out.pos < fifo 2> err &
	pid=$!
	exec 7> fifo		# the producer stays: no end of input
	cat in.pos >&7
	got=0
	for i in $(seq 100); do
		got=$(posdump -c out.pos 2>/dev/null | cut -d' ' -f1)
		[ "$got" -eq "$n" ] && break
		sleep 0.1
	done
	[ "$got" -eq "$n" ] || fail "$got of $n records written while the input waits"
	kill -INT "$pid"
	for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		exec 7>&-
		fail "uci-eval still waits for input after SIGINT"
	fi
	exec 7>&-
	st=0
	wait "$pid" || st=$?
	[ "$st" -eq 1 ]
	grep -q "interrupted by signal 2: 0 records read but not written" err
	# every finished record kept, but no end block: the run was cut
	run posdump -c out.pos
	assert_failure 1
	assert_output --partial "$n out.pos"
	assert_output --partial "truncated"
	for p in $(sed -n 's/^# pid //p' log); do
		run kill -0 "$p"
		assert_failure
	done
}

@test "uci-eval killed with SIGKILL: its engines die with it" {
	games 1 10 > in.pos
	FAKE_HANG_AFTER=1 FAKE_LOG=log uci-eval -d 1 -j 2 --timeout 60000 -e "$FAKE" in.pos > out.pos 2> err &
	pid=$!
	for i in $(seq 50); do [ "$(grep -c '^# pid' log 2>/dev/null)" -ge 2 ] && break; sleep 0.1; done
	pids=$(sed -n 's/^# pid //p' log)
	[ "$(echo "$pids" | wc -w)" -eq 2 ]
	for p in $pids; do kill -0 "$p"; done
	kill -KILL "$pid"
	wait "$pid" || true
	for i in $(seq 50); do
		alive=0
		for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ "$alive" -eq 0 ] && break
		sleep 0.1
	done
	[ "$alive" -eq 0 ]
}

@test "closed downstream pipe ends quietly with status 0" {
	games 3 30 > in.pos
	run bash -c "uci-eval -d 1 -j 1 -e '$FAKE' in.pos 2>err | head -c 10 > /dev/null; echo \${PIPESTATUS[0]}"
	assert_output 0
	run grep -v "records:" err
	assert_output ""
}

@test "--progress reports on stderr; zstd output with -z" {
	games 1 10 > in.pos
	run uci-eval -d 1 -j 1 -e "$FAKE" --progress -z in.pos -o out.zst
	assert_success
	assert_output --regexp "uci-eval: [0-9]+ records, [0-9.]+ positions/s, engines [01]/1 busy"
	[ "$(head -c 4 out.zst | od -An -tx1 | tr -d ' ')" = "28b52ffd" ]
	[ "$(posdump -c out.zst | cut -d' ' -f1)" -eq 10 ]
}

@test "--no-time: search times written as 0, so that reruns write the same records" {
	games 2 30 > in.pos
	uci-eval -d 4 -j 2 --no-time -e "$SF" in.pos -o a.pos 2>/dev/null
	uci-eval -d 4 -j 1 --no-time -e "$SF" in.pos -o b.pos 2>/dev/null
	cmp <(posdump --json a.pos) <(posdump --json b.pos)
	[ "$(posdump --json a.pos | jq -s '[.[].exts[] | select(.type == "eval") | .time_ms] | unique')" = "[
  0
]" ]
	# without it the times are the engine's (and the rest the same)
	uci-eval -d 4 -j 1 -e "$SF" in.pos -o c.pos 2>/dev/null
	cmp <(posdump --json a.pos) <(posdump --json c.pos | sed 's/"time_ms":[0-9]*/"time_ms":0/g')
}

@test "--reproducible: one-position games and positions of no game each on its own, in any order" {
	pgn2pos --max-plies 60 "$TESTDATA/lichess_db_10k.pgn" 2>/dev/null |
	    posdump --fields fen | awk 'NR % 5 == 0 { print $1, $2, $3, $4 }' |
	    head -n 40 > a.epd
	tac a.epd > b.epd
	# one-position games (as pgn2pos makes of EPD), forward and reversed
	for f in a b; do
		pgn2pos $f.epd 2>/dev/null |
		    uci-eval -d 8 -j 1 --reproducible -e "$SF" 2>/dev/null |
		    posdump --json | jq -c '[.fen, (.exts[] | select(.type == "eval") | .cp, .nodes)]' |
		    sort > $f.txt
	done
	[ "$(wc -l < a.txt)" -eq 40 ]
	cmp a.txt b.txt
	# positions of no game (id 0)
	for f in a b; do
		sed 's/$/ 0 1/' $f.epd | "$BUILD_DIR/tests/tools/mkrec" |
		    uci-eval -d 8 -j 1 --reproducible -e "$SF" 2>/dev/null |
		    posdump --json | jq -c '[.fen, (.exts[] | select(.type == "eval") | .cp, .nodes)]' |
		    sort > $f.0.txt
	done
	cmp a.0.txt b.0.txt
	cmp a.txt a.0.txt
	# and not without ucinewgame
	run uci-eval -d 8 --reproducible --newgame never -e "$SF" /dev/null
	assert_failure 2
	assert_output --partial "--reproducible needs ucinewgame between games"
}

@test "--reproducible: the same records at any -j, from any game order, and after kills with --cache" {
	games 6 60 > in.pos
	uci-eval -d 7 -j 1 --reproducible -e "$SF" in.pos -o ref.pos 2>/dev/null
	uci-eval -d 7 -j 2 --reproducible -e "$SF" in.pos -o j2.pos 2>/dev/null
	cmp <(posdump --json ref.pos) <(posdump --json j2.pos)
	# a game evaluated alone gives what it gives among the others, its
	# positions shared with other games included (every game starts from
	# the same position)
	first=$(posdump --json in.pos | head -n 1 | jq -r .game)
	posdump --json ref.pos | jq -c "select(.game == \"$first\")" > want
	[ "$(wc -l < want)" -gt 10 ]
	uci-eval -d 7 --reproducible -e "$SF" <(pgn2pos --max-plies 60 \
	    <(awk '/^\[Event /{g++} g==1' "$TESTDATA/lichess_db_10k.pgn") 2>/dev/null) \
	    -o alone.pos 2>/dev/null
	cmp want <(posdump --json alone.pos)
	# killed at random points with a cache, then run to the end: the
	# records of the run that was never killed
	for i in 1 2 3; do
		uci-eval -d 7 --reproducible --cache c.cache -e "$SF" in.pos -o k.pos 2>/dev/null &
		pid=$!
		sleep "0.$(( RANDOM % 9 + 1 ))"
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" || true
	done
	run uci-eval -d 7 --reproducible --cache c.cache -e "$SF" in.pos -o k.pos
	assert_success
	cmp <(posdump --json ref.pos) <(posdump --json k.pos)
	# the cache holds whole games only: a rerun searches nothing
	run uci-eval -d 7 --reproducible --cache c.cache -e "$SF" in.pos -o again.pos
	assert_output --partial " 0 searched"
	cmp <(posdump --json ref.pos) <(posdump --json again.pos)
	# a game's entries are one group, taken whole or not at all: a write
	# torn anywhere in it (the file cut), or a byte of it damaged, loses
	# the whole game, which is searched again from its first position
	grep -q PFCG c.cache
	size=$(stat -c %s c.cache)
	for cut in 1 9 300; do
		cp c.cache t.cache
		truncate -s $((size - cut)) t.cache
		run uci-eval -d 7 --reproducible --cache t.cache -e "$SF" in.pos -o t.pos
		assert_success
		refute_output --partial " 0 searched"
		cmp <(posdump --json ref.pos) <(posdump --json t.pos)
	done
	cp c.cache t.cache
	printf '\125' | dd of=t.cache bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
	run uci-eval -d 7 --reproducible --cache t.cache -e "$SF" in.pos -o t.pos
	assert_success
	assert_output --partial "damaged bytes in the middle"
	cmp <(posdump --json ref.pos) <(posdump --json t.pos)
	# the header says version 2 (groups); a file of version 1, without
	# groups, is read and becomes version 2 before its first group
	[ "$(od -An -tu2 -j4 -N2 c.cache | tr -d ' ')" = 2 ]
	uci-eval -d 7 --cache v1.cache -e "$SF" in.pos -o /dev/null 2>/dev/null
	! grep -q PFCG v1.cache
	printf '\001' | dd of=v1.cache bs=1 seek=4 conv=notrunc 2>/dev/null
	run uci-eval -d 7 --cache v1.cache -e "$SF" in.pos -o v1.pos
	assert_output --partial " 0 searched"
	[ "$(od -An -tu2 -j4 -N2 v1.cache | tr -d ' ')" = 1 ]
	run uci-eval -d 7 --reproducible --cache v1.cache -e "$SF" in.pos -o /dev/null
	assert_success
	grep -q PFCG v1.cache
	[ "$(od -An -tu2 -j4 -N2 v1.cache | tr -d ' ')" = 2 ]
	run uci-eval -d 7 --cache v1.cache -e "$SF" in.pos -o v1b.pos
	assert_output --partial " 0 searched"
	cmp <(posdump --json v1.pos) <(posdump --json v1b.pos)
}

@test "--help, --version" {
	run --separate-stderr uci-eval --help
	assert_success
	assert_line --index 0 --partial "usage: uci-eval [-fhkVz]"
	[ -z "$stderr" ]
	# The same text as a usage error prints on stderr.
	help=$output
	run --separate-stderr uci-eval --bogus
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"$help" ]]
	run uci-eval --version
	assert_success
	assert_output --partial "uci-eval (posflow)"
}

@test "invalid calls: exit 2, usage on stderr, nothing on stdout" {
	fens "$START" > in.pos
	while read -r args; do
		eval "set -- $args"
		run bash -c 'uci-eval "$@" in.pos 2>/dev/null' _ "$@"
		[ "$status" -eq 2 ] || { echo "status $status for: $args"; false; }
		[ -z "$output" ] || { echo "stdout for: $args"; false; }
		run bash -c 'uci-eval "$@" in.pos 2>&1 >/dev/null' _ "$@"
		[[ "$output" == *"usage: uci-eval"* ]] || { echo "no usage for: $args"; false; }
		# A bad value names its option, long or short.
		case $args in
		*--*" "[!-]*)
			opt=${args#*--}; opt=--${opt%% *}
			[[ "$output" == *"uci-eval: $opt "* ]] ||
			    { echo "$opt not named: $output"; false; } ;;
		esac
	done <<-'EOF'
	-f
	-d 0 -f
	-d abc -f
	-d 5 -n 100 -f
	-n 0 -f
	-t -5 -f
	-d 3 -m 0 -f
	-d 3 -m 257 -f
	-d 3 -m 501 -f
	-d 3 --newgame sometimes -f
	-d 3 --newgame '' -f
	-d 3 -m some -f
	-d 3 -k -f
	-d 3 -j 0 -f
	-d 3 -j x -f
	-d 3 --retries -1 -f
	-d 3 --timeout 0 -f
	-d 3 --cache-mem lots -f
	-d 3 --cache-mem ' 5' -f
	-d 3 --cache-mem 1e3 -f
	-d 3 --cache-mem 0x10 -f
	-d 3 --window 0 -f
	-d 3 --tail-depth 2 -f
	-d 3 -m all --tail-depth 2 -f
	-d 3 -m 2 --tail-depth 3 -f
	-n 100 -m 2 --tail-nodes 100 -f
	-n 100 -m 2 --tail-depth 2 -f
	-d 3 -m 2 --tail-nodes 50 -f
	-d 3 -m 2 --tail-depth 2 --tail-nodes 50 -f
	-d 3 -m 2 --tail-depth 0 -f
	-d 3 -O =1 -f
	-d 3 --bogus -f
	EOF
}

# Invert the byte at offset $2 of file $1 in place.
flip_byte() {
	local b
	b=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
	printf "\\$(printf %o $((b ^ 255)))" |
	    dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

@test "--cache: an engine replaced at the same path (an upgrade) is another engine: searched again" {
	fens "$START" "$KIWIPETE" > a.pos
	cp "$FAKE" eng
	run uci-eval -e ./eng -d 5 -j 1 --cache c.db a.pos -o first.pos
	assert_success
	assert_output --partial "2 searched, 0 cache hits"
	run uci-eval -e ./eng -d 5 -j 1 --cache c.db a.pos -o second.pos
	assert_output --partial "0 searched, 2 cache hits"
	# the new version, at the same path
	printf 'x' >> eng
	run uci-eval -e ./eng -d 5 -j 1 --cache c.db a.pos -o third.pos
	assert_success
	assert_output --partial "2 searched, 0 cache hits"
	# found on PATH the same way
	run env PATH="$PWD:$PATH" uci-eval -e eng -d 5 -j 1 --cache c2.db a.pos -o p.pos
	assert_output --partial "2 searched, 0 cache hits"
	printf 'y' >> eng
	run env PATH="$PWD:$PATH" uci-eval -e eng -d 5 -j 1 --cache c2.db a.pos -o p.pos
	assert_output --partial "2 searched, 0 cache hits"
}

@test "--cache: a network changed at the same path (-O EvalFile=) is another engine; a file the engine writes is not" {
	fens "$START" "$KIWIPETE" > a.pos
	printf 'net 1' > my.nnue
	ev() { uci-eval -e "$FAKE" -d 5 -j 1 --cache c.db -O EvalFile=my.nnue "$@" a.pos -o out.pos; }
	run ev
	assert_output --partial "2 searched, 0 cache hits"
	run ev
	assert_output --partial "0 searched, 2 cache hits"
	# the next net, trained into the same file
	printf 'net 2' > my.nnue
	run ev
	assert_success
	assert_output --partial "2 searched, 0 cache hits"
	# a log the engine writes changes from run to run: still hits
	printf 'a' > dbg.log
	run ev -O "Debug Log File=dbg.log"
	assert_output --partial "2 searched, 0 cache hits"
	printf 'b' >> dbg.log
	run ev -O "Debug Log File=dbg.log"
	assert_output --partial "0 searched, 2 cache hits"
}

@test "--cache: -m 1 is not served the results of a run without -m (they have no table), nor the reverse" {
	fens "$START" "$KIWIPETE" > a.pos
	run uci-eval -d 2 -j 1 -e "$FAKE" --cache c.db a.pos -o plain.pos
	assert_success
	run uci-eval -d 2 -m 1 -j 1 -e "$FAKE" --cache c.db a.pos -o one.pos
	assert_success
	assert_output --partial "2 searched, 0 cache hits"
	[ "$(posdump one.pos | grep -c 'movescores{')" -eq 2 ]
	run uci-eval -d 2 -m 1 -j 1 -e "$FAKE" --cache c.db a.pos -o one2.pos
	assert_output --partial "0 searched, 2 cache hits"
	cmp one.pos one2.pos
	run uci-eval -d 2 -j 1 -e "$FAKE" --cache c.db a.pos -o plain2.pos
	assert_output --partial "0 searched, 2 cache hits"
	cmp plain.pos plain2.pos
}

@test "--cache: a damaged entry in the middle loses only that entry" {
	games 1 10 > in.pos
	run uci-eval -d 1 -j 1 -e "$FAKE" --cache c.db in.pos -o first.pos
	assert_success
	assert_output --partial "10 records: 10 searched, 0 cache hits"
	size=$(stat -c %s c.db)
	# one flipped byte in the value of the first entry (it starts at 16)
	flip_byte c.db 40
	run uci-eval -d 1 -j 1 -e "$FAKE" --cache c.db in.pos -o second.pos
	assert_success
	assert_output --partial "uci-eval: c.db: skipped 87 damaged bytes in the middle"
	assert_output --partial "10 records: 1 searched, 9 cache hits"
	cmp <(posdump first.pos) <(posdump second.pos)
	# nothing was cut: the redone entry was appended after the others
	[ "$(stat -c %s c.db)" -gt "$size" ]
	run uci-eval -d 1 -j 1 -e "$FAKE" --cache c.db in.pos -o third.pos
	assert_success
	assert_output --partial "10 records: 0 searched, 10 cache hits"
	cmp <(posdump first.pos) <(posdump third.pos)
	# a damaged entry head (magic, then length) and a torn tail
	rm c.db
	uci-eval -d 1 -j 1 -e "$FAKE" --cache c.db in.pos -o /dev/null \
	    2>/dev/null
	flip_byte c.db 16
	flip_byte c.db 110
	truncate -s -5 c.db
	run uci-eval -d 1 -j 1 -e "$FAKE" --cache c.db in.pos -o fourth.pos
	assert_success
	assert_output --partial "uci-eval: c.db: skipped "
	assert_output --partial "damaged bytes in the middle (they stay in the file; the entries around them are kept)"
	assert_output --partial "uci-eval: c.db: cut off a torn tail of "
	assert_output --partial "10 records: 3 searched, 7 cache hits"
	cmp <(posdump first.pos) <(posdump fourth.pos)
}

@test "--cache: a second process on the same file is refused" {
	games 1 4 > in.pos
	uci-eval -d 1 -j 1 -e "$FAKE" --cache c.db in.pos -o first.pos \
	    2>/dev/null
	size=$(stat -c %s c.db)
	# the same flock(2) lock another uci-eval would hold
	exec {lockfd}<c.db
	flock -n "$lockfd"
	run uci-eval -d 1 -j 1 -e "$FAKE" --cache c.db in.pos -o second.pos
	assert_failure 1
	assert_output --partial \
	    "uci-eval: --cache c.db: in use by another process"
	[ "$(stat -c %s c.db)" -eq "$size" ]
	exec {lockfd}<&-
	run uci-eval -d 1 -j 1 -e "$FAKE" --cache c.db in.pos -o second.pos
	assert_success
	assert_output --partial "4 records: 0 searched, 4 cache hits"
}

@test "--cache: an entry damaged after opening is a miss, not bad data" {
	games 1 10 > in.pos
	run uci-eval -d 1 -j 1 -e "$FAKE" --cache c.db in.pos -o first.pos
	assert_output --partial "10 records: 10 searched, 0 cache hits"
	# damage the first entry once uci-eval has indexed the file (its
	# engines start after that), then give it the positions
	feed() {
		for i in $(seq 100); do
			grep -qx uci log 2>/dev/null && break
			sleep 0.1
		done
		flip_byte c.db 40
		cat in.pos
	}
	FAKE_LOG=log run uci-eval -d 1 -j 1 -e "$FAKE" --cache c.db \
	    -o second.pos - < <(feed)
	assert_success
	grep -qx uci log
	assert_output --partial "10 records: 1 searched, 9 cache hits"
	cmp <(posdump first.pos) <(posdump second.pos)
}

@test "--cache: a failed write is taken back, the file is not written again" {
	games 2 12 > in.pos
	[ "$(posdump in.pos | wc -l)" -ge 20 ]
	# files of at most 1 KiB: the cache fills up after about 11 entries
	run bash -c 'trap "" XFSZ
	    (ulimit -f 1; exec uci-eval -d 1 -j 1 -e "$1" --cache c.db in.pos) |
	    cat > out.pos' sh "$FAKE"
	[ "$(stat -c %s c.db)" -le 1024 ]
	[ "$(grep -c 'cache write' <<< "$output")" -eq 1 ]
	assert_output --partial "no more results are written to the cache file"
	[ "$(posdump out.pos | wc -l)" -eq "$(posdump in.pos | wc -l)" ]
	# what was written is whole: no damage, and every entry is a hit
	run uci-eval -d 1 -j 1 -e "$FAKE" --cache c.db in.pos -o /dev/null
	assert_success
	refute_output --partial "dropped"
	n=$(sed -n 's/.* \([0-9]*\) cache hits.*/\1/p' <<< "$output")
	[ "$n" -ge 5 ]
}
