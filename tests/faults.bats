#!/usr/bin/env bats
# Fault injection for every tool: a full disk (/dev/full, a full tmpfs, a
# file size limit), a closed pipe downstream, SIGTERM and SIGKILL mid-run,
# and unreadable operands among good ones.  What every tool must do: name
# the file in its message, exit 1 for an I/O error (a closed pipe
# downstream ends quietly with status 0), go on with the next operand, and
# never leave an output file that reads as complete when it is not: a
# killed or failed run's -o file is either gone or a stream without its end
# block, which posdump -c reports as truncated (posflow(5)).
#
# Background tools read FIFOs held open by the test, so "mid-run" is a
# state the test waits for (records written, input pending), never a
# delay.  wait_until only bounds a stuck tool; no test passes or fails on
# how long anything took.

load helper

FAKE="$BUILD_DIR/tests/tools/fake-engine"
PGN="$TESTDATA/lichess_db_100k.pgn"	# 47 games, 2817 positions
SMALL="$TESTDATA/lichess_db_10k.pgn"	# 6 games, 262 positions
BINARY="pgn2pos uci-eval softtarget complexity repair-mark repair-panda pqr-sample"
ALL="pgn2pos uci-eval softtarget complexity repair-mark repair-panda pqr-sample posdump posdump-j posdump-c"

setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	pgn2pos -q "$PGN" -o pos.pos
	pgn2pos -q "$SMALL" -o small.pos
	# per-move scores, so that softtarget has policy work to do
	uci-eval -d 1 -m all -j 1 -e "$FAKE" pos.pos -o scored.pos 2>/dev/null
}

teardown() {
	local j

	exec 7>&-
	for j in $(jobs -p); do
		kill -KILL "$j" 2>/dev/null || true
	done
	unmount_fs
}

# cmd=(...): the tool $1 on an input whose output is far over a pipe's
# 64 KiB, without output options.
tool() {
	local F="$BATS_FILE_TMPDIR"

	case $1 in
	pgn2pos)	cmd=(pgn2pos "$PGN") ;;
	uci-eval)	cmd=(uci-eval -d 1 -j 1 -e "$FAKE" "$F/pos.pos") ;;
	softtarget)	cmd=(softtarget "$F/scored.pos") ;;
	complexity)	cmd=(complexity "$F/scored.pos") ;;
	pqr-sample)	cmd=(pqr-sample --per-position 3 "$F/pos.pos") ;;
	repair-mark)	cmd=(repair-mark "$F/scored.pos") ;;
	repair-panda)	cmd=(repair-mark --mode panda -j 1 -e "$FAKE" "$F/scored.pos") ;;
	posdump)	cmd=(posdump "$F/pos.pos") ;;
	posdump-j)	cmd=(posdump -j "$F/pos.pos") ;;
	posdump-c)	cmd=(posdump -c "$F/pos.pos" "$F/pos.pos") ;;
	*)		return 1 ;;
	esac
}

