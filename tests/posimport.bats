#!/usr/bin/env bats
# posimport: nnue-pytorch's own binpack (testdata/binpack, written by its
# CompressedTrainingDataEntryWriter) reads back as every entry its reader
# prints; its text list through plain import and binpack export gives the
# same file byte for byte; every format round-trips through posexport,
# and reads the same compressed, piped or in tar and zip archives;
# games and their last positions; damaged input keeps every entry before
# the damage and names the offset; lc0's V6 chunks (lone, in tar archives,
# compressed) read back as the records posexport wrote them from, in
# every input format, and their damage; the usage table.

load helper

BP="$TESTDATA/binpack/lichess_sample.binpack"

setup_file() {
	setup_python || return 1
}
BPTXT="$TESTDATA/binpack/lichess_sample.binpack.txt"

# fen|move|score|ply|result of a plain-format stream (the reader's list).
plain_list() {
	awk '/^fen /{f=substr($0,5)} /^move /{m=$2} /^score /{s=$2}
	    /^ply /{p=$2} /^result /{r=$2} /^e$/{print f"|"m"|"s"|"p"|"r}'
}

# The list without the FEN's move number (the format does not store it:
# the reader derives it from the ply).
no_fullmove() {
	awk -F'|' '{split($1, a, " "); $1 = a[1]" "a[2]" "a[3]" "a[4]" "a[5]; print}' OFS='|'
}

@test "binpack: nnue-pytorch's sample imports as exactly the entries its reader lists, in 47 games" {
	run posimport -F binpack "$BP" -o s.pos
	assert_success
	assert_output "posimport: 2770 entries in 47 games imported (binpack); 0 damaged places"
	posexport -F plain s.pos 2>/dev/null | plain_list | no_fullmove > got.txt
	no_fullmove < "$BPTXT" > want.txt
	[ "$(wc -l < want.txt)" -eq 2770 ]
	cmp got.txt want.txt
	# one game id per game, its last position flagged
	[ "$(posdump --fields game s.pos | uniq | wc -l)" -eq 47 ]
	[ "$(posdump --fields flags s.pos | grep -c last)" -eq 47 ]
	# the scores are evaluations of source import, in centipawns
	run posdump --json --fields eval s.pos
	assert_line --index 0 '{"exts":[{"type":"eval","source":"import","limit":"none","limit_value":0,"score":{"cp":34},"cp":34,"bound":null,"wdl":null,"depth":0,"seldepth":0,"nodes":0,"time_ms":0,"multipv":0,"best":"-","pv":[],"engine":""}]}'
}

@test "binpack: the sample's list as plain text, imported and exported as binpack, is nnue-pytorch's file byte for byte" {
	tr '|' '\n' < "$BPTXT" | awk 'NR % 5 == 1 {print "fen " $0} NR % 5 == 2 {print "move " $0} NR % 5 == 3 {print "score " $0} NR % 5 == 4 {print "ply " $0} NR % 5 == 0 {print "result " $0; print "e"}' > sample.plain
	run posimport -F plain sample.plain -o p.pos
	assert_success
	run posexport -F binpack p.pos -o out.binpack
	assert_success
	cmp out.binpack "$BP"
	# and through binpack import too
	posimport -F binpack "$BP" 2>/dev/null | posexport -F binpack -o again.binpack 2>/dev/null
	cmp again.binpack "$BP"
}

@test "every format round-trips: positions, moves, scores (exact in centipawns), plies and results" {
	pgn2pos "$TESTDATA/lichess_db_10k.pgn" 2>/dev/null |
		uci-eval -e "$(stockfish_path)" -d 2 2>/dev/null > e.pos
	# what each format holds of the records it takes
	key() { posdump --json --fields fen,ply,move,result,eval "$@" |
		jq -r '[(.fen | split(" ")[0:4] | join(" ")), .ply, .move, .result, ([.exts[] | select(.type == "eval")][-1].cp)] | @tsv'; }
	key e.pos | awk -F'\t' '$3 != "-"' > want.tsv
	[ "$(wc -l < want.tsv)" -eq 257 ]
	for F in binpack plain bin viriformat; do
		posexport -F "$F" e.pos -o "x.$F" 2>/dev/null
		run posimport -F "$F" "x.$F" -o "y.$F.pos"
		assert_success
		assert_output "posimport: 257 entries in 5 games imported ($F); 0 damaged places"
		key "y.$F.pos" > "got.$F.tsv"
		cmp want.tsv "got.$F.tsv" || fail "$F: $(diff want.tsv got.$F.tsv | head -4)"
	done
	# marlinformat holds no move and no ply: board, score, result; and
	# the full-move number, from which the ply is rebuilt
	key e.pos | cut -f1,2,4,5 > want.m.tsv
	posexport -F marlinformat e.pos -o x.marlin 2>/dev/null
	[ "$(stat -c %s x.marlin)" -eq $((262 * 32)) ]
	posimport -F marlinformat x.marlin -o y.m.pos 2>/dev/null
	key y.m.pos | cut -f1,2,4,5 > got.m.tsv
	cmp want.m.tsv got.m.tsv
}

@test "an entry continues a game only with the game's result: the position after the move, one ply on, and the same result" {
	e() { printf 'fen %s\nmove %s\nscore 10\nply %s\nresult %s\ne\n' "$@"; }
	{
		e 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1' e2e4 0 1
		e 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1' e7e5 1 -1
		# the position after e7e5, but won by the side that lost
		e 'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2' g1f3 2 -1
	} > j.plain
	run posimport -F plain -o j.pos j.plain
	assert_success
	assert_output "posimport: 3 entries in 2 games imported (plain); 0 damaged places"
	run posdump --fields game,ply j.pos
	[ "$(cut -d' ' -f1 <<< "${lines[0]}")" = "$(cut -d' ' -f1 <<< "${lines[1]}")" ]
	[ "$(cut -d' ' -f1 <<< "${lines[1]}")" != "$(cut -d' ' -f1 <<< "${lines[2]}")" ]
}

