#!/usr/bin/env bats
# posstat: the report's figures against counts made here by other means
# (grep of the PGN tags, posdump and awk): games, records, results per game
# and (W+L)/D, the repeat rate by ply, the played-move rank on hand-built
# tables (with the mate rule), unique positions exact and estimated under a
# tiny --memory, the evaluation, complexity and repair figures, --by
# groups, the HTML page (well-formed, one SVG per figure; a headless
# chromium screenshot); stream handling; a closed pipe downstream; the
# usage table.

load helper

MKREC="$BUILD_DIR/tests/tools/mkrec"
G10K="$TESTDATA/lichess_db_10k.pgn"
G100K="$TESTDATA/lichess_db_100k.pgn"

setup_file() {
	pgn2pos "$G10K" > "$BATS_FILE_TMPDIR/10k.pos" 2>/dev/null
	pgn2pos "$G100K" > "$BATS_FILE_TMPDIR/100k.pos" 2>/dev/null
}

# Two numbers equal to 1e-9 (the JSON prints 10 significant digits).
near() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 1e-9) }' ||
	    fail "$1 != $2"
}

# n positions (from seed s, an LCG exact in awk's doubles), black to
# move: two kings and one white piece; a few are twins.
kp_fens() {
	awk -v s="$1" -v n="$2" 'BEGIN { split("Q R B N", pc, " ")
	    for (i = 0; i < n; i++) {
		do {
			s = (s * 69069 + 1) % 4294967296; a = int(s / 65536) % 64
			s = (s * 69069 + 1) % 4294967296; b = int(s / 65536) % 64
			s = (s * 69069 + 1) % 4294967296; c = int(s / 65536) % 64
			dr = int(a / 8) - int(b / 8); df = a % 8 - b % 8
		} while (a == b || a == c || b == c || (dr * dr <= 1 && df * df <= 1))
		s = (s * 69069 + 1) % 4294967296; p = pc[int(s / 65536) % 4 + 1]
		for (sq = 0; sq < 64; sq++)
			brd[sq] = sq == a ? "K" : sq == b ? "k" : sq == c ? p : "1"
		fen = ""
		for (r = 7; r >= 0; r--) {
			for (f = 0; f < 8; f++)
				fen = fen brd[r * 8 + f]
			if (r) fen = fen "/"
		}
		print fen " b - - 0 1"
	    } }'
}

@test "hand counts on the bundled games: records, games, results per game, (W+L)/D" {
	for f in 10k 100k; do
		pgn=$G10K
		[ $f = 100k ] && pgn=$G100K
		pos="$BATS_FILE_TMPDIR/$f.pos"
		posstat --json "$pos" > out.json
		jq -e . out.json > /dev/null
		[ "$(jq .records out.json)" -eq "$(posdump -c "$pos" | cut -d' ' -f1)" ]
		[ "$(jq .games out.json)" -eq "$(grep -c '^\[Result ' "$pgn")" ]
		[ "$(jq .games out.json)" -eq "$(posdump --fields game "$pos" | sort -u | wc -l)" ]
		[ "$(jq .games_exact out.json)" = true ]
		w=$(grep -c '^\[Result "1-0"\]' "$pgn" || true)
		b=$(grep -c '^\[Result "0-1"\]' "$pgn" || true)
		d=$(grep -c '^\[Result "1/2-1/2"\]' "$pgn" || true)
		[ "$(jq '.results["1-0"]' out.json)" -eq "$w" ]
		[ "$(jq '.results["0-1"]' out.json)" -eq "$b" ]
		[ "$(jq '.results["1/2-1/2"]' out.json)" -eq "$d" ]
		[ "$(jq '.results["*"]' out.json)" -eq 0 ]
		# per record: the positions of each result add up to the records
		[ "$(jq '[.position_results[]] | add' out.json)" -eq "$(jq .records out.json)" ]
		[ "$(jq '.position_results["1-0"]' out.json)" -eq "$(posdump --fields result "$pos" | grep -c 'result=1-0$')" ]
		if [ "$d" -eq 0 ]; then
			[ "$(jq .decisive_per_draw out.json)" = null ]
		else
			near "$(jq .decisive_per_draw out.json)" "$(awk -v w=$w -v b=$b -v d=$d 'BEGIN { printf "%.12g", (w + b) / d }')"
		fi
	done
	# the 100k sample has one draw: 46 decisive games per draw
	[ "$(posstat --json "$BATS_FILE_TMPDIR/100k.pos" | jq .decisive_per_draw)" = 46 ]
	# the text report says the same
	run posstat "$BATS_FILE_TMPDIR/10k.pos"
	assert_success
	assert_line --regexp '^  records +262$'
	assert_line --regexp '^  games +5$'
	assert_line --regexp '^  \(W\+L\)/D +-$'
}

