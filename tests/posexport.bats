#!/usr/bin/env bats
# posexport: every format from a stream; records a format cannot hold
# skipped and counted (--require: an error); npy arrays equal the loader's
# batches; the usage table.

load helper

MKREC="$BUILD_DIR/tests/tools/mkrec"

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	setup_python || return 1
	# The bundled games evaluated at depth 1 with every move's score,
	# with policy and value targets and PQR triples.
	pgn2pos "$TESTDATA/lichess_db_100k.pgn" 2>/dev/null |
		uci-eval --engine "$(stockfish_path)" --depth 1 --multipv all 2>/dev/null |
		softtarget --value tanh 2>/dev/null |
		pqr-sample 2>/dev/null > "$d/rich.pos"
}

@test "npy: one file per array; the arrays equal posflow.batches of the same records, shapes and dtypes as documented" {
	d="$BATS_FILE_TMPDIR"
	run posexport -F npy -o arr --features ALL+H --opposite --policy-width 32 --planes --pqr "$d/rich.pos"
	assert_success
	assert_output "posexport: 2817 records: 2817 written (npy); skipped: 0 without an evaluation, 0 without a move, 0 without a policy, 0 invalid"
	run ls arr
	assert_output "best.npy
features.npy
features_opp.npy
features_q.npy
features_r.npy
game_id.npy
has_pqr.npy
move.npy
planes.npy
ply.npy
policy_index.npy
policy_prob.npy
result.npy
score.npy
value.npy"
	run "$PY" -c "
import numpy as np, posflow
bs = list(posflow.batches('$d/rich.pos', 1000, features='ALL+H', opposite=True, policy=True, policy_width=32, planes=True, pqr=True))
for k in sorted(bs[0]):
    want = np.concatenate([b[k] for b in bs])
    got = np.load('arr/%s.npy' % k)
    assert got.dtype == want.dtype and got.shape == want.shape, k
    assert np.array_equal(got, want, equal_nan=True), k
    print(k, got.dtype, got.shape)
"
	assert_success
	assert_output "best int32 (2817,)
features int32 (2817, 64)
features_opp int32 (2817, 64)
features_q int32 (2817, 64)
features_r int32 (2817, 64)
game_id uint64 (2817,)
has_pqr bool (2817,)
move int32 (2817,)
planes uint8 (2817, 14, 8, 8)
ply int32 (2817,)
policy_index int32 (2817, 32)
policy_prob float32 (2817, 32)
result float32 (2817,)
score float32 (2817,)
value float32 (2817,)"
}

@test "npy --value wdl takes either form softtarget --value wdl writes; wdl_engine only the engine's" {
	v() { printf '%02x000000%016d0000803f%s' "$1" 0 "$2"; }
	printf '%s\n' "startpos game=1 ply=0 ext=6:$(v 3 0000803e)" \
	    "startpos game=1 ply=1 ext=6:$(v 4 0000403f)" \
	    "startpos game=1 ply=2 ext=6:$(v 1 0000003f)" |
	    "$MKREC" > wdl.pos
	posexport -F npy -o w --value wdl wdl.pos 2>/dev/null
	posexport -F npy -o e --value wdl_engine wdl.pos 2>/dev/null
	run "$PY" -c "import numpy as np; print(np.load('w/value.npy').tolist(), np.load('e/value.npy').tolist())"
	assert_output "[0.25, 0.75, nan] [nan, 0.75, nan]"
}

