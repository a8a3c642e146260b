#!/usr/bin/env bats
# repair-mark: candidates on hand-set evaluations at the threshold's edges
# (logistic and W/D/L), the book, selectors; Panda end to end with real
# Stockfish on a game with one blunder (the re-score equals Stockfish's own
# searchmoves search), the same output at any -j, gaps and missing
# evaluations; stream handling; the usage table.

load helper

MKREC="$BUILD_DIR/tests/tools/mkrec"
SF="$(stockfish_path)"

# Q of the logistic with alpha 170, as printed by python (float32 as
# stored).
logistic() {
	/usr/bin/python3 -c "import math,sys; print(2/(1+math.exp(-$1/170))-1)"
}

@test "candidates: the threshold's edges, by the logistic and by W/D/L" {
	# shallow 0, deep 200 cp: |Q| = 2/(1+e^(-200/170)) - 1
	q=$(logistic 200)
	printf '%s\n' \
	    'startpos game=1 ply=0 eval=cp:0@depth:1 eval=cp:200@depth:12' \
	    'startpos game=2 ply=0 eval=cp:-30@depth:1 eval=cp:-30@depth:12' |
	    "$MKREC" > in.pos
	below=$(/usr/bin/python3 -c "print($q - 1e-6)")
	above=$(/usr/bin/python3 -c "print($q + 1e-6)")
	run repair-mark --threshold "$below" in.pos -o out.pos
	assert_success
	assert_output --partial "2 records: 2 judged, 1 candidates (50.00%)"
	run posdump --json out.pos
	assert_line --index 0 --partial '"type":"repair","mode":"candidates","candidate":true,"q_shallow":0,"q_deep":0.52862525,"q":"logistic"'
	assert_line --index 1 --partial '"candidate":false,"q_shallow":-0.08'
	run repair-mark --threshold "$above" in.pos -o out.pos
	assert_output --partial "0 candidates"
	# W/D/L: Q = (W - L) / 1000, exact in binary: 0.25 and -0.25
	printf '%s\n' \
	    'startpos game=1 eval=cp:10@depth:1 wdl=250,750,0 eval=cp:-10@depth:9 wdl=0,750,250' |
	    "$MKREC" > w.pos
	run repair-mark --q wdl --threshold 0.5 w.pos -o out.pos
	assert_output --partial "1 candidates"
	posdump --json out.pos | grep -q '"q":"wdl"'
	run repair-mark --q wdl --threshold 0.5001 w.pos -o out.pos
	assert_output --partial "0 candidates"
	# --q wdl without W/D/L: named, passed through, exit 1
	run repair-mark --q wdl in.pos -o out.pos
	assert_failure 1
	assert_output --partial "in.pos: record 1: --q wdl: the shallow evaluation has no W/D/L"
	[ "$(posdump -c out.pos | cut -d' ' -f1)" -eq 2 ]
}

@test "candidates: selectors, the default shallowest and deepest, the book, a rerun replaces its extension" {
	printf '%s\n' \
	    'startpos game=5 ply=0 eval=cp:300@depth:12 eval=cp:0@depth:1 eval=cp:100@depth:6' \
	    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 game=5 ply=1 eval=cp:0@depth:1 eval=cp:20@depth:12' |
	    "$MKREC" > in.pos
	run repair-mark --book b.epd in.pos -o out.pos
	assert_success
	assert_output --partial "1 candidates"
	# depth 1 against depth 12, whatever the order on the record
	posdump --json out.pos | head -n 1 | grep -q '"q_shallow":0,"q_deep":0.7'
	run cat b.epd
	assert_output 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - c0 "game 0000000000000005 ply 0";'
	# explicit selectors: depth 1 against depth 6 is no candidate
	run repair-mark --shallow depth:1 --deep depth:6 in.pos -o sel.pos
	assert_failure 1	# the second record has no depth-6 evaluation
	assert_output --partial "in.pos: record 2: no deep evaluation"
	assert_output --partial "2 records: 1 judged, 0 candidates (0.00%), 1 without both evaluations"
	[ "$(posdump -c sel.pos | cut -d' ' -f1)" -eq 2 ]
	# a rerun over its own output keeps one repair extension
	repair-mark out.pos -o again.pos 2>/dev/null
	[ "$(posdump --json again.pos | grep -o '"type":"repair"' | wc -l)" -eq 2 ]
	cmp <(posdump out.pos) <(posdump again.pos)
}