@test "Elo, time controls and pieces against the PGN tags and the FENs" {
	pos="$BATS_FILE_TMPDIR/100k.pos"
	posstat --json --top 3 "$pos" > out.json
	# each player of each game once: twice the games
	[ "$(jq '([.elo.bins[].players] | add) + .elo.unknown' out.json)" -eq 94 ]
	want=$(grep -h -e '^\[WhiteElo ' -e '^\[BlackElo ' "$G100K" | tr -dc '0-9\n' |
	    awk '$1 >= 1500 && $1 < 1600' | wc -l)
	[ "$(jq '.elo.bins[] | select(.from == 1500) | .players' out.json)" -eq "$want" ]
	# the three most common time controls, then the rest as other
	[ "$(jq -c '[.time_controls[] | [.tc, .games]]' out.json)" = '[["60+0",18],["300+3",11],["180+0",5],["other",13]]' ]
	# pieces: popcount of the board against the FEN's letters
	posdump --fields fen "$pos" | awk '{ n = gsub(/[a-zA-Z]/, "", $1); c[n]++ }
	    END { for (i = 0; i <= 32; i++) printf "%d%s", c[i] + 0, i < 32 ? "," : "\n" }' > want
	[ "$(jq -r '.positions_by_pieces | map(tostring) | join(",")' out.json)" = "$(cat want)" ]
	# positions by ply against posdump
	posdump --fields ply "$pos" | sed 's/.*ply=//' | sort -n | uniq -c | awk '{ print $1 }' > want
	[ "$(jq -r '.positions_by_ply[]' out.json)" = "$(cat want)" ]
}

@test "repeat rate by ply: computed independently from the FENs" {
	for f in 10k 100k; do
		pos="$BATS_FILE_TMPDIR/$f.pos"
		# the FEN without its clocks, and the ply
		posdump --fields fen,ply "$pos" |
		    awk -F' [|] ' '{ split($1, x, " "); p = $2; sub(/ply=/, "", p)
			k = x[1] " " x[2] " " x[3] " " x[4] " " p
			n[p]++; c[k]++; ply[k] = p
			if (p + 0 > max) max = p + 0 }
			END { for (k in c) if (c[k] > 1) r[ply[k]] += c[k]
				for (i = 0; i <= max; i++)
				if (n[i]) printf "%.12g\n", r[i] / n[i]; else print "null" }' > want
		posstat --json "$pos" | jq -r '.repeat_rate_by_ply[]' > got
		[ "$(wc -l < got)" -eq "$(wc -l < want)" ]
		paste -d' ' got want | while read -r g w; do
			if [ "$w" = null ]; then [ "$g" = null ]; else near "$g" "$w"; fi
		done
	done
	# every game starts from the start position: each one repeats,
	# the first too, as seed 003 counts its repeated games
	[ "$(posstat --json "$BATS_FILE_TMPDIR/100k.pos" | jq -c '[.repeat_rate_by_ply[0], .repeats_by_ply[0], .repeat_rate_exact]')" = "[1,47,true]" ]
	# two games alike are both repeats: a rate of 1, not 0.5
	printf '%s\n' "startpos game=1 ply=0 move=e2e4" \
	    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 game=1 ply=1" \
	    "startpos game=2 ply=0 move=e2e4" \
	    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 game=2 ply=1" \
	    "startpos game=3 ply=0 move=d2d4" \
	    "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1 game=3 ply=1" |
	    "$MKREC" > two.pos
	[ "$(posstat --json two.pos | jq -c '[.repeats_by_ply, .repeat_rate_by_ply]')" = "[[3,2],[1,0.6666666667]]" ]
}

