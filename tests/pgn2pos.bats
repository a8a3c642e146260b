#!/usr/bin/env bats
# pgn2pos: PGN oddities (expected FENs), a differential test against
# pgn-extract -Wepd, every compression and archive, EPD, each filter, bad
# input with its exact warnings, stable ids, and invalid calls.

bats_require_minimum_version 1.5.0
load helper

PGN="$TESTDATA/pgn"
L10K="$TESTDATA/lichess_db_10k.pgn"
L100K="$TESTDATA/lichess_db_100k.pgn"
PGN_EXTRACT=$(command -v pgn-extract || echo /usr/games/pgn-extract)

# Run pgn2pos with its (binary) output in out.pos; sets $status and
# $stderr.
p2p() {
	run --separate-stderr bash -c 'pgn2pos "$@" > out.pos' pgn2pos "$@"
}

# The core fields of every record, one line each.
core() {
	posdump --fields fen,ply,move,result,flags "$@"
}

# Compare pgn2pos on a testdata file with its .expected file.
golden() {
	p2p -q "$PGN/$1.pgn"
	assert_success
	diff -u "$PGN/$1.expected" <(core out.pos)
}

@test "golden: BOM, CRLF, comments, escape lines, NAGs, variations" {
	golden format
	# The main line is the Ruy Lopez: the last position after 5...Be7.
	run core out.pos
	assert_line --index 10 "r1bqk2r/1pppbppp/p1n2n2/4p3/B3P3/5N2/PPPP1PPP/RNBQ1RK1 w kq - 4 6 | ply=10 move=- result=1-0 flags=last"
	[ "${#lines[@]}" -eq 11 ]
}

# The text of lf.pgn with its line ends made CR alone (cr) or a mix of
# CR, CRLF and LF (mix), in $1.
line_ends() {
	case $1 in
	cr) tr '\n' '\r' ;;
	mix) awk 'BEGIN {ORS = ""}
		{ print $0 (NR % 3 == 0 ? "\r" : NR % 3 == 1 ? "\r\n" : "\n") }' ;;
	esac
}