@test "npy: empty input gives arrays of 0 rows; a damaged record is skipped and named; -o is required" {
	: > empty.pos
	run posexport -F npy -o e empty.pos
	assert_success
	run "$PY" -c "import numpy as np; print(np.load('e/features.npy').shape, np.load('e/value.npy').shape)"
	assert_output "(0, 32) (0,)"
	# record 2 holds a value extension of 2 bytes: malformed
	printf '%s\n' "startpos game=1 ply=0 move=e2e4" "startpos game=1 ply=0 move=e2e4 ext=6:0102" "startpos game=2 ply=0" | "$MKREC" > bad.pos
	run posexport -F npy -o b bad.pos
	assert_failure 1
	assert_output "posexport: bad.pos: record 2: malformed value target; skipped
posexport: 3 records: 2 written (npy); skipped: 0 without an evaluation, 0 without a move, 0 without a policy, 1 invalid"
	run "$PY" -c "import numpy as np; print(np.load('b/game_id.npy').tolist())"
	assert_output "[1, 2]"
	run posexport -F npy "$BATS_FILE_TMPDIR/rich.pos"
	assert_failure 2
	assert_output --partial "-F npy writes a directory: -o dir is required"
}

@test "lc0: V6TrainingData chunks (a game each, gzip) read back field by field as lczero-training's parser reads them" {
	d="$BATS_FILE_TMPDIR"
	run posexport -F lc0 -o chunks "$d/rich.pos"
	assert_success
	assert_output "posexport: 2817 records: 2770 written (lc0; 0 of unknown result as draws); skipped: 0 without an evaluation, 47 without a move, 0 without a policy, 0 invalid"
	[ "$(ls chunks | wc -l)" -eq 47 ]
	ls -A chunks | grep -q '^\.tmp' && fail "temporaries left"
	run "$PY" "$TOP/tests/tools/lc0_check.py" chunks "$d/rich.pos"
	assert_success
	assert_output "lc0: 2770 records in 47 chunks read back as the records (0 with filled history)"
	# no policy target: skipped and counted
	printf '%s\n' "startpos game=1 ply=0 move=e2e4 result=1-0 eval=cp:30" | "$MKREC" > np.pos
	run posexport -F lc0 -o c2 np.pos
	assert_output --partial "1 without a policy"
}

@test "lc0 --value: Q is the value target of that method, whatever values follow it" {
	# no engine W/D/L, so Q comes from the value target: --value tanh
	# must give tanh(0.2 * 200 / 200), not the wdl written after it
	printf '%s\n' "7k/8/8/8/8/8/1r6/K1r5 w - - 0 1 game=1 move=a1b2 result=1-0 eval=cp:200@depth:5 scores=a1b2:cp:200@depth:5" |
		"$MKREC" | softtarget --value tanh --value wdl > v.pos
	run posexport -F lc0 --value tanh -o c v.pos
	assert_success
	run "$PY" -c "import gzip, struct
d = gzip.open('c/training.0.gz').read()
print('%.4f' % struct.unpack_from('<f', d, 8280)[0])"
	assert_output "0.1974"
}

@test "lc0: a malformed policy or value target is an invalid record, skipped and reported, as with npy" {
	# a good policy (Kxb2, all 65535 quanta), then one whose quanta do
	# not sum to 65535; and a value target of 2 bytes
	r='7k/8/8/8/8/8/1r6/K1r5 w - - 0 1 game=1 move=a1b2 result=1-0 eval=cp:200@depth:5 ext=5:0100010000000000000000004002ffff'
	printf '%s\n' "$r ext=5:01000100000000000000000040026400" "$r ext=6:0100" | "$MKREC" > bad.pos
	run posexport -F lc0 -o c bad.pos
	assert_failure 1
	assert_output "posexport: bad.pos: record 1: malformed policy; skipped
posexport: bad.pos: record 2: malformed value target; skipped
posexport: 2 records: 0 written (lc0; 0 of unknown result as draws); skipped: 0 without an evaluation, 0 without a move, 0 without a policy, 2 invalid"
}

@test "an evaluation of a score kind posflow(5) does not define is an invalid record in every format, never a centipawn score" {
	# 900 of kind 2; posflow(5) defines 0 cp and 1 mate
	eval_hex 900 2
	printf '%s\n' "startpos game=1 move=e2e4 result=1-0 eval=cp:30@depth:5" \
	    "startpos game=2 move=e2e4 result=1-0 ext=2:$HEX" | "$MKREC" > k.pos
	for F in plain binpack bin npy lc0; do
		run --separate-stderr posexport -F "$F" -o "out.$F" k.pos
		assert_failure 1
		[ "${stderr%%$'\n'*}" = "posexport: k.pos: record 2: malformed evaluation; skipped" ] ||
			fail "$F: $stderr"
		[[ "$stderr" == *"1 invalid"* ]] || fail "$F: $stderr"
	done
	run posexport -F plain k.pos
	# 30 cp is 62 in Stockfish's units; 900 would be 1872
	assert_line "score 62"
	refute_output --partial "score 1872"
}

