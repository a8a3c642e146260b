#!/usr/bin/env bats
# posdump: text and JSON views of a stream, counts, and every kind of bad
# input.  Streams are made with the mkrec test tool (tests/tools/mkrec.c).

load helper

MKREC="$BUILD_DIR/tests/tools/mkrec"

START='rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
AFTER_E4='rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'
MATED='rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3'

three() {
	"$MKREC" <<-EOF
	$START game=1 ply=0 result=1-0 move=e2e4
	$AFTER_E4 game=1 ply=1 result=1-0 move=e7e5 eval=cp:-31@depth:12
	$MATED game=2 ply=4 result=0-1 flags=0x13
	EOF
}

@test "golden text output" {
	three > s.pos
	run posdump s.pos
	assert_success
	assert_line --index 0 "$START | game=0000000000000001 ply=0 move=e2e4 san=e4 result=1-0 flags=-"
	assert_line --index 1 --partial "$AFTER_E4 | game=0000000000000001 ply=1 move=e7e5 san=e5 result=1-0 flags=- eval{"
	assert_line --index 1 --partial "limit=depth:12 score=cp:-31"
	assert_line --index 2 "$MATED | game=0000000000000002 ply=4 move=- san=- result=0-1 flags=check,mate,last"
	[ "${#lines[@]}" -eq 3 ]
}

@test "JSON Lines parse and carry every field" {
	three > s.pos
	run posdump --json s.pos
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	printf '%s\n' "$output" | jq -e . >/dev/null
	run jq -r '[.fen, .game, .ply, .move, .san, .result, (.flags|join(","))] | join("|")' <(posdump -j s.pos)
	assert_line --index 0 "$START|0000000000000001|0|e2e4|e4|1-0|"
	assert_line --index 2 "$MATED|0000000000000002|4|-|-|0-1|check,mate,last"
	run jq -r '.exts[0] | "\(.type) \(.limit) \(.limit_value) \(.score.cp) \(.cp)"' <(posdump -j s.pos | sed -n 2p)
	assert_output "eval depth 12 -31 -31"
}

@test "JSON stays JSON when a float field is NaN or infinite" {
	# value: method 1, scale 0, param1 NaN, param2 +inf, lambda 0,
	# target 0.5 (f32 little-endian)
	"$MKREC" <<< "$START ext=6:010000000000c07f0000807f000000000000003f" > s.pos
	run posdump -j --fields value s.pos
	assert_success
	printf '%s\n' "$output" | jq -e . >/dev/null
	run jq -c '.exts[0] | [.param1, .param2, .lambda, .target]' <(posdump -j s.pos)
	assert_output '[null,null,0,0.5]'
}

@test "--fields selects and orders core fields" {
	three > s.pos
	run posdump --fields ply,fen s.pos
	assert_success
	assert_line --index 0 "ply=0 $START"
	run posdump -j --fields game s.pos
	assert_line --index 0 '{"game":"0000000000000001"}'
}

@test "unknown extensions are shown as type and length, and in hex in JSON" {
	"$MKREC" <<< "$START ext=32769:0a0b0c" > s.pos
	run posdump --fields ext s.pos
	assert_success
	assert_output "ext{type=32769 len=3}"
	run posdump -j --fields ext s.pos
	assert_output '{"exts":[{"type":32769,"len":3,"hex":"0a0b0c"}]}'
}

@test "per-move scores are decoded" {
	"$MKREC" <<< "$START scores=e2e4:cp:30,d2d4:cp:25,g1f3:mate:-3" > s.pos
	run posdump --fields movescores s.pos
	assert_success
	assert_output --partial "n=3 e2e4:cp:30@"
	assert_output --partial "g1f3:mate:-3@"
}