@test "CR line ends (old Mac files), alone or mixed with LF and CRLF: read as the LF text, the same records and messages, at any -j" {
	{
		for f in "$PGN"/*.pgn; do tr -d '\r' < "$f"; printf '\n\n'; done
		tr -d '\r' < "$L10K"
		# a '%' escape line and a ';' comment, each with a '[' on it,
		# an escape line in a variation (with a ')' on it), a comment
		# over lines
		printf '\n[Event "esc"]\n[Site "s"]\n\n%% x [Event "no"]\n'
		printf '1. e4 ; ( [Event "no"]\n(1. d4 d5\n%% ) escaped\n'
		printf '2. c4) 1... e5 {a comment\nover [Event "x"]\nlines} 2. Nf3 *\n\n'
		# an unterminated comment, cut by the next game's line
		printf '[Event "cut"]\n\n1. e4 { never closed\n[Event "after"]\n'
		printf '[Result "1-0"]\n\n1. d4 1-0\n\n'
		# a tag left open, binary data: each skips to a line's end
		printf '[Event "bad tag\n[Result "*"]\n\n1. e4 *\n\n'
		printf '[Event "bin"]\n\n1. e4 \001\002 x\n[Event "next"]\n\n1. d4 *\n'
	} > lf.pgn
	{
		tr -d '\r' < "$PGN/positions.epd"
		printf '# a comment\n4k3/8/8/8/8/8/8/4K3 w\n\n'
		printf '4k3/8/8/8/8/8/8/4K3 w - - 0 1 ce 99999999999;\n'
		printf '4k3/8/8/8/8/8/8/4K3 w - - 0 1\n'
	} > lf.epd
	for ext in pgn epd; do
		mkdir -p lf
		cp lf.$ext lf/g.$ext
		(cd lf && pgn2pos g.$ext > out.pos 2> err)
		[[ "$(cat lf/err)" == *"games read"* ]] || fail "$(cat lf/err)"
		[ $ext = epd ] ||
			[[ "$(posdump --fields move lf/out.pos | sed 's/^move=//' |
			    paste -sd' ')" == *" e2e4 e7e5 g1f3 - e2e4 - d2d4 - e2e4 - d2d4 -" ]] ||
			fail "the games at the end are not read as meant"
		for kind in cr mix; do
			mkdir -p $kind
			line_ends $kind < lf.$ext > $kind/g.$ext
			(cd $kind && pgn2pos g.$ext > out.pos 2> err)
			cmp lf/out.pos $kind/out.pos || fail "$kind $ext: records differ"
			diff -u lf/err $kind/err || fail "$kind $ext: messages differ"
			# from a pipe
			pgn2pos < $kind/g.$ext 2> err > pipe.pos
			cmp lf/out.pos pipe.pos || fail "$kind $ext: piped"
			diff -u <(sed 's/g\.'$ext'/stdin/' lf/err) err
			for piece in 20 100 1000; do
				same_j 2 "$piece" $kind/g.$ext
				same_j 3 "$piece" $kind/g.$ext
			done
			cmp lf/out.pos one.pos || fail "$kind $ext: -j"
		done
	done
}

@test "golden: move numbers in every form" {
	golden movenumbers
}

@test "golden: 0-0 castling and promotions with and without =" {
	golden castling-promo
	run core out.pos
	assert_line --index 3 "Q4rk1/2P5/8/8/8/8/6p1/2KR3R b - - 0 2 | ply=3 move=g2h1q result=1-0 flags=-"
	assert_line --index 7 "2N2k2/8/8/8/8/8/8/2KR3q b - - 0 4 | ply=7 move=h1d1 result=1-0 flags=-"
}

@test "castling written 00 and 000 is castling, not two move numbers skipped" {
	printf '[Event "a"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. %s Nf6 5. d3 d6 6. Nc3 Bg4 7. Be3 Qd7 8. a3 %s *\n\n' 00 000 > d.pgn
	printf '[Event "a"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. %s Nf6 5. d3 d6 6. Nc3 Bg4 7. Be3 Qd7 8. a3 %s *\n\n' O-O O-O-O > o.pgn
	p2p d.pgn
	assert_success
	[ "$(posdump -c out.pos)" = "17 out.pos" ]
	cmp <(pgn2pos d.pgn 2>/dev/null | posdump) <(pgn2pos o.pgn 2>/dev/null | posdump)
}

@test "golden: over-disambiguated SAN and UCI-style moves" {
	golden disambig
}

@test "en passant marks: e.p. and ep, alone or glued to the move" {
	# exd6 in each spelling, then Nf6: the same six moves every time
	for ep in 'exd6 e.p.' 'exd6e.p.' 'exd6e.p.+' 'exd6ep' 'exd6ep+' \
	    'exd6 ep' 'e5xd6e.p.'; do
		printf '[Event "%s"]\n\n1. e4 a6 2. e5 d5 3. %s Nf6 *\n\n' \
		    "$ep" "$ep"
	done > ep.pgn
	p2p ep.pgn
	assert_success
	[ "$stderr" = "pgn2pos: 7 games read, 7 kept (0 truncated), 0 skipped; 49 positions written" ]
	posdump --fields move out.pos | sed 's/^move=//' | paste -sd' ' > got
	for ep in 1 2 3 4 5 6 7; do
		echo e2e4 a7a6 e4e5 d7d5 e5d6 g8f6 -
	done | paste -sd' ' > want
	diff -u want got
	# an "e" that is no mark is still a bad move
	printf '[Event "x"]\n\n1. e4 a6 2. e5 d5 3. exd6e Nf6 *\n' > bad.pgn
	p2p bad.pgn
	assert_success
	[ "${stderr%%$'\n'*}" = "pgn2pos: bad.pgn: game 1 (ply 4): illegal move \"exd6e\"; kept 5 positions" ]
}

@test "evaluation symbols in movetext (+-, =, +/-, N, ...) are passed over; a null move is still a bad move" {
	printf '[Event "x"]\n\n1. e4 e5 +- 2. Nf3 = Nc6 -+ 3. Bb5 +/- a6 N 4. Ba4 =/+ Nf6 += 5. O-O -/+ Be7 =+ 6. Re1 +/= b5 1-0\n' > g.pgn
	p2p g.pgn
	assert_success
	[ "$stderr" = "pgn2pos: 1 games read, 1 kept (0 truncated), 0 skipped; 13 positions written" ]
	[ "$(posdump --fields move out.pos | sed 's/^move=//' | paste -sd' ')" = "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1 f8e7 f1e1 b7b5 -" ]
	printf '[Event "x"]\n\n1. e4 -- 2. Nf3 *\n' > null.pgn
	p2p null.pgn
	[ "${stderr%%$'\n'*}" = "pgn2pos: null.pgn: game 1 (ply 1): illegal move \"--\"; kept 2 positions" ]
}

@test "a '%' escape line inside a variation is skipped whole, a ')' or '(' on it too" {
	{
		printf '[Event "a"]\n\n1. e4 (1. d4 d5\n%% ) an escape line\n'
		printf '2. c4) 1... e5 (1... c5\n%%(\n2. Nf3) 2. Nf3 *\n\n'
		printf '[Event "b"]\n\n1. d4 *\n'
	} > esc.pgn
	p2p esc.pgn
	assert_success
	[ "$stderr" = "pgn2pos: 2 games read, 2 kept (0 truncated), 0 skipped; 6 positions written" ]
	[ "$(posdump --fields move out.pos | sed 's/^move=//' | paste -sd' ')" = "e2e4 e7e5 g1f3 - d2d4 -" ]
	# a '%' inside a line of a variation is no escape: nothing, as before
	printf '[Event "a"]\n\n1. e4 (1. d4 %% x) e5 *\n' > mid.pgn
	p2p mid.pgn
	assert_success
	[ "$(posdump --fields move out.pos | sed 's/^move=//' | paste -sd' ')" = "e2e4 e7e5 -" ]
}

@test "golden: games without moves, missing Event, result disagreements" {
	golden empty-games
	run core out.pos
	# no moves: one record, the start position, last
	assert_line --index 0 "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | ply=0 move=- result=1/2-1/2 flags=last"
	# marker says 1/2-1/2 but the board is mate: 0-1
	assert_line --index 6 "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3 | ply=4 move=- result=0-1 flags=check,mate,last"
	# tag 1-0 and marker 0-1: the tag wins
	assert_line --index 12 "rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2 | ply=2 move=- result=1-0 flags=last"
}

@test "golden: Chess960 castling; other variants are skipped and counted" {
	p2p "$PGN/chess960.pgn"
	assert_success
	diff -u "$PGN/chess960.expected" <(core out.pos)
	[ "$stderr" = "pgn2pos: 2 games read, 1 kept (0 truncated), 1 skipped (1 variant); 4 positions written" ]
}

@test "PGN %eval and %clk become eval and clock extensions" {
	p2p -q "$PGN/annotations.pgn"
	assert_success
	diff -u "$PGN/annotations.expected" <(posdump --fields ply,eval,clock out.pos)
	# [%eval #-3] after 2.Qh5, black to move: black mates in 3
	run posdump --fields eval out.pos
	assert_line --index 3 --partial "eval{src=pgn limit=none score=mate:3 "
}

@test "engine match comments (cutechess, fastchess) become evaluations: the mover's score, M in plies or with --mate-moves in moves" {
	cat > em.pgn <<-'EOF'
	[Event "cutechess"]
	[Result "0-1"]

	1. f3 {-0.50/10 0.12s} e5 {+1.00/10 0.1s} 2. g4 {-M2/10 0.1s} Qh4# {+M1/10 0.1s} 0-1

	[Event "black first"]
	[FEN "4k3/8/8/8/8/8/4P3/4K3 b - - 0 1"]
	[SetUp "1"]

	1... Kd7 {-1.50/20 0.5s, tl=10s} 2. e4 {+M9/30 1s} Kd6 {book} 3. e5+ {+0.305/3 0s} *

	[Event "not scores"]

	1. e4 {1/2 the games} (1. d4 {+0.30/5 0s}) e5 {+0.5/} 2. Nf3 {+1.00/12x} Nc6 {-M0/5 0s} 3. Bb5 {M3/4 won} a6 {+0.00/0 0s} *
	EOF
	p2p em.pgn
	assert_success
	run posdump --fields game,ply,eval out.pos
	# the mover's view, turned to the side to move's: White's -0.50
	# after 1. f3 is +50 for Black
	assert_line --index 1 --partial "ply=1 eval{src=pgn limit=depth:10 score=cp:50 depth=10 "
	assert_line --index 2 --partial "ply=2 eval{src=pgn limit=depth:10 score=cp:-100 "
	# -M2: White is mated in 2 plies, so Black mates in 1
	assert_line --index 3 --partial "ply=3 eval{src=pgn limit=depth:10 score=mate:1 "
	# +M1: the move mated; the position is over, no evaluation
	refute_line --index 4 --partial "eval"
	assert_line --index 6 --partial "ply=1 eval{src=pgn limit=depth:20 score=cp:150 "
	# +M9: White mates in 9 plies (5 moves), so Black is mated in 4
	assert_line --index 7 --partial "ply=2 eval{src=pgn limit=depth:30 score=mate:-4 "
	refute_line --index 8 --partial "eval"
	# +0.305 rounds to 31 centipawns, as %eval does
	assert_line --index 9 --partial "ply=4 eval{src=pgn limit=depth:3 score=cp:-31 "
	# "1/2", a variation's comment, no depth, a word after it, M0, no
	# sign on a mate (M3 is read: a score may lack its sign), depth 0
	# (no search)
	[ "$(posdump --fields game,eval out.pos | tail -n +11 | grep -c eval)" -eq 1 ]
	assert_line --index 15 --partial "ply=5 eval{src=pgn limit=depth:4 score=mate:-1 "
	# fastchess counts moves: +M9 is mate in 9, Black mated in 8
	p2p --mate-moves em.pgn
	run posdump --fields game,ply,eval out.pos
	assert_line --index 3 --partial "ply=3 eval{src=pgn limit=depth:10 score=mate:2 "
	assert_line --index 7 --partial "ply=2 eval{src=pgn limit=depth:30 score=mate:-8 "
	assert_line --index 15 --partial "ply=5 eval{src=pgn limit=depth:4 score=mate:-2 "
	same_j 2 60 em.pgn
	same_j 2 60 --mate-moves em.pgn
	# out of range: named, dropped, the game kept
	printf '[Event "x"]\n\n1. e4 {+M99999999999/10 1s} e5 {+0.10/70000} *\n' > big.pgn
	p2p big.pgn
	assert_success
	[ "$stderr" = 'pgn2pos: big.pgn: game 1 (ply 1): evaluation out of range "+M99999999999/10"; dropped (and 1 more in the game)
pgn2pos: 1 games read, 1 kept (0 truncated), 0 skipped; 3 positions written' ] || fail "$stderr"
}

@test "metadata extension, and --no-meta leaves it out" {
	pgn2pos -q "$L10K" > out.pos
	run posdump --fields meta out.pos
	assert_line --index 0 'meta{white_elo=1028 black_elo=1132 tc=300+3 termination=normal event="Rated Blitz game" site="https://lichess.org/ENPo6ReH" white="alanbrito4" black="Meridyan" date="2025.05.01" termination_tag="Normal"}'
	pgn2pos -q --no-meta "$L10K" > nometa.pos
	run posdump --fields meta nometa.pos
	refute_output --partial meta
	[ "$(posdump -c nometa.pos)" = "262 nometa.pos" ]
}

@test "tag values: \\\" and \\\\ are escapes, a backslash before anything else is itself" {
	cat > esc.pgn <<-'EOF'
	[Event "C:\x\y \"q\" a\\b"]
	[White "P\n"]

	1. e4 *
	EOF
	pgn2pos -q esc.pgn > out.pos
	run posdump --json out.pos
	[ "$(jq -r 'select(.ply == 0) | .exts[] | select(.type == "meta") | .event, .white' <<< "$output")" = 'C:\x\y "q" a\b
P\n' ]
}

@test "termination: Lichess's tags, and Chess.com's sentences" {
	for t in "Normal" "Time forfeit" "Abandoned" "Rules infraction" \
	    "Unterminated" "Hikaru won by resignation" "Hikaru won on time" \
	    "Game drawn by timeout vs insufficient material" \
	    "MagnusCarlsen won - game abandoned" "Game drawn by agreement" \
	    "Game drawn by 50-move rule" "Black won by checkmate" \
	    "Game drawn by stalemate" "Game drawn by repetition" \
	    "Game drawn by insufficient material" "Adjudication"; do
		printf '[Event "%s"]\n[Termination "%s"]\n\n1. e4 *\n\n' "$t" "$t"
	done > term.pgn
	pgn2pos -q term.pgn > out.pos
	run posdump --fields ply,meta out.pos
	[ "$(grep '^ply=0' <<< "$output" | grep -o 'termination=[a-z]*' | cut -d= -f2 | paste -sd' ')" = "normal time abandoned rules unterminated normal time time abandoned normal normal normal normal normal normal other" ]
}

@test "a huge single-line game" {
	{
		echo '[Event "long"]'
		echo
		for i in $(seq 1 2000); do
			printf '%d. Nf3 Nf6 %d. Ng1 Ng8 ' $((2 * i - 1)) $((2 * i))
		done
		echo '1/2-1/2'
	} > long.pgn
	[ "$(wc -l < long.pgn)" -eq 3 ]
	p2p long.pgn
	assert_success
	[ "$stderr" = "pgn2pos: 1 games read, 1 kept (0 truncated), 0 skipped; 8001 positions written" ]
	run core out.pos
	assert_line --index 8000 "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 255 4001 | ply=8000 move=- result=1/2-1/2 flags=last"
}

@test "a game longer than 65535 plies is cut at the last ply a record holds" {
	{
		echo '[Event "very long"]'
		echo
		awk 'BEGIN {for (i = 1; i <= 16400; i++) printf "%d. Nf3 Nf6 %d. Ng1 Ng8 ", 2 * i - 1, 2 * i; print "1/2-1/2"}'
	} > vlong.pgn
	p2p vlong.pgn
	assert_success
	[ "$stderr" = "pgn2pos: vlong.pgn: game 1 (ply 65535): game longer than 65535 plies; kept 65536 positions
pgn2pos: 1 games read, 1 kept (1 truncated), 0 skipped; 65536 positions written" ]
	run posdump --fields ply,move,flags out.pos
	assert_line --index 65535 "ply=65535 move=- flags=last,truncated"
}

@test "differential: same positions as pgn-extract -Wepd on the Lichess samples" {
	for f in "$L10K" "$L100K"; do
		# pgn-extract writes an en passant square after every double
		# push; pgn2pos only when a capture is legal.  Compare the
		# first three fields, then check every ep pgn2pos writes is
		# the one pgn-extract wrote.
		"$PGN_EXTRACT" -Wepd -s "$f" 2>/dev/null | grep -v '^$' |
			awk '{print $1, $2, $3, $4}' > pe.txt
		pgn2pos -q "$f" | posdump --fields fen |
			awk '{print $1, $2, $3, $4}' > pp.txt
		[ "$(wc -l < pp.txt)" -gt 200 ]
		diff <(cut -d' ' -f1-3 pe.txt) <(cut -d' ' -f1-3 pp.txt)
		paste -d' ' pe.txt pp.txt | awk '$8 != "-" && $8 != $4 {bad++} $8 != "-" {ep++} END {print ep + 0, bad + 0}' > ep.txt
		read -r ep bad < ep.txt
		[ "$bad" -eq 0 ]
	done
}

@test "empty input is an empty stream" {
	p2p - < /dev/null
	assert_success
	[ "$(posdump -c out.pos)" = "0 out.pos" ]
	[ "$stderr" = "pgn2pos: 0 games read, 0 kept (0 truncated), 0 skipped; 0 positions written" ]
	: > empty.pgn
	gzip -c empty.pgn > empty.gz
	p2p -q empty.pgn empty.gz
	assert_success
	[ "$(posdump -c out.pos)" = "0 out.pos" ]
}

@test "concatenated input: operands, cat, and concatenated outputs agree" {
	pgn2pos -q "$L10K" "$L100K" > both.pos
	cat "$L10K" "$L100K" | pgn2pos -q > cat.pos
	pgn2pos -q "$L10K" > a.pos
	pgn2pos -q "$L100K" > b.pos
	cat a.pos b.pos > ab.pos
	[ "$(posdump -c both.pos)" = "3079 both.pos" ]
	diff <(posdump both.pos) <(posdump cat.pos)
	diff <(posdump both.pos) <(posdump ab.pos)
}

@test "a directory: every file under it, subdirectories too, in natural order, dot files left out; the same at -j 2" {
	mkdir -p d/sub d/.git
	cp "$L10K" d/g10.pgn
	gzip -c "$L100K" > d/g9.pgn.gz
	cp "$PGN/bad-moves.pgn" d/sub/a.pgn
	echo "not a game" > d/.git/HEAD
	echo "[Event" > d/.notes.pgn
	# natural order: g9 before g10, then sub ("g" before "s")
	pgn2pos -q d/g9.pgn.gz d/g10.pgn d/sub/a.pgn > want.pos 2> want.err
	p2p -q d/
	assert_success
	diff <(posdump want.pos) <(posdump out.pos)
	[[ "$stderr" == *"pgn2pos: d/sub/a.pgn: game 2 (ply 2): illegal move \"Qxh9\"; kept 3 positions"* ]] ||
		fail "$stderr"
	p2p -q -j 2 d
	cmp want.pos out.pos
	# a file under it that cannot be read is named, the others read
	ln -s nowhere d/g9b.pgn
	p2p -q d
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"pgn2pos: d/g9b.pgn: No such file or directory"* ]] || fail "$stderr"
	diff <(posdump want.pos) <(posdump out.pos)
}

@test "a directory with links back up (loops): each loop named and not entered, every file read once, exit 1; a link elsewhere is followed" {
	mkdir -p d/sub other
	cp "$L10K" d/a.pgn
	cp "$L100K" d/sub/b.pgn
	cp "$PGN/bad-moves.pgn" other/c.pgn
	pgn2pos -q d/a.pgn d/sub/b.pgn > want.pos
	# a link to ".." below: each file once, not once per trip round
	ln -s .. d/sub/up
	run --separate-stderr timeout 30 pgn2pos -q -o out.pos d
	[ "$status" -eq 1 ]
	[ "$stderr" = "pgn2pos: d/sub/up: a directory loop (d again), not entered" ]
	cmp want.pos out.pos
	# two links to ".": no end of paths before; the same from -j 2
	ln -s . d/x
	ln -s . d/y
	for j in 1 2; do
		run --separate-stderr timeout 30 pgn2pos -q -j $j -o out.pos d/
		[ "$status" -eq 1 ]
		[ "$stderr" = "pgn2pos: d/sub/up: a directory loop (d again), not entered
pgn2pos: d/x: a directory loop (d again), not entered
pgn2pos: d/y: a directory loop (d again), not entered" ] || fail "$stderr"
		cmp want.pos out.pos
	done
	# the operand a link itself: its own name in the messages
	ln -s d dl
	run --separate-stderr timeout 30 pgn2pos -q -o out.pos dl
	[ "$status" -eq 1 ]
	[[ "$stderr" == "pgn2pos: dl/sub/up: a directory loop (dl again), not entered"* ]] ||
		fail "$stderr"
	cmp want.pos out.pos
	# a link to a directory that is not above it is followed, its files
	# read where its name sorts
	rm d/x d/y
	ln -s ../../other d/sub/o
	pgn2pos -q d/a.pgn d/sub/b.pgn other/c.pgn > want2.pos 2>/dev/null
	run --separate-stderr timeout 30 pgn2pos -q -o out.pos d
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"pgn2pos: d/sub/o/c.pgn: game 2 (ply 2): illegal move"* ]] ||
		fail "$stderr"
	[[ "${stderr##*$'\n'}" == "pgn2pos: d/sub/up: a directory loop (d again), not entered" ]] ||
		fail "$stderr"
	diff <(posdump want2.pos) <(posdump out.pos)
}

@test "every compression, detected from content" {
	core <(pgn2pos -q "$L100K") > plain.txt
	[ "$(wc -l < plain.txt)" -eq 2817 ]
	gzip -c "$L100K" > g.gz
	bzip2 -c "$L100K" > b.bz2
	xz -c "$L100K" > x.xz
	zstd -q -c "$L100K" > z.zst
	cp g.gz misnamed.pgn
	for f in g.gz b.bz2 x.xz z.zst misnamed.pgn; do
		diff plain.txt <(core <(pgn2pos -q "$f")) || fail "$f differs"
	done
	# from stdin too
	diff plain.txt <(core <(pgn2pos -q < x.xz))
}

@test "standard input opened on a file past its start is read from there" {
	# The shell reads the first line (and seeks back to its end); pgn2pos
	# reads the rest, as cat(1) would: PGN and EPD text (the first read
	# directly, the second through libarchive, whose seeks count from
	# there too), and compressed or archived input after a line.
	core <(pgn2pos -q "$L10K") > plain.txt
	{ echo "junk line"; cat "$L10K"; } > off.pgn
	(read -r _; pgn2pos -q > off.pos 2> off.err) < off.pgn
	diff plain.txt <(core off.pos)
	[ ! -s off.err ] || fail "$(cat off.err)"
	grep -v '^#' "$PGN/positions.epd" | grep . > p.epd
	core <(pgn2pos -q p.epd) > epd.txt
	{ echo "8/8/8/8/8/8/8/K6k w - - 0 1"; cat p.epd; } > off.epd
	(read -r _; pgn2pos -q > off.pos) < off.epd
	diff epd.txt <(core off.pos)
	cp "$L10K" g.pgn
	tar cf g.tar g.pgn
	xz -c g.pgn > g.xz
	for f in g.tar g.xz; do
		{ echo "junk line"; cat "$f"; } > "off.$f"
		(read -r _; pgn2pos -q > off.pos) < "off.$f"
		diff plain.txt <(core off.pos) || fail "$f differs"
	done
}

@test "multi-frame zstd and multi-member gzip are read whole" {
	head -n 100 "$L100K" > part1
	tail -n +101 "$L100K" > part2
	{ zstd -q -c part1; zstd -q -c part2; } > multi.zst
	{ gzip -c part1; gzip -c part2; } > multi.gz
	core <(pgn2pos -q "$L100K") > plain.txt
	diff plain.txt <(core <(pgn2pos -q multi.zst))
	diff plain.txt <(core <(pgn2pos -q multi.gz))
}

@test "archives: tar, tar.gz, tar.zst and zip members in order, named in warnings" {
	mkdir d
	cp "$L10K" d/a.pgn
	cp "$PGN/bad-moves.pgn" d/b.pgn
	tar cf t.tar -C d a.pgn b.pgn
	tar czf t.tgz -C d a.pgn b.pgn
	tar --zstd -cf t.tar.zst -C d a.pgn b.pgn
	# zip(1), or bsdtar from libarchive-tools
	if command -v zip >/dev/null; then
		(cd d && zip -q ../t.zip a.pgn b.pgn)
	else
		bsdtar --format zip -cf t.zip -C d a.pgn b.pgn
	fi
	core <(cat d/a.pgn d/b.pgn | pgn2pos -q 2>/dev/null) > want.txt
	[ "$(wc -l < want.txt)" -eq 283 ]
	for f in t.tar t.tgz t.tar.zst t.zip; do
		p2p "$f"
		assert_success
			diff want.txt <(core out.pos) || fail "$f differs"
		[[ "$stderr" == *"pgn2pos: $f: b.pgn: game 2 (ply 2): illegal move \"Qxh9\"; kept 3 positions"* ]] ||
			fail "$f: $stderr"
	done
	# a zip read from a pipe
	diff want.txt <(core <(pgn2pos -q < t.zip 2>/dev/null))
}

@test "EPD input: auto-detected, --epd, opcodes mapped" {
	p2p -q "$PGN/positions.epd"
	assert_success
	diff -u "$PGN/positions.expected" <(posdump --fields fen,ply,result,flags,eval out.pos)
	pgn2pos -q --epd < "$PGN/positions.epd" > forced.pos
	diff <(posdump out.pos) <(posdump forced.pos)
	# --pgn reads the same text as (broken) PGN
	p2p --pgn "$PGN/positions.epd"
	run core out.pos
	refute_output --partial 'ply=0'
	# an invalid EPD line is reported by line number
	printf '%s\n' '8/8/8/8/8/8/8/8 w - -' '4k3/8/8/8/8/8/8/4K3 w - -' > bad.epd
	p2p bad.epd
	assert_success
	[ "${stderr%%$'\n'*}" = 'pgn2pos: bad.epd: line 1: invalid FEN "8/8/8/8/8/8/8/8 w - -": no white king; line skipped' ] || fail "$stderr"
}

@test "EPD: the clock opcodes hmvc and fmvn give a line of four fields its clocks" {
	K='4k3/8/8/8/8/8/8/4K2R w K -'
	printf '%s\n' "$K hmvc 50; fmvn 30;" "$K bm Rh8+; id \"x\"; hmvc 7;" \
	    "$K fmvn 12; ce 30;" "$K 3 9 hmvc 50; fmvn 30;" "$K hmvc x;" \
	    "$K hmvc 5 fmvn 3;" "$K hmvc 70000;" "$K hmvc \"12\";" > clk.epd
	p2p clk.epd
	assert_success
	run posdump --fields fen,eval out.pos
	assert_output "$K 50 30
$K 7 1
$K 0 12 | eval{src=pgn limit=none score=cp:30 depth=0 seldepth=0 nodes=0 time=0 multipv=1 best=- pv=- engine=\"\"}
$K 3 9
$K 12 1"
	[ "$stderr" = "pgn2pos: clk.epd: line 5: invalid FEN \"$K\": bad hmvc 'x'; line skipped
pgn2pos: clk.epd: line 6: invalid FEN \"$K\": bad hmvc '5 fmvn 3'; line skipped
pgn2pos: clk.epd: line 7: invalid FEN \"$K 70000 1\": bad half-move clock '70000'; line skipped
pgn2pos: 8 games read, 5 kept (0 truncated), 3 skipped (3 invalid FEN); 5 positions written" ] || fail "$stderr"
}

@test "--skip-plies and --max-plies" {
	pgn2pos -q --skip-plies 10 --max-plies 20 "$L10K" > out.pos
	run posdump --fields ply out.pos
	[ "${#lines[@]}" -eq 50 ]
	refute_line 'ply=9'
	refute_line 'ply=20'
	assert_line 'ply=10'
	assert_line 'ply=19'
}

@test "--min-elo, --max-elo and --time-control" {
	p2p --min-elo 1500 "$L100K"
	run posdump --fields meta out.pos
	for l in "${lines[@]}"; do
		w=${l#*white_elo=}; w=${w%% *}
		b=${l#*black_elo=}; b=${b%% *}
		[ "$w" -ge 1500 ] && [ "$b" -ge 1500 ] || fail "$l"
	done
	[ "${#lines[@]}" -gt 0 ]
	pgn2pos -q --max-elo 1499 "$L100K" > low.pos
	pgn2pos -q "$L100K" > all.pos
	[ "$(posdump --fields game out.pos low.pos | sort -u | wc -l)" -lt "$(posdump --fields game all.pos | sort -u | wc -l)" ]
	# time controls: 300+3 (blitz), 60+0 (bullet) ... count games per class
	for c in bullet blitz rapid classical; do
		pgn2pos -q --time-control "$c" "$L100K" > tc.pos
		posdump --fields meta tc.pos | sed 's/.*tc=\([^ ]*\).*/\1/' | sort -u > tcs.txt
		while read -r tc; do
			base=${tc%+*} inc=${tc#*+}
			est=$((base + 40 * inc))
			case $c in
			bullet) [ "$est" -ge 30 ] && [ "$est" -lt 180 ] ;;
			blitz) [ "$est" -ge 180 ] && [ "$est" -lt 480 ] ;;
			rapid) [ "$est" -ge 480 ] && [ "$est" -lt 1500 ] ;;
			classical) [ "$est" -ge 1500 ] ;;
			esac || fail "$c: $tc"
		done < tcs.txt
	done
	# The class boundaries are scalachess's inclusive ranges: 0-29
	# ultrabullet, 30-179 bullet, 180-479 blitz, 480-1499 rapid.
	for t in 29:ultrabullet 30:bullet 179:bullet 180:blitz 0+11:blitz \
	    479:blitz 480:rapid 1499:rapid 1500:classical; do
		printf '[Event "e"]\n[TimeControl "%s"]\n\n1. e4 *\n' \
		    "${t%:*}" > one.pgn
		for c in ultrabullet bullet blitz rapid classical; do
			n=$(pgn2pos -q --time-control "$c" one.pgn | posdump -c |
			    cut -d" " -f1)
			if [ "$c" = "${t#*:}" ]; then
				[ "$n" -eq 2 ] || fail "${t%:*} not $c"
			else
				[ "$n" -eq 0 ] || fail "${t%:*} is not $c"
			fi
		done
	done
	# a day or more a move is correspondence (Chess.com's Daily games);
	# Lichess writes "-"; a FIDE period counts its seconds as the base
	for t in 1/86400:correspondence 1/259200:correspondence \
	    -:correspondence 40/7200:classical 40/3456000:correspondence \
	    40/3455999:classical 1/60:bullet; do
		printf '[Event "e"]\n[TimeControl "%s"]\n\n1. e4 *\n' \
		    "${t%:*}" > one.pgn
		n=$(pgn2pos -q --time-control "${t#*:}" one.pgn | posdump -c |
		    cut -d" " -f1)
		[ "$n" -eq 2 ] || fail "${t%:*} not ${t#*:}"
	done
	pgn2pos -q --time-control blitz,bullet,rapid,classical,ultrabullet,correspondence "$L100K" > any.pos
	diff <(posdump any.pos) <(posdump all.pos)
	p2p --time-control blitz "$L100K"
	[[ "$stderr" == *"skipped ("*"time control)"* ]]
}