# Poll until "$@" succeeds: a bound for a tool that is stuck, not a timing
# check (a slow machine only polls longer).
wait_until() {
	local i

	for ((i = 0; i < 600; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# File $1 holds at least $2 complete records so far.
has_records() {
	local c

	c=$(posdump -c "$1" 2>/dev/null) || true
	c=${c%% *}
	[ -n "$c" ] && [ "$c" -ge "$2" ]
}

# Process $1 is blocked reading a pipe.
reading_pipe() {
	grep -q 'pipe_read\|pipe_wait' "/proc/$1/wchan" 2>/dev/null
}

# Text file $1 has at least $2 lines so far.
has_lines() {
	local c

	c=$(wc -l < "$1" 2>/dev/null) || return 1
	[ "$c" -ge "$2" ]
}

# File $1 reads as a stream cut short: posdump -c exits 1 naming the
# truncation.  Sets n to the records it still holds.
assert_truncated() {
	run --separate-stderr posdump -c "$1"
	[ "$status" -eq 1 ] ||
		fail "$1 reads as complete (posdump -c status $status): $output"
	[[ "$stderr" == *"posdump: $1: truncated"* ]] ||
		fail "$1: no truncation message: $stderr"
	n=${output%% *}
}

# No file $1, or one that reads as truncated: never a complete stream.
assert_gone_or_truncated() {
	[ ! -e "$1" ] || assert_truncated "$1"
}

# Run "$@" in the background reading the FIFO "in" ($pid), and hold the
# FIFO open on fd 7: the input never ends until the test closes fd 7.
start_on_fifo() {
	mkfifo in
	"$@" < in 2> err 3>&- &
	pid=$!
	exec 7> in
}

# Stop the tool started above with signal $1; st is its exit status.
stop_with() {
	kill -"$1" "$pid"
	st=0
	wait "$pid" || st=$?
	exec 7>&-
}

# An input that never ends: $1 over and over, until the reader goes away.
endless() {
	while cat "$1"; do :; done 2>/dev/null
}

# ---- a full disk ---------------------------------------------------------

@test "-o /dev/full and > /dev/full: exit 1, the output named, no success claimed" {
	for t in $ALL; do
		tool "$t"
		st=0
		"${cmd[@]}" -o /dev/full > out 2> err || st=$?
		[ "$st" -eq 1 ] || fail "$t -o /dev/full: status $st"
		grep -q "^${cmd[0]}: /dev/full: .*No space left on device" err ||
			fail "$t -o /dev/full: $(cat err)"
		st=0
		"${cmd[@]}" > /dev/full 2> err || st=$?
		[ "$st" -eq 1 ] || fail "$t > /dev/full: status $st"
		grep -q "^${cmd[0]}: stdout: .*No space left on device" err ||
			fail "$t > /dev/full: $(cat err)"
	done
	# pgn2pos's summary does not call the positions it made written
	tool pgn2pos
	"${cmd[@]}" -o /dev/full 2> err && fail "pgn2pos -o /dev/full: status 0"
	grep -q "positions made, the output cut short by the write error$" err ||
		fail "pgn2pos summary: $(cat err)"
	! grep -q "positions written" err || fail "pgn2pos summary: $(cat err)"
	# empty input: the stream header and end block alone must fail too
	: > empty.pgn
	pgn2pos empty.pgn > empty.pos 2>/dev/null
	for c in "pgn2pos empty.pgn" "uci-eval -d 1 -e $FAKE empty.pos" \
	    "softtarget empty.pos"; do
		st=0
		$c > /dev/full 2> err || st=$?
		[ "$st" -eq 1 ] || fail "$c > /dev/full: status $st"
		grep -q ": stdout: .*No space left on device" err ||
			fail "$c > /dev/full: $(cat err)"
	done
}

@test "disk full mid-run (a 16 KiB tmpfs): exit 1, the file named, and it reads as truncated" {
	small_fs 16k
	for t in $BINARY; do
		tool "$t"
		for out in mnt/out.pos mnt/out.pos.zst; do
			run --separate-stderr "${cmd[@]}" -o "$out"
			[ "$status" -eq 1 ] || fail "$t -o $out: status $status"
			[[ "$stderr" == *"${cmd[0]}: $out: write error: No space left on device"* ]] ||
				fail "$t -o $out: $stderr"
			assert_truncated "$out"
			rm -f "$out"
		done
	done
	tool posdump
	run --separate-stderr "${cmd[@]}" -o mnt/out.txt
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"posdump: mnt/out.txt: No space left on device"* ]]
}

@test "file size limit (EFBIG) mid-run: exit 1, the file named, and it reads as truncated" {
	for t in $BINARY; do
		tool "$t"
		for out in out.pos out.pos.zst; do
			run --separate-stderr bash -c \
			    'trap "" XFSZ; ulimit -f 16; exec "$@"' _ \
			    "${cmd[@]}" -o "$out"
			[ "$status" -eq 1 ] || fail "$t -o $out: status $status"
			[[ "$stderr" == *"${cmd[0]}: $out: write error: File too large"* ]] ||
				fail "$t -o $out: $stderr"
			assert_truncated "$out"
		done
	done
}

@test "softtarget on a disk already full: no empty file left to read as an empty stream" {
	small_fs 16k
	dd if=/dev/zero of=mnt/fill bs=4k 2>/dev/null || true
	for in in scored.pos small.pos; do
		run --separate-stderr softtarget "$BATS_FILE_TMPDIR/$in" -o mnt/out.pos
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"softtarget: mnt/out.pos: write error: No space left on device"* ]]
		assert_gone_or_truncated mnt/out.pos
	done
}