@test "a score kind posflow(5) does not define is malformed, not shown as centipawns" {
	# an eval extension of score 900, kind 2 (0 is cp, 1 mate)
	eval_hex 900 2
	"$MKREC" <<< "$START ext=2:$HEX" > k.pos
	run posdump --fields eval k.pos
	assert_failure 1
	assert_output --partial "ext{type=2 len=45 malformed}"
	assert_output --partial "posdump: k.pos: record 1: malformed eval extension (45 bytes)"
	refute_output --partial "cp:900"
	run -1 --separate-stderr posdump --json k.pos
	[ "$(jq -c '.exts[0].error' <<< "$output")" = '"malformed"' ]
	# a per-move table's entry of kind 2, score 77, at depth 5
	HEX=
	le 1 1; le 1 1; le 5 2; le 5 8; le 1 2
	move16 e2e4; le "$MV" 2; le 2 1; le 5 1; le 77 4
	"$MKREC" <<< "$START ext=3:$HEX" > t.pos
	run posdump --fields movescores t.pos
	assert_failure 1
	assert_output --partial "ext{type=3 len=22 malformed}"
	refute_output --partial "cp:77"
}

@test "-c counts records per input and in total" {
	three > a.pos
	"$MKREC" <<< "$START" > b.pos
	run posdump -c a.pos b.pos
	assert_success
	assert_output "3 a.pos
1 b.pos
4 total"
}

@test "empty input: an empty stream, a 0-byte file, no input" {
	: > empty
	run posdump empty
	assert_success
	assert_output ""
	"$MKREC" < /dev/null > none.pos
	run posdump -c none.pos
	assert_success
	assert_output "0 none.pos"
	run posdump -c < /dev/null
	assert_success
	assert_output "0 stdin"
}

@test "concatenated and compressed streams" {
	three > a.pos
	cat a.pos a.pos > aa.pos
	run posdump -c aa.pos
	assert_output "6 aa.pos"
	zstd -q -c a.pos > a.pos.zst
	gzip -c a.pos > a.pos.gz
	cat a.pos.zst a.pos.zst > aa.pos.zst
	run posdump -c a.pos.zst a.pos.gz aa.pos.zst
	assert_success
	assert_line --index 0 "3 a.pos.zst"
	assert_line --index 1 "3 a.pos.gz"
	assert_line --index 2 "6 aa.pos.zst"
	diff <(posdump a.pos) <(posdump a.pos.zst)
}

@test "truncated stream: complete records shown, then exit 1 with the offset" {
	three > a.pos
	size=$(stat -c %s a.pos)
	# Cut inside the third record: two complete records survive.
	head -c $((size - 24 - 20)) a.pos > cut.pos
	run --separate-stderr posdump cut.pos
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "$stderr" == "posdump: cut.pos: "*truncated*offset* ]]
}

@test "a flipped byte is caught by the checksum and named by block" {
	three > a.pos
	cp a.pos bad.pos
	# The first block's payload starts at 16 + 24; flip a byte in it.
	printf '\x55' | dd of=bad.pos bs=1 seek=50 conv=notrunc 2>/dev/null
	cat bad.pos a.pos > mixed.pos
	run --separate-stderr posdump -c bad.pos
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"bad.pos: "*block*checksum* ]]
	# A damaged stream does not stop the next input.
	run --separate-stderr posdump -c bad.pos a.pos
	[ "$status" -eq 1 ]
	[[ "$output" == *"3 a.pos"* ]]
}

@test "wrong magic and a future version are clear errors" {
	printf 'hello world, not a stream\n' > text.pos
	run --separate-stderr posdump text.pos
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ "$stderr" == *"text.pos: "*"not a posflow stream"* ]]
	three > a.pos
	cp a.pos future.pos
	printf '\x09' | dd of=future.pos bs=1 seek=4 conv=notrunc 2>/dev/null
	run --separate-stderr posdump future.pos
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"future.pos: "*version* ]]
}

@test "from a pipe, each record is shown while the input waits" {
	three > s.pos
	mkfifo in.fifo
	posdump < in.fifo > out.txt &
	pid=$!
	exec 7> in.fifo
	cat s.pos >&7		# the stream, but the pipe stays open
	# the loop only bounds the wait; no timing is measured
	for _ in $(seq 100); do
		[ "$(wc -l < out.txt)" -ge 3 ] && break
		sleep 0.1
	done
	n=$(wc -l < out.txt)
	exec 7>&-
	wait "$pid"
	[ "$n" -eq 3 ] || fail "$n of 3 lines shown while the input was open"
	[ "$(wc -l < out.txt)" -eq 3 ]
}