@test "candidates: records without evaluations are named, passed through, exit 1" {
	printf '%s\n' 'startpos game=1' 'startpos game=2 eval=cp:5@depth:3' |
	    "$MKREC" > in.pos
	run repair-mark in.pos -o out.pos
	assert_failure 1
	assert_output --partial "in.pos: record 1: no shallow evaluation"
	# both written, in order; the first as it came
	cmp <(posdump --fields game,ply,fen in.pos) <(posdump --fields game,ply,fen out.pos)
	cmp <(posdump --json in.pos | head -n 1) <(posdump --json out.pos | head -n 1)
	# the one with an evaluation is judged (shallowest = deepest: Q equal),
	# and the summary says it was compared with itself
	posdump --json out.pos | sed -n 2p | grep -q '"candidate":false'
	assert_output --partial "1 records had one evaluation that --shallow and --deep both chose, compared with itself"
	# a malformed evaluation is named as such
	printf '%s\n' 'startpos game=1 ext=2:00' 'startpos game=2 eval=cp:5@depth:3 eval=cp:9@depth:9' |
	    "$MKREC" > bad.pos
	run repair-mark bad.pos -o out.pos
	assert_failure 1
	assert_output --partial "bad.pos: record 1: malformed evaluation; passed through"
	refute_output --partial "compared with itself"
	[ "$(posdump -c out.pos | cut -d' ' -f1)" -eq 2 ]
}

# The game of the Panda tests: Scholar's mate, Black blundering with 3...Nf6.
scholar() {
	cat > g.pgn <<-'EOF'
	[Event "blunder"]
	[Site "here"]
	[White "w"]
	[Black "b"]
	[Result "1-0"]

	1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0
	EOF
	pgn2pos g.pgn 2>/dev/null | uci-eval -d 8 -j 1 2>/dev/null > ev.pos
}

@test "panda: the blunder's position is re-scored by the engine without the blunder, the rest left alone" {
	scholar
	[ "$(posdump -c ev.pos | cut -d' ' -f1)" -eq 8 ]
	run repair-mark --mode panda -j 1 ev.pos -o out.pos
	assert_success
	assert_output --partial "8 records in 1 games"
	posdump --json out.pos | jq -c '.exts[] | select(.type == "repair")' > rep
	[ "$(wc -l < rep)" -eq 8 ]
	# record 6 (ply 5, Black to move before 3...Nf6): B = after Nf6 is
	# mate in 1 for White, C = mated: vC <= -vB <= vA, definitely
	sed -n 6p rep | grep -q '"class":"definite"'
	sed -n 6p rep | grep -q '"rescored":true'
	# its repaired value is Stockfish's own score of the best other move
	fen=$(posdump --fields fen ev.pos | sed -n 6p)
	others=$(posdump --json ev.pos | sed -n 6p | jq -r '.move') # Nf6 in UCI
	moves=$(printf 'position fen %s\ngo perft 1\n' "$fen" | "$SF" |
	    sed -n 's/^\([a-h][1-8][a-h][1-8][qrbn]*\): .*/\1/p' | grep -v "^$others\$" | tr '\n' ' ')
	[ -n "$moves" ]
	score=$(printf 'uci\nsetoption name UCI_ShowWDL value true\nisready\nucinewgame\nisready\nposition fen %s\ngo depth 8 searchmoves %s\n' "$fen" "$moves" |
	    (cat; sleep 2) | "$SF" | awk '/^info .* score cp / && !/bound/ { for (i = 1; i < NF; i++) if ($i == "cp") s = $(i+1) } /^bestmove/ { print s; exit }')
	[ -n "$score" ]
	sed -n 6p rep | grep -q "\"repaired\":$score,"
	# the last two positions have no triple; nothing repaired after the
	# blunder; class none keeps the value
	sed -n 7p rep | grep -q '"class":"none"'
	sed -n 8p rep | grep -q '"class":"none"'
	run jq -r 'select(.class == "none" and .original != .repaired)' rep
	assert_output ''
	run jq -r 'select(.rescored == false and (.class == "definite" or .class == "maybe-yes"))' rep
	assert_output ''
	# every other extension passes through
	cmp <(posdump --json ev.pos | jq -c '.exts') \
	    <(posdump --json out.pos | jq -c '[.exts[] | select(.type != "repair")]')
}