@test "played-move rank: hand-built tables, the deepest complete one, games cut at a mate" {
	A='k7/8/8/8/8/8/8/K7 w - - 0 1'
	T='a1a2:cp:30,a1b1:cp:20,a1b2:cp:10@depth:6'
	cat > in.txt <<-EOF
	# game 1: ranks 1/3, 2/3, 3/3: mean 2/3
	$A game=1 ply=0 move=a1a2 scores=$T
	$A game=1 ply=1 move=a1b1 scores=$T
	$A game=1 ply=2 move=a1b2 scores=$T
	# game 2: 2/3, then a mate: that record and the rest of the game are left out
	$A game=2 ply=0 move=a1b1 scores=$T
	$A game=2 ply=1 move=a1b1 scores=a1a2:mate:3,a1b1:cp:0,a1b2:cp:0@depth:6
	$A game=2 ply=2 move=a1a2 scores=$T
	# game 3: an incomplete table is ignored; the deepest of two tables counts (3/3)
	$A game=3 ply=0 move=a1a2 scores=a1a2:cp:5,a1b1:cp:0@depth:9
	$A game=3 ply=1 move=a1b2 scores=a1b2:cp:50,a1a2:cp:0,a1b1:cp:-10@depth:3 scores=a1a2:cp:20,a1b1:cp:10,a1b2:cp:0@depth:8
	# game 4: no move played, no table: no rank
	$A game=4 ply=0 scores=$T
	$A game=4 ply=1 move=a1a2
	EOF
	"$MKREC" < in.txt > in.pos
	posstat --json in.pos > out.json
	# (2/3 + 2/3 + 1) / 3 = 7/9
	near "$(jq .played_move_rank.mean out.json)" "$(awk 'BEGIN { printf "%.12g", 7 / 9 }')"
	[ "$(jq -c '.played_move_rank | [.games, .moves, .games_cut_at_mate, .not_in_table]' out.json)" = "[3,5,1,0]" ]
	# tenths: 1/3 in the 4th, 2/3 twice in the 7th, 1 twice in the 10th
	[ "$(jq -c .played_move_rank.histogram out.json)" = "[0,0,0,1,0,0,2,0,0,2]" ]
	run posstat in.pos
	assert_line --regexp '^  mean +0\.7778$'
	assert_line --regexp '^  games cut at a mate +1$'
}

@test "unique positions: exact with known twins; a HyperLogLog estimate within 3 % under a tiny --memory" {
	cat > in.txt <<-'EOF'
	startpos game=1
	startpos game=2
	rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 7 12 game=3
	rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w Kkq - 0 1 game=4
	rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1 game=5
	rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 game=5 ply=1
	EOF
	"$MKREC" < in.txt > in.pos
	posstat --json in.pos > out.json
	# the clocks do not count; castling rights and the side to move do
	[ "$(jq -c '[.unique_positions, .unique_positions_exact, .games]' out.json)" = "[4,true,5]" ]
	# 100000 positions (a few twins), black to move: two kings and one
	# white piece (an LCG exact in awk's doubles)
	kp_fens 12345 100000 | awk '{ print $0 " game=" NR - 1 }' > many.txt
	exact=$(cut -d' ' -f1 many.txt | sort -u | wc -l)
	[ "$exact" -gt 90000 ]
	"$MKREC" < many.txt > many.pos
	posstat --json many.pos > out.json
	[ "$(jq .unique_positions out.json)" -eq "$exact" ]
	[ "$(jq .unique_positions_exact out.json)" = true ]
	posstat --json --memory 64K many.pos > small.json
	[ "$(jq .unique_positions_exact small.json)" = false ]
	[ "$(jq .repeat_rate_exact small.json)" = false ]
	[ "$(jq .games_exact small.json)" = false ]
	[ "$(jq .unique_positions_estimator small.json)" != null ]
	est=$(jq .unique_positions small.json)
	awk -v e="$est" -v x="$exact" 'BEGIN { d = (e - x) / x; if (d < 0) d = -d; exit !(d < 0.03) }' ||
	    fail "estimate $est, exact $exact"
	# every record is at ply 0: exactly the records of positions that
	# occur more than once are repeats there, and with the log frozen a
	# lower bound that still finds some
	once=$(cut -d' ' -f1 many.txt | sort | uniq -u | wc -l)
	[ "$(jq '.repeats_by_ply[0]' out.json)" -eq $((100000 - once)) ]
	low=$(jq '.repeats_by_ply[0]' small.json)
	[ "$low" -le $((100000 - once)) ] && [ "$low" -gt 0 ] || fail "lower bound $low"
	# games in game order are still counted right by the change of game id
	[ "$(jq .games small.json)" -eq 100000 ]
	run posstat --memory 64K many.pos
	assert_output --partial "HyperLogLog estimate"
	assert_output --partial "lower bound"
	# 300 positions at 2000 plies each: the log freezes at 64K, and
	# still holds all 300, a count that is certain; the sketch alone
	# said 299 of this input
	kp_fens 5 300 > pos300.txt
	awk -v s=1 '{ pos[NR - 1] = $0 } END {
	    for (i = 0; i < 200000; i++) {
		s = (s * 69069 + 1) % 4294967296; k = int(s / 65536) % 300
		s = (s * 69069 + 1) % 4294967296; ply = int(s / 65536) % 2000
		print pos[k] " game=" int(i / 60) " ply=" ply
	    } }' pos300.txt > few.txt
	[ "$(cut -d' ' -f1 few.txt | sort -u | wc -l)" -eq 300 ]
	"$MKREC" < few.txt > few.pos
	[ "$(posstat --json --memory 64K few.pos | jq -c '[.unique_positions, .unique_positions_exact, .unique_positions_estimator]')" = '[300,false,"lower bound: the positions the full memory holds"]' ]
	run posstat --memory 64K few.pos
	assert_output --regexp 'unique positions +300  \(lower bound: the positions the full memory holds\)'
	# the --by summary table marks the estimates too
	run posstat --memory 64K --by 'ply' many.pos
	assert_success
	assert_line --regexp '^  0 +100000 +~100000 +~[0-9]+ '
	assert_output --partial "~ estimated (or, for unique positions, a lower bound): the memory for counting (--memory) was full"
	run posstat --by 'ply' many.pos
	refute_output --partial "~"
}

