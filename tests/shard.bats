#!/usr/bin/env bats
# shard: no game in two splits, the output a permutation of the input,
# reproducible from the seed, memory far below the input, --dedup keeps the
# first of each position per split, --dedup merge merges the twins' targets,
# evaluations and results into it, --dedup-across drops from the other
# splits exactly the positions of the first, shard sizes, --verify catches
# a flipped byte, a killed run never leaves a manifest and a rerun
# completes, a complete directory is refused without -f, a run that fails
# on a full disk leaves nothing of its own, an input that cannot be read
# (a directory) is refused before anything is written; progress on a
# terminal or with --progress; empty, concatenated and damaged input; the
# usage table.

load helper

MKREC="$BUILD_DIR/tests/tools/mkrec"

# The bundled games as a stream (2,817 positions of 47 games), made once.
games() {
	pgn2pos "$TESTDATA/lichess_db_100k.pgn" -o g.pos 2>/dev/null
}

# game,ply,fen of every record of the streams or shards given, sorted.
keys() {
	cat "$@" | posdump --fields game,ply,fen | sort
}

teardown() {
	unmount_fs
}

@test "one run writes a directory; a second one at the same time is refused, naming it, and leaves it as it was" {
	games
	mkdir out
	exec 8< out
	flock -n 8
	! flock -n out true
	run shard -o out g.pos
	exec 8<&-
	assert_failure 1
	assert_output "shard: out: in use by another run writing there"
	[ -z "$(ls -A out)" ]
	run shard -o out g.pos
	assert_success
	[ -f out/manifest.json ]
}