@test "lc0: history that runs out is filled as lc0 fills it (copies of the oldest position known, unless it is the start position)" {
	# games seen from ply 8 on, Chess960 games, and games from FENs
	# whose en passant squares (after a white, then a black double push)
	# lc0 takes back in the copies
	{
		pgn2pos --skip-plies 8 "$TESTDATA/lichess_db_10k.pgn"
		pgn2pos "$TESTDATA/pgn/chess960.pgn"
		printf '[Event "ep2"]\n[FEN "rnbqkbnr/ppp1pppp/8/8/2Pp4/8/PP1PPPPP/RNBQKBNR b KQkq c3 0 2"]\n\n2... dxc3 3. Nxc3 e5 *\n' | pgn2pos
		printf '[Event "ep"]\n[FEN "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"]\n\n3. exf6 e5 4. Nf3 *\n' | pgn2pos
	} 2>/dev/null | uci-eval -e "$(stockfish_path)" -d 1 -m all 2>/dev/null |
		softtarget 2>/dev/null > mid.pos
	run posexport -F lc0 -o mid mid.pos
	assert_success
	run "$PY" "$TOP/tests/tools/lc0_check.py" mid mid.pos
	assert_success
	assert_output --regexp '^lc0: [0-9]+ records in [0-9]+ chunks read back as the records \([0-9]+ with filled history\)$'
	[[ "$output" != *"(0 with"* ]] || fail "$output"
	# the en passant game's first record: its copies hold the pawn on f7
	f=$(ls mid/training.*.gz | sort -t. -k2 -n | tail -n 1)
	run "$PY" -c "
import gzip, numpy as np
d = gzip.open('$f').read()
pl = np.unpackbits(np.frombuffer(d[7440:7440 + 832], np.uint8)).reshape(104, 64)
# planes 6 and 13 + 6: the other side's pawns now and in the copy at
# slot 1, square s at index s as chunkparser unpacks them (f7 53, f5 37)
print(int(pl[13 + 6][53]), int(pl[13 + 6][37]), int(pl[6][37]), int(pl[6][53]))"
	assert_success
	assert_output "1 0 1 0"
	# the same in lc0's other input formats: Chess960 castling as rook
	# files, en passant squares that stop canonical history
	for f in 2 5; do
		run posexport -F lc0 --input-type $f -o "mid.$f" mid.pos
		assert_success
		run "$PY" "$TOP/tests/tools/lc0_check.py" "mid.$f" mid.pos $f
		assert_success
	done
}