@test "evaluation histogram, complexity and repair rates" {
	# complexity (depth mode, 28 bytes) with the value $1; repair
	# (candidates, 20 bytes) of class $1
	cplx() { printf '0101%02x00%048d' "$1" 0; }
	repair() { printf '01%02x%036d' "$1" 0; }
	panda() { printf '02%02x%036d' "$1" 0; }
	cat > in.txt <<-EOF
	startpos game=1 ply=0 eval=cp:150@depth:5 eval=cp:-20@depth:10 ext=7:$(cplx 5) ext=8:$(repair 1)
	startpos game=1 ply=1 eval=mate:3@depth:9 ext=7:$(cplx 0) ext=8:$(repair 0)
	startpos game=1 ply=2 eval=mate:-2@depth:9 ext=7:$(cplx 0)
	startpos game=1 ply=3 eval=cp:5000@depth:2 ext=8:$(panda 2)
	startpos game=1 ply=4
	EOF
	"$MKREC" < in.txt > in.pos
	posstat --json in.pos > out.json
	[ "$(jq -c '.eval | [.none, .mate_for, .mate_against]' out.json)" = "[1,1,1]" ]
	[ "$(jq '.eval.bins[] | select(.from == -100) | .positions' out.json)" -eq 1 ]
	[ "$(jq '.eval.bins[-1] | [.from, .positions] | tostring' out.json)" = '"[1000,1]"' ]
	[ "$(jq -c '.complexity | [.records, .positive, .histogram]' out.json)" = '[3,1,{"0":2,"5":1}]' ]
	[ "$(jq -c '.repair | [.records, .marked, .by_class]' out.json)" = '[3,2,{"candidates/not":1,"candidates/candidate":1,"panda/maybe-yes":1}]' ]
	# the classes are named as posdump names them
	posdump in.pos | grep -q 'class=maybe-yes'
	posstat in.pos | grep -q 'panda/maybe-yes'
	run posstat in.pos
	refute_output --partial maybe_yes
	posstat --html page.html in.pos > /dev/null
	grep -q '<h2>Complexity</h2>' page.html
	grep -q '<h2>Repair classes</h2>' page.html
	# without them, no such figures and null in JSON
	[ "$(posstat --json "$BATS_FILE_TMPDIR/10k.pos" | jq -c '[.complexity, .repair]')" = "[null,null]" ]
}