@test "a closed output pipe ends quietly" {
	for i in $(seq 2000); do echo "$START game=$i"; done | "$MKREC" > big.pos
	run bash -c 'posdump big.pos | head -n 1; echo "rc=${PIPESTATUS[0]}"'
	assert_line --index 0 --partial "$START"
	assert_line --index 1 "rc=0"
	[ "${#lines[@]}" -eq 2 ]
}

@test "invalid calls exit 2 with nothing on stdout" {
	while read -r args; do
		run --separate-stderr posdump $args
		[ "$status" -eq 2 ] || fail "posdump $args: status $status"
		[ -z "$output" ] || fail "posdump $args: stdout $output"
		[[ "$stderr" == *usage:* ]] || fail "posdump $args: $stderr"
	done <<-'EOF'
	-x
	--fields nosuchfield
	--fields fen,,ply
	--fields
	--json=1
	EOF
}

@test "a block length damaged past the end of the input: the next block is found" {
	for i in $(seq 40); do echo "startpos game=$i"; done |
		"$MKREC" -b 300 > m.pos
	# Block 2's length field says 1 MiB: before this was fixed, the
	# reader called it a truncation and lost every later block.
	off=$(grep -obUaP '\x89PFB' m.pos | sed -n 2p | cut -d: -f1)
	printf '\x00\x00\x10\x00' | dd of=m.pos bs=1 seek=$((off + 4)) \
		conv=notrunc 2>/dev/null
	run --separate-stderr posdump -c m.pos
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"block 2 at offset $off: payload length 1048576 runs past the end of the input; resuming"* ]]
	n=${output% *}
	[ "$n" -gt 30 ] && [ "$n" -lt 40 ]
}

@test "a damaged end block is reported; the records and the next stream are kept" {
	three > a.pos
	cp a.pos e.pos
	size=$(stat -c %s e.pos)
	printf '\x00' | dd of=e.pos bs=1 seek=$((size - 1)) conv=notrunc 2>/dev/null
	cat e.pos a.pos > ea.pos
	run --separate-stderr posdump -c ea.pos
	[ "$status" -eq 1 ]
	assert_output "6 ea.pos"
	[[ "$stderr" == *"end block checksum mismatch"* ]]
}

# Fail unless every line of file $2 is valid UTF-8 and, with $1 = json, a
# JSON value; the message names the first bad line.
utf8_lines() {
	python3 -c '
import json, sys
for n, line in enumerate(open(sys.argv[2], "rb"), 1):
    try:
        text = line.decode("utf-8")
        if sys.argv[1] == "json":
            json.loads(text)
    except ValueError as e:
        sys.exit("line %d: %s: %r" % (n, e, line))
' "$@"
}