@test "lc0 --input-type: lc0's input formats 1 to 5, 132 and 133 (castling as rook files, en passant, transforms, canonical and v2 history) read back as lc0 writes them" {
	d="$BATS_FILE_TMPDIR"
	# the bundled games in format 3 (transforms of real games: flips)
	run posexport -F lc0 --input-type canonical -o c3 "$d/rich.pos"
	assert_success
	run "$PY" "$TOP/tests/tools/lc0_check.py" c3 "$d/rich.pos" 3
	assert_success
	assert_line --regexp '^lc0: input format 3: [1-9][0-9]* transformed,'
	# testdata/lc0/canonical.pgn: a rook shuffling in a pawnless ending
	# from a FEN with a clock, knights and rooks shuffling in the
	# opening (repeats, castling rights lost), castling from a FEN with
	# a clock, a double push whose en passant capture would expose the
	# king (lc0 keeps the square, a FEN would not: it stops canonical
	# history, and the position is no repeat of the same one after it),
	# and 341 random pawnless positions (some symmetric in the
	# a8-h1 diagonal, so lc0's tie-breaks decide), each played on six
	# plies by Stockfish at depth 1; ply 9 dropped, so history runs out
	# after a gap too
	pgn2pos "$TESTDATA/lc0/canonical.pgn" 2>/dev/null |
		uci-eval -e "$(stockfish_path)" -d 1 -m all 2>/dev/null |
		softtarget 2>/dev/null | posfilter 'ply != 9' 2>/dev/null > can.pos
	for f in 1 frc_castling 3 canonical_100 5 canonical_armageddon 133; do
		run posexport -F lc0 --input-type $f -o "can.$f" can.pos
		assert_success
		n=$f
		case $f in frc_castling) n=2 ;; canonical_100) n=4 ;;
		canonical_armageddon) n=132 ;; esac
		run "$PY" "$TOP/tests/tools/lc0_check.py" "can.$f" can.pos $n
		assert_success
		assert_line --regexp '^lc0: 2054 records in 343 chunks read back as the records \([1-9][0-9]* with filled history\)$'
		# every record with a move but 304 is transformed; format 5
		# finds repeats further back than the ply before
		[ $n -lt 3 ] || assert_line --regexp "^lc0: input format $n: 1750 transformed, [0-9]+ with a repeat further back than the last ply, 1 with an en passant square for lc0 alone$"
		[ $n -lt 5 ] || [ $n -eq 132 ] || assert_line --regexp "^lc0: input format $n: 1750 transformed, [1-9][0-9]* with a repeat further back"
	done
	# the armageddon formats are 4's and 5's records (the trainer adds
	# the side-to-move plane from invariance_info)
	run "$PY" -c "
import glob, gzip, os
for base, arm, f in (('can.canonical_100', 'can.canonical_armageddon', 132),
                     ('can.5', 'can.133', 133)):
    files = sorted(os.listdir(base))
    assert len(files) == 343 and files == sorted(os.listdir(arm))
    for n in files:
        a = bytearray(gzip.open(os.path.join(base, n)).read())
        b = bytearray(gzip.open(os.path.join(arm, n)).read())
        assert len(a) == len(b) and len(a) % 8356 == 0, n
        for o in range(0, len(a), 8356):
            assert b[o + 4:o + 8] == f.to_bytes(4, 'little'), (n, o)
            b[o + 4:o + 8] = a[o + 4:o + 8]
        assert a == b, n
    print(f, 'ok')"
	assert_success
	assert_output "132 ok
133 ok"
}

@test "lc0 --input-type: an unknown type, or a format other than lc0, is a usage error" {
	printf '%s\n' "startpos game=1 ply=0 move=e2e4 result=1-0 eval=cp:30" | "$MKREC" > one.pos
	run posexport -F lc0 --input-type canonical_v3 -o x one.pos
	assert_failure 2
	assert_line "posexport: --input-type canonical_v3: classic, frc_castling, canonical, canonical_100, canonical_v2, canonical_armageddon or canonical_v2_armageddon (or 1 to 5, 132, 133)"
	run posexport -F npy --input-type 3 -o x one.pos
	assert_failure 2
	assert_line "posexport: --input-type is lc0's input format: -F npy has none"
	[ ! -e x ]
}

@test "mates: as Stockfish writes them up to its farthest, mate in 123 (246 plies); farther ones as that; every format and back keeps them" {
	fen='7k/1B6/8/p1rpP2R/7P/3K4/P5P1/8 b - - 0 50'
	for m in 1 -1 100 -100 101 -102 123 -123 124 -130 300 -300; do
		echo "$fen game=1 ply=99 move=h8g8 result=1-0 eval=mate:$m"
	done | "$MKREC" > mates.pos
	posexport -F plain mates.pos -o mates.plain 2>/dev/null
	[ "$(grep '^score' mates.plain | cut -d' ' -f2 | tr '\n' ' ')" = \
	    "31999 -31998 31801 -31800 31799 -31796 31755 -31754 31755 -31754 31755 -31754 " ] ||
	    fail "$(grep '^score' mates.plain | tr '\n' ' ')"
	# and back, in every format of Stockfish's units and bullet's
	scores() { posdump --fields eval "$1" | sed 's/.* score=\([^ ]*\) .*/\1/' | tr '\n' ' '; }
	want="mate:1 mate:-1 mate:100 mate:-100 mate:101 mate:-102 mate:123 mate:-123 mate:123 mate:-123 mate:123 mate:-123 "
	for f in plain bin binpack marlinformat bulletformat viriformat; do
		posexport -F $f mates.pos -o m.$f 2>/dev/null
		posimport -F $f m.$f -o back.$f.pos 2>/dev/null
		[ "$(scores back.$f.pos)" = "$want" ] ||
		    fail "$f: $(scores back.$f.pos)"
	done
}