@test "--by: groups sum to the totals; --by file with two inputs; expressions; a bad one is exit 2 with its column" {
	a="$BATS_FILE_TMPDIR/10k.pos"
	b="$BATS_FILE_TMPDIR/100k.pos"
	posstat --json --by tc "$b" > out.json
	[ "$(jq .by out.json)" = '"tc"' ]
	[ "$(jq '[.groups[].records] | add' out.json)" -eq "$(jq .records out.json)" ]
	[ "$(jq '[.groups[].games] | add' out.json)" -eq "$(jq .games out.json)" ]
	[ "$(jq '[.groups[].results["1-0"]] | add' out.json)" -eq "$(jq '.results["1-0"]' out.json)" ]
	[ "$(jq '.groups[] | select(.by == "60+0") | .games' out.json)" -eq 18 ]
	[ "$(jq '.groups | length' out.json)" -eq 10 ]
	# by file: first seen first, each group that file's figures
	posstat --json --by file "$a" "$b" > two.json
	[ "$(jq -c '[.groups[] | [.by, .records, .games]]' two.json)" = "[[\"$a\",262,5],[\"$b\",2817,47]]" ]
	[ "$(jq .records two.json)" -eq $((262 + 2817)) ]
	[ "$(jq -c .groups[1].repeat_rate_by_ply two.json)" = "$(posstat --json "$b" | jq -c .repeat_rate_by_ply)" ]
	# an expression: records sum to the total
	posstat --json --by 'elo >= 1500' "$b" > e.json
	[ "$(jq -c '[.groups[].by] | sort' e.json)" = '["0","1"]' ]
	[ "$(jq '[.groups[].records] | add' e.json)" -eq 2817 ]
	posstat --json --by termination "$b" | jq -e '[.groups[].by] | index("normal") != null' > /dev/null
	# game: each game its own group, named as posdump shows its id, ids
	# that differ past 2^53 too; an integer named in full
	printf '%s\n' 'startpos game=0xc2c753673ff1fbd4 ply=0' \
	    'startpos game=0xc2c753673ff1fbd5 ply=0' \
	    'startpos game=0xc2c753673ff1fbd4 ply=1' |
	    "$BUILD_DIR/tests/tools/mkrec" > g.pos
	posstat --json --by game g.pos > g.json
	[ "$(jq -c '[.groups[] | [.by, .records]]' g.json)" = '[["c2c753673ff1fbd4",2],["c2c753673ff1fbd5",1]]' ]
	[ "$(jq -c '[.groups[].by] | sort' <(posstat --json --by game "$a"))" = "$(posdump --json "$a" | jq -s -c '[.[].game] | unique')" ]
	posstat --json --by 'ply + 1000000000000000' g.pos > p.json
	[ "$(jq -c '[.groups[].by]' p.json)" = '["1000000000000000","1000000000000001"]' ]
	# past 2^53 too: two doubles, two groups, every digit
	printf '%s\n' 'startpos game=14035278466643000000' \
	    'startpos game=14035278466643004096' |
	    "$BUILD_DIR/tests/tools/mkrec" > h.pos
	[ "$(posstat --json --by 'game + 0' h.pos | jq -c '[.groups[].by]')" = '["14035278466642999296","14035278466643003392"]' ]
	# a fraction: as many digits as tell it apart
	[ "$(posstat --json --by 'ply / 3' g.pos | jq -c '[.groups[].by]')" = '["0","0.3333333333333333"]' ]
	# -0 is 0: one group, whatever the order
	printf '%s\n' 'startpos game=1 result=0-1' 'startpos game=3 result=*' \
	    'startpos game=2 result=1-0' | "$BUILD_DIR/tests/tools/mkrec" > z.pos
	[ "$(posstat --json --by 'result * 0' z.pos | jq -c '[.groups[] | [.by, .records]]')" = '[["0",2],["missing",1]]' ]
	# the text report has a summary row per group
	run posstat --by file "$a" "$b"
	assert_success
	assert_output --partial "posstat: file = $a"
	# a bad expression: exit 2, the column, nothing on stdout
	run --separate-stderr posstat --by 'ply >= ' "$a"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == *"posstat: --by: column 8: "* ]] || fail "$stderr"
	run --separate-stderr posstat --by 'nosuchfield > 3' "$a"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"posstat: --by: column 1: unknown field"* ]] || fail "$stderr"
}