@test "pgn2pos and uci-eval on a disk already full: no empty file left to read as an empty stream" {
	small_fs 16k
	dd if=/dev/zero of=mnt/fill bs=4k 2>/dev/null || true
	for t in pgn2pos uci-eval; do
		tool "$t"
		run --separate-stderr "${cmd[@]}" -o mnt/out.pos
		[ "$status" -eq 1 ] || fail "$t: status $status"
		[[ "$stderr" == *"$t: mnt/out.pos: write error: No space left on device"* ]] ||
			fail "$t: $stderr"
		assert_gone_or_truncated mnt/out.pos
	done
}

# ---- a closed pipe downstream ----------------------------------------------

@test "closed pipe downstream (head -c 100, head -c 0, true): every tool ends quietly with status 0" {
	for t in $ALL; do
		tool "$t"
		for sink in "head -c 100" "head -c 0" true; do
			"${cmd[@]}" 2> err | $sink > /dev/null
			st=${PIPESTATUS[0]}
			[ "$st" -eq 0 ] || fail "$t | $sink: status $st: $(cat err)"
			[ ! -s err ] || fail "$t | $sink: said: $(cat err)"
		done
	done
}

@test "closed pipe at the end of the whole pipeline: every stage ends quietly with status 0" {
	mkfifo in
	endless "$PGN" > in 3>&- &
	pgn2pos < in 2> e1 | uci-eval -d 1 -j 1 -e "$FAKE" 2> e2 |
	    softtarget 2> e3 | head -c 100000 > /dev/null
	st=("${PIPESTATUS[@]}")
	[ "${st[*]}" = "0 0 0 0" ] || fail "statuses ${st[*]}: $(cat e1 e2 e3)"
	[ ! -s e1 ] && [ ! -s e2 ] && [ ! -s e3 ] || fail "said: $(cat e1 e2 e3)"
}

@test "closed pipe after an unreadable operand: uci-eval, softtarget, posdump keep status 1" {
	for t in uci-eval softtarget posdump; do
		tool "$t"
		# the unreadable operand first, then the big one into the pipe
		c=("${cmd[@]:0:${#cmd[@]}-1}" nonexistent "${cmd[@]: -1}")
		"${c[@]}" 2> err | head -c 100 > /dev/null
		st=${PIPESTATUS[0]}
		[ "$st" -eq 1 ] || fail "$t: status $st"
		grep -q "^$t: nonexistent: No such file or directory" err
	done
}

@test "closed pipe after an unreadable operand: pgn2pos keeps status 1" {
	pgn2pos nonexistent "$PGN" 2> err | head -c 100 > /dev/null
	st=${PIPESTATUS[0]}
	[ "$st" -eq 1 ] || fail "status $st"
	grep -q "^pgn2pos: nonexistent: No such file or directory" err
}

# ---- SIGTERM and SIGKILL ---------------------------------------------------

@test "pgn2pos killed (TERM, KILL) waiting for input: every record so far in the file, which reads as truncated" {
	for sig in TERM KILL; do
		rm -f in out.pos
		start_on_fifo pgn2pos -o out.pos
		cat "$SMALL" >&7
		wait_until has_records out.pos 262
		stop_with "$sig"
		[ "$st" -eq $((128 + $(kill -l "$sig"))) ] || fail "$sig: status $st"
		assert_truncated out.pos
		[ "$n" -eq 262 ] || fail "$sig: $n of 262 records kept"
	done
}

@test "softtarget killed (TERM, KILL) waiting for input: every record so far in the file, which reads as truncated" {
	for sig in TERM KILL; do
		rm -f in out.pos
		start_on_fifo softtarget -o out.pos
		cat "$BATS_FILE_TMPDIR/scored.pos" >&7
		wait_until has_records out.pos 2817
		stop_with "$sig"
		[ "$st" -eq $((128 + $(kill -l "$sig"))) ] || fail "$sig: status $st"
		assert_truncated out.pos
		[ "$n" -eq 2817 ] || fail "$sig: $n of 2817 records kept"
	done
}

@test "uci-eval killed (KILL) waiting for input: every record so far in the file, which reads as truncated" {
	start_on_fifo uci-eval -d 1 -j 2 -e "$FAKE" -o out.pos
	cat "$BATS_FILE_TMPDIR/pos.pos" >&7
	wait_until has_records out.pos 2817
	stop_with KILL
	[ "$st" -eq 137 ]
	assert_truncated out.pos
	[ "$n" -eq 2817 ]
}