@test "records a format cannot hold: skipped and counted; --require makes each an error; unknown results counted" {
	# 1: a move and an evaluation; 2: no evaluation; 3: no move; 4: an
	# unknown result
	printf '%s\n' \
	    "startpos game=1 ply=0 move=e2e4 result=1-0 eval=cp:30" \
	    "startpos game=2 ply=0 move=d2d4 result=1-0" \
	    "startpos game=3 ply=0 result=0-1 eval=cp:10" \
	    "startpos game=4 ply=0 move=c2c4 eval=cp:5" | "$MKREC" > m.pos
	run posexport -F plain m.pos -o m.plain
	assert_success
	assert_output "posexport: 4 records: 2 written (plain; 1 of unknown result as draws); skipped: 1 without an evaluation, 1 without a move, 0 without a policy, 0 invalid"
	run cat m.plain
	assert_output "fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1
move e2e4
score 62
ply 0
result 1
e
fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1
move c2c4
score 10
ply 0
result 0
e"
	# marlinformat needs no move
	run posexport -F marlinformat m.pos -o m.marlin
	assert_output --partial "3 written (marlinformat"
	run posexport -F plain --require m.pos -o r.plain
	assert_failure 1
	assert_line "posexport: m.pos: record 2: no evaluation: -F plain cannot hold it"
	assert_line "posexport: m.pos: record 3: no move: -F plain cannot hold it"
	# a valid position a format cannot hold: a Chess960 castling right,
	# skipped and counted, the writer going on.  Record 2: the rook f1 of
	# king g1 is off its corner (binpack refuses it; bin takes it, the
	# outermost rook of its side); record 3: the rook d1 of king f1 is
	# not the outermost of its side (both refuse it)
	printf '%s\n' \
	    "startpos game=1 ply=0 move=e2e4 result=1-0 eval=cp:30" \
	    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9 game=5 ply=16 move=g2g3 result=1-0 eval=cp:20" \
	    "4k3/8/8/8/8/8/8/R2R1K1R w D - 0 1 game=7 ply=0 move=f1g1 result=1-0 eval=cp:5" \
	    "startpos game=6 ply=0 move=d2d4 result=1-0 eval=cp:10" | "$MKREC" > c960.pos
	run posexport -F binpack c960.pos -o c960.binpack
	assert_success
	assert_output "posexport: 4 records: 2 written (binpack; 0 of unknown result as draws); skipped: 0 without an evaluation, 0 without a move, 0 without a policy, 0 invalid, 2 it cannot hold"
	[ "$(posimport -F binpack c960.binpack 2>/dev/null | posdump -c)" = "2 stdin" ]
	run posexport -F binpack --require c960.pos -o c960.binpack
	assert_failure 1
	assert_line "posexport: c960.pos: record 2: Chess960 castling right (rook not in a corner): binpack holds standard castling only: -F binpack cannot hold it"
	run posexport -F bin c960.pos -o c960.bin
	assert_success
	assert_output "posexport: 4 records: 3 written (bin; 0 of unknown result as draws); skipped: 0 without an evaluation, 0 without a move, 0 without a policy, 0 invalid, 1 it cannot hold"
	# --eval chooses the evaluation
	printf '%s\n' "startpos game=1 ply=0 move=e2e4 result=1-0 eval=cp:30@depth:3 eval=cp:-50@depth:9" | "$MKREC" > two.pos
	posexport -F plain two.pos 2>/dev/null | grep -x 'score -104'
	posexport -F plain --eval depth:3 two.pos 2>/dev/null | grep -x 'score 62'
}