@test "HTML: well-formed XML, one SVG per figure heading, plots per group with --by" {
	posstat --html page.html "$BATS_FILE_TMPDIR/100k.pos" > text.out
	grep -q 'records' text.out
	posstat --json --by tc --html by.html -o by.json "$BATS_FILE_TMPDIR/100k.pos"
	jq -e .groups by.json > /dev/null
	for f in page.html by.html; do
		run /usr/bin/python3 - "$f" <<-'EOF'
		import sys, xml.etree.ElementTree as ET
		from html.parser import HTMLParser
		text = open(sys.argv[1], encoding="utf-8").read()
		HTMLParser().feed(text)
		root = ET.fromstring(text.split("\n", 1)[1])   # after <!DOCTYPE html>
		tag = lambda e: e.tag.split("}")[-1]
		assert not any(tag(e) == "script" for e in root.iter()), "script"
		sections = [e for e in root.iter() if tag(e) == "section"]
		h2 = [e for e in root.iter() if tag(e) == "h2"]
		svg = [e for e in root.iter() if tag(e) == "svg"]
		assert len(h2) == len(svg) == len(sections) >= 8, (len(h2), len(svg))
		for s in sections:
		    kids = [tag(k) for k in s]
		    assert kids.count("h2") == 1 and kids.count("svg") == 1, kids
		    assert any(tag(e) == "text" for e in s.iter())
		# bars or lines beyond each plot's background
		assert sum(1 for e in root.iter() if tag(e) in ("rect", "path")) > 3 * len(svg)
		print(len(svg), "figures:", ", ".join(e.text for e in h2))
		EOF
		assert_success
		assert_output --partial "Repeat rate by ply"
		assert_output --partial "Played-move rank"
	done
	# no address outside the page but the SVG namespace
	! grep -o 'https\?://[^"]*' page.html | grep -v '^http://www.w3.org/2000/svg$'
	# one colour per group: the legend names each time control
	grep -q '>300+3</text>' by.html
	# a file name that is not UTF-8 (Latin-1 e-acute) is read as Latin-1,
	# as --json reads it: the page stays UTF-8 and well-formed
	cp "$BATS_FILE_TMPDIR/10k.pos" "$(printf 'caf\xe9.pos')"
	posstat --by file --html l1.html "$(printf 'caf\xe9.pos')" > /dev/null
	run /usr/bin/python3 -c "
import sys, xml.etree.ElementTree as ET
text = open('l1.html', encoding='utf-8').read()
ET.fromstring(text.split('\n', 1)[1])
print('caf\u00e9.pos' in text)"
	assert_success
	assert_output True
	# --by whose records all fall in one group: in per cent of the group
	# still, as the page says (they were counts)
	printf '%s\n' 'startpos game=1 result=1-0' 'startpos game=2 result=1-0' \
	    'startpos game=3 result=0-1' 'startpos game=4 result=1/2-1/2' |
	    "$MKREC" > one.pos
	posstat --by 'ply >= 0' --html one.html one.pos > /dev/null
	grep -q 'values in per cent of the group' one.html
	grep -q '<title>1 1-0: 50</title>' one.html ||
	    fail "$(grep -o '<title>1 1-0: [^<]*' one.html)"
	grep -q '>% of the group</text>' one.html
	# one colour per group up to the 33 groups (with '(other)'): the
	# legend's colours are all different (10 were used in turn)
	for i in $(seq 40); do echo "startpos game=$i"; done | "$MKREC" > g40.pos
	posstat --by game --html g40.html g40.pos > /dev/null
	run /usr/bin/python3 -c "
import re
sec = open('g40.html').read().split('<section>')[1]
c = re.findall(r'width=\"12\" height=\"12\" fill=\"(#[0-9a-f]{6})\"', sec)
print(len(c), len(set(c)))"
	assert_output "33 33"
	# a failed write leaves no file
	run posstat --html nodir/page.html "$BATS_FILE_TMPDIR/10k.pos"
	assert_failure 1
	[ ! -e nodir ]
}