@test "scores at the edges: beyond +-32000 (VALUE_NONE) is no evaluation, counted; a mate keeps its side in every format; mated now only where there is no move" {
	fen='rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
	for s in 32002 -32002 32001 32767 -32768 32000 -32000 31999 -31998 100; do
		printf 'fen %s\nmove e2e4\nscore %s\nply 0\nresult 0\ne\n' "$fen" "$s"
	done > edge.plain
	run posimport -F plain edge.plain -o edge.pos
	assert_success
	assert_output "posimport: 10 entries in 10 games imported (plain); 5 kept without an evaluation (a score beyond +-32000, as Stockfish's VALUE_NONE); 0 damaged places"
	scores() { posdump --fields eval "$1" | sed 's/.* score=\([^ ]*\) .*/\1/; s/^$/-/' | tr '\n' ' '; }
	[ "$(scores edge.pos)" = "- - - - - mate:1 mate:-1 mate:1 mate:-1 cp:48 " ] || fail "$(scores edge.pos)"
	# -32000 is mated now where the side to move has no move
	printf 'fen %s\nmove 0000\nscore -32000\nply 4\nresult -1\ne\n' \
	    'rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3' > mated.plain
	printf 'fen %s\nmove 0000\nscore -32000\nply 0\nresult 0\ne\n' \
	    'k7/8/1Q6/8/8/8/8/K7 b - - 0 1' >> mated.plain
	run posimport -F plain mated.plain -o mated.pos
	assert_success
	# and stalemate is a draw
	[ "$(scores mated.pos)" = "mate:0 cp:0 " ] || fail "$(scores mated.pos)"
	# the loader gives no score (NaN) for them, and exports skip them
	run "$PY" -c 'import posflow, numpy; s = numpy.concatenate([b["score"] for b in posflow.batches("edge.pos")]); print(int(numpy.isnan(s).sum()), s[5] > 0, s[6] < 0)'
	assert_output "5 True True"
	run posexport -F plain edge.pos -o back.plain
	assert_output --partial "5 written (plain"
	assert_output --partial "skipped: 5 without an evaluation"
	# (32000 as it came: it still reads as mate in 1; -32000, read as
	# mated in 1 where there is a move, does not)
	[ "$(grep '^score' back.plain | tr '\n' ' ')" = "score 32000 score -31998 score 31999 score -31998 score 100 " ]
	# the same scores in bin (Stockfish's units, binary): patched in
	posexport -F bin edge.pos -o one.bin 2>/dev/null
	"$PY" -c '
import struct, sys
e = open("one.bin", "rb").read(40)
out = b"".join(e[:32] + struct.pack("<h", s) + e[34:] for s in (32002, -32768, 32000, -32000, 100))
open("edge.bin", "wb").write(out)'
	run posimport -F bin edge.bin -o edge-bin.pos
	assert_output --partial "2 kept without an evaluation"
	[ "$(scores edge-bin.pos)" = "- - mate:1 mate:-1 cp:48 " ] || fail "$(scores edge-bin.pos)"
	# marlinformat and viriformat hold centipawns of White's view: a
	# huge one is a mate for the side it favours, whoever is to move
	printf 'fen %s\nmove e7e5\nscore 100\nply 1\nresult 0\ne\n' \
	    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1' > black.plain
	cat edge.plain black.plain | posimport -F plain 2>/dev/null |
		posexport -F marlinformat -o m.bin 2>/dev/null
	"$PY" -c '
import struct
d = open("m.bin", "rb").read()
w, b = d[:32], d[-32:]
out = b"".join(r[:28] + struct.pack("<h", s) + r[30:] for r in (w, b) for s in (32700, -32700))
open("edge.marlin", "wb").write(out)'
	run posimport -F marlinformat edge.marlin -o edge-m.pos
	assert_success
	[ "$(scores edge-m.pos)" = "mate:1 mate:-1 mate:-1 mate:1 " ] || fail "$(scores edge-m.pos)"
}

@test "Stockfish's own scores come back exactly: every internal unit through plain, bin and binpack, a filter between; a changed score is converted" {
	# every score from -1200 to 1200 units and some mates, on alternate
	# sides to move (centipawns are 100/208 of a unit apart, so about
	# half of these are not a whole centipawn)
	"$PY" -c '
fens = ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
moves = ("e2e4", "e7e5")
scores = list(range(-1200, 1201)) + [31999, -31998, 31990, -31990, 31700, -31753]
for i, s in enumerate(scores):
    print("fen %s\nmove %s\nscore %d\nply %d\nresult 0\ne" % (fens[i % 2], moves[i % 2], s, i % 2))
' > all.plain
	posimport -F plain all.plain -o all.pos 2>/dev/null
	run posexport -F plain all.pos -o back.plain
	assert_success
	cmp all.plain back.plain
	posfilter 'ply >= 0' all.pos | posexport -F bin -o all.bin 2>/dev/null
	posimport -F bin all.bin 2>/dev/null | posexport -F binpack -o all.binpack 2>/dev/null
	posimport -F binpack all.binpack 2>/dev/null | posexport -F plain -o back2.plain 2>/dev/null
	cmp all.plain back2.plain
	# only the scores centipawns do not hold carry their own
	n=$(posdump -j all.pos | jq -s '[.[].exts[0] | select(.sf_score != null)] | length')
	[ "$n" -gt 1000 ] && [ "$n" -lt 1700 ] || fail "$n"
	# an evaluation whose own score no longer reads as its score (a
	# program changed the score and kept the flag): the score's
	# conversion is written.  -45 units is -22 cp (back: -46); this one
	# claims -45 with a score of -23 cp (-48).
	eval_hex -23 0
	HEX=${HEX:0:6}08${HEX:8}d3ff
	printf '%s\n' "startpos move=e2e4 ext=2:$HEX" | "$BUILD_DIR/tests/tools/mkrec" > claim.pos
	posdump --fields eval claim.pos | grep -q ' sf=-45}'
	run posexport -F plain claim.pos
	assert_line "score -48"
}