@test "--sample and --per-game are reproducible with --seed" {
	pgn2pos -q --sample 0.3 --seed 7 "$L100K" > s1.pos
	pgn2pos -q --sample 0.3 --seed 7 "$L100K" > s2.pos
	pgn2pos -q --sample 0.3 --seed 8 "$L100K" > s3.pos
	cmp s1.pos s2.pos
	! cmp -s s1.pos s3.pos
	n=$(posdump -c s1.pos | cut -d' ' -f1)
	[ "$n" -gt 600 ] && [ "$n" -lt 1100 ]	# 2817 x 0.3 = 845
	pgn2pos -q --per-game 3 --seed 1 "$L100K" > p1.pos
	pgn2pos -q --per-game 3 --seed 1 "$L100K" > p2.pos
	cmp p1.pos p2.pos
	[ "$(posdump -c p1.pos)" = "141 p1.pos" ]	# 47 games x 3
	[ "$(posdump --fields game p1.pos | sort | uniq -c | awk '$1 != 3' | wc -l)" -eq 0 ]
	# --per-game picks within the ply range
	pgn2pos -q --per-game 2 --skip-plies 30 --max-plies 32 "$L100K" > p3.pos
	run posdump --fields ply p3.pos
	for l in "${lines[@]}"; do
		[ "$l" = ply=30 ] || [ "$l" = ply=31 ] || fail "$l"
	done
}

@test "--unique drops repeated positions and states its false-positive rate" {
	p2p --unique "$L100K" "$L100K"
	assert_success
	n=$(posdump -c out.pos | cut -d' ' -f1)
	all=$(pgn2pos -q "$L100K" | posdump --fields fen | cut -d' ' -f1-4 | sort -u | wc -l)
	[ "$n" -eq "$all" ]
	[[ "$stderr" == *"positions written, $((5634 - all)) duplicates dropped (false-positive rate "* ]] || fail "$stderr"
	pgn2pos -q --unique-mem 1 "$L100K" > small.pos
	[ "$(posdump -c small.pos)" = "$all small.pos" ]
}