@test "golden: a permutation of the input, every game in one split, a manifest that verifies" {
	games
	run shard -o out --split train=0.8,val=0.2 --seed 7 g.pos
	assert_success
	assert_output --regexp '^shard: 2817 records in, 2817 out \(train [0-9]+, val [0-9]+\); 0 duplicates dropped; 2 shards written to out$'
	[ -f out/train-00000.pos.zst ]
	[ -f out/val-00000.pos.zst ]
	cmp <(keys g.pos) <(keys out/*.pos.zst)
	# no game id in both splits, and both splits hold games
	cat out/train-*.pos.zst | posdump --fields game | sort -u > train.games
	cat out/val-*.pos.zst | posdump --fields game | sort -u > val.games
	[ -s train.games ] && [ -s val.games ]
	[ -z "$(comm -12 train.games val.games)" ]
	# shuffled: not in input order
	! cmp -s <(posdump --fields game,ply g.pos) <(cat out/train-*.pos.zst out/val-*.pos.zst | posdump --fields game,ply)
	# the manifest: valid JSON with what a loader needs
	run jq -r '[.format, .version, .seed, (.splits | keys | join("+")), (.shards | length), ([.shards[].records] | add)] | @tsv' out/manifest.json
	assert_output "$(printf 'posflow\t1\t7\ttrain+val\t2\t2817')"
	for f in $(jq -r '.shards[] | "\(.file):\(.bytes):\(.records)"' out/manifest.json); do
		IFS=: read -r name bytes n <<<"$f"
		[ "$(stat -c %s "out/$name")" -eq "$bytes" ]
		[ "$(posdump -c "out/$name" | cut -d' ' -f1)" -eq "$n" ]
	done
	run shard --verify out
	assert_success
	ls -A out | grep -q '^\.tmp-' && fail "temporaries left: $(ls -A out)"
	true
}

@test "the split depends on the game id and the seed only; records of game 0 by position" {
	for i in $(seq 200); do echo "startpos game=$i ply=0 move=e2e4"; done | "$MKREC" > a.pos
	for i in $(seq 200 -1 1); do echo "startpos game=$i ply=0 move=d2d4"; done | "$MKREC" > b.pos
	shard -o A --split train=0.5,val=0.5 --seed 3 a.pos 2>/dev/null
	shard -o B --split train=0.5,val=0.5 --seed 3 b.pos 2>/dev/null
	cmp <(posdump --fields game A/val-*.pos.zst | sort) <(posdump --fields game B/val-*.pos.zst | sort)
	n=$(posdump -c A/val-00000.pos.zst | cut -d' ' -f1)
	[ "$n" -gt 60 ] && [ "$n" -lt 140 ]
	shard -o C --split train=0.5,val=0.5 --seed 4 a.pos 2>/dev/null
	! cmp -s <(posdump --fields game A/val-*.pos.zst | sort) <(posdump --fields game C/val-*.pos.zst | sort)
	# game id 0: the same position always goes to the same split
	for i in $(seq 30); do echo "startpos ply=$i"; done | "$MKREC" > z.pos
	shard -o Z --split train=0.5,val=0.5 z.pos 2>/dev/null
	[ "$(jq '.shards | length' Z/manifest.json)" -eq 1 ]
	# a position as --dedup compares it: its move clocks aside (they
	# split it, so --dedup kept it in both splits)
	for i in $(seq 30); do
		echo "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - $i $i"
	done | "$MKREC" > c.pos
	shard -o Y --split train=0.5,val=0.5 --dedup c.pos 2>/dev/null
	[ "$(jq '.shards | length' Y/manifest.json)" -eq 1 ]
	[ "$(jq '.counts.train.out + .counts.val.out' Y/manifest.json)" -eq 1 ]
}

@test "same seed: identical shards; another seed: another order, same records" {
	games
	shard -o s1 --seed 11 --split train=0.9,val=0.1 g.pos 2>/dev/null
	shard -o s2 --seed 11 --split train=0.9,val=0.1 g.pos 2>/dev/null
	shard -o s3 --seed 12 --split train=0.9,val=0.1 g.pos 2>/dev/null
	for f in s1/*.pos.zst; do
		cmp "$f" "s2/${f#s1/}"
	done
	[ "$(jq -c '.shards' s1/manifest.json)" = "$(jq -c '.shards' s2/manifest.json)" ]
	! cmp -s <(posdump --fields game,ply s1/train-00000.pos.zst) <(posdump --fields game,ply s3/train-00000.pos.zst)
	cmp <(keys s1/*.pos.zst) <(keys s3/*.pos.zst)
}

@test "standard input gives the same shards from a file, as - or from a pipe" {
	games
	for i in 1 2 3 4 5 6; do cat g.pos; done > g6.pos
	opts="--seed 4 --split train=0.8,val=0.2 --memory 64K"
	shard -o a $opts < g6.pos 2>/dev/null
	shard -o b $opts - < g6.pos 2>/dev/null
	cat g6.pos | shard -o c $opts 2>/dev/null
	list=$(jq -c '.shards' a/manifest.json)
	[ "$(jq -c '.shards' b/manifest.json)" = "$list" ]
	[ "$(jq -c '.shards' c/manifest.json)" = "$list" ]
	cmp <(keys g6.pos) <(keys a/*.pos.zst)
}

@test "--memory far below the input: many buckets, re-scattered from a pipe, same multiset" {
	games
	for i in 1 2 3 4 5 6; do cat g.pos; done > g6.pos
	# 16,902 records of about 190 bytes: 3.2 MB against 64K
	run shard -o m --memory 64K --split train=0.9,val=0.1 --records-per-shard 4000 g6.pos
	assert_success
	assert_output --partial "16902 records in, 16902 out"
	cmp <(keys g6.pos) <(keys m/*.pos.zst)
	[ "$(jq '[.shards[] | select(.split == "train")] | length' m/manifest.json)" -ge 4 ]
	jq -e '[.shards[].records] | max <= 4000' m/manifest.json
	# from standard input the size is unknown: buckets are split as they grow
	cat g6.pos | shard -o p --memory 64K --split train=0.9,val=0.1 --records-per-shard 4000 2>/dev/null
	cmp <(keys g6.pos) <(keys p/*.pos.zst)
	shard --verify p 2>/dev/null
	ls -A m p | grep -q '^\.tmp-' && fail "temporaries left"
	true
}

@test "many splits: the buckets of all splits together stay about 256 open files" {
	games
	for i in 1 2 3 4 5 6; do cat g.pos; done > g6.pos
	splits=$(seq 16 | sed 's/.*/s&=0.0625/' | paste -sd, -)
	# 30 buckets a split at 16K: 480 open files, more than allowed
	run bash -c "ulimit -n 300 && shard -o m --memory 16K \
	    --split $splits g6.pos"
	assert_success
	cmp <(keys g6.pos) <(keys m/*.pos.zst)
	run bash -c "ulimit -n 300 && shard -o d --memory 16K --dedup \
	    --dedup-across --split $splits g6.pos"
	assert_success
	run shard --verify d
	assert_success
}

# The largest resident set, in KiB, of the command "$@" (by Debian's
# python3: getrusage of its child), its output discarded.
max_rss() {
	/usr/bin/python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}

@test "memory stays within --memory whatever the input size" {
	# AddressSanitizer's shadow memory and quarantine are not the tool's
	if ldd "$BUILD_DIR/bin/shard" | grep -q libasan; then
		skip "resident set not measurable under AddressSanitizer"
	fi
	games
	for i in $(seq 6); do cat g.pos; done > g2.pos
	for i in $(seq 24); do cat g.pos; done > g8.pos
	# about 13 MB of records against --memory 1M
	[ "$(stat -c %s g8.pos)" -gt $((10 * 1024 * 1024)) ]
	small=$(max_rss shard -o s2 --memory 1M g2.pos)
	big=$(max_rss shard -o s8 --memory 1M g8.pos)
	# the buffer bound plus the program, zstd and libc (about 7 MB here)
	[ "$big" -lt $((1024 + 12 * 1024)) ] || fail "max RSS $big KiB"
	# and independent of the input: 4 times the input, not 1 MB more
	[ "$big" -lt $((small + 1024)) ] || fail "$small KiB, then $big KiB"
	cmp <(keys g8.pos) <(keys s8/*.pos.zst)
	# merging twins and keeping a position set for --dedup-across too
	small=$(max_rss shard -o m2 --memory 1M --dedup merge --dedup-across \
	    --split train=0.9,val=0.1 g2.pos)
	big=$(max_rss shard -o m8 --memory 1M --dedup merge --dedup-across \
	    --split train=0.9,val=0.1 g8.pos)
	[ "$big" -lt $((1024 + 12 * 1024)) ] || fail "merge: max RSS $big KiB"
	[ "$big" -lt $((small + 1024)) ] || fail "merge: $small KiB, then $big KiB"
	[ "$(jq '[.shards[].records] | add' m8/manifest.json)" -eq \
	    "$(jq '[.shards[].records] | add' m2/manifest.json)" ]
}

@test "a position with more twins than --memory holds (every game's first one): --dedup, --dedup merge and --dedup-across stay within it" {
	if ldd "$BUILD_DIR/bin/shard" | grep -q libasan; then
		skip "resident set not measurable under AddressSanitizer"
	fi
	games
	posfilter 'ply == 0' g.pos -o start.pos 2>/dev/null
	# 47 start positions of as many games, 4000 times: 188,000 twins
	# (about 10 MB of records) against --memory 1M
	for i in $(seq 4000); do cat start.pos; done > twins.pos
	[ "$(posdump -c twins.pos | cut -d' ' -f1)" -eq 188000 ]
	for opt in --dedup "--dedup merge" \
	    "--dedup-across --split train=0.5,val=0.5" \
	    "--dedup --dedup-across --split train=0.5,val=0.5" \
	    "--dedup merge --dedup-across --split train=0.5,val=0.5"; do
		rm -rf t
		rss=$(max_rss shard -o t --memory 1M $opt twins.pos)
		[ "$rss" -lt $((1024 + 12 * 1024)) ] || fail "$opt: max RSS $rss KiB"
		# the same shards as with memory enough to hold them all
		rm -rf u
		shard -o u --memory 256M $opt twins.pos 2>/dev/null
		[ "$(jq -c '.counts' t/manifest.json)" = "$(jq -c '.counts' u/manifest.json)" ] ||
			fail "$opt: $(jq -c .counts t/manifest.json) against $(jq -c .counts u/manifest.json)"
		cmp <(keys t/*.pos.zst) <(keys u/*.pos.zst)
		# the records themselves: one merged record alike
		cmp <(posdump -j t/*.pos.zst | sort) <(posdump -j u/*.pos.zst | sort)
	done
	# --dedup keeps the first: the record of the first game
	shard -o f --memory 1M --dedup twins.pos 2>/dev/null
	run posdump --fields game f/train-00000.pos.zst
	assert_output "$(posdump --fields game start.pos | head -n 1)"
}

@test "--shards n: n shards per split of even size" {
	games
	run shard -o n --shards 4 g.pos
	assert_success
	[ "$(jq '.shards | length' n/manifest.json)" -eq 4 ]
	run jq -r '[.shards[].records] | map(tostring) | join(" ")' n/manifest.json
	assert_output "705 704 704 704"
}

@test "--shards n: n shards even when n does not divide the records far beyond n" {
	games
	posfilter 'ply < 10 && game == 0xc2c753673ff1fbd4' g.pos -o ten.pos \
	    2>/dev/null
	# sizes of ceil(10 / 9) = 2 made 5 shards, of ceil(1000 / 64) = 16
	# 63 shards
	run shard -o n --shards 9 ten.pos
	assert_success
	run jq -r '[.shards[].records] | map(tostring) | join(" ")' n/manifest.json
	assert_output "2 1 1 1 1 1 1 1 1"
	posfilter 'ply < 16' g.pos -o some.pos 2>/dev/null
	shard -o m --shards 64 some.pos 2>/dev/null
	[ "$(jq '.shards | length' m/manifest.json)" -eq 64 ]
	[ "$(jq '[.shards[].records] | max - min' m/manifest.json)" -eq 1 ]
	[ "$(jq '[.shards[].records] | add' m/manifest.json)" -eq \
	    "$(posdump -c some.pos | cut -d' ' -f1)" ]
	# fewer records than shards: one shard a record
	run shard -o o --shards 20 ten.pos
	assert_success
	[ "$(jq '.shards | length' o/manifest.json)" -eq 10 ]
}

@test "--dedup: each position once per split, the first in input order kept" {
	games
	cat g.pos g.pos > twice.pos
	run shard -o d --dedup --memory 64K twice.pos
	assert_success
	# positions compared as posflow(5) does: without the move clocks
	uniq=$(posdump --fields fen g.pos | cut -d' ' -f1-4 | sort -u | wc -l)
	assert_output --partial "5634 records in, $uniq out (train $uniq); $((5634 - uniq)) duplicates dropped"
	[ -z "$(posdump --fields fen d/*.pos.zst | cut -d' ' -f1-4 | sort | uniq -d)" ]
	# per split: two splits may each keep a position
	shard -o d2 --dedup --split train=0.5,val=0.5 twice.pos 2>/dev/null
	for s in train val; do
		[ -z "$(cat d2/$s-*.pos.zst | posdump --fields fen | cut -d' ' -f1-4 | sort | uniq -d)" ]
	done
	# the first in input order stays: the same position at plies 0 and 4
	# of one game (knights out and back), and the same again in game 2
	printf '%s\n' 'startpos game=1 ply=0 move=g1f3' \
	    'startpos game=1 ply=4 move=e2e4' 'startpos game=2 ply=9' \
	    'startpos game=1 ply=2' | "$MKREC" > f.pos
	shard -o f --dedup f.pos 2>/dev/null
	run posdump --fields game,ply f/train-00000.pos.zst
	assert_output 'game=0000000000000001 ply=0'
	# without --dedup every record stays
	shard -o g --seed 1 f.pos 2>/dev/null
	[ "$(posdump -c g/train-00000.pos.zst | cut -d' ' -f1)" -eq 4 ]
}

# Payloads for mkrec's ext=: a value target (tanh, lambda 1) and a
# policy over e2e4 (e2 12, e4 28: 0x070c) and d2d4 (0x06cb), f32 and u16
# little-endian.  0.5 = 3f000000, 0.25 = 3e800000, 1 = 3f800000,
# -0.5 = bf000000.
value() {	# method target-hex
	printf '0%s''000000''00000000''00000000''0000803f''%s' "$1" "$2"
}
policy() {	# move:quanta-hex ...
	local out=01000200''0000000000000000 m
	for m in "$@"; do
		case ${m%%:*} in
		e2e4) out+=0c07 ;;
		d2d4) out+=cb06 ;;
		esac
		out+=${m#*:}
	done
	printf '%s' "$out"
}

@test "--dedup merge: one record per position, the twins' targets averaged, the deepest evaluations, the twins counted" {
	# four twins of the start position (games 1 to 4) and a position of
	# its own; policies 49151/16384 and (in another order) 32767/32768
	"$MKREC" > m.pos <<-EOF
	startpos game=1 ply=0 result=1-0 move=e2e4 eval=cp:10@depth:5 ext=6:$(value 1 0000003f) ext=5:$(policy e2e4:ffbf d2d4:0040)
	startpos game=2 ply=0 result=0-1 move=d2d4 eval=cp:30@depth:12 eval=cp:-5@depth:3 ext=6:$(value 1 0000803e) ext=6:$(value 2 000000bf) ext=5:$(policy d2d4:0080 e2e4:ff7f)
	startpos game=3 ply=0 result=1/2-1/2 eval=cp:20@nodes:1000 ext=6:$(value 1 0000803f)
	startpos game=4 ply=0
	rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 game=1 ply=1 result=1-0 eval=cp:-30@depth:12 ext=6:$(value 1 0000003f)
	EOF
	run shard -o m --dedup merge --seed 3 m.pos
	assert_success
	assert_output "shard: 5 records in, 2 out (train 2); 3 duplicates merged into 1 records; 1 shards written to m"
	posdump -j m/train-00000.pos.zst > m.json
	# the kept record is the first in input order, its core unchanged
	run jq -r 'select(.ply == 0) | [.game, .move, .result] | join(" ")' m.json
	assert_output "0000000000000001 e2e4 1-0"
	# value targets: tanh averaged over the three twins that have one
	# (0.5, 0.25, 1), the logistic one only game 2 has added as it is
	run jq -r 'select(.ply == 0) | .exts[] | select(.type == "value") | "\(.method) \(.target * 1e6 | round)"' m.json
	assert_output "$(printf 'tanh 583333\nlogistic -500000')"
	# per limit kind the deepest evaluation: depth 12 (game 2) in place
	# of depth 5, and the nodes one of game 3 added; depth 3 dropped
	run jq -r 'select(.ply == 0) | .exts[] | select(.type == "eval") | "\(.limit):\(.limit_value) \(.cp)"' m.json
	assert_output "$(printf 'depth:12 30\nnodes:1000 20')"
	# the policy averaged move by move over the same moves, in the kept
	# record's order: (49151 + 32767) / 2, (16384 + 32768) / 2
	run jq -r 'select(.ply == 0) | .exts[] | select(.type == "policy") | .moves[] | "\(.move) \(.q)"' m.json
	assert_output "$(printf 'e2e4 40959\nd2d4 24576')"
	# four records merged; from white's view one won, one drawn, one
	# lost, one of unknown result
	run jq -c 'select(.ply == 0) | .exts[] | select(.type == "merge")' m.json
	assert_output '{"type":"merge","count":4,"wins":1,"draws":1,"losses":1}'
	# a position without twins is written unchanged
	cmp <(posdump -j m.pos | sed -n 5p) <(jq -c 'select(.ply == 1)' m.json)
	# the manifest records the mode and the counts
	run jq -c '[.dedup, .dedup_mode, .dedup_across, .records_in, .counts.train]' m/manifest.json
	assert_output '[true,"merge",false,5,{"in":5,"out":2,"duplicates":3,"merged":1,"across":0,"skipped":0}]'
	# --dedup=merge is the same; --dedup first keeps the first unchanged
	shard -o m2 --dedup=merge --seed 3 m.pos 2>/dev/null
	cmp m/train-00000.pos.zst m2/train-00000.pos.zst
	run shard -o f --dedup first --seed 3 m.pos
	assert_output --partial "; 3 duplicates dropped;"
	cmp <(posdump -j m.pos | sed -n 1p) <(posdump -j f/train-00000.pos.zst | jq -c 'select(.ply == 0)')
	[ "$(jq -r .dedup_mode f/manifest.json)" = first ]
}

@test "--dedup merge: the policy merged is each twin's last, the one a trainer reads; an earlier one stays the kept record's" {
	# each twin: an imported policy (method 4, as posimport writes), then
	# a zeman one (1, as softtarget writes)
	p4() { policy "$@" | sed 's/^01/04/'; }
	"$MKREC" > m.pos <<-EOF
	startpos game=1 ply=0 ext=5:$(p4 e2e4:0080 d2d4:ff7f) ext=5:$(policy e2e4:ff7f d2d4:0080)
	startpos game=2 ply=0 ext=5:$(p4 e2e4:ff3f d2d4:00c0) ext=5:$(policy e2e4:ffff d2d4:0000)
	EOF
	run shard -o m --dedup merge m.pos
	assert_success
	run bash -c "posdump -j m/train-00000.pos.zst | jq -c '.exts[] | select(.type == \"policy\") | [.method, [.moves[] | .q]]'"
	assert_output "$(printf '%s\n' '["import",[32768,32767]]' '["zeman",[49151,16384]]')"
}

@test "--dedup merge: a twin's malformed evaluation, value target or policy is left out, counted and reported, exit 1; the merge of the rest stands" {
	# three twins of the start position: a good evaluation; a 2-byte
	# value target and an eval of score kind 2; a policy of 2 bytes
	eval_hex 900 2
	"$MKREC" > b.pos <<-EOF
	startpos game=1 ply=0 result=1-0 eval=cp:30@depth:5
	startpos game=2 ply=0 result=1-0 ext=6:0100 ext=2:$HEX
	startpos game=3 ply=0 result=0-1 ext=5:0100
	EOF
	run --separate-stderr shard -o b --dedup merge b.pos
	assert_failure 1
	[[ "$stderr" == *"shard: 3 malformed extensions of duplicates (an evaluation, value, policy or merge extension, or an extension area) left out of the merges"* ]] || fail "$stderr"
	[[ "$stderr" == *"3 records in, 1 out"* ]] || fail "$stderr"
	[ -f b/manifest.json ]
	run bash -c "posdump -j b/train-00000.pos.zst | jq -c '[.exts[] | select(.type == \"eval\") | .cp], [.exts[] | select(.type == \"merge\") | .count]'"
	assert_output "$(printf '%s\n' '[30]' '[3]')"
	# no twin: written unchanged, nothing merged, nothing reported
	"$MKREC" <<< "startpos game=1 ext=6:0100" > one.pos
	run shard -f -o b --dedup merge one.pos
	assert_success
}

@test "--dedup merge: wins, draws and losses from the side to move's view, and a merged record merged again" {
	e4='rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'
	# black to move: 0-1 is a win, 1-0 a loss
	for r in 1-0 0-1 0-1 1/2-1/2; do echo "$e4"; done |
	    awk -v r="1-0 0-1 0-1 1/2-1/2" 'BEGIN { split(r, a) }
	    { print $0 " game=" NR " ply=1 result=" a[NR] }' > b.txt
	# white to move: 1-0 is a win
	printf '%s\n' 'startpos game=11 result=1-0' 'startpos game=12 result=1-0' \
	    'startpos game=13 result=0-1' >> b.txt
	"$MKREC" < b.txt > b.pos
	run shard -o b --dedup merge --memory 64K b.pos
	assert_success
	assert_output --partial "7 records in, 2 out (train 2); 5 duplicates merged into 2 records;"
	run bash -c "posdump -j --fields ply,merge b/train-00000.pos.zst | jq -c '[.ply, .exts[0].count, .exts[0].wins, .exts[0].draws, .exts[0].losses]' | sort"
	assert_output "$(printf '[0,3,2,0,1]\n[1,4,2,1,1]')"
	# merged again with one more twin (a loss for black): counts add up,
	# the merged record counting as its four
	echo "$e4 game=20 ply=1 result=1-0" | "$MKREC" > c.pos
	run shard -o c --dedup merge b/train-00000.pos.zst c.pos
	assert_success
	run bash -c "posdump -j --fields ply,merge c/train-00000.pos.zst | jq -c 'select(.ply == 1) | .exts'"
	assert_output '[{"type":"merge","count":5,"wins":2,"draws":1,"losses":2}]'
}

@test "--dedup merge with far more twins than --memory holds: merged while re-scattered, the records a merge in memory makes" {
	# AddressSanitizer's resident set is not the tool's: there the
	# records alone are compared
	asan=$(ldd "$BUILD_DIR/bin/shard" | grep -c libasan || true)
	games
	# twins of two positions whose evaluations deepen, whose value
	# targets and policies differ, and whose results vary, among the
	# bundled games: 96,000 twins (about 16 MB) against --memory 1M
	e4='rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'
	v1="result=1-0 move=e2e4 eval=cp:10@depth:D ext=6:$(value 1 cdcccc3d) ext=5:$(policy e2e4:ffbf d2d4:0040)"
	v2="result=0-1 move=d2d4 eval=cp:30@depth:12 eval=cp:-5@depth:3 ext=6:$(value 1 3333333f) ext=6:$(value 2 9a9999be) ext=5:$(policy d2d4:0080 e2e4:ff7f)"
	v3="result=1/2-1/2 eval=cp:20@nodes:N ext=6:$(value 1 7b14aa3e)"
	awk -v v1="$v1" -v v2="$v2" -v v3="$v3" -v e4="$e4" 'BEGIN {
		for (i = 1; i <= 24000; i++) {
			a = v1; sub("D", i % 30 + 1, a)
			b = v3; sub("N", i % 7 * 1000 + 1000, b)
			print "startpos game=" 4 * i " ply=0 " a
			print "startpos game=" 4 * i + 1 " ply=0 " v2
			print "startpos game=" 4 * i + 2 " ply=0 " b
			# tanh targets near 0.5 (0x3f000000 and up, little-endian)
			t = 1056964608 + i * 7919
			printf "%s game=%d ply=1 result=%s eval=cp:%d@depth:%d ext=6:0100000000000000000000000000803f%02x%02x%02x%02x\n", e4, 4 * i + 3, i % 3 ? "0-1" : "1-0", i % 41 - 20, i % 5 + 1, t % 256, int(t / 256) % 256, int(t / 65536) % 256, int(t / 16777216)
		} }' | "$MKREC" > tw.pos
	cat tw.pos g.pos > in.pos
	for opt in "" "--dedup-across --split train=0.5,val=0.5"; do
		rm -rf t u
		if [ "$asan" -eq 0 ]; then
			rss=$(max_rss shard -o t --memory 1M --dedup merge $opt in.pos)
			[ "$rss" -lt $((1024 + 12 * 1024)) ] || fail "$opt: max RSS $rss KiB"
		else
			shard -o t --memory 1M --dedup merge $opt in.pos 2>/dev/null
		fi
		shard -o u --memory 256M --dedup merge $opt in.pos 2>/dev/null
		[ "$(jq -c '.counts' t/manifest.json)" = "$(jq -c '.counts' u/manifest.json)" ] ||
			fail "$opt: $(jq -c .counts t/manifest.json) against $(jq -c .counts u/manifest.json)"
		cmp <(posdump -j t/*.pos.zst | sort) <(posdump -j u/*.pos.zst | sort)
	done
	# every twin of the start position counted once (72,000 and the
	# games' 47), the deepest evaluation of each kind kept
	rm -rf v
	shard -o v --memory 1M --dedup merge in.pos 2>/dev/null
	run bash -c "posdump -j v/*.pos.zst | jq -c 'select(.ply == 0 and .exts[-1].count > 1000) | [.exts[-1].count, ([.exts[] | select(.type == \"eval\") | \"\\(.limit):\\(.limit_value)\"] | sort)]'"
	assert_output '[72047,["depth:30","nodes:7000"]]'
}

@test "--dedup-across: no position of train is left in val, and nothing else is dropped" {
	games
	# the openings repeat: many positions are in both splits
	shard -o plain --split train=0.5,val=0.5 --seed 5 g.pos 2>/dev/null
	fens() { cat "$@" | posdump --fields fen | cut -d' ' -f1-4; }
	fens plain/train-*.pos.zst | sort -u > train.fens
	both=$(fens plain/val-*.pos.zst | sort | comm -12 - train.fens | wc -l)
	[ "$both" -gt 0 ]
	run shard -o x --dedup-across --split train=0.5,val=0.5 --seed 5 --memory 64K g.pos
	assert_success
	# train is untouched; val is the plain val without train's positions
	cmp <(keys plain/train-*.pos.zst) <(keys x/train-*.pos.zst)
	[ -z "$(fens x/val-*.pos.zst | sort -u | comm -12 - train.fens)" ]
	cat plain/val-*.pos.zst | posdump --fields game,ply,fen |
	    awk 'NR == FNR { t[$0] = 1; next }
	    { split($0, f, " "); k = f[3] " " f[4] " " f[5] " " f[6] }
	    !(k in t)' train.fens - | sort > want
	keys x/val-*.pos.zst > got
	cmp want got
	dropped=$(($(keys plain/val-*.pos.zst | wc -l) - $(wc -l < got)))
	[ "$dropped" -gt 0 ]
	assert_output --regexp "; 0 duplicates dropped; $dropped positions of train dropped \(val $dropped\); 2 shards written to x\$"
	run jq -c '[.dedup, .dedup_across, .counts.val.across, .counts.train.across]' x/manifest.json
	assert_output "[false,true,$dropped,0]"
	# with --dedup, three splits and standard input: each position once
	# in each split, and none of train's in the others
	cat g.pos g.pos | shard -o y --dedup --dedup-across \
	    --split train=0.6,val=0.2,test=0.2 --memory 64K 2>/dev/null
	fens y/train-*.pos.zst | sort > y.train
	[ -z "$(uniq -d y.train)" ]
	for s in val test; do
		fens y/$s-*.pos.zst | sort > y.$s
		[ -s y.$s ] && [ -z "$(uniq -d y.$s)" ]
		[ -z "$(comm -12 y.$s y.train)" ]
	done
	shard --verify y 2>/dev/null
}

@test "--dedup --dedup-across: a twin within its split that the first split has counts as across, whatever --memory" {
	games
	# 200,000 positions of other games, then the bundled games 80
	# times (their openings twins in every split): a bucket scattered
	# again with more first-split positions than its table holds
	"$BUILD_DIR/tests/tools/softtarget-gen" -m 0 -n 200000 |
	    posdump --fields fen,ply |
	    awk '{ split($0, a, " [|] "); split(a[2], f, " ")
		if (f[1] == "ply=0") g++; print a[1] " game=" g " " a[2] }' |
	    "$MKREC" > gen.pos
	cp gen.pos in.pos
	for i in $(seq 80); do cat g.pos; done >> in.pos
	for m in 1M 64M; do
		shard --dedup --dedup-across --split train=0.5,val=0.3,test=0.2 \
		    --memory $m -o o$m in.pos 2>/dev/null
		jq -c '.counts' o$m/manifest.json > counts$m
	done
	run cat counts1M
	assert_output "$(cat counts64M)"
	[ "$(jq .val.across counts1M)" -gt 1000 ]
}

@test "--verify: a flipped byte, a missing or a cut shard is named, exit 1" {
	games
	shard -o v --records-per-shard 1000 g.pos 2>/dev/null
	run shard --verify v
	assert_success
	cp -r v w
	size=$(stat -c %s w/train-00001.pos.zst)
	printf '\377' | dd of=w/train-00001.pos.zst bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
	cmp -s v/train-00001.pos.zst w/train-00001.pos.zst && skip "the byte was 0xff already"
	run shard --verify w
	assert_failure 1
	assert_output --partial "w/train-00001.pos.zst"
	cp -r v x
	rm x/train-00002.pos.zst
	run shard --verify x
	assert_failure 1
	assert_output --partial "x/train-00002.pos.zst"
	cp -r v y
	truncate -s -10 y/train-00000.pos.zst
	run shard --verify y
	assert_failure 1
	assert_output --partial "y/train-00000.pos.zst"
	run shard --verify nodir
	assert_failure 1
	assert_output --partial "nodir/manifest.json"
}

@test "a manifest a JSON tool wrote again (jq, indented) is read as shard's own: --verify, and -f replacing its set" {
	games
	shard -o s --shards 2 g.pos 2>/dev/null
	jq . s/manifest.json > m && mv m s/manifest.json
	grep -q '^  "format": "posflow",$' s/manifest.json
	run shard --verify s
	assert_success
	assert_output "shard: s: 2 shards, $(posdump -c g.pos | cut -d' ' -f1) records: all good"
	# still every check: a stray shard of a split it lists is named
	cp s/train-00000.pos.zst s/train-00007.pos.zst
	run shard --verify s
	assert_failure 1
	assert_output --partial "train-00007.pos.zst"
	rm s/train-00007.pos.zst
	# keys sorted (jq -S): the shards are still read and counted, so a
	# count the shard does not hold is named
	jq -S '.shards[0].records += 1' s/manifest.json > m
	cp m s/manifest.json
	run shard --verify s
	assert_failure 1
	assert_output --partial "s/train-00000.pos.zst: "
	jq -S '.shards[0].records -= 1' s/manifest.json > m
	cp m s/manifest.json
	run shard --verify s
	assert_success
	# -f removes the set it lists
	run shard -o s -f --shards 3 g.pos
	assert_success
	[ "$(ls s | grep -c 'pos.zst$')" -eq 3 ]
}

@test "--verify: a shard of a split the manifest lists but holds no shard of is named" {
	# one game: one of the two splits receives nothing and has no shard
	for i in $(seq 20); do echo "startpos game=5 ply=$i"; done |
		"$MKREC" > one.pos
	shard -o v --split a=0.5,b=0.5 one.pos 2>/dev/null
	[ "$(jq '.shards | length' v/manifest.json)" -eq 1 ]
	empty=$(jq -r '.counts | to_entries[] | select(.value.out == 0) |
		.key' v/manifest.json)
	full=$(jq -r '.shards[0].file' v/manifest.json)
	run shard --verify v
	assert_success
	cp "v/$full" "v/$empty-00000.pos.zst"
	run shard --verify v
	assert_failure 1
	assert_output "shard: v/$empty-00000.pos.zst: a shard the manifest does not list"
	# no shard at all (an empty input)
	shard -o e --split a=0.5,b=0.5 < /dev/null 2>/dev/null
	cp "v/$full" e/b-00003.pos.zst
	run shard --verify e
	assert_failure 1
	assert_output "shard: e/b-00003.pos.zst: a shard the manifest does not list"
}

@test "a killed run leaves no manifest; a rerun starts over and completes; a complete directory needs -f" {
	games
	for i in 1 2 3 4; do cat g.pos; done > g4.pos
	mkfifo in.fifo
	# fd 3 is bats' own: the writer holds fd 7
	shard -o k --memory 64K in.fifo 2>/dev/null 3>&- &
	pid=$!
	exec 7>in.fifo
	cat g4.pos >&7
	# the input is still open: shard is waiting in pass 1
	for i in $(seq 50); do
		ls -A k 2>/dev/null | grep -q '^\.tmp-' && break
		sleep 0.1
	done
	kill -9 "$pid"
	wait "$pid" || true
	exec 7>&-
	[ ! -e k/manifest.json ]
	ls -A k | grep -q '^\.tmp-'
	run shard -o k --memory 64K g.pos
	assert_success
	[ -f k/manifest.json ]
	ls -A k | grep -q '^\.tmp-' && fail "stale temporaries: $(ls -A k)"
	run shard --verify k
	assert_success
	cmp <(keys g.pos) <(keys k/*.pos.zst)
	# complete: refused without -f, redone with it (stale shards removed)
	run shard -o k g.pos
	assert_failure 1
	assert_output --partial "use -f"
	echo keep > k/other-00000.pos.zst
	run shard -o k -f --records-per-shard 2000 g.pos
	assert_success
	[ "$(ls k/train-*.pos.zst | wc -l)" -eq 2 ]
	run shard --verify k
	assert_success
	# files not of this run's splits stay; an input among the shards is
	# refused, not deleted
	[ "$(cat k/other-00000.pos.zst)" = keep ]
	run shard -o k -f k/train-00000.pos.zst
	assert_failure 1
	assert_output --partial "k/train-00000.pos.zst: an input is a file this run would replace"
	run shard --verify k
	assert_success
}

@test "past shard 99999 the names take six digits: a rerun removes them, --verify names one not listed" {
	seq 100002 | awk '{ print "startpos game=" $1 }' | "$MKREC" > many.pos
	# 100,002 files of a page each: a tmpfs, not the disk
	small_fs 600m
	run shard -o mnt/s --records-per-shard 1 many.pos
	assert_success
	[ -f mnt/s/train-99999.pos.zst ] && [ -f mnt/s/train-100001.pos.zst ]
	cp mnt/s/train-100001.pos.zst mnt/s/train-100005.pos.zst
	run shard --verify mnt/s
	assert_failure 1
	assert_output "shard: mnt/s/train-100005.pos.zst: a shard the manifest does not list"
	rm mnt/s/train-100005.pos.zst
	# what a run killed before its manifest leaves: a rerun starts over
	rm mnt/s/manifest.json
	run shard -o mnt/s --records-per-shard 50001 many.pos
	assert_success
	run ls mnt/s
	assert_output "manifest.json
train-00000.pos.zst
train-00001.pos.zst"
	# a name of six digits with a leading zero is none of them
	echo mine > mnt/s/train-012345.pos.zst
	run shard --verify mnt/s
	assert_success
}

@test "a run killed while -f removes the old set leaves no manifest of it" {
	# (where the tests may not trace, as in some containers, skipped)
	strace -o /dev/null true 2> /dev/null ||
		skip "strace cannot trace here (or is not installed)"
	games
	shard -o k --records-per-shard 300 g.pos 2>/dev/null
	[ "$(ls k | wc -l)" -eq 11 ]
	# killed at its second unlink: one file of the old set removed,
	# which must be the manifest
	run strace -o /dev/null -e trace=unlink,unlinkat \
	    -e inject=unlink,unlinkat:signal=KILL:when=2 \
	    shard -o k -f --records-per-shard 300 g.pos
	[ "$status" -eq 137 ]
	[ "$(ls k | wc -l)" -eq 10 ]
	[ ! -e k/manifest.json ]
	# an unfinished run's directory: the rerun needs no -f
	run shard -o k --records-per-shard 300 g.pos
	assert_success
	run shard --verify k
	assert_success
}

@test "a full disk in the scatter, a re-scatter or the shards: exit 1, the file named, no temporary file or shard of the run left" {
	games
	# the shards' pages, to fill the disk halfway through them
	shard -o ref --records-per-shard 300 g.pos 2>/dev/null
	pages=$(jq '[.shards[].bytes | (. + 4095) / 4096 | floor] | add' \
		ref/manifest.json)
	[ "$pages" -ge 8 ]
	input=$((($(stat -c %s g.pos) + 4095) / 4096))
	small_fs 256k
	mkdir mnt/s
	echo keep > mnt/s/notes.txt
	# pass 1: a bucket cannot be written
	run shard -o mnt/s g.pos
	assert_failure 1
	assert_output "shard: mnt/s/.tmp-b0-0-0.rec: No space left on device"
	run ls -A mnt/s
	assert_output notes.txt
	# a bucket larger than estimated (a pipe) scattered again: the
	# bucket and its sub-buckets do not fit
	mount -o remount,size=$((input * 4096 * 3 / 2)) mnt
	run bash -c 'cat g.pos | shard -o mnt/s --memory 64K'
	assert_failure 1
	assert_output --regexp '^shard: mnt/s/\.tmp-b0-1-[0-9a-f]+\.rec: No space left on device$'
	run ls -A mnt/s
	assert_output notes.txt
	# pass 2: shards written, then the disk is full
	mount -o remount,size=$(((input + pages / 2) * 4096)) mnt
	run shard -o mnt/s --records-per-shard 300 g.pos
	assert_failure 1
	assert_output --regexp 'shard: train-0000[1-9]\.pos\.zst: write error: No space left on device$'
	run ls -A mnt/s
	assert_output notes.txt
	# given room, the same run completes: the same shards
	mount -o remount,size=4m mnt
	run shard -o mnt/s --records-per-shard 300 g.pos
	assert_success
	run shard --verify mnt/s
	assert_success
	cmp <(shards ref) <(shards mnt/s)
	[ "$(cat mnt/s/notes.txt)" = keep ]
}

@test "no memory to note a shard: the run fails, no shard of it left" {
	gdb -q -batch -ex run --args true > /dev/null 2>&1 ||
		skip "gdb cannot run a program here (or is not installed)"
	games
	mkdir s
	echo keep > s/notes.txt
	# strdup of the shard's name fails, as without memory
	cat > oom.gdb <<-'EOF'
	set pagination off
	set confirm off
	set breakpoint pending on
	break strdup if $_caller_is("shard_close")
	run
	return (char *)0
	continue
	EOF
	run gdb -q -batch -x oom.gdb --args "$(command -v shard)" -o s \
	    --records-per-shard 1000 g.pos
	assert_output --partial "shard: out of memory"
	assert_output --partial "exited with code 01"
	run ls -A s
	assert_output notes.txt
}

@test "an input that cannot be read (a directory, a socket) is refused before the directory is touched; pipes and devices are read" {
	games
	mkdir d
	run shard -o s1 g.pos d
	assert_failure 1
	assert_output "shard: d: Is a directory"
	[ ! -e s1 ]
	python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'
	[ -S sock ]
	run shard -o s1 sock g.pos
	assert_failure 1
	assert_output "shard: sock: not a file, pipe or device"
	[ ! -e s1 ]
	# standard input, named or not
	run bash -c 'shard -o s1 < d'
	assert_failure 1
	assert_output "shard: stdin: Is a directory"
	[ ! -e s1 ]
	run bash -c 'shard -o s1 g.pos - < d'
	assert_failure 1
	assert_output "shard: stdin: Is a directory"
	[ ! -e s1 ]
	# a complete set is left as it was, even with -f
	shard -o k g.pos 2>/dev/null
	run shard -o k -f g.pos d
	assert_failure 1
	assert_output "shard: d: Is a directory"
	run shard --verify k
	assert_success
	# a pipe (process substitution) and a device are read
	run shard -o p <(cat g.pos) /dev/null
	assert_success
	cmp <(keys g.pos) <(keys p/*.pos.zst)
}

@test "an input gone before it is read: exit 1, named, nothing written" {
	games
	cp g.pos second.pos
	mkfifo in.fifo
	mkdir s
	echo keep > s/notes.txt
	shard -o s in.fifo second.pos 2>err 3>&- &
	pid=$!
	# the writer's open returns once shard reads the first input, past
	# its check of the operands: the second goes meanwhile
	exec 7>in.fifo
	cat g.pos >&7
	rm second.pos
	exec 7>&-
	status=0
	wait "$pid" || status=$?
	[ "$status" -eq 1 ]
	[ "$(cat err)" = "shard: second.pos: No such file or directory" ]
	run ls -A s
	assert_output notes.txt
}

@test "-f replaces the whole set: the old manifest's shards of any split or format go; --verify names a shard the manifest does not list" {
	pgn2pos "$TESTDATA/lichess_db_10k.pgn" 2>/dev/null |
		uci-eval -e "$(stockfish_path)" -d 1 2>/dev/null > g.pos
	shard -o r --split train=0.5,val=0.5 --records-per-shard 50 g.pos 2>/dev/null
	[ "$(ls r/val-*.pos.zst | wc -l)" -ge 2 ]
	echo keep > r/notes.txt
	# another split and another format: nothing of the old set is left
	run shard -o r -f --split all=1 --format plain g.pos
	assert_success
	run ls r
	assert_output "all-00000.plain
manifest.json
notes.txt"
	run shard --verify r
	assert_success
	# back: the plain shard goes too
	run shard -o r -f --records-per-shard 100 g.pos
	assert_success
	run ls r
	assert_output "manifest.json
notes.txt
train-00000.pos.zst
train-00001.pos.zst
train-00002.pos.zst"
	# a file named as a shard of a listed split that the manifest does
	# not list (a trainer globbing train-* would read it)
	cp r/train-00000.pos.zst r/train-00007.pos.zst
	run shard --verify r
	assert_failure 1
	assert_output "shard: r/train-00007.pos.zst: a shard the manifest does not list"
	rm r/train-00007.pos.zst
	# a name without a suffix is no shard: neither flagged nor removed
	echo mine > r/train-00009
	run shard --verify r
	assert_success
	cp r/train-00000.pos.zst r/train-00003.binpack
	run shard --verify r
	assert_failure 1
	assert_output "shard: r/train-00003.binpack: a shard the manifest does not list"
	rm r/train-00003.binpack
	run shard -o r -f --records-per-shard 100 g.pos
	assert_success
	[ "$(cat r/train-00009)" = mine ]
}

@test "empty, concatenated, damaged input" {
	"$MKREC" < /dev/null > empty.pos
	run shard -o e empty.pos
	assert_success
	assert_output --partial "0 records in, 0 out"
	[ "$(jq '.shards | length' e/manifest.json)" -eq 0 ]
	run shard --verify e
	assert_success
	shard -o e2 < /dev/null 2>/dev/null
	[ "$(jq '.shards | length' e2/manifest.json)" -eq 0 ]
	for i in $(seq 40); do echo "startpos game=$i move=e2e4"; done | "$MKREC" -F > many.pos
	cat many.pos many.pos > two.pos
	run shard -o c two.pos many.pos
	assert_success
	assert_output --partial "120 records in, 120 out"
	size=$(stat -c %s many.pos)
	head -c $((size - 60)) many.pos > cut.pos
	run shard -o t cut.pos
	assert_failure 1
	assert_output --partial "shard: cut.pos"
	[ "$(posdump -c t/train-00000.pos.zst | cut -d' ' -f1)" -ge 38 ]
	# a missing input: nothing is written
	run shard -o miss many.pos nonexistent.pos
	assert_failure 1
	assert_output --partial "shard: nonexistent.pos"
	[ ! -e miss ]
	cp many.pos bad.pos
	printf '\377' | dd of=bad.pos bs=1 seek=$((size - 40)) conv=notrunc 2>/dev/null
	run shard -o b bad.pos
	assert_failure 1
	assert_output --partial "bad.pos"
	[ "$(posdump -c b/train-00000.pos.zst | cut -d' ' -f1)" -ge 38 ]
}

@test "progress on a terminal or with --progress, with MB/s; else the summary alone" {
	printf '%s\n' 'startpos game=1' | "$MKREC" > in.pos
	run script -qec "shard -o tty in.pos" /dev/null
	assert_success
	assert_output --regexp "shard: scatter: 1 records, 0.0 MB in [0-9.]+ s, [0-9.]+ MB/s, [0-9]+ records/s"
	assert_output --regexp "shard: shuffle: 1 of 1 records, 0.0 MB in [0-9.]+ s, [0-9.]+ MB/s"
	run shard -o file -f in.pos
	assert_output "shard: 1 records in, 1 out (train 1); 0 duplicates dropped; 1 shards written to file"
	# --progress: the same lines to a file, one each
	games
	run shard --progress -o p g.pos
	assert_success
	assert_line --index 0 --regexp '^shard: scatter: 2817 records, [0-9.]+ MB in [0-9.]+ s, [0-9.]+ MB/s, [0-9]+ records/s$'
	assert_line --index 1 --regexp '^shard: shuffle: 2817 of 2817 records, [0-9.]+ MB in [0-9.]+ s, [0-9.]+ MB/s, [0-9]+ records/s$'
	assert_line --index 2 --partial "shard: 2817 records in, 2817 out"
	[ "${#lines[@]}" -eq 3 ]
}

@test "--help, --version, invalid calls: exit 2, usage on stderr, nothing on stdout" {
	run shard --help
	assert_success
	assert_output --partial "usage: shard"
	run shard --version
	assert_output "shard (posflow) $(shard --version | cut -d' ' -f3)"
	printf 'startpos\n' | "$MKREC" > in.pos
	while read -r args; do
		eval "set -- $args"
		run bash -c 'shard "$@" 2>/dev/null' _ "$@"
		[ "$status" -eq 2 ] || { echo "status $status for: $args"; false; }
		[ -z "$output" ] || { echo "stdout for: $args"; false; }
		run bash -c 'shard "$@" 2>&1 >/dev/null' _ "$@"
		[[ "$output" == *"usage: shard"* ]] || { echo "no usage for: $args"; false; }
		[ ! -e out ] || { echo "out created for: $args"; false; }
	done <<-'EOF'
	in.pos
	-o out --shards 0 in.pos
	-o out --shards abc in.pos
	-o out --shards 2 --records-per-shard 5 in.pos
	-o out --records-per-shard 0 in.pos
	-o out --split train=0.5,val=0.4 in.pos
	-o out --split train=0.5,train=0.5 in.pos
	-o out --split train in.pos
	-o out --split =1 in.pos
	-o out --split train=x in.pos
	-o out --split 'a/b=1' in.pos
	-o out --memory 1K in.pos
	-o out --memory 12Q in.pos
	-o out --memory '' in.pos
	-o out --seed -1 in.pos
	-o out --dedup=last in.pos
	-o out --dedup= in.pos
	--verify out in.pos
	--verify out -o out
	-o out --no-such-option in.pos
	EOF
}

@test "--format: shards in a trainer's format, the split and the counts kept, verified by checksum, refused for a directory format" {
	pgn2pos "$TESTDATA/lichess_db_10k.pgn" 2>/dev/null |
		uci-eval -e "$(stockfish_path)" -d 1 2>/dev/null > e.pos
	run shard --format binpack -o bp --split train=0.8,val=0.2 --seed 2 e.pos
	assert_success
	assert_output --regexp '^shard: 262 records in, 257 out \(train [0-9]+, val [0-9]+\); 0 duplicates dropped; 5 that binpack cannot hold skipped; 2 shards written to bp$'
	[ -f bp/train-00000.binpack ] && [ -f bp/val-00000.binpack ]
	run jq -r '[.format, ([.shards[].records] | add), (.counts.train.skipped + .counts.val.skipped)] | @tsv' bp/manifest.json
	assert_output "$(printf 'binpack\t257\t5')"
	# the same split as posflow shards: the positions of each split
	shard -o pf --split train=0.8,val=0.2 --seed 2 e.pos 2>/dev/null
	for s in train val; do
		posimport -F binpack bp/$s-00000.binpack 2>/dev/null | posdump --fields fen | sort > a.$s
		posdump --fields fen,move pf/$s-00000.pos.zst | grep -v 'move=-$' | sed 's/ | move=.*//' | sort > b.$s
		cmp a.$s b.$s
	done
	run shard --verify bp
	assert_success
	assert_output "shard: bp: 2 shards, 257 records: all good"
	printf 'x' >> bp/val-00000.binpack
	run shard --verify bp
	assert_failure 1
	assert_output --partial "val-00000.binpack"
	run shard --format npy -o x e.pos
	assert_failure 2
	assert_output --partial "--format npy: not a stream format"
	run shard --format plain -o pl e.pos
	assert_success
	[ "$(grep -c '^e$' pl/train-00000.plain)" -eq 257 ]
	# --records-per-shard counts the records written, not those skipped;
	# a shard that would hold none is not written
	run shard --format plain --records-per-shard 100 -o pk e.pos
	assert_success
	run jq -r '[.shards[].records] | @tsv' pk/manifest.json
	assert_output "$(printf '100\t100\t57')"
	pgn2pos "$TESTDATA/lichess_db_10k.pgn" -o noeval.pos 2>/dev/null
	run shard --format binpack -o none noeval.pos
	assert_success
	assert_output --partial "262 that binpack cannot hold skipped; 0 shards written to none"
	run ls none
	assert_output "manifest.json"
}

@test "--format with --eval and --move: the evaluation and the move posexport would write" {
	pgn2pos "$TESTDATA/lichess_db_10k.pgn" 2>/dev/null |
		uci-eval -e "$(stockfish_path)" -d 1 2>/dev/null |
		uci-eval -e "$(stockfish_path)" -d 3 2>/dev/null > e.pos
	# one shard each, read back in a fixed order: what posexport writes
	# with the same options
	key() { posdump --fields fen,move,eval "$@" | sed 's/ engine=.*//;s/ time=[0-9]*//' | sort; }
	for opts in "--move best" "--eval depth:1" "--eval depth:1 --move best" "--move played"; do
		run shard --format plain $opts -o "s$opts" e.pos
		assert_success
		posexport -F plain $opts e.pos -o want.plain 2>/dev/null
		posimport -F plain want.plain -o want.pos 2>/dev/null
		posimport -F plain "s$opts/train-00000.plain" -o got.pos 2>/dev/null
		[ "$(key got.pos)" = "$(key want.pos)" ] || fail "$opts"
	done
	# the choices differ: best moves against moves played, depth 1 against 3
	! cmp -s "s--move best/train-00000.plain" "s--move played/train-00000.plain"
	! cmp -s "s--move best/train-00000.plain" "s--eval depth:1 --move best/train-00000.plain"
	run shard --format binpack --move best -o bb e.pos
	assert_success
	assert_output --regexp '^shard: 262 records in, 26[0-9] out'
	# usage: --format is needed; a format with no move refuses best; a
	# bad selector
	run shard --move best -o x e.pos
	assert_failure 2
	assert_output --partial "--format is required"
	run shard --eval depth:1 -o x e.pos
	assert_failure 2
	run shard --format bulletformat --move best -o x e.pos
	assert_failure 2
	assert_output --partial "--move best: --format bulletformat holds no move to replace"
	run shard --format plain --eval nosuch -o x e.pos
	assert_failure 2
	assert_output --partial "--eval nosuch: unknown selector"
	run shard --format plain --move worst -o x e.pos
	assert_failure 2
	assert_output --partial "--move worst: played or best"
	[ ! -e x ]
}