@test "compressed and archived inputs: every format through gzip, bzip2, xz, zstd, tar and zip reads as the plain file; damage inside keeps what came before" {
	posimport -F binpack "$BP" -o s.pos 2>/dev/null
	for F in binpack plain bin marlinformat bulletformat viriformat; do
		posexport -F "$F" s.pos -o "s.$F" 2>/dev/null
		run posimport -F "$F" "s.$F" -o "want.$F.pos"
		assert_success
		assert_output --regexp "^posimport: 2770 entries in [0-9]+ games imported \($F\); 0 damaged places$"
		summary=$output
		gzip -c "s.$F" > "s.$F.gz"
		bzip2 -c "s.$F" > "s.$F.bz2"
		xz -c "s.$F" > "s.$F.xz"
		zstd -q -c "s.$F" > "s.$F.zst"
		for c in gz bz2 xz zst; do
			run posimport -F "$F" "s.$F.$c" -o got.pos
			assert_success
			assert_output "$summary"
			cmp "want.$F.pos" got.pos || fail "$F.$c"
		done
		run posimport -F "$F" -o got.pos < "s.$F.zst"
		assert_success
		cmp "want.$F.pos" got.pos || fail "$F.zst from stdin"
		# (from a pipe the blocks of the output may be cut where the
		# input waited: the same records, not the same bytes)
		cat "s.$F.gz" | posimport -F "$F" -o got.pos 2>/dev/null
		diff <(posdump "want.$F.pos") <(posdump got.pos) || fail "$F.gz from a pipe"
		cat "s.$F" | posimport -F "$F" -o got.pos 2>/dev/null
		diff <(posdump "want.$F.pos") <(posdump got.pos) || fail "$F from a pipe"
	done
	# an archive's files are read one by one, in order, each its own
	# input (games never span two)
	mkdir d
	head -c $((1000 * 40)) s.bin > d/a.bin
	tail -c +$((1000 * 40 + 1)) s.bin > d/b.bin
	tar cf ab.tar -C d a.bin b.bin
	tar --zstd -cf ab.tar.zst -C d a.bin b.bin
	"$PY" -c "
import zipfile
with zipfile.ZipFile('ab.zip', 'w', zipfile.ZIP_DEFLATED) as z:
    z.write('d/a.bin', 'a.bin'); z.write('d/b.bin', 'b.bin')"
	posimport -F bin d/a.bin d/b.bin -o want.ab.pos 2>/dev/null
	for t in ab.tar ab.tar.zst ab.zip; do
		run posimport -F bin "$t" -o got.pos
		assert_success
		assert_output "posimport: 2770 entries in 48 games imported (bin); 0 damaged places"
		cmp want.ab.pos got.pos || fail "$t"
	done
	# a member's header damaged (its checksum): that member is named as
	# lost, the archive read on from the next good header
	head -c $((100 * 40)) s.bin > d/c.bin
	tar cf cab.tar -C d c.bin a.bin b.bin
	off=$("$PY" -c 'import tarfile; print(tarfile.open("cab.tar").getmembers()[1].offset)')
	"$PY" -c 'import sys; d = bytearray(open("cab.tar", "rb").read()); d[int(sys.argv[1]) + 100] ^= 1; open("badh.tar", "wb").write(d)' "$off"
	run posimport -F bin badh.tar -o got.pos
	assert_failure 1
	assert_line --partial "posimport: badh.tar: (damaged header): offset 0: damaged header; the archive is read on from the next good one"
	posimport -F bin d/c.bin d/b.bin -o want.cb.pos 2>/dev/null
	diff <(posdump want.cb.pos) <(posdump got.pos)
	# a cut zstd file (two frames, as pzstd writes): the entries decoded
	# before the cut are written, the file and the offset where they end
	# are named, and nothing more
	{ zstd -q -c d/a.bin; zstd -q -c d/b.bin; } > ab.zst
	size=$(stat -c %s ab.zst)
	head -c $((size - 1000)) ab.zst > cut.bin.zst
	run posimport -F bin cut.bin.zst -o cut.pos
	assert_failure 1
	assert_output --regexp '^posimport: cut\.bin\.zst: offset ([0-9]+): Truncated zstd input
posimport: ([0-9]+) entries in ([0-9]+) games imported \(bin\); 1 damaged places$'
	[[ "$output" =~ offset\ ([0-9]+):.*\ ([0-9]+)\ entries ]]
	at=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]}
	[ "$n" -eq $((at / 40)) ] && [ "$n" -ge 1000 ] && [ "$n" -lt 2770 ]
	[ "$(posdump -c cut.pos | cut -d' ' -f1)" -eq "$n" ]
	# the same entries (the last kept ends its game here)
	diff <(posdump want.bin.pos | head -n "$n" | sed 's/ flags=[^ ]*//') <(posdump cut.pos | sed 's/ flags=[^ ]*//')
	# a damaged member of a zip: named, the next member read
	"$PY" -c "