@test "bytes that are not UTF-8 in a stream's strings: every line stays valid UTF-8 and JSON" {
	# A meta extension from some other writer: Latin-1, a cut euro
	# sign, an overlong "/", a surrogate, 0xff, NUL and a quote.
	meta=$(python3 -c '
import struct
s = [b"Caf\xe9 \xe2\x82\xac", b"a\xe2\x82", b"\xc0\xaf", b"\xed\xa0\x80",
     b"\xff\x00\"", b""]
p = struct.pack("<HHIIBBH", 0, 0, 0xffffffff, 0, 0, 0, 0)
print((p + b"".join(struct.pack("<H", len(x)) + x for x in s)).hex())')
	# An eval extension whose engine name ends in a Latin-1 byte.
	eval=$(python3 -c 'print((bytes(44) + bytes([5]) + b"Fish\xe9").hex())')
	"$MKREC" <<< "$START ext=1:$meta ext=2:$eval" > s.pos
	posdump -j s.pos > out.json
	posdump s.pos > out.txt
	utf8_lines json out.json
	utf8_lines text out.txt
	# Valid UTF-8 as it is; any other byte as the \u escape of its
	# Latin-1 character.
	want='"event":"Caf\u00e9 €","site":"a\u00e2\u0082","white":"\u00c0\u00af","black":"\u00ed\u00a0\u0080","date":"\u00ff\u0000\"","termination_tag":""'
	grep -qF -- "$want" out.json || fail "$(cat out.json)"
	grep -qF -- '"engine":"Fish\u00e9"' out.json
	grep -qF -- 'event="Caf\u00e9 €" site="a\u00e2\u0082"' out.txt
	grep -qF -- 'engine="Fish\u00e9"' out.txt
}

@test "pgn2pos tags in Latin-1 or longer than 255 bytes reach posdump as UTF-8 cut at a character boundary" {
	euros=$(printf '€%.0s' $(seq 200))
	eacute=$(printf 'é%.0s' $(seq 200))
	latin1=$(printf '\xe9%.0s' $(seq 200))
	{
		printf '[Event "a%s"]\n[Site "%s"]\n' "$euros" "$eacute"
		printf '[White "M\xfcller"]\n[Black "%s"]\n' "$latin1"
		printf '[Result "1-0"]\n[Termination "Normal \xe9"]\n\n'
		printf '1. e4 e5 1-0\n'
	} > t.pgn
	pgn2pos -f t.pgn 2>/dev/null | posdump -j --fields meta > out.json
	utf8_lines json out.json
	python3 -c '
import json, sys
m = json.loads(open("out.json", encoding="utf-8").readline())["exts"][0]
want = {"event": "a" + "€" * 84, "site": "é" * 127, "white": "Müller",
        "black": "é" * 127, "termination_tag": "Normal é"}
for k, v in want.items():
    if m[k] != v:
        sys.exit("%s: %r, not %r" % (k, m[k], v))
'
}

@test "uci-eval: a long engine id name is stored as UTF-8 cut at a character boundary" {
	FAKE="$BUILD_DIR/tests/tools/fake-engine"
	"$MKREC" <<< "$START" > in.pos
	# Cut at 255 bytes, these names end 2, 1, 0 and 3 bytes into a
	# character; the last holds Latin-1 bytes too.
	i=0
	for name in "Fake$(printf '€%.0s' $(seq 100))" \
	    "Fake1$(printf '€%.0s' $(seq 100))" \
	    "Fake12$(printf '€%.0s' $(seq 100))" \
	    "Fake$(printf '😀%.0s' $(seq 70))" \
	    "Fake $(printf '\xe9%.0s' $(seq 200))"; do
		i=$((i + 1))
		printf '%s' "$name" > name.$i
		FAKE_NAME="$name" uci-eval -d 1 -j 1 -e "$FAKE" in.pos \
		    -o out.$i.pos 2>/dev/null
		posdump -j --fields eval out.$i.pos > out.$i.json
		utf8_lines json out.$i.json
		python3 -c '
import json, sys
i = sys.argv[1]
got = json.loads(open("out.%s.json" % i, encoding="utf-8").readline())
got = got["exts"][0]["engine"]
raw = open("name." + i, "rb").read()
try:
    name = raw.decode("utf-8")
except ValueError:
    name = raw.decode("latin-1")
want = name.encode("utf-8")[:255].decode("utf-8", "ignore")
if got != want or len(got.encode("utf-8")) > 255:
    sys.exit("name %s: %r, not %r" % (i, got, want))
' "$i"
	done
}

@test "f32 parameters are shown as the shortest decimal that reads back the same" {
	# value: tanh, Q, param1 0.2f, param2 0.1f, lambda 1/3, target 0.5;
	# policy: zeman, param1 0.7f, param2 3e-5f, e2e4 with all 65535.
	value=01000000cdcc4c3ecdcccc3dabaaaa3e0000003f
	policy=010001003333333f$(python3 -c 'import struct; print(struct.pack("<f", 3e-5).hex())')0c07ffff
	"$MKREC" <<< "$START ext=6:$value ext=5:$policy" > s.pos
	run posdump --fields value,policy s.pos
	assert_success
	assert_output "value{method=tanh scale=Q param1=0.2 param2=0.1 lambda=0.33333334 target=0.5} policy{method=zeman param1=0.7 param2=3e-05 n=1 e2e4:1.0000}"
	run posdump -j --fields value,policy s.pos
	assert_success
	assert_output --partial '"param1":0.2,"param2":0.1,"lambda":0.33333334,"target":0.5}'
	assert_output --partial '"param1":0.7,"param2":3e-05,'
	# Each number reads back as the f32 that was stored.
	printf '%s\n' "$output" | python3 -c '
import json, struct, sys
x = json.loads(sys.stdin.readline())["exts"]
f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
got = [x[0][k] for k in ("param1", "param2", "lambda", "target")]
got += [x[1]["param1"], x[1]["param2"]]
want = [f32(v) for v in (0.2, 0.1, 1 / 3, 0.5, 0.7, 3e-5)]
if [f32(v) for v in got] != want:
    sys.exit("%r != %r" % (got, want))
'
	# Not finite, in text: a NaN with its sign bit set is "nan" too.
	"$MKREC" <<< "$START ext=6:010000000000c0ff0000807f000080ff0000003f" > n.pos
	run posdump --fields value n.pos
	assert_output "value{method=tanh scale=Q param1=nan param2=inf lambda=-inf target=0.5}"
	# A whole number in full: 50, not 5e+01; 1e30 as it reads back.
	"$MKREC" <<< "$START ext=6:01000000$(python3 -c 'import struct; print(struct.pack("<4f", 50, 1e30, -1, 16777216).hex())')" > w.pos
	run posdump --fields value w.pos
	assert_output "value{method=tanh scale=Q param1=50 param2=1e+30 lambda=-1 target=16777216}"
}

@test "--fields takes a list of any length, and names a bad field in it" {
	three > s.pos
	list=$(printf 'fen,ply,%.0s' $(seq 40))game
	[ "${#list}" -gt 256 ]
	run posdump --fields "$list" s.pos
	assert_success
	[ "$output" = "$(posdump --fields fen,ply,game s.pos)" ]
	run --separate-stderr posdump --fields "$list,nosuchfield" s.pos
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == *'unknown field "nosuchfield"'* ]]
}