@test "HTML: a headless chromium screenshot of the page is not blank" {
	# (make check installs Debian's chromium: this test is not skipped)
	browser=$(command -v chromium || command -v chromium-browser || true)
	[ -n "$browser" ] || fail "no chromium (make check installs it as root)"
	posstat --html page.html "$BATS_FILE_TMPDIR/10k.pos" > /dev/null
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
	    --window-size=1000,3000 --screenshot="$PWD/shot.png" \
	    "file://$PWD/page.html" 2>/dev/null
	[ -s shot.png ]
	run /usr/bin/python3 - shot.png <<-'EOF'
	import struct, sys, zlib
	data = open(sys.argv[1], "rb").read()
	assert data[:8] == b"\x89PNG\r\n\x1a\n"
	i, idat = 8, b""
	while i < len(data):
	    n, kind = struct.unpack(">I4s", data[i:i + 8])
	    if kind == b"IDAT":
	        idat += data[i + 8:i + 8 + n]
	    i += 12 + n
	raw = zlib.decompress(idat)
	# a blank page is one colour: its filtered rows hold a handful of bytes
	print(len(set(raw)))
	assert len(set(raw)) > 32
	EOF
	assert_success
}

@test "empty, concatenated and standard input; -o" {
	"$MKREC" < /dev/null > empty.pos
	run posstat --json empty.pos
	assert_success
	[ "$(jq -c '[.records, .games, .unique_positions, .repeat_rate_by_ply, .decisive_per_draw]' <<< "$output")" = "[0,0,0,[],null]" ]
	posstat empty.pos > /dev/null
	posstat --html e.html empty.pos > /dev/null
	/usr/bin/python3 -c 'import sys, xml.etree.ElementTree as E; E.fromstring(open(sys.argv[1]).read().split("\n", 1)[1])' e.html
	a="$BATS_FILE_TMPDIR/10k.pos"
	cat "$a" "$a" > two.pos
	posstat --json two.pos > out.json
	# the same games twice: twice the records, the games once, every
	# position a repeat
	[ "$(jq -c '[.records, .games, .unique_positions]' out.json)" = "[524,5,251]" ]
	[ "$(jq '[.repeats_by_ply[]] | add' out.json)" -eq 524 ]
	posstat --json - < "$a" | jq -e '.records == 262' > /dev/null
	zstd -q -c "$a" | posstat --json | jq -e '.records == 262' > /dev/null
	run posstat -o report.txt "$a"
	assert_success
	assert_output ""
	grep -q 'unique positions' report.txt
	# the files -o and --html make have the mode the umask gives, as
	# any other tool's (not the 0600 of a temporary file)
	rm -f report.txt e.html
	(umask 022; posstat -o report.txt --html e.html "$a")
	[ "$(stat -c %a report.txt e.html)" = "$(printf '644\n644')" ]
	rm -f report.txt
	(umask 027; posstat -o report.txt "$a")
	[ "$(stat -c %a report.txt)" = 640 ]
}

@test "-o to a pipe or a device writes to it, never renames over it" {
	printf 'startpos game=1\n' | "$MKREC" > in.pos
	mkfifo p
	cat p > got &
	run posstat --json -o p in.pos
	assert_success
	wait
	[ -p p ]
	[ "$(jq .records got)" -eq 1 ]
	mkfifo h
	cat h > page &
	posstat --html h in.pos > /dev/null
	wait
	[ -p h ]
	grep -q '<svg' page
}

@test "a closed pipe downstream ends quietly with status 0 in every format and output; a full device is still exit 1" {
	# --by game: every report is far over a pipe's 64 KiB, and the
	# readers (true) read none of it, so the writes meet a closed pipe
	# whenever the reader goes away
	a="$BATS_FILE_TMPDIR/100k.pos"
	for f in "" --json; do
		posstat $f --by game "$a" 2> err | true
		st=${PIPESTATUS[0]}
		[ "$st" -eq 0 ] ||
		    fail "posstat $f | true: status $st: $(cat err)"
		[ ! -s err ] || fail "posstat $f | true: said: $(cat err)"
	done
	mkfifo p h
	true < p &
	run --separate-stderr posstat --by game -o p "$a"
	wait
	[ "$status" -eq 0 ] || fail "-o p: status $status: $stderr"
	[ -z "$stderr" ] || fail "-o p: said: $stderr"
	true < h &
	run --separate-stderr posstat --by game --html h -o /dev/null "$a"
	wait
	[ "$status" -eq 0 ] || fail "--html h: status $status: $stderr"
	[ -z "$stderr" ] || fail "--html h: said: $stderr"
	st=0
	posstat "$a" > /dev/full 2> err || st=$?
	[ "$st" -eq 1 ] || fail "> /dev/full: status $st"
	nospc="No space left on device"
	assert_equal "$(cat err)" "posstat: stdout: $nospc"
	for o in "-o /dev/full" "--html /dev/full -o /dev/null"; do
		run --separate-stderr posstat $o "$a"
		assert_failure 1
		assert_equal "$stderr" "posstat: /dev/full: $nospc"
	done
}