d = bytearray(open('ab.zip', 'rb').read())
d[100] ^= 0xff
open('bad.zip', 'wb').write(d)"
	run posimport -F bin bad.zip -o bz.pos
	assert_failure 1
	assert_line --index 0 --partial "posimport: bad.zip: a.bin: offset "
	[ "$(posdump -c bz.pos | cut -d' ' -f1)" -ge $((2770 - 1000)) ]
}

@test "records flow while the input waits (slow pipe), once 512 bytes have come" {
	e='fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\nmove e2e4\nscore 10\nply 0\nresult 0\ne\n'
	mkfifo in.fifo
	posimport -F plain -o out.pos < in.fifo 2>/dev/null &
	pid=$!
	exec 7> in.fifo
	# six entries (582 bytes: past the 512 that tell a tar archive); an
	# entry waits for the next (does it end its game?), so five are
	# written while the input is open
	printf "$e$e$e$e$e$e" >&7
	size=$(size_after out.pos 16)
	printf "$e" >&7
	size2=$(size_after out.pos "$size")
	exec 7>&-
	wait "$pid"
	[ "$size" -gt 16 ] || fail "nothing written while the input was open"
	[ "$size2" -gt "$size" ] || fail "the sixth entry not written while the input was open"
	[ "$(posdump -c out.pos)" = "7 out.pos" ]
}

@test "damage: entries before it are written, the offset is named, the rest goes on where it can" {
	posimport -F binpack "$BP" 2>/dev/null | posexport -F bin -o s.bin 2>/dev/null
	[ "$(stat -c %s s.bin)" -eq $((2770 * 40)) ]
	head -c $((100 * 40 + 17)) s.bin > cut.bin
	run posimport -F bin cut.bin -o c.pos
	assert_failure 1
	assert_output "posimport: cut.bin: offset 4000: truncated entry (17 of 40 bytes)
posimport: 100 entries in 2 games imported (bin); 1 damaged places"
	[ "$(posdump -c c.pos | cut -d' ' -f1)" -eq 100 ]
	# a truncated binpack: the entries of the whole chunk before the cut
	head -c 4000 "$BP" > cut.binpack
	run posimport -F binpack cut.binpack -o cb.pos
	assert_failure 1
	assert_line --partial "cut.binpack: offset"
	n=$(posdump -c cb.pos | cut -d' ' -f1)
	[ "$n" -gt 100 ] && [ "$n" -lt 2770 ]
	# plain: a bad entry is named and skipped, the next one read
	printf 'fen 8/8/8/8/8/8/8/8 w - - 0 1\nmove 0000\nscore 0\nply 0\nresult 0\ne\nfen %s\nmove e2e4\nscore 10\nply 0\nresult 1\ne\n' "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" > bad.plain
	run posimport -F plain bad.plain -o bp.pos
	assert_failure 1
	assert_line --index 0 --regexp '^posimport: bad.plain: offset 0: '
	[ "$(posdump --fields move bp.pos)" = "move=e2e4" ]
}