@test "--move best: the evaluation's best move in place of the move played (binpack, plain, bin, lc0), positions of no game too" {
	d="$BATS_FILE_TMPDIR"
	# board, ply and the best move of the evaluation --eval chooses
	key() { posdump --json --fields fen,ply,move,eval "$@" |
		jq -r '[(.fen | split(" ")[0:4] | join(" ")), .ply, ([.exts[] | select(.type == "eval")][-1].best)] | @tsv'; }
	key "$d/rich.pos" | awk -F'\t' '$3 != "-"' > want.tsv
	n=$(wc -l < want.tsv)
	# the games' last positions have no move played but a best move
	[ "$n" -gt 2770 ]
	for F in binpack plain bin; do
		run posexport -F $F --move best "$d/rich.pos" -o "x.$F"
		assert_success
		assert_output "posexport: 2817 records: $n written ($F; 0 of unknown result as draws); skipped: 0 without an evaluation, $((2817 - n)) without a best move, 0 without a policy, 0 invalid"
		posimport -F $F "x.$F" 2>/dev/null |
			posdump --json --fields fen,ply,move | jq -r '[(.fen | split(" ")[0:4] | join(" ")), .ply, .move] | @tsv' > got.tsv
		cmp want.tsv got.tsv || fail "$F: $(diff want.tsv got.tsv | head -4)"
	done
	# the move played is another file, of as many entries as moves
	posexport -F plain "$d/rich.pos" -o p.plain 2>/dev/null
	! cmp -s p.plain x.plain
	# EPD positions, evaluated: no move played, written with their best
	# move; a checkmate has none
	printf '%s\n' 'r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3' \
	    '6k1/5ppp/8/8/8/8/8/K3R3 w - - 0 1' '4R1k1/5ppp/8/8/8/8/8/K7 b - - 1 1' > e.epd
	pgn2pos --epd e.epd 2>/dev/null | uci-eval -e "$(stockfish_path)" -d 4 2>/dev/null > e.pos
	run posexport -F plain e.pos -o e.plain
	assert_output --partial "0 written"
	run posexport -F plain --move best --require e.pos -o e.plain
	assert_failure 1
	assert_line "posexport: e.pos: record 3: no best move: -F plain cannot hold it"
	assert_line "posexport: 3 records: 2 written (plain; 2 of unknown result as draws); skipped: 0 without an evaluation, 1 without a best move, 0 without a policy, 0 invalid"
	grep -x 'move e1e8' e.plain
	# formats that hold no move to replace refuse it
	for F in marlinformat bulletformat viriformat; do
		run --separate-stderr posexport -F $F --move best e.pos -o y
		assert_failure 2
		[[ "$stderr" == "posexport: --move best: -F $F holds no move to replace"* ]] || fail "$stderr"
	done
	# lc0: played_idx the best move; each position of no game a chunk
	# of its own (its history is no other's)
	pgn2pos --epd e.epd 2>/dev/null |
	    uci-eval -e "$(stockfish_path)" -d 4 -m all 2>/dev/null |
	    softtarget 2>/dev/null > es.pos
	run posexport -F lc0 es.pos -o nobest
	assert_success
	assert_output --partial "0 written"
	run posexport -F lc0 --move best es.pos -o lb
	assert_success
	assert_output --partial "2 written"
	[ "$(ls lb | wc -l)" -eq 2 ]
	for c in lb/training.*.gz; do
		[ "$(zcat "$c" | wc -c)" -eq 8356 ]
	done
	posimport -F lc0 lb 2>/dev/null | posdump --json | jq -r '.move' | sort > lb.moves
	posdump --json es.pos | jq -r '[.exts[] | select(.type == "eval")][0].best' |
	    grep -v -- - | sort > best.moves
	cmp lb.moves best.moves
	# positions of no game (id 0), even consecutive ones: a chunk each
	posdump --fields fen e.pos | head -n 2 | "$BUILD_DIR/tests/tools/mkrec" |
	    uci-eval -e "$(stockfish_path)" -d 4 -m all 2>/dev/null | softtarget 2>/dev/null > z.pos
	run posexport -F lc0 --move best z.pos -o lz
	assert_success
	[ "$(ls lz | wc -l)" -eq 2 ]
	run --separate-stderr posexport -F plain --move worst e.pos
	assert_failure 2
	[[ "$stderr" == "posexport: --move worst: played or best"* ]]
}