@test "panda: the same output at -j 1 and -j 2; --seed changes only maybe cases" {
	awk '/^\[Event /{g++} g<=4' "$TESTDATA/lichess_db_100k.pgn" > g.pgn
	pgn2pos --max-plies 40 g.pgn 2>/dev/null | uci-eval -d 5 -j 2 2>/dev/null > ev.pos
	repair-mark --mode panda -j 1 ev.pos -o j1.pos 2>/dev/null
	repair-mark --mode panda -j 2 ev.pos -o j2.pos 2>/dev/null
	cmp <(posdump --json j1.pos) <(posdump --json j2.pos)
	n=$(posdump -c ev.pos | cut -d' ' -f1)
	[ "$n" -gt 100 ]
	posdump --json j1.pos | jq -r '.exts[] | select(.type=="repair") | .class' | sort | uniq -c > classes
	grep -q definite classes || grep -q maybe classes
	# another seed: the same at any -j too, and other maybe draws (a
	# repaired value feeds the triples before it, so more may change)
	repair-mark --mode panda -j 1 --seed 99 ev.pos -o s1.pos 2>/dev/null
	repair-mark --mode panda -j 2 --seed 99 ev.pos -o s2.pos 2>/dev/null
	cmp <(posdump --json s1.pos) <(posdump --json s2.pos)
	classes() { posdump --json "$1" | jq -r '.exts[] | select(.type=="repair") | .class'; }
	[ "$(classes j1.pos | grep -c maybe)" -ge 5 ]
	! cmp -s <(classes j1.pos) <(classes s1.pos)
}

@test "panda: a game with a gap or without evaluations is named and left unrepaired, nothing lost" {
	printf '%s\n' \
	    'startpos game=3 ply=0 move=e2e4 eval=cp:30@depth:5' \
	    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 game=3 ply=1 move=e7e5 eval=cp:-30@depth:5' \
	    'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2 game=3 ply=3 eval=cp:30@depth:5' \
	    'startpos game=4 ply=0 move=e2e4 eval=cp:30@depth:5' \
	    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 game=4 ply=1 move=e7e5' \
	    'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2 game=4 ply=2 eval=cp:30@depth:5' \
	    'startpos ply=0 eval=cp:1@depth:5' |
	    "$MKREC" > in.pos
	run repair-mark --mode panda -j 1 in.pos -o out.pos
	assert_failure 1
	assert_output --partial "in.pos: record 3: game 0000000000000003: ply 3 follows ply 1 (a gap); game left unrepaired"
	assert_output --partial "in.pos: record 5: game 0000000000000004: no evaluation matches --eval; game left unrepaired"
	assert_output --partial "2 games left unrepaired"
	# every record written, in order, unchanged
	cmp <(posdump in.pos) <(posdump out.pos)
}

@test "panda: a game with an invalid position is named and left unrepaired, not re-scored as a forced move" {
	# A (no kings: no moves to search) would be definitely mis-evaluated:
	# vC = -400 <= -vB = 0 <= vA = 300
	printf '%s\n' \
	    '- pos=00000000000000000000000000000000000000000000000000000000 game=5 ply=0 eval=cp:300@depth:5' \
	    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 game=5 ply=1 move=e7e5 eval=cp:0@depth:5' \
	    'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2 game=5 ply=2 eval=cp:-400@depth:5' |
	    "$MKREC" > in.pos
	run repair-mark --mode panda -j 1 -e "$BUILD_DIR/tests/tools/fake-engine" in.pos -o out.pos
	assert_failure 1
	assert_output --partial "in.pos: record 1: game 0000000000000005: invalid position: no white king; game left unrepaired"
	assert_output --partial "1 games left unrepaired"
	cmp in.pos out.pos
}

@test "panda: a position followed by another without a move played is named, not searched over every move" {
	printf '%s\n' \
	    'startpos game=5 ply=0 eval=cp:300@depth:5' \
	    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 game=5 ply=1 move=e7e5 eval=cp:0@depth:5' \
	    'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2 game=5 ply=2 eval=cp:-400@depth:5' |
	    "$MKREC" > in.pos
	export FAKE_LOG=$PWD/engine.log
	run repair-mark --mode panda -j 1 -e "$BUILD_DIR/tests/tools/fake-engine" in.pos -o out.pos
	assert_failure 1
	assert_output --partial "in.pos: record 1: game 0000000000000005: no move played before the next position; game left unrepaired"
	assert_output --partial "1 games left unrepaired"
	cmp in.pos out.pos
	# no search was sent
	! grep -q '^go' engine.log 2>/dev/null
}