@test "damage: a viriformat game cut short keeps its moves before the cut, at the end of a file or of damaged gzip data" {
	posimport -F binpack "$BP" 2>/dev/null |
		posexport -F viriformat -o s.viri 2>/dev/null
	posimport -F viriformat s.viri -o all.pos 2>/dev/null
	[ "$(posdump -c all.pos | cut -d' ' -f1)" -eq 2770 ]
	# the last game less its end (4 bytes) and half its last move
	n=$(stat -c %s s.viri)
	head -c $((n - 6)) s.viri > cut.viri
	run posimport -F viriformat cut.viri -o c.pos
	assert_failure 1
	assert_line --index 0 --regexp "^posimport: cut.viri: offset $((n - 6)): truncated game \(begun at offset [0-9]+; its [0-9]+ moves before the cut kept\)$"
	assert_line --index 1 "posimport: 2769 entries in 47 games imported (viriformat); 1 damaged places"
	diff <(posdump --fields fen,move,score,ply,result all.pos | head -n 2769) \
	    <(posdump --fields fen,move,score,ply,result c.pos)
	# cut inside a game's first position: nothing of it, named
	head -c 20 s.viri > head.viri
	run posimport -F viriformat head.viri -o h.pos
	assert_failure 1
	assert_line --index 0 "posimport: head.viri: offset 20: truncated game (begun at offset 0, in its first position)"
	# gzip data cut in the middle of a game: the error is the gzip's,
	# and the game's moves before it are kept, as from the plain file
	gzip -c s.viri > s.viri.gz
	head -c $(($(stat -c %s s.viri.gz) / 2)) s.viri.gz > cut.viri.gz
	gzip -dc cut.viri.gz > raw.viri 2>/dev/null || true
	run posimport -F viriformat cut.viri.gz -o g.pos
	assert_failure 1
	assert_line --index 0 --partial "cut.viri.gz: offset $(stat -c %s raw.viri): "
	m=$(posdump -c g.pos | cut -d' ' -f1)
	posimport -F viriformat raw.viri -o r.pos 2>/dev/null || true
	[ "$m" -eq "$(posdump -c r.pos | cut -d' ' -f1)" ]
	diff <(posdump --fields fen,move,score,ply,result all.pos | head -n "$m") \
	    <(posdump --fields fen,move,score,ply,result g.pos)
	# every complete pair of the cut game: more than the whole games
	whole=$(head -c "$(stat -c %s raw.viri)" s.viri |
	    "$PY" -c 'import sys
d = sys.stdin.buffer.read(); o = n = 0
while True:
	p = o + 32
	while p + 4 <= len(d) and d[p:p + 4] != bytes(4):
		p += 4
	if p + 4 > len(d):
		break
	n += (p - o - 32) // 4; o = p + 4
print(n)')
	[ "$m" -gt "$whole" ]
}

@test "damage: ten places named per file, the rest counted in the summary" {
	# 500 entries of bin of which none is a position
	head -c 20000 /dev/zero | tr '\0' '\377' > junk.bin
	run --separate-stderr posimport -F bin junk.bin junk.bin -o j.pos
	assert_failure 1
	[ "$(grep -c ': offset ' <<< "$stderr")" -eq 20 ]
	[ "$(grep -c '^posimport: junk.bin: more damage, not named (the summary counts it)$' <<< "$stderr")" -eq 2 ]
	[[ "$stderr" == *"0 entries in 0 games imported (bin); 1000 damaged places" ]] ||
	    fail "$stderr"
}

@test "a directory: every file under it, subdirectories too, in natural order (2 before 10), hidden files left out" {
	posimport -F binpack "$BP" -o s.pos 2>/dev/null
	posexport -F bin s.pos -o s.bin 2>/dev/null
	mkdir -p d/sub d/.hidden
	# 2770 entries as parts of 100 (the last 70), named so that byte
	# order is not natural order
	split -a 2 -d -b $((100 * 40)) s.bin part
	i=0
	for p in part*; do
		case $i in
		1[0-9]) mv "$p" "d/sub/p$i.bin" ;;
		*) mv "$p" "d/p$i.bin" ;;
		esac
		i=$((i + 1))
	done
	[ "$i" -eq 28 ]
	cp d/p0.bin d/.hidden/x.bin
	cp d/p0.bin d/.p0.bin
	# natural order: d/p0 .. d/p9, d/p20 .. d/p27, then d/sub ("p" sorts
	# before "s") with p10 .. p19
	run posimport -F bin -o got.pos d/
	assert_success
	assert_output --regexp "^posimport: 2770 entries in [0-9]+ games imported \(bin\); 0 damaged places$"
	want=$(for k in 0 1 2 3 4 5 6 7 8 9 20 21 22 23 24 25 26 27; do echo d/p$k.bin; done
	    for k in 1{0..9}; do echo d/sub/p$k.bin; done)
	posimport -F bin -o want.pos $want 2>/dev/null
	cmp want.pos got.pos
	# damage names the file under the directory
	{ cat d/p3.bin; head -c 17 d/p4.bin; } > d/p3b.bin
	run posimport -F bin -o /dev/null d
	assert_failure 1
	assert_line --index 0 "posimport: d/p3b.bin: offset 4000: truncated entry (17 of 40 bytes)"
	rm d/p3b.bin
	# what cannot be read under it is named, and the rest read (a link
	# to nothing, here)
	ln -s nowhere d/sub/p10a.bin
	run posimport -F bin -o got2.pos d
	assert_failure 1
	assert_output --regexp "^posimport: d/sub/p10a.bin: No such file or directory
posimport: 2770 entries in [0-9]+ games imported \(bin\); 0 damaged places$"
	cmp want.pos got2.pos
	# a directory with no files is a mistake, named
	mkdir -p empty/.git
	run posimport -F bin -o /dev/null empty
	assert_failure 1
	assert_line --index 0 "posimport: empty: no files in this directory"
}

@test "a directory with links back up (loops): each loop named and not entered, every file read once, exit 1" {
	posimport -F binpack "$BP" -o s.pos 2>/dev/null
	posexport -F bin s.pos -o s.bin 2>/dev/null
	mkdir -p d/sub
	head -c $((1000 * 40)) s.bin > d/p1.bin
	tail -c +$((1000 * 40 + 1)) s.bin > d/sub/p2.bin
	posimport -F bin -o want.pos d/p1.bin d/sub/p2.bin 2>/dev/null
	# a link to "..": each file once, not once per trip round
	ln -s .. d/sub/up
	run timeout 30 posimport -F bin -o got.pos d
	assert_failure 1
	assert_output --regexp "^posimport: d/sub/up: a directory loop \(d again\), not entered
posimport: 2770 entries in [0-9]+ games imported \(bin\); 0 damaged places$"
	cmp want.pos got.pos
	# two links to ".": no end of paths before
	ln -s . d/x
	ln -s . d/y
	run timeout 30 posimport -F bin -o got.pos d/
	assert_failure 1
	assert_output --regexp "^posimport: d/sub/up: a directory loop \(d again\), not entered
posimport: d/x: a directory loop \(d again\), not entered
posimport: d/y: a directory loop \(d again\), not entered
posimport: 2770 entries in [0-9]+ games imported \(bin\); 0 damaged places$"
	cmp want.pos got.pos
}

# The bundled games evaluated at depth 1 with policy targets, as lc0
# chunks in input format $1, in dir $2 (a chunk per game, in order).
lc0_chunks() {
	[ -s "$BATS_FILE_TMPDIR/rich.pos" ] || {
		pgn2pos "$TESTDATA/lichess_db_100k.pgn" 2>/dev/null |
			uci-eval -e "$(stockfish_path)" -d 1 -m all 2>/dev/null |
			softtarget 2>/dev/null > "$BATS_FILE_TMPDIR/rich.pos"
	}
	posexport -F lc0 --input-type "$1" -o "$2" "$BATS_FILE_TMPDIR/rich.pos" 2>/dev/null
}