@test "bad moves: exact warnings, earlier positions kept, run goes on" {
	p2p "$PGN/bad-moves.pgn"
	assert_success
	[ "$stderr" = "pgn2pos: $PGN/bad-moves.pgn: game 2 (ply 2): illegal move \"Qxh9\"; kept 3 positions
pgn2pos: $PGN/bad-moves.pgn: game 3 (ply 6): illegal move \"Ng5\"; kept 7 positions
pgn2pos: 4 games read, 4 kept (2 truncated), 0 skipped; 21 positions written" ]
	diff -u "$PGN/bad-moves.expected" <(core out.pos)
}

@test "bad text: unterminated comment, tag and variation, bad FEN, cut-off game" {
	p2p "$PGN/bad-text.pgn"
	assert_success
	[ "$stderr" = "pgn2pos: $PGN/bad-text.pgn: game 1 (ply 1): unterminated comment; kept 2 positions
pgn2pos: $PGN/bad-text.pgn: game 2: unterminated tag; game skipped
pgn2pos: $PGN/bad-text.pgn: game 3: invalid FEN \"8/8/8/8/8/8/8/8 w - - 0 1\": no white king; game skipped
pgn2pos: $PGN/bad-text.pgn: game 5 (ply 2): unterminated variation; kept 3 positions
pgn2pos: $PGN/bad-text.pgn: game 6 (ply 3): input ends inside the game; kept 4 positions
pgn2pos: 6 games read, 4 kept (3 truncated), 2 skipped (1 invalid FEN, 1 bad tag); 12 positions written" ]
	diff -u "$PGN/bad-text.expected" <(core out.pos)
}

@test "a tag is read within 64 KiB: a longer one is named as such, the game skipped, at any -j and from a pipe" {
	/usr/bin/python3 - <<-'EOF'
	g = '[Event "e"]\n[Annotator "%s"]\n[Result "1-0"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n'
	open('long.pgn', 'w').write(g % ('x' * 70000) + g % ('y' * 65000) + g % 'z')
	EOF
	want="pgn2pos: long.pgn: game 1: tag longer than 64 KiB; game skipped
pgn2pos: 3 games read, 2 kept (0 truncated), 1 skipped (1 bad tag); 16 positions written"
	for j in 1 2; do
		run --separate-stderr pgn2pos -j $j long.pgn -o out$j.pos
		assert_success
		[ "$stderr" = "$want" ] || fail "-j $j: $stderr"
	done
	cmp out1.pos out2.pos
	run --separate-stderr bash -c 'cat long.pgn | pgn2pos > out3.pos'
	[ "$stderr" = "${want//long.pgn/stdin}" ] || fail "$stderr"
	cmp out1.pos out3.pos
}

@test "# comment lines: before an EPD file's first position, however many, they do not make it PGN; in PGN between games and tags they are comments; line numbers as with --epd, % lines counted; the same at any -j, piped or not" {
	printf '# made by hand\n\n# second comment\n%s\nnot a fen\n' \
	    'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - ce 20;' > c.epd
	for opt in "" --epd "-j 2"; do
		run --separate-stderr pgn2pos $opt c.epd -o out.pos
		assert_success
		[ "$stderr" = "pgn2pos: c.epd: line 5: invalid FEN \"not a fen\": FEN needs 4 to 6 fields, not 3; line skipped
pgn2pos: 2 games read, 1 kept (0 truncated), 1 skipped (1 invalid FEN); 1 positions written" ] || fail "$opt: $stderr"
		run posdump --fields fen,eval out.pos
		assert_output --partial "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
	done
	# a comment header longer than the window the format is decided in
	# (64 KiB from a pipe, the input buffer from a file): the same at
	# any -j, from a file and from a pipe
	/usr/bin/python3 -c "
import sys
sys.stdout.write('# ' + 'c' * 70 + '\n')
sys.stdout.write(('# ' + 'c' * 70 + '\n') * 19000)
for i in range(50):
    sys.stdout.write('4k3/8/8/8/8/8/8/4K3 w - - hmvc %d; fmvn 1;\n' % i)" > long.epd
	for j in 1 2; do
		run --separate-stderr pgn2pos -j $j long.epd -o f$j.pos
		[ "$stderr" = "pgn2pos: 50 games read, 50 kept (0 truncated), 0 skipped; 50 positions written" ] || fail "file -j $j: $stderr"
		run --separate-stderr bash -c "cat long.epd | pgn2pos -j $j -o p$j.pos"
		[ "$stderr" = "pgn2pos: 50 games read, 50 kept (0 truncated), 0 skipped; 50 positions written" ] || fail "pipe -j $j: $stderr"
	done
	cmp f1.pos f2.pos
	cmp f1.pos p1.pos
	cmp f1.pos p2.pos
	# in PGN, where no line starts with #, a # line between games or
	# tags is a comment too
	printf '# made by hand\n[Event "a"]\n# a note\n[Site "b"]\n\n1. e4 e5 *\n\n# end\n' > c.pgn
	for j in 1 2; do
		run --separate-stderr pgn2pos -j $j c.pgn -o c$j.pos
		[ "$stderr" = "pgn2pos: 1 games read, 1 kept (0 truncated), 0 skipped; 3 positions written" ] || fail "pgn -j $j: $stderr"
	done
	cmp c1.pos c2.pos
	# a % escape line counts as a line too
	printf '%%escape\n# made by hand\n%s\nnot a fen\n' \
	    '4k3/8/8/8/8/8/8/4K3 w - -' > e.epd
	for j in 1 2; do
		POSFLOW_PGN_PIECE=20 run --separate-stderr pgn2pos -j $j e.epd -o e$j.pos
		[ "$stderr" = "pgn2pos: e.epd: line 4: invalid FEN \"not a fen\": FEN needs 4 to 6 fields, not 3; line skipped
pgn2pos: 2 games read, 1 kept (0 truncated), 1 skipped (1 invalid FEN); 1 positions written" ] || fail "% -j $j: $stderr"
	done
	cmp e1.pos e2.pos
}

@test "comments outside games are not games" {
	printf '{ a file comment }\n; a line comment\n%%escape\n\n[Event "a"]\n\n1. e4 *\n\n{ trailing comment }\n' > c.pgn
	p2p c.pgn
	assert_success
	[ "$stderr" = "pgn2pos: 1 games read, 1 kept (0 truncated), 0 skipped; 2 positions written" ]
	[ "$(posdump -c out.pos)" = "2 out.pos" ]
}

@test "binary garbage: reported, skipped to the next game" {
	printf '[Event "x"]\n[Result "*"]\n\n1. e4 e5 2. Nf3 \000\001\002\377 junk\n\003\n[Event "y"]\n[Result "*"]\n\n1. d4 *\n' > bin.pgn
	p2p bin.pgn
	assert_success
	[ "$stderr" = "pgn2pos: bin.pgn: game 1 (ply 3): binary data; kept 4 positions
pgn2pos: 2 games read, 2 kept (1 truncated), 0 skipped; 6 positions written" ]
	run core out.pos
	assert_line --index 3 "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2 | ply=3 move=- result=* flags=last,truncated"
	assert_line --index 5 "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1 | ply=1 move=- result=* flags=last"
	# pure noise is no game: a file with nothing but is named, exit 1,
	# and the files after it are still read, at any -j
	head -c 4096 /dev/zero | tr '\0' '\001' > noise
	p2p noise
	[ "$status" -eq 1 ]
	[ "$(posdump -c out.pos)" = "0 out.pos" ]
	[ "$stderr" = "pgn2pos: noise: before the first game: binary data; text skipped
pgn2pos: noise: no PGN or EPD game in it
pgn2pos: 0 games read, 0 kept (0 truncated), 0 skipped; 1 stretch of text between games skipped; 0 positions written" ]
	for j in 1 3; do
		p2p -j $j bin.pgn noise bin.pgn
		[ "$status" -eq 1 ]
		[ "$(posdump -c out.pos)" = "12 out.pos" ]
		[[ "$stderr" == *"pgn2pos: noise: no PGN or EPD game in it
pgn2pos: bin.pgn: game 1 (ply 3): binary data; kept 4 positions
pgn2pos: 4 games read, 4 kept (2 truncated), 0 skipped; 1 stretch of text between games skipped; 12 positions written" ]] ||
			fail "-j $j: $stderr"
	done
	# a game skipped for bad text beside one kept is dirty data, not a
	# wrong file; an empty file is an empty input
	{ cat noise; printf '\n[Event "z"]\n\n1. e4 *\n'; } > noisy.pgn
	p2p noisy.pgn
	assert_success
	[ "$(posdump -c out.pos)" = "2 out.pos" ]
	: > empty.pgn
	p2p empty.pgn
	assert_success
	[ "$stderr" = "pgn2pos: 0 games read, 0 kept (0 truncated), 0 skipped; 0 positions written" ]
}

@test "text between games that is no game takes no game number: the games are numbered as pgn-extract counts them, at any -j" {
	# junk before the first game, a junk line, words after a result,
	# binary data and a comment left open at the end: none is a game
	printf 'junk before\n\n[Event "a"]\n\n1. e4 e5 1-0\n\nsome junk text\n\n' > stray.pgn
	printf '[Event "b"]\n\n1. e4 Ke3 0-1 trailing words\n\n' >> stray.pgn
	printf '[Event "c"]\n\n1. d4 Kd3 *\n\001\002\n\n' >> stray.pgn
	printf '[Event "d"]\n\n1. c4 Kc3 *\n{ open\n' >> stray.pgn
	p2p stray.pgn
	assert_success
	[ "$stderr" = "pgn2pos: stray.pgn: before the first game: illegal move \"junk\"; text skipped
pgn2pos: stray.pgn: after game 1: illegal move \"some\"; text skipped
pgn2pos: stray.pgn: game 2 (ply 1): illegal move \"Ke3\"; kept 2 positions
pgn2pos: stray.pgn: after game 2: illegal move \"trailing\"; text skipped
pgn2pos: stray.pgn: game 3 (ply 1): illegal move \"Kd3\"; kept 2 positions
pgn2pos: stray.pgn: after game 3: binary data; text skipped
pgn2pos: stray.pgn: game 4 (ply 1): illegal move \"Kc3\"; kept 2 positions
pgn2pos: stray.pgn: after game 4: unterminated comment; text skipped
pgn2pos: 4 games read, 4 kept (3 truncated), 0 skipped; 5 stretches of text between games skipped; 9 positions written" ] ||
		fail "$stderr"
	# pgn-extract counts the same four games
	if [ -x "$PGN_EXTRACT" ]; then
		"$PGN_EXTRACT" -Wepd -o /dev/null stray.pgn > pe.log 2>&1 || true
		grep -q "out of 4\." pe.log || fail "pgn-extract: $(tail -n 1 pe.log)"
	fi
	# --chunks counts the text too, as it always did (a rerun splits the
	# same way): 9 units in chunks of 2
	for j in 1 3; do
		rm -rf ch
		pgn2pos -q -j $j --chunks 2 -o ch stray.pgn 2>/dev/null
		[ "$(for f in ch/*; do posdump -c "$f"; done)" = "3 ch/chunk-000000.pos
2 ch/chunk-000001.pos
2 ch/chunk-000002.pos
2 ch/chunk-000003.pos
0 ch/chunk-000004.pos" ]
	done
	# a line that starts with '[' is a tag section (a game), bad or not;
	# a result marker with no move makes a game too (as pgn-extract has it)
	printf '[Event "a"]\n\n1. e4 *\n\njunk 1-0\n\n' > tag.pgn
	printf '[Event "x\n\n1. e4 e5\n\n[Event "b"]\n\n1. e4 Ke3 *\n' >> tag.pgn
	p2p tag.pgn
	assert_success
	[ "$stderr" = "pgn2pos: tag.pgn: game 2 (ply 0): illegal move \"junk\"; game skipped
pgn2pos: tag.pgn: game 3: unterminated tag; game skipped
pgn2pos: tag.pgn: game 4 (ply 1): illegal move \"Ke3\"; kept 2 positions
pgn2pos: 4 games read, 2 kept (1 truncated), 2 skipped (1 bad tag, 1 bad text); 4 positions written" ] ||
		fail "$stderr"
	# the numbers and messages of -j, wherever the pieces are cut
	for piece in 10 30 100; do
		same_j 2 "$piece" stray.pgn tag.pgn
		same_j 3 "$piece" stray.pgn tag.pgn
	done
	# and with the games of a large file around the text
	{ cat "$L10K"; cat stray.pgn; cat "$L10K"; } > big.pgn
	p2p big.pgn
	n=$(grep -c '^\[Event ' "$L10K")
	[[ "$stderr" == *"big.pgn: after game $((n + 4)): unterminated comment; text skipped"* ]] ||
		fail "$stderr"
	same_j 2 500 big.pgn
}

@test "UTF-16 and UTF-32 text: named with the command that converts it, the rest still read" {
	printf '[Event "a"]\n\n1. e4 e5 *\n' > a.pgn
	iconv -f UTF-8 -t UTF-16 a.pgn > bom.pgn	# a byte-order mark first
	for enc in UTF-16LE UTF-16BE UTF-32LE UTF-32BE; do
		iconv -f UTF-8 -t $enc a.pgn > $enc.pgn
		{ printf '\357\273\277' | iconv -f UTF-8 -t $enc; cat $enc.pgn; } > $enc-bom.pgn
	done
	for f in bom UTF-16LE UTF-16BE UTF-16LE-bom UTF-16BE-bom UTF-32LE-bom UTF-32BE-bom; do
		case $f in
		bom) enc=$(od -An -tx1 -N2 bom.pgn | tr -d ' ' | sed 's/fffe/UTF-16LE/;s/feff/UTF-16BE/') ;;
		*) enc=${f%-bom} ;;
		esac
		for j in 1 2; do
			p2p -j $j a.pgn $f.pgn a.pgn
			[ "$status" -eq 1 ] || fail "$f -j $j: $status"
			[ "$stderr" = "pgn2pos: $f.pgn: read error before the first game: $enc text, not UTF-8 (convert it: iconv -f $enc -t UTF-8)
pgn2pos: 2 games read, 2 kept (0 truncated), 0 skipped; 6 positions written" ] ||
				fail "$f -j $j: $stderr"
		done
		# the command it names converts it
		iconv -f $enc -t UTF-8 $f.pgn > conv.pgn
		p2p conv.pgn
		assert_success
		[ "$(posdump -c out.pos)" = "3 out.pos" ]
	done
	# from a pipe, compressed, and as an archive member among others
	iconv -f UTF-8 -t UTF-16LE a.pgn | zstd -q > w.pgn.zst
	cp a.pgn b.pgn
	tar cf w.tar a.pgn UTF-16LE.pgn b.pgn
	zip -q w.zip a.pgn UTF-16BE.pgn b.pgn
	run --separate-stderr bash -c 'pgn2pos < UTF-16LE.pgn > out.pos'
	[ "$status" -eq 1 ]
	[[ "$stderr" == "pgn2pos: stdin: read error before the first game: UTF-16LE text, not UTF-8"* ]] || fail "$stderr"
	p2p w.pgn.zst
	[ "$status" -eq 1 ]
	[[ "$stderr" == "pgn2pos: w.pgn.zst: read error before the first game: UTF-16LE text"* ]] || fail "$stderr"
	for f in w.tar w.zip; do
		p2p -j 2 $f
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"$f: UTF-16"?"E.pgn: read error before the first game: UTF-16"* ]] || fail "$stderr"
		[ "$(posdump -c out.pos)" = "6 out.pos" ]
	done
	# text whose first bytes only look so is read as ever
	printf '[Event "\303\251"]\n\n1. e4 *\n' > utf8.pgn
	p2p utf8.pgn
	assert_success
}

@test "a damaged zstd file keeps every game before the damaged block, from a file as from a pipe, at any -j" {
	for i in 1 2 3 4 5 6 7 8 9 10; do cat "$L100K"; done > ten.pgn
	zstd -q -c ten.pgn > ten.zst
	# the middle block of eight made a reserved block type: libzstd hands
	# out nothing of the call that meets it, so a call takes one step
	run /usr/bin/python3 "$TOP/tests/tools/zstd_break_block.py" ten.zst bad.zst
	assert_output "4 8"
	pgn2pos -q ten.pgn -o whole.pos
	p2p bad.zst
	[ "$status" -eq 1 ]
	# the first four blocks hold 512 KiB of text: the games that lie
	# whole in it are kept, the one it cuts is not, and is named
	games=$(( $(head -c 524288 ten.pgn | grep -c '^\[Event ') - 1 ))
	[[ "$stderr" == *"bad.zst: read error after game $games: Zstd decompression failed: Data corruption detected"* ]] || fail "$stderr"
	[ "$(posdump --fields game out.pos | uniq | wc -l)" -eq "$games" ]
	n=$(posdump -c out.pos | cut -d' ' -f1)
	cmp <(posdump out.pos) <(posdump whole.pos | head -n "$n")
	mv out.pos file.pos
	run --separate-stderr bash -c 'cat bad.zst | pgn2pos -f -o pipe.pos'
	[ "$status" -eq 1 ]
	cmp file.pos pipe.pos
	p2p -j 2 bad.zst
	[ "$status" -eq 1 ]
	cmp file.pos out.pos
}

@test "truncated compressed file: exit 1, the damage named, earlier games written" {
	for i in 1 2 3 4 5 6 7 8 9 10; do cat "$L100K"; done > ten.pgn
	gzip -c ten.pgn > ten.gz
	head -c 150000 ten.gz > cut.gz
	p2p cut.gz
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"pgn2pos: cut.gz: read error after game "*": truncated gzip input"* ]] || fail "$stderr"
	n=$(posdump -c out.pos | cut -d' ' -f1)
	[ "$n" -gt 10000 ]
	# every record written is the same as from the whole file: the game
	# the cut runs into is not read (its last move may be cut short:
	# O-O-O read as O-O), the ones before it are whole
	diff <(core out.pos) <(core <(pgn2pos -q ten.pgn) | head -n "$n")
	[[ "$(core out.pos | tail -n 1)" == *"flags=last" ]]
	# all the text before the cut is read (libarchive's gzip reader lost
	# what it had decoded: 353 of the 372 games begun), from a pipe too;
	# the message names the last whole game
	games=$(zcat cut.gz 2>/dev/null | grep -c '^\[Event ')
	[ "$(posdump --fields game out.pos | uniq | wc -l)" -eq $((games - 1)) ]
	[[ "$stderr" == *"read error after game $((games - 1)): truncated gzip input"* ]] ||
	    fail "$stderr"
	[[ "$stderr" != *"illegal move"* ]] || fail "$stderr"
	run --separate-stderr bash -c 'cat cut.gz | pgn2pos -f -o pipe.pos'
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"stdin: read error after game $((games - 1)): truncated gzip input"* ]] ||
	    fail "$stderr"
	cmp <(posdump out.pos) <(posdump pipe.pos)
	run --separate-stderr pgn2pos -j 2 cut.gz -o j2.pos
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"read error after game $((games - 1)): truncated gzip input"* ]] ||
	    fail "$stderr"
	cmp out.pos j2.pos
	# EPD cut inside a line: the line is not read (its FEN may be cut
	# short, a castling right lost), the lines before it are
	for i in $(seq 20000); do
		echo "r3k2r/pppq1ppp/2npbn2/4p3/4P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 4 $i"
	done | gzip -c > e.gz
	size=$(wc -c < e.gz)
	for c in 1000 $((size / 2)) $((size - 3)); do
		head -c "$c" e.gz > ecut.gz
		whole=$(zcat ecut.gz 2>/dev/null | wc -l)
		for j in 1 2; do
			run --separate-stderr pgn2pos -j $j ecut.gz -o e.pos
			[ "$status" -eq 1 ]
			[ "$(posdump -c e.pos | cut -d' ' -f1)" -eq "$whole" ] || fail "cut at $c, -j $j: $(posdump -c e.pos), $whole whole lines"
			[ "$(posdump --fields fen e.pos | grep -vc 'KQkq - 4 ')" -eq 0 ] || fail "$(posdump --fields fen e.pos | tail -n 2)"
		done
	done
	# a small file cut anywhere keeps its whole games (it kept none: the
	# damage was met while the format was detected)
	gzip -c "$L100K" > small.gz
	head -c "$(( $(wc -c < small.gz) / 2 ))" small.gz > half.gz
	games=$(zcat half.gz 2>/dev/null | grep -c '^\[Event ')
	[ "$games" -gt 5 ]
	p2p half.gz
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"half.gz: read error after game $((games - 1)): truncated gzip input"* ]] ||
	    fail "$stderr"
	# cut inside its header: named, not read as text
	head -c 8 small.gz > header.gz
	p2p header.gz
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"header.gz: cannot read: truncated or damaged gzip input"* ]] ||
	    fail "$stderr"
	# bytes after the last member: zeros pass, anything else is named;
	# a wrong check value is damage too (libarchive did not look)
	{ cat small.gz small.gz; head -c 100 /dev/zero; } > pad.gz
	p2p pad.gz
	assert_success
	{ cat small.gz; printf 'garbage\n'; } > garbage.gz
	p2p garbage.gz
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"garbage.gz: read error after game "*": 8 bytes of trailing garbage after the compressed data"* ]] ||
	    fail "$stderr"
	# a member begins with 1f 8b, as gzip(1) reads it: 1f and zeros are
	# garbage, a lone 1f at the end a member cut short
	{ cat small.gz; printf '\037\0\0'; } > nomagic.gz
	p2p nomagic.gz
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"nomagic.gz: read error after game "*": 3 bytes of trailing garbage after the compressed data"* ]] ||
	    fail "$stderr"
	{ cat small.gz; printf '\037'; } > lone.gz
	p2p lone.gz
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"lone.gz: read error after game "*": truncated gzip input"* ]] ||
	    fail "$stderr"
	size=$(wc -c < small.gz)
	{ head -c $((size - 8)) small.gz; printf '\0\0\0\0'; tail -c 4 small.gz; } > crc.gz
	p2p crc.gz
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"crc.gz: read error after game "*": gzip decompression failed: incorrect data check"* ]] ||
	    fail "$stderr"
}