@test "panda: a failed search keeps its position's class and value; no engine left: every game written unrepaired, nothing lost" {
	scholar
	# an engine that answers the handshake and dies at every search
	cat > dies.sh <<-'EOF'
	#!/bin/sh
	while read -r l; do
		case $l in
		uci) echo "id name dies"; echo uciok ;;
		isready) echo readyok ;;
		go*) exit 3 ;;
		quit) exit 0 ;;
		esac
	done
	EOF
	chmod +x dies.sh
	run repair-mark --mode panda -j 1 --retries 0 -e ./dies.sh ev.pos -o out.pos
	assert_failure 1
	assert_output --partial "ev.pos: record 6: re-scoring failed after 1 attempts"
	assert_output --partial "1 definitely"
	posdump --json out.pos | jq -c '.exts[] | select(.type == "repair")' > rep
	[ "$(wc -l < rep)" -eq 8 ]
	# record 6 is definitely mis-evaluated whatever the engine did
	sed -n 6p rep | grep -q '"class":"definite"'
	sed -n 6p rep | grep -q '"rescored":false'
	run jq -r 'select(.original != .repaired)' rep
	assert_output ''
	# an engine that cannot run: the records as they came, in order
	cat ev.pos ev.pos > two.pos
	run repair-mark --mode panda -j 1 -e ./nonexistent two.pos -o out.pos
	assert_failure 1
	assert_output --partial "no engine left running"
	assert_output --partial "the games from here on are written unrepaired"
	assert_output --partial "2 games left unrepaired"
	cmp <(posdump two.pos) <(posdump out.pos)
	# more games than the reader's buffer holds (their extensions are
	# copied as they are read), and a last game cut short (no last flag)
	pgn2pos --max-plies 30 "$TESTDATA/lichess_db_100k.pgn" 2>/dev/null |
	    uci-eval -d 1 -j 2 2>/dev/null > many.pos
	cat many.pos many.pos many.pos many.pos > four.pos
	[ "$(stat -c %s four.pos)" -gt 1000000 ]
	run repair-mark --mode panda -j 1 -e ./nonexistent four.pos -o out.pos
	assert_failure 1
	assert_output --partial "188 games left unrepaired"
	cmp <(posdump --json four.pos) <(posdump --json out.pos)
}

@test "panda: an evaluation with no search limit needs -d or -n" {
	printf '%s\n' \
	    'startpos game=5 ply=0 move=e2e4 eval=cp:30' \
	    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 game=5 ply=1 move=e7e5 eval=cp:-30' \
	    'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2 game=5 ply=2 eval=cp:30' |
	    "$MKREC" > in.pos
	run repair-mark --mode panda -j 1 in.pos -o out.pos
	assert_failure 1
	assert_output --partial "in.pos: record 1: game 0000000000000005: the evaluation --eval chooses has no search limit to re-score at (give -d or -n); game left unrepaired"
	cmp <(posdump in.pos) <(posdump out.pos)
	run repair-mark --mode panda -j 1 -d 2 in.pos -o out.pos
	assert_success
	[ "$(posdump --json out.pos | jq -c '.exts[] | select(.type == "repair")' | wc -l)" -eq 3 ]
	run --separate-stderr repair-mark --mode panda --eval pgn in.pos
	assert_failure 2
	[[ "$stderr" == *"--eval pgn: a PGN's evaluations have no search limit: give -d or -n"* ]]
}

@test "an evaluation of an unknown score kind is malformed, never taken for centipawns" {
	# score 900 of kind 2, which posflow(5) does not define (0 cp, 1 mate)
	eval_hex 900 2
	printf '%s\n' "startpos game=1 eval=cp:0@depth:1 ext=2:$HEX" |
	    "$MKREC" > in.pos
	run repair-mark in.pos -o out.pos
	assert_failure 1
	assert_output --partial "in.pos: record 1: malformed evaluation; passed through"
	assert_output --partial "1 records: 0 judged, 0 candidates"
	cmp <(posdump --json in.pos) <(posdump --json out.pos)
	# panda: the game is named and written unrepaired, as it came
	printf '%s\n' \
	    'startpos game=5 ply=0 move=e2e4 eval=cp:30@depth:5' \
	    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 game=5 ply=1 move=e7e5 ext=2:$HEX" \
	    'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2 game=5 ply=2 eval=cp:30@depth:5' |
	    "$MKREC" > g.pos
	run repair-mark --mode panda -j 1 -e "$BUILD_DIR/tests/tools/fake-engine" g.pos -o out.pos
	assert_failure 1
	assert_output --partial "g.pos: record 2: game 0000000000000005: malformed evaluation or extension area; game left unrepaired"
	assert_output --partial "1 games left unrepaired"
	cmp <(posdump --json g.pos) <(posdump --json out.pos)
}