@test "lc0: chunks read back as the records they were written from, in every input format, the armageddon ones too (positions, moves, results, games, W/D/L, best move, policy)" {
	for f in 1 2 3 4 5 132 133; do
		lc0_chunks $f c$f
		# the directory posexport wrote: its files in natural order
		run posimport -F lc0 -o back$f.pos c$f
		assert_success
		assert_output "posimport: 2770 entries in 47 games imported (lc0); 0 damaged places"
		run "$PY" "$TOP/tests/tools/lc0_import_check.py" "$BATS_FILE_TMPDIR/rich.pos" back$f.pos
		assert_success
		assert_output "lc0 import: 2770 records of 47 games as written (0 more games where plies had a gap)"
	done
	# the transforms of pawnless endings, Chess960-free castling from
	# FENs, repeats and gaps (testdata/lc0/canonical.pgn), in format 5
	pgn2pos "$TESTDATA/lc0/canonical.pgn" 2>/dev/null |
		uci-eval -e "$(stockfish_path)" -d 1 -m all 2>/dev/null |
		softtarget 2>/dev/null | posfilter 'ply != 9' 2>/dev/null > can.pos
	posexport -F lc0 --input-type 5 -o k can.pos 2>/dev/null
	posimport -F lc0 -o kb.pos $(ls k/*.gz | sort -t. -k2 -n) 2>/dev/null
	run "$PY" "$TOP/tests/tools/lc0_import_check.py" can.pos kb.pos
	assert_success
	assert_output "lc0 import: 2054 records of 343 games as written (3 more games where plies had a gap)"
}

@test "lc0: a tar of chunks (as lc0's training data is published), compressed or not, a chunk not gzipped, standard input, V7 records" {
	lc0_chunks 3 c
	(cd c && tar cf ../c.tar $(ls *.gz | sort -t. -k2 -n))
	posimport -F lc0 -o want.pos $(ls c/*.gz | sort -t. -k2 -n) 2>/dev/null
	want=$(posdump want.pos | cut -d'|' -f1,3 | sed 's/game=[0-9a-f]* //')
	zstd -q c.tar -o c.tar.zst
	gzip -k c.tar
	for t in c.tar c.tar.zst c.tar.gz; do
		run posimport -F lc0 -o got.pos $t
		assert_success
		assert_output "posimport: 2770 entries in 47 games imported (lc0); 0 damaged places"
		[ "$(posdump got.pos | cut -d'|' -f1,3 | sed 's/game=[0-9a-f]* //')" = "$want" ]
	done
	run posimport -F lc0 -o got.pos < c.tar.zst
	assert_success
	gunzip -c c/training.5.gz > plain5
	[ "$(posimport -F lc0 plain5 2>/dev/null | posdump -c)" = "$(posimport -F lc0 c/training.5.gz 2>/dev/null | posdump -c)" ]
	# V7TrainingData: V6 and 40 bytes more (lc0's trainingdata_v7.h)
	"$PY" -c "
d = open('plain5', 'rb').read()
out = b''.join(b'\x07' + d[i + 1:i + 8356] + bytes(40) for i in range(0, len(d), 8356))
open('v7', 'wb').write(out)"
	[ "$(posimport -F lc0 v7 2>/dev/null | posdump)" = "$(posimport -F lc0 plain5 2>/dev/null | posdump)" ]
	# an empty input holds no chunk
	: > empty
	run posimport -F lc0 -o e.pos empty
	assert_success
	assert_output "posimport: 0 entries in 0 games imported (lc0); 0 damaged places"
}

@test "lc0: the older V3, V4 and V5 records read as lczero-training reads them: the same positions, results and policies; the move from the next record" {
	lc0_chunks 1 c1
	lc0_chunks 3 c3
	# the chunks rewritten in the older layouts (lczero-training's
	# chunkparser.py: V5 is V6 up to plies_left with the result as an
	# int8; V4 has no input format and no M; V3 no Q and D either)
	cat > old.py <<-'EOF'
	import gzip, os, struct, sys
	src, dst, ver = sys.argv[1], sys.argv[2], int(sys.argv[3])
	os.makedirs(dst)
	for f in os.listdir(src):
	    d = gzip.open(os.path.join(src, f)).read()
	    out = b""
	    for i in range(0, len(d), 8356):
	        r = d[i:i + 8356]
	        res = struct.pack("b", int(struct.unpack_from("<f", r, 8308)[0]))
	        if ver == 5:
	            out += struct.pack("<I", 5) + r[4:8279] + res + r[8280:8308]
	        else:
	            q = r[8280:8296] if ver == 4 else b""
	            out += struct.pack("<I", ver) + r[8:8278] + b"\0" + res + q
	    gzip.open(os.path.join(dst, f), "wb").write(out)
	EOF
	"$PY" old.py c1 v3 3
	"$PY" old.py c1 v4 4
	"$PY" old.py c3 v5 5
	posimport -F lc0 -o new1.pos $(ls c1/*.gz | sort -t. -k2 -n) 2>/dev/null
	posimport -F lc0 -o new3.pos $(ls c3/*.gz | sort -t. -k2 -n) 2>/dev/null
	# the same records but for what the older ones do not hold: a
	# chunk's last record has no move, V3 no evaluation
	cat > same.py <<-'EOF'
	import sys, posflow
	a, b = list(posflow.records(sys.argv[1])), list(posflow.records(sys.argv[2]))
	has_eval = sys.argv[3] == "1"
	assert len(a) == len(b), (len(a), len(b))
	for x, y in zip(a, b):
	    ev = lambda r: [e for e in r["exts"] if e["type"] == "eval"]
	    pol = lambda r: [e for e in r["exts"] if e["type"] == "policy"][0]["moves"]
	    assert (x["fen"], x["result"], x["ply"], x["game"] == a[0]["game"]) == \
	        (y["fen"], y["result"], y["ply"], y["game"] == b[0]["game"]), (x, y)
	    assert y["move"] == ("-" if "last" in y["flags"] else x["move"]), (x, y)
	    assert pol(x) == pol(y), x["fen"]
	    if has_eval:
	        assert ev(x)[0]["wdl"] == ev(y)[0]["wdl"], x["fen"]
	    else:
	        assert ev(y) == [], y
	print("%d records as V6 gives them" % len(b))
	EOF
	for v in 3 4 5; do
		run posimport -F lc0 -o old$v.pos $(ls v$v/*.gz | sort -t. -k2 -n)
		assert_success
		assert_output "posimport: 2770 entries in 47 games imported (lc0); 0 damaged places"
		n=1
		[ $v -eq 5 ] && n=3
		run "$PY" same.py new$n.pos old$v.pos $([ $v -eq 3 ] && echo 0 || echo 1)
		assert_success
		assert_output "2770 records as V6 gives them"
	done
}

@test "lc0: damage names the file, chunk and record; every record before it is written, the next chunks are read" {
	lc0_chunks 1 c
	n0=$(posimport -F lc0 c/training.0.gz 2>/dev/null | posdump -c | cut -d' ' -f1)
	# a chunk cut short, as a lone file and inside a tar: its complete
	# records before the cut are written
	size=$(stat -c %s c/training.0.gz)
	head -c $((size / 2)) c/training.0.gz > training.99.gz
	run posimport -F lc0 -o cut.pos training.99.gz
	assert_failure 1
	assert_output --regexp '^posimport: training\.99\.gz: record ([0-9]+): gzip data cut short
posimport: ([0-9]+) entries in 1 games imported \(lc0\); 1 damaged places$'
	[[ "$output" =~ record\ ([0-9]+):.*\ ([0-9]+)\ entries ]]
	cut=${BASH_REMATCH[2]}
	[ "$cut" -eq $((BASH_REMATCH[1] - 1)) ] && [ "$cut" -gt 0 ] && [ "$cut" -lt "$n0" ]
	gunzip -c c/training.0.gz 2>/dev/null | head -c $((8356 * 3 + 100)) | gzip > training.98.gz
	tar cf mix.tar -C c training.1.gz
	tar rf mix.tar training.98.gz
	mkdir sub && tar rf mix.tar sub
	tar rf mix.tar training.99.gz
	tar rf mix.tar -C c training.2.gz
	n1=$(posimport -F lc0 c/training.1.gz 2>/dev/null | posdump -c | cut -d' ' -f1)
	n2=$(posimport -F lc0 c/training.2.gz 2>/dev/null | posdump -c | cut -d' ' -f1)
	run posimport -F lc0 -o mix.pos mix.tar
	assert_failure 1
	assert_output "posimport: mix.tar: training.98.gz: record 4: truncated record (100 of 8356 bytes)
posimport: mix.tar: training.99.gz: record $((cut + 1)): gzip data cut short
posimport: $((n1 + 3 + cut + n2)) entries in 4 games imported (lc0); 2 damaged places"
	# a record of another input format, and one whose planes put two
	# pieces on a square: named, skipped, the chunk's later records
	# read (a new game: they no longer follow on)
	gunzip -c c/training.0.gz > p0
	"$PY" -c "
d = bytearray(open('p0', 'rb').read())
d[8356 * 2 + 4] = 9
d[8356 * 5 + 7440 + 5] ^= 0xff
open('bad', 'wb').write(d)"
	run posimport -F lc0 -o bad.pos bad
	assert_failure 1
	assert_output "posimport: bad: record 3: input format 9 (1 to 5, 132 and 133 are read)
posimport: bad: record 6: two pieces on one square
posimport: $((n0 - 2)) entries in 3 games imported (lc0); 2 damaged places"
	# not lc0 data at all: said once, as lczero-training tells a chunk
	# by its first record's version, whatever its size
	head -c 20000 "$TESTDATA/lichess_db_10k.pgn" > text
	printf "not a chunk, nor long enough for a record" > short
	for f in text short; do
		run posimport -F lc0 -o /dev/null $f
		assert_failure 1
		assert_output --regexp "^posimport: $f: record 1: version [0-9]+, not 3 to 7: not lc0's training data
posimport: 0 entries in 0 games imported \(lc0\); 1 damaged places$"
	done
}

@test "lc0 -j: chunks decoded in threads, the output and messages of -j 1 byte for byte (tar, directory, damage, the older versions, a chunk too large for a job)" {
	lc0_chunks 5 c
	(cd c && tar cf ../c.tar $(ls *.gz | sort -t. -k2 -n))
	zstd -q c.tar -o c.tar.zst
	# damage: a chunk cut short, a truncated record, a bad record and
	# a member that is no chunk, in a tar, and files of them; more than
	# ten damaged places in one file, then another file
	size=$(stat -c %s c/training.0.gz)
	head -c $((size / 2)) c/training.0.gz > cut.gz
	gunzip -c c/training.1.gz | head -c $((8356 * 3 + 100)) | gzip > short.gz
	gunzip -c c/training.2.gz > p2
	"$PY" -c "
d = bytearray(open('p2', 'rb').read())
d[8356 * 2 + 4] = 9
open('bad', 'wb').write(d)"
	head -c 3000 "$TESTDATA/lichess_db_10k.pgn" > text
	mkdir many
	for k in $(seq 12); do cp cut.gz many/t$k.gz; done
	tar cf many.tar many
	tar cf mix.tar -C c training.3.gz -C .. cut.gz short.gz bad text -C c training.4.gz
	# the older records: the move from the next one
	mkdir v5
	for f in c/training.1[0-9].gz; do
		gunzip -c "$f" | "$PY" -c "
import sys
d = sys.stdin.buffer.read()
out = b''
for i in range(0, len(d), 8356):
    r = bytearray(d[i:i + 8356])
    r[0:4] = (5).to_bytes(4, 'little')
    out += bytes(r[:8308])
sys.stdout.buffer.write(out)" | gzip > "v5/${f##*/}"
	done
	# a tar cut inside a chunk: the input's own error, in its turn
	head -c $(($(stat -c %s c.tar) / 2 + 3000)) c.tar > cut.tar
	# a directory loop after damaged chunks: named after them
	mkdir lp
	cp short.gz lp/t1.gz
	cp cut.gz lp/t2.gz
	ln -s . lp/u
	for input in c c.tar c.tar.zst mix.tar "many.tar mix.tar many" v5 cut.tar lp; do
		posimport -F lc0 -o one.pos $input 2> one.err && st1=0 || st1=$?
		for j in 2 3; do
			posimport -F lc0 -j $j -o par.pos $input 2> par.err && st=0 || st=$?
			[ "$st" -eq "$st1" ] || fail "$input -j $j: status $st, not $st1"
			cmp one.pos par.pos || fail "$input -j $j: other records"
			diff one.err par.err || fail "$input -j $j: other messages"
		done
		case $input in
		cut.tar)
			grep -q '^posimport: cut.tar: training.[0-9]*.gz: record [0-9]*: Truncated tar archive$' one.err ||
				fail "cut.tar: $(cat one.err)" ;;
		lp)
			[ "$st1" -eq 1 ] && [ "$(sed -n 3p one.err)" = "posimport: lp/u: a directory loop (lp again), not entered" ] ||
				fail "lp: $(cat one.err)" ;;
		mix.tar)
			[ "$st1" -eq 1 ] && [ "$(grep -c '^posimport: mix.tar: ' one.err)" -eq 4 ] ||
				fail "mix.tar: $(cat one.err)" ;;
		many.tar*)
			# ten places of many.tar named, the rest counted; then
			# mix.tar's own four; then the directory's twelve files,
			# one place each
			[ "$(grep -c '^posimport: many.tar: many/t[0-9]*.gz: record' one.err)" -eq 10 ] &&
			grep -qx 'posimport: many.tar: more damage, not named (the summary counts it)' one.err &&
			[ "$(grep -c '^posimport: mix.tar: ' one.err)" -eq 4 ] &&
			[ "$(grep -c '^posimport: many/t[0-9]*.gz: record' one.err)" -eq 12 ] &&
			grep -q '; 28 damaged places$' one.err ||
				fail "$input: $(cat one.err)" ;;
		esac
	done
	# from standard input, and a chunk too large for a job (decoded as
	# it is read, in turn with the others: forced here with a small
	# limit on an uncompressed chunk)
	posimport -F lc0 -o one.pos < c.tar.zst 2>/dev/null
	posimport -F lc0 -j 2 -o par.pos < c.tar.zst 2>/dev/null
	cmp one.pos par.pos
	gunzip -c c/training.7.gz > plain7
	tar cf big.tar -C c training.6.gz -C .. plain7 -C c training.8.gz
	posimport -F lc0 -o one.pos big.tar 2>/dev/null
	POSFLOW_LC0_JOB_MAX=1 posimport -F lc0 -j 2 -o par.pos big.tar 2>/dev/null
	cmp one.pos par.pos
	# from a slow pipe: what the threads decoded is written while the
	# input waits (here after the first three chunks of a tar)
	(cd c && tar cf ../ten.tar training.1[0-9].gz)
	n3=0
	for f in c/training.1[0-2].gz; do
		n3=$((n3 + 512 + ($(stat -c %s "$f") + 511) / 512 * 512))
	done
	mkfifo in.fifo
	posimport -F lc0 -j 2 -o slow.pos < in.fifo 2>/dev/null &
	pid=$!
	exec 7> in.fifo
	head -c "$n3" ten.tar >&7
	size=$(size_after slow.pos 16)
	tail -c +$((n3 + 1)) ten.tar >&7
	exec 7>&-
	wait "$pid"
	[ "$size" -gt 16 ] || fail "nothing written while the input waited"
	posimport -F lc0 -o one.pos ten.tar 2>/dev/null
	[ "$(posdump -c slow.pos | cut -d' ' -f1)" -eq "$(posdump -c one.pos | cut -d' ' -f1)" ]
	# -j takes 1 to 256
	run --separate-stderr posimport -F lc0 -j 0 c
	assert_failure 2
	[[ "$stderr" == *"-j: 0: too small"* ]]
}

@test "--help, --version, invalid calls: exit 2, usage on stderr, nothing on stdout" {
	run --separate-stderr posimport --help
	assert_success
	[[ "$output" == usage:* ]]
	run --separate-stderr posimport -F nosuch
	assert_failure 2
	[ -z "$output" ]
	[[ "$stderr" == *"-F nosuch: unknown format"* ]]
	run --separate-stderr posimport
	assert_failure 2
	[[ "$stderr" == *"-F format is required"* ]]
	run posimport -V
	assert_success
	assert_output --regexp '^posimport \(posflow\) '
	run --separate-stderr posimport -F plain missing.txt -o x.pos
	assert_failure 1
	[[ "$stderr" == *"missing.txt: No such file or directory"* ]]
}