@test "--strict and --strict-games" {
	p2p --strict "$PGN/bad-moves.pgn"
	[ "$status" -eq 1 ]
	[ "$(posdump -c out.pos)" = "21 out.pos" ]
	p2p --strict "$PGN/format.pgn"
	assert_success
	p2p --strict-games "$PGN/bad-moves.pgn"
	assert_success
	[ "$stderr" = "pgn2pos: $PGN/bad-moves.pgn: game 2 (ply 2): illegal move \"Qxh9\"; game dropped
pgn2pos: $PGN/bad-moves.pgn: game 3 (ply 6): illegal move \"Ng5\"; game dropped
pgn2pos: 4 games read, 2 kept (0 truncated), 2 skipped (2 strict); 11 positions written" ]
	p2p --strict --strict-games "$PGN/chess960.pgn"
	[ "$status" -eq 1 ]
}

@test "stable game ids: same input, any name or packaging, same ids" {
	pgn2pos -q "$L100K" > a.pos
	cp "$L100K" renamed.pgn
	zstd -q -c "$L100K" > c.zst
	pgn2pos -q c.zst > b.pos
	cat "$L10K" renamed.pgn | pgn2pos -q > c.pos
	posdump --fields game a.pos | uniq > ida.txt
	[ "$(wc -l < ida.txt)" -eq 47 ]
	[ "$(sort -u ida.txt | wc -l)" -eq 47 ]
	diff ida.txt <(posdump --fields game b.pos | uniq)
	diff ida.txt <(posdump --fields game c.pos | uniq | tail -n 47)
	# the 10k sample is the first five games of the 100k one: same ids
	diff <(head -n 5 ida.txt) <(pgn2pos -q "$L10K" | posdump --fields game | uniq)
	# one changed tag value changes the id, nothing else does
	sed '1s/Rated Blitz game/Rated Blitz game!/' "$L10K" | pgn2pos -q | posdump --fields game | uniq > changed.txt
	[ "$(head -n 1 changed.txt)" != "$(head -n 1 ida.txt)" ]
	diff <(sed -n 2,5p ida.txt) <(tail -n 4 changed.txt)
}

@test "a game id is XXH64 of each tag's name, NUL, value, NUL and the moves: a tag longer than the id buffer too" {
	v=$(head -c 6000 /dev/zero | tr '\0' a)
	printf '[Event "%s"]\n[Result "*"]\n\n*\n\n[Event "short"]\n[Result "*"]\n\n1. e4 *\n' "$v" > ids.pgn
	pgn2pos -q ids.pgn | posdump --fields game | uniq > got.txt
	/usr/bin/python3 - > want.txt <<'PY'
import struct, xxhash
e2e4 = struct.pack("<H", 12 | 28 << 6)	# from e2 (12), to e4 (28) << 6
for v, moves in (("a" * 6000, b""), ("short", e2e4)):
    h = xxhash.xxh64(b"Event\0" + v.encode() + b"\0Result\0*\0" + moves, seed=0)
    print("game=%016x" % h.intdigest())
PY
	diff want.txt got.txt
}

@test "a game id hashes an escaped tag's whole value, unescaped, not its first 255 bytes" {
	a=$(head -c 300 /dev/zero | tr '\0' a)
	printf '[Event "\\"Q\\" %sX"]\n[Result "*"]\n\n1. e4 *\n\n[Event "\\"Q\\" %sY"]\n[Result "*"]\n\n1. e4 *\n' "$a" "$a" > esc.pgn
	pgn2pos -q esc.pgn | posdump --fields game | uniq > got.txt
	/usr/bin/python3 - > want.txt <<'PY'
import struct, xxhash
e2e4 = struct.pack("<H", 12 | 28 << 6)
for end in ("X", "Y"):
    v = '"Q" ' + "a" * 300 + end
    h = xxhash.xxh64(b"Event\0" + v.encode() + b"\0Result\0*\0" + e2e4,
        seed=0)
    print("game=%016x" % h.intdigest())
PY
	diff want.txt got.txt
}

@test "memory stays bounded (--stats reports max RSS)" {
	for i in $(seq 30); do cat "$L100K"; done > big.pgn
	p2p --stats big.pgn
	assert_success
	rss=$(sed -n 's/.*max RSS \([0-9]*\) KiB.*/\1/p' <<< "$stderr")
	[ -n "$rss" ] && [ "$rss" -lt 16384 ]
}

@test "records flow while the input waits (slow pipe)" {
	mkfifo in.fifo
	pgn2pos -q < in.fifo > out.pos &
	pid=$!
	exec 7> in.fifo
	printf '[Event "a"]\n\n1. e4 e5 2. Nf3 *\n\n' >&7
	# the game's four records arrive before the input ends
	size=$(size_after out.pos 200)
	printf '[Event "b"]\n\n1. d4 *\n\n' >&7
	size2=$(size_after out.pos "$size")
	exec 7>&-
	wait "$pid"
	[ "$size" -gt 200 ] || fail "nothing written while the input was open ($size bytes)"
	[ "$size2" -gt "$size" ] || fail "second game not written while the input was open"
	[ "$(posdump -c out.pos)" = "6 out.pos" ]
}

@test "records flow while zstd or gzip input waits (slow pipe)" {
	for z in zstd gzip; do
		rm -f in.fifo out.pos
		mkfifo in.fifo
		pgn2pos -q < in.fifo > out.pos &
		pid=$!
		exec 7> in.fifo
		# a frame or member of games, the last cut off: the whole
		# ones are written while the input waits
		head -c 30000 "$L100K" | $z -q -c >&7
		size=$(size_after out.pos 1000)
		exec 7>&-
		wait "$pid" || true
		[ "$size" -gt 1000 ] ||
		    fail "$z: nothing written while the input was open ($size bytes)"
	done
}

@test "a closed output pipe ends the run quietly" {
	for i in $(seq 20); do cat "$L100K"; done > big.pgn
	run bash -c 'pgn2pos big.pgn 2>err | head -c 100 > /dev/null; echo "${PIPESTATUS[0]}"'
	assert_output 0
	[ ! -s err ]
}

@test "-o, -z and a .zst output name" {
	pgn2pos -q -o out.pos "$L10K"
	pgn2pos -q -o out.pos.zst "$L10K"
	pgn2pos -q -z "$L10K" > z.pos
	[ "$(head -c 4 out.pos.zst | od -An -tx1 | tr -d ' ')" = 28b52ffd ]
	[ "$(head -c 4 z.pos | od -An -tx1 | tr -d ' ')" = 28b52ffd ]
	diff <(posdump out.pos) <(posdump out.pos.zst)
	diff <(posdump out.pos) <(posdump z.pos)
}

@test "-z to a file: zstd compresses in threads of its own, the bytes the same at any -j" {
	# about 5 MiB of records: three of zstd's 2 MiB jobs
	for i in 1 2 3 4 5 6 7 8 9 10; do cat "$L100K"; done > ten.pgn
	pgn2pos -q -o plain.pos ten.pgn
	[ "$(wc -c < plain.pos)" -gt $((4 << 20)) ]
	same_j 2 20000 -z ten.pgn
	same_j 3 20000 -z ten.pgn
	same_j 3 20000 -o many.pos.zst ten.pgn
	cmp one.pos many.pos.zst
	diff <(posdump plain.pos) <(posdump one.pos)
	# to a pipe, a block at a time in the caller's thread: the same
	# records (the unit test of the writer tells the two ways apart)
	pgn2pos -q -j 2 -z ten.pgn | cat > piped.pos
	diff <(posdump plain.pos) <(posdump piped.pos)
	# chunks are files too
	pgn2pos -q --chunks 100 -z -o ch1 ten.pgn
	pgn2pos -q -j 3 --chunks 100 -z -o ch3 ten.pgn
	diff -r ch1 ch3
}

@test "a missing file is reported, the next one still read, exit 1" {
	p2p nonexistent.pgn "$L10K"
	[ "$status" -eq 1 ]
	[ "${stderr%%$'\n'*}" = "pgn2pos: nonexistent.pgn: No such file or directory" ]
	[ "$(posdump -c out.pos)" = "262 out.pos" ]
}

@test "invalid calls: exit 2, usage on stderr, nothing on stdout" {
	while read -r args; do
		p2p $args "$L10K"
		[ "$status" -eq 2 ] || fail "pgn2pos $args: status $status"
		[ ! -s out.pos ] || fail "pgn2pos $args: wrote to stdout"
		[[ "$stderr" == *usage:* ]] || fail "pgn2pos $args: $stderr"
	done <<-'EOF'
	--bogus
	--skip-plies
	--skip-plies -1
	--skip-plies abc
	--max-plies 0
	--skip-plies 10 --max-plies 10
	--min-elo x
	--max-elo 70000
	--min-elo 2000 --max-elo 1000
	--time-control hyperbullet
	--time-control blitz,
	--time-control ,
	--sample 1.5
	--sample -0.1
	--sample nan
	--per-game 0
	--seed -1
	--unique-mem 0
	--epd --pgn
	--pgn --epd
	-x
	EOF
}

@test "--help and --version" {
	run pgn2pos --help
	assert_success
	assert_line --index 0 --partial "usage: pgn2pos [-fqz] [-j jobs] [-o file]"
	run pgn2pos --version
	assert_output "pgn2pos (posflow) 0.1.0"
}

@test "an EPD line too long to be a position is one problem, skipped whole" {
	{
		echo "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
		printf '8/8/8/8/8/8/8/8 w - - '
		head -c 3000000 /dev/zero | tr '\0' x
		echo
		echo "4k3/8/8/8/8/8/8/4K3 w - - 0 1"
	} > long.epd
	run --separate-stderr pgn2pos --epd long.epd -o out.pos
	assert_success
	[[ "$stderr" == *"long.epd: line 2: invalid FEN \"8/8/8/8/8/8/8/8 w - - xxx"*"\": no end of line within "*" bytes; line skipped"* ]]
	[[ "$stderr" == *"3 games read, 2 kept (0 truncated), 1 skipped (1 invalid FEN); 2 positions written"* ]]
	run posdump --fields fen out.pos
	assert_line --index 1 "4k3/8/8/8/8/8/8/4K3 w - - 0 1"
}

@test "a non-blocking standard input is waited for, not an error" {
	# perl sets O_NONBLOCK on the pipe, then runs pgn2pos on it; the
	# games arrive after pgn2pos has started reading (EAGAIN before).
	(sleep 0.5; cat "$TESTDATA/lichess_db_10k.pgn") |
		perl -MFcntl -e 'my $f = fcntl(STDIN, F_GETFL, 0);
			fcntl(STDIN, F_SETFL, $f | O_NONBLOCK) or die;
			exec @ARGV or die' pgn2pos -o nb.pos 2> err
	run cat err
	assert_output "pgn2pos: 5 games read, 5 kept (0 truncated), 0 skipped; 262 positions written"
	run posdump -c nb.pos
	assert_output "262 nb.pos"
}

# Two short games, for the damaged-input tests below.
two_games() {
	printf '[Event "a"]\n[Result "*"]\n\n1. e4 e5 *\n\n[Event "b"]\n[Result "*"]\n\n1. d4 *\n'
}

@test "zero bytes at the start: read as text, reported, the games kept" {
	two_games > g.pgn
	for n in 511 512 1024 10240; do
		{ head -c $n /dev/zero; cat g.pgn; } > z.pgn
		# a file, a pipe and gzip all read it the same way
		gzip -c z.pgn > z.gz
		for f in z.pgn z.gz -; do
			p2p "$f" < z.pgn
			assert_success
			name=$f
			[ "$f" = - ] && name=stdin
			[ "$stderr" = "pgn2pos: $name: before the first game: binary data; text skipped
pgn2pos: 2 games read, 2 kept (0 truncated), 0 skipped; 1 stretch of text between games skipped; 5 positions written" ] ||
				fail "$n NULs, $f: $stderr"
			[ "$(posdump -c out.pos)" = "5 out.pos" ]
		done
		p2p --strict z.pgn
		[ "$status" -eq 1 ] || fail "$n NULs: --strict exits $status"
	done
	# nothing but zero bytes (an empty tar archive too) is never a quiet
	# success
	head -c 4096 /dev/zero > zeros
	tar cf empty.tar -T /dev/null
	for f in zeros empty.tar; do
		p2p "$f"
		[ "$status" -eq 1 ]
		[[ "$stderr" == "pgn2pos: $f: before the first game: binary data; text skipped
pgn2pos: $f: no PGN or EPD game in it"* ]] || fail "$f: $stderr"
		p2p --strict "$f"
		[ "$status" -eq 1 ]
	done
}

@test "garbage after compressed data: exit 1, named, every game written" {
	core <(pgn2pos -q "$L10K") > want.txt
	gzip -c "$L10K" > ok.gz
	bzip2 -c "$L10K" > ok.bz2
	for f in ok.gz ok.bz2; do
		{ cat "$f"; printf 'garbage\n'; } > "bad-$f"
		for how in file pipe; do
			if [ $how = file ]; then
				p2p "bad-$f"
				name="bad-$f"
			else
				p2p < "bad-$f"
				name=stdin
			fi
			[ "$status" -eq 1 ] || fail "$f ($how): exit $status"
			[[ "$stderr" == "pgn2pos: $name: read error after game 5: 8 bytes of trailing garbage after the compressed data"* ]] ||
				fail "$f ($how): $stderr"
			diff want.txt <(core out.pos)
		done
		# zero padding after the data is no garbage
		{ cat "$f"; head -c 1000 /dev/zero; } > "pad-$f"
		p2p "pad-$f"
		assert_success
		[ "$stderr" = "pgn2pos: 5 games read, 5 kept (0 truncated), 0 skipped; 262 positions written" ]
	done
}

@test "a damaged zip member is named and the members after it are read" {
	mkdir d
	cp "$L10K" d/a.pgn
	cp "$L10K" d/b.pgn
	cp "$PGN/bad-moves.pgn" d/c.pgn
	(cd d && zip -q ../t.zip a.pgn b.pgn c.pgn)
	# scramble the deflate data of b.pgn
	python3 - <<'PY'
import struct, zipfile
z = zipfile.ZipFile("t.zip")
off = z.getinfo("b.pgn").header_offset
data = bytearray(open("t.zip", "rb").read())
n, m = struct.unpack("<HH", data[off + 26:off + 30])
for i in range(off + 30 + n + m + 100, off + 30 + n + m + 400):
    data[i] ^= 0x55
open("bad.zip", "wb").write(data)
PY
	core <(cat d/a.pgn d/c.pgn | pgn2pos -q 2>/dev/null) > want.txt
	for how in file pipe; do
		if [ $how = file ]; then
			p2p bad.zip
			name=bad.zip
		else
			p2p < bad.zip
			name=stdin
		fi
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"pgn2pos: $name: b.pgn: read error before the first game: ZIP decompression failed"* ]] ||
			fail "$how: $stderr"
		[[ "$stderr" == *"pgn2pos: $name: c.pgn: game 2 (ply 2): illegal move \"Qxh9\"; kept 3 positions"* ]] ||
			fail "$how: $stderr"
		diff want.txt <(core out.pos)
	done
	# a stored member whose bytes no longer match its CRC is damaged too
	(cd d && zip -q -0 ../s.zip a.pgn b.pgn c.pgn)
	python3 - <<'PY'
import struct, zipfile
z = zipfile.ZipFile("s.zip")
off = z.getinfo("b.pgn").header_offset
data = bytearray(open("s.zip", "rb").read())
n, m = struct.unpack("<HH", data[off + 26:off + 30])
data[off + 30 + n + m + 50] = ord("X")
open("crc.zip", "wb").write(data)
PY
	p2p crc.zip
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"pgn2pos: crc.zip: b.pgn: read error after game 5: ZIP bad CRC"* ]] ||
		fail "$stderr"
	[[ "$stderr" == *"pgn2pos: crc.zip: c.pgn: game 2 (ply 2): illegal move"* ]] ||
		fail "$stderr"
}