@test "empty, concatenated, corrupt and truncated input" {
	"$MKREC" < /dev/null > empty.pos
	run repair-mark empty.pos -o out.pos
	assert_success
	[ "$(posdump -c out.pos | cut -d' ' -f1)" -eq 0 ]
	printf '%s\n' 'startpos game=1 eval=cp:0@depth:1 eval=cp:900@depth:9' | "$MKREC" > a.pos
	cat a.pos a.pos > two.pos
	run repair-mark two.pos a.pos -o out.pos
	assert_success
	assert_output --partial "3 records: 3 judged, 3 candidates"
	# 40 records, one per block; a byte flipped in the last block, then cut
	for i in $(seq 40); do echo "startpos game=$i eval=cp:0@depth:1 eval=cp:$i@depth:9"; done |
	    "$MKREC" -F > many.pos
	size=$(stat -c %s many.pos)
	cp many.pos bad.pos
	printf '\377' | dd of=bad.pos bs=1 seek=$((size - 40)) conv=notrunc 2>/dev/null
	run repair-mark bad.pos -o out.pos
	assert_failure 1
	assert_output --partial "bad.pos"
	[ "$(posdump -c out.pos 2>/dev/null | cut -d' ' -f1)" -ge 38 ]
	head -c $((size - 60)) many.pos > cut.pos
	run repair-mark cut.pos -o out.pos
	assert_failure 1
	assert_output --partial "cut.pos"
	[ "$(posdump -c out.pos | cut -d' ' -f1)" -ge 38 ]
}

@test "--help, --version, invalid calls: exit 2, usage on stderr, nothing on stdout" {
	run repair-mark --help
	assert_success
	assert_output --partial "usage: repair-mark"
	run repair-mark --version
	assert_output --partial "repair-mark (posflow)"
	printf 'startpos\n' | "$MKREC" > in.pos
	while read -r args; do
		eval "set -- $args"
		run bash -c 'repair-mark "$@" in.pos 2>/dev/null' _ "$@"
		[ "$status" -eq 2 ] || { echo "status $status for: $args"; false; }
		[ -z "$output" ] || { echo "stdout for: $args"; false; }
		run bash -c 'repair-mark "$@" in.pos 2>&1 >/dev/null' _ "$@"
		[[ "$output" == *"usage: repair-mark"* ]] || { echo "no usage for: $args"; false; }
	done <<-'EOF'
	--mode fast -f
	--shallow depth:x -f
	--deep deepish -f
	--q elo -f
	--alpha 0 -f
	--threshold 3 -f
	--threshold x -f
	--mode candidates -j 2 -f
	--mode candidates --seed 3 -f
	--mode candidates --seed 0 -f
	--seed 0 -f
	--mode panda --book x.epd -f
	--mode panda --threshold 0.3 -f
	--mode panda --threshold 0.55 -f
	--threshold 0.55 --mode panda -f
	--mode panda --alpha 170 -f
	--mode panda --q logistic -f
	--mode panda -d 0 -f
	--mode panda -d 3 -n 100 -f
	--mode panda -j 0 -f
	--mode panda -O =1 -f
	--mode panda --eval pgn -f
	--bogus -f
	EOF
}

@test "panda: finished games are written while the input waits, and a signal ends the wait" {
	pgn2pos "$TESTDATA/lichess_db_10k.pgn" 2>/dev/null | uci-eval -d 1 -j 1 2>/dev/null > ev.pos
	n=$(posdump -c ev.pos | cut -d' ' -f1)
	mkfifo in.fifo
	repair-mark --mode panda -d 1 -j 2 -o out.pos < in.fifo 2> err &
	pid=$!
	exec 7> in.fifo
	cat ev.pos >&7
	# every game is complete (each ends with its last record): all of
	# them come out with the input still open (10 s at most: a bound on
	# the wait, not a timing)
	for _ in $(seq 100); do
		[ "$(posdump -c out.pos 2>/dev/null | cut -d' ' -f1)" = "$n" ] && break
		sleep 0.1
	done
	run bash -c "posdump -c out.pos 2>/dev/null | cut -d' ' -f1"
	assert_output "$n"
	# SIGTERM while it waits for input that never comes
	kill -TERM "$pid"
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		fail "still waiting for input 10 s after SIGTERM"
	fi
	st=0
	wait "$pid" || st=$?
	[ "$st" -eq 1 ] || fail "exit $st after SIGTERM"
	exec 7>&-
	grep -q "interrupted by signal 15" err
	! grep -q "stdin: interrupted" err
}