@test "uci-eval SIGTERM mid-search: exit 1, the interruption named, finished records kept" {
	FAKE_GO_MS=20 start_on_fifo uci-eval -d 1 -j 1 -e "$FAKE" -o out.pos
	cat "$BATS_FILE_TMPDIR/pos.pos" >&7
	wait_until has_records out.pos 20
	stop_with TERM
	[ "$st" -eq 1 ]
	grep -q "^uci-eval: interrupted by signal 15: [1-9][0-9]* records read but not written" err
	n=$(posdump -c out.pos 2>/dev/null | cut -d' ' -f1)
	[ "$n" -ge 20 ] && [ "$n" -lt 2817 ]
}

@test "uci-eval SIGTERM mid-search: the partial -o file reads as truncated, not complete" {
	FAKE_GO_MS=20 start_on_fifo uci-eval -d 1 -j 1 -e "$FAKE" -o out.pos
	cat "$BATS_FILE_TMPDIR/pos.pos" >&7
	wait_until has_records out.pos 20
	stop_with TERM
	[ "$st" -eq 1 ]
	assert_truncated out.pos
	[ "$n" -ge 20 ] && [ "$n" -lt 2817 ]
}

@test "SIGKILL mid-run on an endless input: pgn2pos, uci-eval, softtarget files read as truncated (plain and zstd)" {
	mkfifo in
	for t in pgn2pos uci-eval softtarget; do
		case $t in
		pgn2pos)	src=$PGN; c=(pgn2pos) ;;
		uci-eval)	src=$BATS_FILE_TMPDIR/pos.pos
				c=(uci-eval -d 1 -j 2 -e "$FAKE") ;;
		softtarget)	src=$BATS_FILE_TMPDIR/scored.pos; c=(softtarget) ;;
		esac
		for out in out.pos out.pos.zst; do
			rm -f "$out"
			endless "$src" > in 3>&- &
			gen=$!
			"${c[@]}" -o "$out" < in 2> err 3>&- &
			pid=$!
			wait_until has_records "$out" 5000
			kill -KILL "$pid"
			st=0
			wait "$pid" || st=$?
			wait "$gen" || true
			[ "$st" -eq 137 ] || fail "$t: status $st"
			assert_truncated "$out"
			[ "$n" -ge 5000 ] || fail "$t -o $out: $n records kept"
		done
	done
}

@test "killed before its first block: a truncated stream is left, never a complete empty one" {
	# Each tool opens its output before it reads or starts an engine, so
	# once it waits for input (or its engine has started) the file is as
	# it will be when killed.  Where wchan is not shown, the bounded wait
	# runs out and the kill comes later: the same state.
	# pgn2pos: no game passes the filter, so no block is ever due
	start_on_fifo pgn2pos --min-elo 4000 -o out.pos
	cat "$SMALL" >&7
	wait_until reading_pipe "$pid" || true
	stop_with KILL
	assert_truncated out.pos
	[ "$n" -eq 0 ]
	# uci-eval: its engine is still starting
	rm -f in
	FAKE_SLOW_START=600000 FAKE_LOG=log start_on_fifo uci-eval -d 1 -j 1 \
	    -e "$FAKE" -o out2.pos
	cat "$BATS_FILE_TMPDIR/pos.pos" >&7
	wait_until grep -q '^# pid' log
	stop_with KILL
	assert_truncated out2.pos
	[ "$n" -eq 0 ]
	# softtarget: no input yet; zstd output too
	for out in out3.pos out3.pos.zst; do
		rm -f in
		start_on_fifo softtarget -o "$out"
		wait_until reading_pipe "$pid" || true
		stop_with TERM
		[ "$st" -eq 143 ]
		assert_truncated "$out"
		[ "$n" -eq 0 ]
	done
}

@test "posdump killed (TERM) waiting for input: the lines so far were shown, status the signal's" {
	start_on_fifo posdump -o out.txt
	cat "$BATS_FILE_TMPDIR/small.pos" >&7
	wait_until has_lines out.txt 262
	stop_with TERM
	[ "$st" -eq 143 ]
	[ "$(wc -l < out.txt)" -eq 262 ]
}