@test "damage: a truncated or corrupt stream is exit 1 naming the file, the records before it still reported" {
	src="$BATS_FILE_TMPDIR/100k.pos"
	size=$(stat -c %s "$src")
	head -c $((size / 2)) "$src" > cut.pos
	before=$(posdump -c cut.pos 2>/dev/null | cut -d' ' -f1)
	[ "$before" -gt 0 ]
	run --separate-stderr posstat --json cut.pos
	[ "$status" -eq 1 ]
	[[ "$stderr" == "posstat: cut.pos: "* ]] || fail "$stderr"
	[ "$(jq .records <<< "$output")" -eq "$before" ]
	# a bad byte in the middle: the block is lost, the rest still read
	for i in $(seq 40); do echo "startpos game=$i move=e2e4"; done | "$MKREC" -F > many.pos
	size=$(stat -c %s many.pos)
	cp many.pos bad.pos
	printf '\377' | dd of=bad.pos bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
	run --separate-stderr posstat --json bad.pos many.pos
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"posstat: bad.pos: "* ]] || fail "$stderr"
	[ "$(jq .records <<< "$output")" -ge 79 ]
	# a missing file: exit 1 naming it, the other inputs reported
	run --separate-stderr posstat --json nonexistent many.pos
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"posstat: nonexistent"* ]] || fail "$stderr"
	[ "$(jq .records <<< "$output")" -eq 40 ]
	# a malformed meta extension (the Elos and the time control) is named;
	# its game's figures are counted as unknown
	printf '%s\n' 'startpos game=1 ply=0 meta=1500,1600,180+2,1' \
	    'startpos game=2 ply=0 ext=1:00' | "$MKREC" > meta.pos
	run --separate-stderr posstat --json meta.pos
	[ "$status" -eq 1 ]
	[[ "$stderr" == "posstat: meta.pos: record 2: malformed meta extension; the game's Elo and time control are counted as unknown" ]] ||
		fail "$stderr"
	[ "$(jq .games <<< "$output")" -eq 2 ]
	[ "$(jq .elo.unknown <<< "$output")" -eq 2 ]
	# an evaluation of a score kind posflow(5) does not define (900 of
	# kind 2) is named, and counted as no evaluation, not as 900 cp
	eval_hex 900 2
	printf '%s\n' 'startpos game=1 eval=cp:300@depth:12' \
	    "startpos game=2 ext=2:$HEX" | "$MKREC" > k.pos
	run --separate-stderr posstat --json k.pos
	[ "$status" -eq 1 ]
	[[ "$stderr" == "posstat: k.pos: record 2: malformed extension; the rest of the record is counted" ]] ||
		fail "$stderr"
	[ "$(jq -c '[.eval.none, [.eval.bins[] | select(.positions > 0) | .from]]' <<< "$output")" = '[1,[300]]' ]
}

@test "--help, --version, invalid calls: exit 2, usage on stderr, nothing on stdout" {
	run posstat --help
	assert_success
	assert_output --partial "usage: posstat"
	run posstat --version
	assert_output --partial "posstat (posflow)"
	printf 'startpos\n' | "$MKREC" > in.pos
	while read -r args; do
		eval "set -- $args"
		run bash -c 'posstat "$@" in.pos 2>/dev/null' _ "$@"
		[ "$status" -eq 2 ] || { echo "status $status for: $args"; false; }
		[ -z "$output" ] || { echo "stdout for: $args"; false; }
		run bash -c 'posstat "$@" in.pos 2>&1 >/dev/null' _ "$@"
		[[ "$output" == *"usage: posstat"* ]] || { echo "no usage for: $args"; false; }
	done <<-'EOF'
	--memory 1K
	--memory 12x
	--memory ''
	--top 0
	--top abc
	--top 10001
	--html ''
	--by 'ply >'
	--by '(1'
	--no-such-option
	--json=1
	EOF
}