@test "binpack on game-ordered data: as small as nnue-pytorch's writer (the bundled sample's bytes per position)" {
	posimport -F binpack "$TESTDATA/binpack/lichess_sample.binpack" -o s.pos 2>/dev/null
	posexport -F binpack s.pos -o s.binpack 2>/dev/null
	cmp s.binpack "$TESTDATA/binpack/lichess_sample.binpack"
	awk -v b="$(stat -c %s s.binpack)" 'BEGIN { printf "%.2f bytes/position\n", b / 2770 }'
	[ "$(stat -c %s s.binpack)" -le 7793 ]
}

@test "--help, --version, invalid calls: exit 2, usage on stderr, nothing on stdout" {
	run --separate-stderr posexport --help
	assert_success
	[[ "$output" == usage:* ]]
	run --separate-stderr posexport -F nosuch -o x
	assert_failure 2
	[ -z "$output" ]
	[[ "$stderr" == *"-F nosuch: unknown format"* ]]
	run --separate-stderr posexport -F npy -o x --perspective up
	assert_failure 2
	run --separate-stderr posexport -F npy -o x --value nosuch
	assert_failure 2
	run --separate-stderr posexport -F npy -o x --features ALL+Q /dev/null
	assert_failure 2
	[[ "$stderr" == *"--features ALL+Q: unknown block"* ]]
	# npy's options, and --value, with a format that has none
	for a in "--features ALL" --opposite "--perspective white" --planes \
	    "--policy-width 8" --pqr; do
		run --separate-stderr posexport -F binpack -o x $a /dev/null
		assert_failure 2
		[[ "$stderr" == *"${a%% *} is npy's: -F binpack has none"* ]] ||
			fail "$a: $stderr"
	done
	run --separate-stderr posexport -F plain -o x --value tanh /dev/null
	assert_failure 2
	[[ "$stderr" == *"--value is npy's and lc0's: -F plain has none"* ]]
	run posexport -F lc0 -o x --value tanh /dev/null
	assert_success
	[ ! -e x ] || [ -d x ]
	run posexport -V
	assert_success
	assert_output --regexp '^posexport \(posflow\) '
}

@test "plain is text: written to a terminal without -f; the binary formats are refused there" {
	pgn2pos "$TESTDATA/pgn/format.pgn" 2>/dev/null |
		uci-eval --engine "$(stockfish_path)" -d 1 2>/dev/null > g.pos
	run script -qec "posexport -F plain g.pos" /dev/null
	assert_success
	assert_line --index 0 --partial "fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
	assert_line --index 1 --partial "move e2e4"
	assert_line --partial "11 records: 10 written (plain"
	run script -qec "posexport -F bin g.pos" /dev/null
	assert_failure 1
	assert_output --partial "refusing to write binary output to a terminal"
}