@test "uci-eval killed inside a pipeline: softtarget names the truncated input and exits 1; pgn2pos ends quietly" {
	mkfifo in p1 p2
	endless "$PGN" > in 3>&- &
	gen=$!
	pgn2pos < in > p1 2> e1 3>&- &
	ppid=$!
	uci-eval -d 1 -j 2 -e "$FAKE" < p1 > p2 2> e2 3>&- &
	upid=$!
	softtarget -o out.pos < p2 2> e3 3>&- &
	spid=$!
	wait_until has_records out.pos 1000
	kill -KILL "$upid"
	st=0; wait "$upid" || st=$?
	[ "$st" -eq 137 ]
	st=0; wait "$spid" || st=$?
	[ "$st" -eq 1 ] || fail "softtarget: status $st: $(cat e3)"
	grep -q "^softtarget: stdin: truncated" e3
	st=0; wait "$ppid" || st=$?
	[ "$st" -eq 0 ] || fail "pgn2pos: status $st: $(cat e1)"
	[ ! -s e1 ] || fail "pgn2pos said: $(cat e1)"
	wait "$gen" || true
}

# ---- unreadable operands -----------------------------------------------------

@test "unreadable operands among good ones (missing, a directory, a read error): named, exit 1, the rest processed" {
	# root reads any file: a directory and /proc/self/mem (EIO at offset
	# 0) fail for root too
	mkdir adir
	bad=(nonexistent adir /proc/self/mem)
	small=$BATS_FILE_TMPDIR/small.pos
	for t in pgn2pos uci-eval softtarget posdump-c; do
		case $t in
		pgn2pos)	c=(pgn2pos); good=$SMALL ;;
		uci-eval)	c=(uci-eval -d 1 -j 1 -e "$FAKE"); good=$small ;;
		softtarget)	c=(softtarget); good=$small ;;
		posdump-c)	c=(posdump -c); good=$small ;;
		esac
		st=0
		"${c[@]}" "$good" "${bad[@]}" "$good" > out 2> err || st=$?
		[ "$st" -eq 1 ] || fail "$t: status $st"
		grep -q "^${c[0]}: nonexistent: No such file or directory" err ||
			fail "$t: $(cat err)"
		# (pgn2pos reads a directory's files: it has none)
		why="Is a directory"
		[ "$t" != pgn2pos ] || why="no files in this directory"
		grep -q "^${c[0]}: adir: .*$why" err || fail "$t: $(cat err)"
		grep -q "^${c[0]}: /proc/self/mem: .*Input/output error" err ||
			fail "$t: $(cat err)"
		if [ "$t" = posdump-c ]; then
			grep -qx "524 total" out || fail "$t: $(cat out)"
			[ "$(grep -cx "262 $small" out)" -eq 2 ]
		else
			run posdump -c out
			assert_success
			assert_output "524 out"
		fi
	done
}

@test "unreadable standard input (-) among operands: named stdin, exit 1, the rest processed" {
	mkdir adir
	small=$BATS_FILE_TMPDIR/small.pos
	for t in pgn2pos uci-eval softtarget posdump-c; do
		case $t in
		pgn2pos)	c=(pgn2pos); good=$SMALL ;;
		uci-eval)	c=(uci-eval -d 1 -j 1 -e "$FAKE"); good=$small ;;
		softtarget)	c=(softtarget); good=$small ;;
		posdump-c)	c=(posdump -c); good=$small ;;
		esac
		st=0
		"${c[@]}" "$good" - "$good" < adir > out 2> err || st=$?
		[ "$st" -eq 1 ] || fail "$t: status $st"
		grep -q "^${c[0]}: stdin: .*Is a directory" err ||
			fail "$t: $(cat err)"
		if [ "$t" = posdump-c ]; then
			grep -qx "524 total" out || fail "$t: $(cat out)"
		else
			run posdump -c out
			assert_output "524 out"
		fi
	done
}