@test "a tar with a bad header checksum is a damaged archive, not text" {
	cp "$L10K" a.pgn
	tar cf t.tar a.pgn
	# one byte of the member's name changed: the checksum no longer
	# matches
	cp t.tar bad.tar
	printf 'b' | dd of=bad.tar bs=1 count=1 conv=notrunc status=none
	gzip -c bad.tar > bad.tgz
	for f in bad.tar bad.tgz; do
		p2p "$f"
		[ "$status" -eq 1 ]
		[ "$stderr" = "pgn2pos: $f: damaged tar archive: header checksum mismatch
pgn2pos: 0 games read, 0 kept (0 truncated), 0 skipped; 0 positions written" ] ||
			fail "$f: $stderr"
	done
	p2p < bad.tar
	[ "$status" -eq 1 ]
	[[ "$stderr" == "pgn2pos: stdin: damaged tar archive: header checksum mismatch"* ]]
	# a later member's header damaged: that member is named as lost,
	# the archive read on from the next good header, at any -j
	cp "$L100K" b.pgn
	printf '[Event "c"]\n\n1. e4 e5 1-0\n' > c.pgn
	tar cf three.tar a.pgn b.pgn c.pgn
	off=$(/usr/bin/python3 -c 'import tarfile; print(tarfile.open("three.tar").getmembers()[1].offset)')
	/usr/bin/python3 -c 'import sys; d = bytearray(open("three.tar", "rb").read()); d[int(sys.argv[1]) + 100] ^= 1; open("bad3.tar", "wb").write(d)' "$off"
	want=$(cat a.pgn c.pgn | pgn2pos -q | posdump -c | cut -d' ' -f1)
	for j in 1 2; do
		p2p -j $j bad3.tar
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"pgn2pos: bad3.tar: (damaged header): read error before the first game: damaged header; the archive is read on from the next good one"* ]] ||
			fail "$stderr"
		[ "$(posdump -c out.pos | cut -d' ' -f1)" -eq "$want" ]
		[ "$(posdump --fields fen out.pos | tail -n 1)" = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2" ]
	done
}

@test "a TimeControl base too long for a millisecond clock leaves it unknown" {
	for base in 4294967 4294968 100000000; do
		printf '[Event "x"]\n[TimeControl "%s+0"]\n\n1. e4 { [%%clk 1:00:00] } 1... e5 *\n\n' $base
	done > tc.pgn
	p2p -q tc.pgn
	assert_success
	run posdump --fields ply,clock out.pos
	assert_line --index 0 "ply=0 clock{white=4294967.000 black=4294967.000}"
	assert_line --index 3 "ply=0 clock{white=- black=-}"
	assert_line --index 4 "ply=1 clock{white=3600.000 black=-}"
	assert_line --index 6 "ply=0 clock{white=- black=-}"
	# the class still follows the base: classical
	p2p -q --time-control classical tc.pgn
	[ "$(posdump -c out.pos)" = "9 out.pos" ]
	p2p -q --time-control blitz tc.pgn
	[ "$(posdump -c out.pos)" = "0 out.pos" ]
}