@test "complexity and repair extensions are decoded, in text and JSON" {
	depth=0101070''00c000100''0c070000cdcc4c3c0000203fcdcc4c3dcdcccc3e
	nodes=020701000e0003000202000064000000000000''00a086010000000000''0c07cb06ffffffff0000003f000080be64000000cdcc0c3f
	cand=010102000000003f000080be0000000000000000
	panda=0202010000000000000000''00ddffffff9c7c0000
	"$MKREC" <<< "$START ext=7:$depth ext=7:$nodes ext=8:$cand ext=8:$panda ext=99:00" > s.pos
	run posdump --fields complexity,repair s.pos
	assert_success
	assert_output "complexity{mode=depth complexity=7 depth=12 first_depth=1 move=e2e4 p_first=0.0125 p_decide=0.625 low=0.05 high=0.4 policy=zeman} complexity{mode=nodes complexity=1 depth=14 shallow=nodes:100 shallow_depth=3 deep=nodes:100000 shallow_best=e2e4 deep_best=d2d4 differ loss=-1 q_shallow=0.5 q_deep=-0.25 fired=move min_loss=100 threshold=0.55} repair{mode=candidates candidate=yes q_shallow=0.5 q_deep=-0.25 q=wdl} repair{mode=panda class=maybe-yes original=-35 repaired=31900 rescored=yes}"
	run bash -c "posdump -j --fields complexity,repair s.pos | jq -c '.exts[]'"
	assert_success
	assert_line --index 0 '{"type":"complexity","mode":"depth","complexity":7,"depth":12,"first_depth":1,"move":"e2e4","p_first":0.0125,"p_decide":0.625,"low":0.05,"high":0.4,"policy":"zeman"}'
	assert_line --index 1 '{"type":"complexity","mode":"nodes","complexity":1,"depth":14,"shallow_limit":"nodes","shallow_limit_value":100,"shallow_depth":3,"deep_limit":"nodes","deep_limit_value":100000,"shallow_best":"e2e4","deep_best":"d2d4","moves_differ":true,"loss":-1,"q_shallow":0.5,"q_deep":-0.25,"fired":["move"],"min_loss":100,"threshold":0.55}'
	assert_line --index 2 '{"type":"repair","mode":"candidates","candidate":true,"q_shallow":0.5,"q_deep":-0.25,"q":"wdl"}'
	assert_line --index 3 '{"type":"repair","mode":"panda","class":"maybe-yes","original":-35,"repaired":31900,"rescored":true}'
	[ "${#lines[@]}" -eq 4 ]
	# --fields ext shows the types posdump does not know, not these.
	run posdump --fields ext s.pos
	assert_output "ext{type=99 len=1}"
}