@test "-o naming an input (the same file by another name, or standard input): refused before anything is written, the input untouched, for every tool" {
	cp "$SMALL" g.pgn
	cp "$BATS_FILE_TMPDIR/small.pos" x.pos
	posexport -F plain x.pos -o x.plain 2>/dev/null
	cmds=(
		"pgn2pos g.pgn"
		"uci-eval -d 1 -j 1 -e $FAKE x.pos"
		"softtarget x.pos"
		"complexity x.pos"
		"repair-mark x.pos"
		"repair-mark --mode panda -j 1 -e $FAKE x.pos"
		"pqr-sample x.pos"
		"posfilter ply>0 x.pos"
		"posexport -F bin x.pos"
		"posimport -F plain x.plain"
		"posdump x.pos"
		"posstat x.pos"
		"posstat --html @ x.pos"
	)
	for c in "${cmds[@]}"; do
		read -r -a cmd <<< "$c"
		in=${cmd[${#cmd[@]} - 1]}
		cp "$in" orig
		ln -f "$in" link
		# the link as -o (or --html, where @ stands)
		if [[ "$c" == *@* ]]; then
			cmd=("${cmd[@]/@/link}")
			run --separate-stderr "${cmd[@]}"
		else
			run --separate-stderr "${cmd[@]}" -o link
		fi
		[ "$status" -eq 1 ] || fail "$c -o link: status $status"
		[ "$stderr" = "${cmd[0]}: link: is also an input (give the output another name)" ] ||
			fail "$c -o link: $stderr"
		[ -z "$output" ] || fail "$c -o link: output $output"
		cmp orig "$in" || fail "$c -o link: the input changed"
		# the input as standard input, the output its name
		[[ "$c" == *@* ]] && continue
		unset 'cmd[${#cmd[@]}-1]'
		run --separate-stderr "${cmd[@]}" -o "$in" < "$in"
		[ "$status" -eq 1 ] || fail "$c -o $in < $in: status $status"
		[[ "$stderr" == *"$in: is also an input"* ]] || fail "$c < $in: $stderr"
		cmp orig "$in" || fail "$c < $in: the input changed"
	done
	# a name that is not there yet, given as both: refused, not made
	run softtarget -o new.pos new.pos
	assert_failure 1
	assert_output "softtarget: new.pos: is also an input (give the output another name)"
	[ ! -e new.pos ]
	# the same, by another path or through a link to nothing
	run softtarget -o ./new.pos new.pos
	assert_failure 1
	[ ! -e new.pos ]
	ln -s new2.pos dl.pos
	run softtarget -o new2.pos dl.pos
	assert_failure 1
	[ ! -e new2.pos ]
	# files an option reads, or writes beside -o
	cp x.pos orig
	run repair-mark --book x.pos -o /dev/null x.pos
	assert_failure 1
	assert_output "repair-mark: --book x.pos: is also an input (give the output another name)"
	cmp orig x.pos
	uci-eval -d 1 -j 1 -e "$FAKE" --cache c.cache x.pos -o /dev/null 2>/dev/null
	cp c.cache c.orig
	run uci-eval -d 1 -j 1 -e "$FAKE" --cache c.cache x.pos -o c.cache
	assert_failure 1
	assert_output "uci-eval: c.cache: is also an input (give the output another name)"
	cmp c.orig c.cache
	printf '2-32 1\n' > curve.txt
	cp curve.txt c.txt
	run posfilter --piece-curve curve.txt -o curve.txt '' x.pos
	assert_failure 1
	cmp c.txt curve.txt
	run posstat -o r.txt --html r.txt x.pos
	assert_failure 2
	assert_output "posstat: --html r.txt: the same file as the text report (-o)"
	run repair-mark --book b.txt -o ./b.txt x.pos
	assert_failure 2
	assert_output "repair-mark: -o ./b.txt: the same file as --book b.txt"
	# standard input is no file named "-"; a link is written through
	run softtarget -o ./- - < x.pos
	assert_success
	cmp <(posdump ./-) <(posdump x.pos)
	echo old > target.txt
	ln -s target.txt report.lnk
	run posstat -o report.lnk x.pos
	assert_success
	[ -L report.lnk ] && grep -q "all records" target.txt
	# shard: a shard it would replace, as an operand or standard input
	shard -o S x.pos 2>/dev/null
	cp S/train-00000.pos.zst t.orig
	for how in operand stdin; do
		if [ $how = operand ]; then
			run shard -f -o S S/train-00000.pos.zst
		else
			run shard -f -o S - < S/train-00000.pos.zst
		fi
		assert_failure 1
		assert_output "shard: S/train-00000.pos.zst: an input is a file this run would replace"
		cmp t.orig S/train-00000.pos.zst
	done
	# another file, and a pipe, are written as ever
	run softtarget -o other.pos x.pos
	assert_success
	softtarget x.pos < x.pos > /dev/null
}