@test "%eval out of range: warned with file and game, dropped, game kept" {
	printf '[Event "x"]\n\n1. e4 { [%%eval 0.17,99999] } 1... e5 { [%%eval 12345678901234567890] } 2. Nf3 { [%%eval #-99999999999] } 2... Nc6 { [%%eval 0.3,20] } *\n\n[Event "y"]\n\n1. d4 { [%%eval 0.2,65535] } *\n' > ev.pgn
	p2p ev.pgn
	assert_success
	[ "$stderr" = "pgn2pos: ev.pgn: game 1 (ply 1): evaluation out of range \"%eval 0.17,99999\"; dropped (and 2 more in the game)
pgn2pos: 2 games read, 2 kept (0 truncated), 0 skipped; 7 positions written" ] || fail "$stderr"
	run posdump --fields game,ply,eval out.pos
	[ "$(grep -c eval <<< "$output")" -eq 2 ]
	assert_line --index 4 --partial "ply=4 eval{src=pgn limit=depth:20 score=cp:30 depth=20 "
	assert_line --index 6 --partial "ply=1 eval{src=pgn limit=depth:65535 score=cp:-20 depth=65535 "
	p2p --strict ev.pgn
	[ "$status" -eq 1 ]
	# EPD ce and acd too
	printf '%s\n' '4k3/8/8/8/8/8/8/4K3 w - - ce 123456;' '4k3/8/8/8/8/8/8/4K3 w - - ce 10; acd 99999;' > ev.epd
	p2p ev.epd
	assert_success
	[ "$stderr" = "pgn2pos: ev.epd: line 1: evaluation out of range \"ce 123456\"; dropped
pgn2pos: ev.epd: line 2: evaluation out of range \"acd 99999\"; dropped
pgn2pos: 2 games read, 2 kept (0 truncated), 0 skipped; 2 positions written" ] || fail "$stderr"
}

@test "EPD: too few fields and control characters get a reason" {
	printf '4k3/8/8/8/8/8/8/4K3 w\n4k3/8/8/8/8/8/8/4K3\n4k3/8/8/8/8/8/8/4K3 w - - 0 1\000junk\n4k3/8/8/8/8/8/8/4K3 w -\000 - 0 1\n4k3/8/8/8/8/8/8/4K3 w - - 0 1\n' > bad.epd
	p2p --epd bad.epd
	assert_success
	[ "$stderr" = 'pgn2pos: bad.epd: line 1: invalid FEN "4k3/8/8/8/8/8/8/4K3 w": FEN needs 4 to 6 fields, not 2; line skipped
pgn2pos: bad.epd: line 2: invalid FEN "4k3/8/8/8/8/8/8/4K3": FEN needs 4 to 6 fields, not 1; line skipped
pgn2pos: bad.epd: line 3: invalid FEN "4k3/8/8/8/8/8/8/4K3 w - - 0 1?junk": control character 0x00 at column 30; line skipped
pgn2pos: bad.epd: line 4: invalid FEN "4k3/8/8/8/8/8/8/4K3 w -? - 0 1": control character 0x00 at column 24; line skipped
pgn2pos: 5 games read, 1 kept (0 truncated), 4 skipped (4 invalid FEN); 1 positions written' ] || fail "$stderr"
}

@test "FENs no game can reach are refused, in EPD and in [FEN] tags" {
	fens=('4k3/8/8/8/8/8/8/4K3 w - - -1 1'
	    '4k3/8/8/8/8/8/8/4K3 w - - 0 -5'
	    '4k3/8/8/8/8/8/8/R6K w Q - 0 1'
	    'k7/8/8/8/8/8/8/r3K2r w - - 0 1'
	    '4k3/8/8/3p1p2/4K3/8/8/8 w - - 0 1'
	    '4k3/8/8/3p4/8/8/8/K3r3 w - d6 0 1')
	why=("bad half-move clock '-1'"
	    "bad full-move number '-5'"
	    'castling right with the white king on h1, a corner'
	    'impossible double check from both sides of the king'
	    'impossible double check by two pawns or knights'
	    'impossible check after the double pawn push of the en passant square')
	printf '%s\n' "${fens[@]}" '4k3/8/8/8/8/8/8/R3K3 w Q - 0 1' > f.epd
	for fen in "${fens[@]}"; do
		printf '[Event "x"]\n[SetUp "1"]\n[FEN "%s"]\n\n*\n\n' "$fen"
	done > f.pgn
	p2p f.epd
	assert_success
	[ "$(posdump -c out.pos)" = "1 out.pos" ]
	p2p f.pgn
	assert_success
	[ "$(posdump -c out.pos)" = "0 out.pos" ]
	for i in "${!fens[@]}"; do
		n=$((i + 1))
		[[ "$stderr" == *"pgn2pos: f.pgn: game $n: invalid FEN \"${fens[$i]}\": ${why[$i]}; game skipped"* ]] ||
			fail "game $n: $stderr"
	done
	p2p f.epd
	for i in "${!fens[@]}"; do
		n=$((i + 1))
		[[ "$stderr" == *"pgn2pos: f.epd: line $n: invalid FEN \"${fens[$i]}\": ${why[$i]}; line skipped"* ]] ||
			fail "line $n: $stderr"
	done
	# a [FEN] tag too long to keep is refused, not cut to a shorter FEN
	printf '[Event "x"]\n[FEN "4k3/8/8/8/8/8/8/4K3 w - - 0%300s1"]\n\n*\n' '' > long.pgn
	p2p long.pgn
	[[ "$stderr" == "pgn2pos: long.pgn: game 1: invalid FEN \"4k3/8/8/8/8/8/8/4K3 w - - 0"*"\": FEN too long; game skipped"* ]] ||
		fail "$stderr"
}

@test "fuzz findings: text with ustar at offset 257 is text; an EPD clock field that is empty" {
	# a PGN whose bytes 257-261 happen to read "ustar" (a player called
	# Gustar) is not a damaged tar archive
	{
		printf '[Event "x"]\n[White "'
		head -c $((257 - 20 - 1)) /dev/zero | tr '\0' 'a'
		printf 'Gustar"]\n[Black "b"]\n[Result "1-0"]\n\n1. e4 e5 1-0\n'
		head -c 400 /dev/zero | tr '\0' '\n'
	} > g.pgn
	[ "$(head -c 262 g.pgn | tail -c 5)" = "ustar" ]
	run pgn2pos g.pgn -o out.pos
	assert_success
	assert_output --partial "1 games read"
	# a clock field left empty before the opcodes' ';' (fuzz: read one
	# byte before the field)
	printf '8/8/8/4k3/8/8/8/4K3 w - - ;\n' > e.epd
	run pgn2pos --epd e.epd -o e.pos
	assert_success
	[ "$(posdump --fields fen e.pos)" = "8/8/8/4k3/8/8/8/4K3 w - - 0 1" ]
}

@test "--chunks n: files of n games each, together the unsplit records; a rerun writes only missing chunks" {
	pgn2pos "$TESTDATA/lichess_db_100k.pgn" -o all.pos 2>/dev/null
	games=$(grep -c '^\[Event ' "$TESTDATA/lichess_db_100k.pgn")
	run pgn2pos --chunks 7 -o ch "$TESTDATA/lichess_db_100k.pgn"
	assert_success
	want=$(( (games + 6) / 7 ))
	assert_output --partial "$want chunks written, 0 already there"
	[ "$(ls ch | wc -l)" -eq "$want" ]
	[ -f ch/chunk-000000.pos ] && [ -f "ch/$(printf 'chunk-%06d.pos' $((want - 1)))" ]
	! ls -A ch | grep -q part
	cmp <(posdump --json all.pos) <(cat ch/chunk-*.pos | posdump --json)
	# each chunk holds the positions of 7 games (the last the rest)
	for f in ch/chunk-*.pos; do
		n=$(posdump --fields game "$f" | sort -u | wc -l)
		[ "$n" -eq 7 ] || [ "$f" = "ch/$(printf 'chunk-%06d.pos' $((want - 1)))" ] ||
		    fail "$f: $n games"
	done
	# a rerun after losing a chunk (and with a stale partial file) writes
	# that one only; the others are left untouched
	touch -d '2000-01-01' ch/chunk-000000.pos
	rm ch/chunk-000003.pos
	echo junk > ch/.chunk-000003.pos.part
	run pgn2pos --chunks 7 -o ch "$TESTDATA/lichess_db_100k.pgn"
	assert_success
	assert_output --partial "1 chunks written, $((want - 1)) already there"
	[ "$(stat -c %Y ch/chunk-000000.pos)" -lt 1000000000 ]
	! ls -A ch | grep -q part
	cmp <(posdump --json all.pos) <(cat ch/chunk-*.pos | posdump --json)
	# -z names them .pos.zst; several inputs count games across them
	pgn2pos --chunks 5 -z -o chz "$TESTDATA/lichess_db_10k.pgn" "$TESTDATA/lichess_db_100k.pgn" 2>/dev/null
	pgn2pos "$TESTDATA/lichess_db_10k.pgn" "$TESTDATA/lichess_db_100k.pgn" -o both.pos 2>/dev/null
	cmp <(posdump --json both.pos) <(cat chz/chunk-*.pos.zst | posdump --json)
	run pgn2pos --chunks 5 "$TESTDATA/lichess_db_10k.pgn"
	assert_failure 2
	assert_output --partial "--chunks needs -o directory"
	run pgn2pos --chunks 0 -o x "$TESTDATA/lichess_db_10k.pgn"
	assert_failure 2
}

@test "--chunks after an input error: no chunk from the error on (a rerun with the input mended would number its games otherwise), at any -j; the rerun writes them" {
	for i in 1 2 3 4 5 6; do cat "$TESTDATA/lichess_db_100k.pgn"; done > g.pgn
	gzip -c g.pgn > full.pgn.gz
	head -c $(( $(stat -c %s full.pgn.gz) * 2 / 3 )) full.pgn.gz > dl.pgn.gz
	pgn2pos g.pgn -o all.pos 2>/dev/null
	for j in 1 2; do
		rm -rf ch
		run --separate-stderr pgn2pos -j "$j" --chunks 40 -o ch dl.pgn.gz
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"dl.pgn.gz: read error after game "*": truncated gzip input"* ]] || fail "$stderr"
		n=$(ls ch | wc -l)
		[ "$n" -ge 1 ]
		[[ "$stderr" == *"ch: chunk $(printf %06d "$n") and later not written: after an input error a rerun numbers the games differently (mend the input and run again)"* ]] || fail "$stderr"
		! ls -A ch | grep -q part
		# the summary counts the positions in the chunks written
		[[ "$stderr" == *"; $(cat ch/chunk-* | posdump -c | cut -d' ' -f1) positions written; $n chunks written"* ]] || fail "$stderr"
		# other inputs are refused even so
		run pgn2pos -j "$j" --chunks 40 -o ch g.pgn
		assert_failure 1
		assert_output --partial "ch: holds chunks of other inputs"
		# the input mended: the rerun gives the records of the whole
		cp full.pgn.gz dl.pgn.gz
		run pgn2pos -j "$j" --chunks 40 -o ch dl.pgn.gz
		assert_success
		cmp <(posdump --json all.pos) <(cat ch/chunk-*.pos | posdump --json)
		head -c $(( $(stat -c %s full.pgn.gz) * 2 / 3 )) full.pgn.gz > dl.pgn.gz
	done
	# a file missing between two: no chunk from it on
	rm -rf ch
	run pgn2pos --chunks 40 -o ch "$TESTDATA/lichess_db_100k.pgn" missing.pgn "$TESTDATA/lichess_db_100k.pgn"
	[ "$status" -eq 1 ]
	assert_output --partial "missing.pgn: No such file or directory"
	games=$(grep -c '^\[Event ' "$TESTDATA/lichess_db_100k.pgn")
	[ "$(ls ch | wc -l)" -eq $((games / 40)) ]
	assert_output --partial "chunk $(printf %06d $((games / 40))) and later not written"
	# a plain file cut short reads to its end (its last game kept as
	# far as it goes): grown since, its chunks are not taken for the
	# new one's, the run is refused
	rm -rf ch
	head -c $(( $(stat -c %s g.pgn) * 6 / 10 )) g.pgn > grow.pgn
	pgn2pos --chunks 40 -o ch grow.pgn 2>/dev/null
	cp g.pgn grow.pgn
	run pgn2pos --chunks 40 -o ch grow.pgn
	assert_failure 1
	assert_output "pgn2pos: ch: holds chunks of other inputs (changed since, by name, size or time: ch/.inputs): remove them or give another directory"
	rm ch/chunk-*
	run pgn2pos --chunks 40 -o ch grow.pgn
	assert_success
	cmp <(posdump --json all.pos) <(cat ch/chunk-*.pos | posdump --json)
	# the same for a file in a directory operand
	rm -rf ch gdir
	mkdir gdir
	head -c $(( $(stat -c %s g.pgn) * 6 / 10 )) g.pgn > gdir/a.pgn
	pgn2pos --chunks 40 -o ch gdir 2>/dev/null
	cp g.pgn gdir/a.pgn
	run pgn2pos --chunks 40 -o ch gdir
	assert_failure 1
	assert_output --partial "ch: holds chunks of other inputs"
	# a directory loop is left out alike on every run: no stop
	rm -rf ch d
	mkdir d
	cp "$TESTDATA/lichess_db_100k.pgn" d/a.pgn
	cp "$TESTDATA/lichess_db_100k.pgn" d/c.pgn
	ln -s . d/b
	run pgn2pos --chunks 40 -o ch d
	[ "$status" -eq 1 ]
	assert_output --partial "d/b: a directory loop (d again), not entered"
	refute_output --partial "not written"
	cmp <(pgn2pos d/a.pgn d/c.pgn 2>/dev/null | posdump --json) <(cat ch/chunk-*.pos | posdump --json)
}

@test "--chunks: one run writes a directory; a second one at the same time is refused, naming it, and writes nothing" {
	mkdir ch
	# another run holds the directory (this shell, with flock(1))
	exec 8< ch
	flock -n 8
	! flock -n ch true
	run pgn2pos --chunks 5 -o ch "$TESTDATA/lichess_db_10k.pgn"
	exec 8<&-
	assert_failure 1
	assert_output "pgn2pos: ch: in use by another run writing there"
	[ -z "$(ls -A ch)" ]
	# free again: written
	run pgn2pos --chunks 5 -o ch "$TESTDATA/lichess_db_10k.pgn"
	assert_success
	[ "$(ls ch | wc -l)" -eq 1 ]
}

# -j: run pgn2pos -j 1 and -j N (pieces of POSFLOW_PGN_PIECE bytes, small
# so that the cuts fall between many games) on the same arguments; the
# output file, the messages and the exit status must be the same, byte
# for byte.
same_j() {
	local n=$1 piece=$2
	shift 2
	run --separate-stderr pgn2pos -f -o one.pos "$@"
	local st1=$status err1=$stderr
	POSFLOW_PGN_PIECE=$piece run --separate-stderr pgn2pos -j "$n" -f -o many.pos "$@"
	[ "$status" -eq "$st1" ] || fail "-j $n $*: exit $status, -j 1: $st1"
	[ "$stderr" = "$err1" ] || fail "-j $n $*: messages differ:
$stderr
-j 1:
$err1"
	cmp one.pos many.pos || fail "-j $n $*: output differs"
}

@test "-j: the bundled games, byte for byte the output of -j 1" {
	for piece in 100 1500 40000 1048576; do
		same_j 2 "$piece" "$L100K"
		same_j 3 "$piece" "$L10K" "$L100K"
	done
	[ "$(posdump -c one.pos | awk '{print $1}')" -eq 3079 ]
	for f in "$PGN"/*.pgn "$PGN/positions.epd"; do
		same_j 2 300 "$f"
		same_j 4 50 "$f"
	done
	# with the options that choose positions and games, and compressed
	same_j 2 2000 --unique --sample 0.5 --per-game 4 --seed 7 "$L100K" "$L100K"
	same_j 2 2000 --min-elo 1600 --time-control blitz,rapid --no-meta "$L100K"
	same_j 3 700 -z --skip-plies 4 --max-plies 30 "$L100K"
	# EPD forced, and PGN forced on EPD text
	same_j 2 200 --epd "$PGN/positions.epd"
	same_j 2 200 --pgn "$PGN/positions.epd"
	# from a pipe the records are the same (blocks may be flushed at
	# other points when the input waits, so compare the records)
	pgn2pos -q < "$L100K" | posdump > pipe1.txt
	POSFLOW_PGN_PIECE=3000 pgn2pos -q -j 2 < "$L100K" | posdump > pipe2.txt
	cmp pipe1.txt pipe2.txt
	# --stats and the summary agree
	POSFLOW_PGN_PIECE=3000 run pgn2pos -j 2 --stats -o /dev/null "$L100K"
	assert_success
	assert_output --partial "47 games read, 47 kept (0 truncated), 0 skipped; 2817 positions written"
}

@test "-j: a failed output stops the run as with -j 1, whichever thread has the turn" {
	for i in $(seq 20); do cat "$L100K"; done > big.pgn
	run --separate-stderr pgn2pos -o /dev/full big.pgn
	assert_failure 1
	err1=$stderr
	[[ "$err1" == *"/dev/full: write error: No space left on device"* ]]
	for j in 2 3 4; do
		# (small pieces: the game whose records fail is in a piece of
		# any of the threads)
		for piece in 700 3000; do
			POSFLOW_PGN_PIECE=$piece run --separate-stderr \
			    pgn2pos -j "$j" -o /dev/full big.pgn
			[ "$status" -eq 1 ] || fail "-j $j: exit $status"
			[ "$stderr" = "$err1" ] || fail "-j $j: $stderr"
			run bash -c "POSFLOW_PGN_PIECE=$piece pgn2pos -j $j big.pgn \
			    2>err | head -c 100 > /dev/null; echo \"\${PIPESTATUS[0]}\""
			assert_output 0
			[ ! -s err ] || fail "-j $j | head: $(cat err)"
		done
	done
}

@test "-j: multi-frame zstd, tar and zip of several files, the same as -j 1" {
	# frames cut inside games, as pzstd and Lichess cut them
	split -b 7000 "$L100K" part.
	for f in part.*; do zstd -q -c "$f"; done > mf.zst
	[ "$(ls part.* | wc -l)" -gt 5 ]
	same_j 2 3000 mf.zst
	cmp <(posdump one.pos) <(pgn2pos -q "$L100K" | posdump)
	mkdir d
	cp "$L10K" d/a.pgn
	cp "$PGN/bad-moves.pgn" d/b.pgn
	cp "$PGN/positions.epd" d/c.epd
	cp "$L100K" d/d.pgn
	tar cf t.tar -C d a.pgn b.pgn c.epd d.pgn
	tar --zstd -cf t.tar.zst -C d a.pgn b.pgn c.epd d.pgn
	if command -v zip >/dev/null; then
		(cd d && zip -q ../t.zip a.pgn b.pgn c.epd d.pgn)
	else
		bsdtar --format zip -cf t.zip -C d a.pgn b.pgn c.epd d.pgn
	fi
	for f in t.tar t.tar.zst t.zip; do
		same_j 2 1000 "$f"
		same_j 3 100000 "$f"
	done
	[[ "$stderr" == *"t.zip: b.pgn: game 2 (ply 2): illegal move \"Qxh9\"; kept 3 positions"* ]] || fail "$stderr"
	# several operands, the game count goes on across them for --chunks
	same_j 2 5000 t.tar "$L100K" mf.zst
	POSFLOW_PGN_PIECE=5000 pgn2pos -j 2 --chunks 9 -o ch "$L10K" mf.zst 2>/dev/null
	pgn2pos --chunks 9 -o ch1 "$L10K" mf.zst 2>/dev/null
	diff -r ch ch1
}

# Many small zstd frames, more than libarchive reads ahead to detect the
# format (so damage is met while reading, not while opening): frames.zst,
# 100 x 4 frames of the 100k sample; frame k starts at byte off[k].
zstd_frames() {
	local at=0 i p
	split -n l/4 -d "$L100K" part.
	for p in part.0*; do zstd -q -c "$p" > "$p.zst"; done
	off=()
	: > frames.zst
	for i in $(seq 100); do
		for p in part.0*.zst; do
			off+=("$at")
			cat "$p" >> frames.zst
			at=$((at + $(wc -c < "$p")))
		done
	done
	off+=("$at")
}

# games whose text lies whole in the first k frames
games_in_frames() {
	head -c "${off[$1]}" frames.zst | zstd -dc 2>/dev/null | grep -c '^\[Event '
}

@test "-j: zstd frames are decompressed in the parser threads from -j 3 on, the same as -j 1" {
	zstd_frames
	[ "$(wc -c < frames.zst)" -gt 2000000 ]
	same_j 3 100000 frames.zst
	[ "$(posdump -c one.pos | awk '{print $1}')" -eq $((100 * 2817)) ]
	posdump one.pos > frames.txt
	run pgn2pos -j 3 --stats -o /dev/null frames.zst
	assert_output --partial "400 zstd frames decompressed in parallel"
	run pgn2pos -j 1 --stats -o /dev/null frames.zst
	assert_output --partial "0 zstd frames decompressed in parallel"
	# with -j 2 the reader decompresses them, as it does other input,
	# unless POSFLOW_PGN_FRAMES says from -j 2 on
	same_j 2 100000 frames.zst
	run pgn2pos -j 2 --stats -o /dev/null frames.zst
	assert_output --partial " 0 zstd frames decompressed in parallel"
	POSFLOW_PGN_FRAMES=2 same_j 2 100000 frames.zst
	POSFLOW_PGN_FRAMES=2 run pgn2pos -j 2 --stats -o /dev/null frames.zst
	assert_output --partial " 400 zstd frames decompressed in parallel"
	POSFLOW_PGN_FRAMES=4 run pgn2pos -j 3 --stats -o /dev/null frames.zst
	assert_output --partial " 0 zstd frames decompressed in parallel"
	# frames that do not say their size (zstd from a pipe), pzstd's
	# (each after a skippable frame), one frame, zstd inside tar
	for i in 1 2 3 4 5 6; do cat "$L100K"; done > six.pgn
	zstd -q -c < six.pgn > nosize.zst
	pzstd -q -p 2 -c six.pgn > p.zst
	zstd -q -c six.pgn > one.zst
	for f in nosize.zst p.zst one.zst; do
		same_j 2 50000 "$f"
		same_j 3 3000 "$f"
		cmp <(posdump one.pos) <(pgn2pos -q six.pgn | posdump)
		run pgn2pos -j 3 --stats -o /dev/null "$f"
		assert_output --partial " 1 zstd frame decompressed in parallel"
	done
	# not a file of frames: a pipe, an archive (libarchive reads them)
	pgn2pos -q -j 3 < frames.zst | posdump | cmp - frames.txt
	run pgn2pos -j 3 --stats -o /dev/null < frames.zst
	assert_output --partial "0 zstd frames decompressed in parallel"
	tar --zstd -cf t.tar.zst six.pgn
	run pgn2pos -j 3 --stats -o /dev/null t.tar.zst
	assert_output --partial "0 zstd frames decompressed in parallel"
}

@test "zstd: damage loses none of the games before it, and -j reads it as -j 1" {
	zstd_frames
	n300=$(games_in_frames 300)
	n400=$(games_in_frames 400)
	[ "$n300" -gt 3000 ]
	# a damaged frame (the 301st), bytes between frames, the last frame
	# cut short, garbage or zeros after the last frame
	mid=$(( (off[300] + off[301]) / 2 ))
	head -c "$mid" frames.zst > bad-frame.zst
	printf 'XXXXXXXXXXXXXXXX' >> bad-frame.zst
	tail -c +"$((mid + 17))" frames.zst >> bad-frame.zst
	head -c "${off[300]}" frames.zst > between.zst
	printf 'not a frame' >> between.zst
	tail -c +"$((off[300] + 1))" frames.zst >> between.zst
	head -c "$((off[399] + 100))" frames.zst > cut.zst
	{ cat frames.zst; printf 'garbage\n'; } > garbage.zst
	{ cat frames.zst; head -c 700 /dev/zero; } > zeros.zst
	for f in bad-frame between cut garbage zeros; do
		case $f in
		bad-frame|between) n=$n300 ;;
		cut) n=$(games_in_frames 399) ;;
		*) n=$n400 ;;
		esac
		same_j 3 20000 "$f.zst"
		[ "$status" -eq 1 ] || fail "$f: exit $status"
		same_j 2 20000 "$f.zst"
		[ "$status" -eq 1 ] || fail "$f: exit $status"
		# every game of the frames before the damage, none cut off
		[[ "$stderr" == *"$f.zst: read error after game $n: "* ]] ||
		    fail "$f: $stderr"
		[[ "$stderr" == *"$n games read, $n kept (0 truncated)"* ]] ||
		    fail "$f: $stderr"
		# the records are those of the whole file, up to there
		cmp <(posdump one.pos) <(pgn2pos -q frames.zst | posdump |
		    head -n "$(posdump one.pos | wc -l)")
		# and from a pipe, the same games and records (libarchive,
		# which read zstd from pipes, lost the text it had decoded
		# before the damage)
		for j in 1 3; do
			run --separate-stderr bash -c "cat $f.zst |
			    pgn2pos -j $j -f -o pipe.pos"
			[ "$status" -eq 1 ] || fail "$f | -j $j: exit $status"
			[[ "$stderr" == *"stdin: read error after game $n: "* ]] ||
			    fail "$f | -j $j: $stderr"
			# (the records: a pipe's waits flush blocks early)
			cmp <(posdump one.pos) <(posdump pipe.pos) ||
			    fail "$f | -j $j: records differ"
		done
	done
	[[ "$stderr" == *"Unknown frame descriptor"* ]] || fail "$stderr"
	same_j 3 5000 bad-frame.zst
	[[ "$stderr" == *"read error after game $n300: Zstd decompression failed: "* ]] || fail "$stderr"
	same_j 3 20000 cut.zst
	[[ "$stderr" == *": Truncated zstd input"* ]] || fail "$stderr"
	# the frames before the damaged one were decompressed in parallel
	run pgn2pos -j 3 --stats -o /dev/null bad-frame.zst
	assert_output --partial " 300 zstd frames decompressed in parallel"
	# damage near the start, met while the format is detected: the games
	# of the first frame are kept all the same
	mid=$(( (off[1] + off[2]) / 2 ))
	head -c "$mid" frames.zst > early.zst
	printf 'XXXXXXXXXXXXXXXX' >> early.zst
	tail -c +"$((mid + 17))" frames.zst >> early.zst
	n1=$(games_in_frames 1)
	[ "$n1" -gt 0 ]
	same_j 3 3000 early.zst
	[ "$status" -eq 1 ]
	same_j 2 3000 early.zst
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"early.zst: read error after game $n1: Zstd decompression failed: "* ]] ||
	    fail "$stderr"
	# a damaged tar.zst holds no text to keep: it cannot be read
	cp "$L100K" a.pgn
	tar --zstd -cf t.tar.zst a.pgn
	size=$(wc -c < t.tar.zst)
	head -c "$((size / 2))" t.tar.zst > bad.tar.zst
	printf 'XXXXXXXXXXXXXXXX' >> bad.tar.zst
	tail -c +"$((size / 2 + 17))" t.tar.zst >> bad.tar.zst
	same_j 2 3000 bad.tar.zst
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"bad.tar.zst: cannot read: Zstd decompression failed: "* ]] ||
	    fail "$stderr"
}

@test "-j: damaged input, the same messages and the same records kept" {
	same_j 2 200 "$PGN/bad-text.pgn"
	same_j 2 200 "$PGN/bad-moves.pgn"
	same_j 2 200 "$PGN/empty-games.pgn"
	# truncated compressed input: the games before the damage, then a
	# read error naming the last game
	head -c 15000 <(gzip -c "$L100K") > cut.gz
	same_j 2 2000 cut.gz
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"cut.gz: read error after game "* ]] || fail "$stderr"
	# binary garbage between games, a tag section without [Event] right
	# before one with it (the two are one game), unterminated comments
	# and variations, a game cut off at the end
	{
		cat "$L10K"
		printf '\n\001\002\003 garbage\n\n'
		printf '[Site "no event"]\n[White "a"]\n\n'
		cat "$L10K"
		printf '\n1. e4 { never closed\n\n'
		cat "$L10K"
		printf '\n1. e4 (1. d4 d5\n\n'
		cat "$L10K"
		printf '\n[Event "x"]\n[Site "y"]\n\n[Event "z"]\n\n'
		head -c 5000 "$L100K"
	} > mixed.pgn
	for piece in 50 200 1000 4000; do
		same_j 2 "$piece" mixed.pgn
		same_j 3 "$piece" --strict mixed.pgn
	done
	[[ "$stderr" == *"unterminated comment"* ]] || fail "$stderr"
	# a tag begun after a '%' in a variation, or after a ';' in a comment
	# opened a line before: the [Event] after it is one more tag of that
	# game, no place to cut (the pieces end near it; each failed before
	# aa84de4 or the commit after it)
	printf '[Event "a"]\n\n1. e4 (1. d4 %% x) [Site "v"]\n[Event "v"]\n\n1. d4 *\n\n' > var.pgn
	printf '[Event "a"]\n\n1. e4 { a\nb ; c } [Site "w"]\n[Event "w"]\n\n1. d4 *\n\n' > com.pgn
	# and on a '%' line inside a comment (no escape there)
	printf '[Event "a"]\n\n1. e4 {\n%%x } [Site "p"]\n[Event "p"]\n\n1. d4 *\n\n' > pct.pgn
	# a '%' escape line in a variation, with a ')' and a '[' on it
	printf '[Event "a"]\n\n1. e4 (1. d4\n%%) [Site "e"]\n) e5 [Site "e"]\n[Event "e"]\n\n1. d4 *\n\n' > esc.pgn
	for piece in 10 20 30 40; do
		same_j 2 "$piece" var.pgn
		same_j 2 "$piece" com.pgn
		same_j 2 "$piece" esc.pgn
		same_j 2 "$piece" pct.pgn
	done
	[[ "$stderr" == "pgn2pos: 2 games read, 2 kept (0 truncated), 0 skipped; 4 positions written" ]] ||
		fail "$stderr"
	# an input that cannot be read at all, beside good ones
	printf 'BZh91AY&SY garbage' > bad.bz2
	same_j 2 1000 "$L10K" bad.bz2 "$L10K"
	[ "$status" -eq 1 ]
}

@test "-j: bad values are usage errors" {
	for v in 0 -1 257 x 2x ''; do
		run --separate-stderr pgn2pos -j "$v" "$L10K"
		assert_failure 2
		[[ "$stderr" == *"usage:"* ]] || fail "-j '$v': $stderr"
	done
	run pgn2pos --jobs 256 -o /dev/null "$L10K"
	assert_success
}

@test "-j: from a pipe that waits, a game flows once the next one begins" {
	mkfifo in.fifo
	pgn2pos -q -j 2 < in.fifo > out.pos &
	pid=$!
	exec 7> in.fifo
	printf '[Event "a"]\n\n1. e4 e5 2. Nf3 *\n\n[Event "b"]\n\n' >&7
	# game a's four records arrive before the input ends
	size=$(size_after out.pos 200)
	printf '1. d4 *\n\n' >&7
	exec 7>&-
	wait "$pid"
	[ "$size" -gt 200 ] || fail "nothing written while the input was open ($size bytes)"
	[ "$(posdump -c out.pos)" = "6 out.pos" ]
}

@test "scripts/stress-pgn2pos runs: 60 fixed cases of -j and packings on damaged games, no promise broken" {
	# the long search for bugs is run by hand (--seconds); this keeps
	# the tool working, on the same 60 cases every time
	run "$TOP/scripts/stress-pgn2pos" --cases 60 --seed 3 \
	    --bin "${POSFLOW_BIN:-$BUILD_DIR/bin}" --keep "$BATS_TEST_TMPDIR/stress"
	assert_success
	assert_output "60 cases, 0 failed"
}