@test "a merge extension is decoded, in text and JSON; a short one is malformed" {
	# count 5, wins 2, draws 0, losses 65538 (u32 little-endian)
	"$MKREC" <<< "$START ext=10:05000000020000000000000002000100 ext=10:050000" > s.pos
	run --separate-stderr posdump --fields merge s.pos
	assert_failure 1
	assert_output "merge{count=5 wins=2 draws=0 losses=65538} ext{type=10 len=3 malformed}"
	[[ "$stderr" == *"s.pos: record 1: malformed merge extension (3 bytes)"* ]]
	run bash -c "posdump -j --fields merge s.pos 2>/dev/null | jq -c '.exts[0]'"
	assert_output '{"type":"merge","count":5,"wins":2,"draws":0,"losses":65538}'
	# not an unknown type any more
	run posdump --fields ext s.pos
	assert_output ""
}

@test "a complexity or repair extension too short for its mode is malformed" {
	"$MKREC" <<< "$START ext=7:0100070000 ext=7:01000700000000 ext=8:0101" > s.pos
	run --separate-stderr posdump --fields complexity,repair s.pos
	assert_failure 1
	assert_output "ext{type=7 len=5 malformed} ext{type=7 len=7 malformed} ext{type=8 len=2 malformed}"
	[[ "$stderr" == *"s.pos: record 1: malformed complexity extension (5 bytes)"* ]]
	[[ "$stderr" == *"s.pos: record 1: malformed repair extension (2 bytes)"* ]]
}

@test "a record whose extension runs past its end (its block's checksum right) is named alone; a damaged record count is not believed" {
	three > a.pos
	# record 2's evaluation extension made 1000 bytes longer than its
	# record, the block's checksum made again: the records around it
	# are read
	/usr/bin/python3 - <<-'PY'
	import struct, xxhash
	d = bytearray(open("a.pos", "rb").read())
	xxh3 = struct.unpack_from("<H", d, 6)[0] & 1
	blk = 16
	plen = struct.unpack_from("<I", d, blk + 4)[0]
	pay = blk + 24
	r2 = pay + struct.unpack_from("<I", d, pay)[0]
	ext = r2 + 48
	struct.pack_into("<I", d, ext + 4, struct.unpack_from("<I", d, ext + 4)[0] + 1000)
	body = bytes(d[pay:pay + plen])
	h = xxhash.xxh3_64_intdigest(body) if xxh3 else xxhash.xxh64_intdigest(body)
	struct.pack_into("<Q", d, blk + 16, h)
	open("ext.pos", "wb").write(d)
	# the payload damaged and the record count too
	d = bytearray(open("a.pos", "rb").read())
	d[pay + 10] ^= 0x55
	struct.pack_into("<I", d, blk + 8, 0x01000003)
	open("count.pos", "wb").write(d)
	PY
	run --separate-stderr posdump --fields game,ply ext.pos
	[ "$status" -eq 1 ]
	[[ "$stderr" == "posdump: ext.pos: record 2 at offset "*": extension type 2 length "*" runs past the end of the record" ]] || fail "$stderr"
	assert_output "$(printf 'game=0000000000000001 ply=0\ngame=0000000000000002 ply=4')"
	run --separate-stderr posdump -c count.pos
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"count.pos: block 1 at offset 16: checksum mismatch (records from 1 lost, at most "?"; its record count, 16777219, is damaged)"* ]] || fail "$stderr"
}