@test "what is written flows while the input waits: entries, npy rows, a game's lc0 chunk at its last record; binpack's chunks whole" {
	# the first game of the bundled sample, evaluated with a policy
	posdump --json "$BATS_FILE_TMPDIR/rich.pos" | head -n 1 | jq -r .game > g1
	posfilter "game == 0x$(cat g1)" "$BATS_FILE_TMPDIR/rich.pos" -o one.pos 2>/dev/null
	n=$(posdump -c one.pos | cut -d' ' -f1)
	[ "$n" -gt 10 ]
	for fmt in plain bin marlinformat viriformat npy lc0 binpack; do
		rm -rf out in.fifo
		mkfifo in.fifo
		case $fmt in npy | lc0) o=out ;; *) o=out.$fmt ;; esac
		posexport -F $fmt -o $o < in.fifo 2>/dev/null &
		pid=$!
		exec 7> in.fifo
		cat one.pos >&7
		case $fmt in
		npy)	size=$(size_after out/ply.npy 128) ;;
		lc0)	for _ in $(seq 100); do
				[ -n "$(ls out 2>/dev/null)" ] && break
				sleep 0.1
			done
			size=$(ls out | wc -l) ;;
		binpack) size=0 ;;	# its chunk goes out whole, at the end
		*)	size=$(size_after $o 0) ;;
		esac
		exec 7>&-
		wait "$pid"
		case $fmt in
		npy)	[ "$size" -gt 128 ] || fail "npy: no row while the input was open" ;;
		lc0)	[ "$size" -eq 1 ] || fail "lc0: no chunk while the input was open" ;;
		binpack) cmp $o <(posexport -F binpack one.pos 2>/dev/null) ;;
		*)	[ "$size" -eq "$(stat -c %s $o)" ] ||
				fail "$fmt: $size of $(stat -c %s $o) bytes while the input was open" ;;
		esac
	done
}

@test "binpack, plain and bin: the game ply as Stockfish counts it, from the full-move number of a game set up from a FEN" {
	printf '%s\n' '[Event "B"]' '[Result "0-1"]' '[FEN "4k3/8/8/8/8/8/p6P/4K3 b - - 0 300"]' '[SetUp "1"]' '' \
	    '300... a1=R+ 301. Kd2 Ra2+ 302. Kc3 Kd7 0-1' > f.pgn
	pgn2pos f.pgn 2>/dev/null | uci-eval -e "$(stockfish_path)" -d 2 2>/dev/null > f.pos
	# the records count from 0; Stockfish's game ply is 599 on
	[ "$(posdump --fields ply f.pos | head -n 1)" = "ply=0" ]
	posexport -F plain f.pos -o f.plain 2>/dev/null
	[ "$(grep '^ply ' f.plain | tr '\n' ' ')" = "ply 599 ply 600 ply 601 ply 602 ply 603 " ]
	posexport -F bin f.pos -o f.bin 2>/dev/null
	run /usr/bin/python3 -c 'import struct, sys; b = open("f.bin", "rb").read(); print(*[struct.unpack_from("<H", b, 40 * i + 36)[0] for i in range(len(b) // 40)])'
	assert_output "599 600 601 602 603"
	# binpack keeps the full-move number through its ply, and imported
	# and exported again it is the same file
	posexport -F binpack f.pos -o f.binpack 2>/dev/null
	cmp <(posimport -F binpack f.binpack 2>/dev/null | posdump --fields fen) \
	    <(posdump --fields fen f.pos | head -n 5)
	posimport -F binpack f.binpack 2>/dev/null | posexport -F binpack -o again.binpack 2>/dev/null
	cmp f.binpack again.binpack
	# a game of black to move at move 1 (ply 1 by the full-move number,
	# 0 by the record: one off, the record's stays) chains whole, and
	# round-trips
	printf '%s\n' '[Event "C"]' '[Result "*"]' '[FEN "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"]' '[SetUp "1"]' '' \
	    '1... e5 2. Nf3 Nc6 3. Bc4 *' > c.pgn
	pgn2pos c.pgn 2>/dev/null | uci-eval -e "$(stockfish_path)" -d 2 2>/dev/null > c.pos
	posexport -F plain c.pos -o c.plain 2>/dev/null
	[ "$(grep '^ply ' c.plain | tr '\n' ' ')" = "ply 0 ply 1 ply 2 ply 3 " ]
	posexport -F binpack c.pos -o c.binpack 2>/dev/null
	posimport -F binpack c.binpack 2>/dev/null | posexport -F binpack -o c2.binpack 2>/dev/null
	cmp c.binpack c2.binpack
}
