#!/usr/bin/env bats
# scripts/posflow.mk, the dataset build: every configured stage per chunk,
# the shards equal to the same pipeline run by hand; make -j2 equals -j1; a
# build killed with SIGKILL at random points and run again gives the same
# shards as an uninterrupted one, and never takes a half-written file for
# a finished one; other settings into the same OUT make again the stages
# they touch, and only those (make -n only names them).

load helper

MK="$TOP/scripts/posflow.mk"
GAMES="$TESTDATA/lichess_db_100k.pgn"

build() {
	make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES="$GAMES" CHUNK=6 DEPTH=3 \
	    FILTER='ply >= 2 && !check' SAMPLE='--keep 0.8' PQR=1 \
	    SHARDS='--split train=0.75,val=0.25 --records-per-shard 500' "$@"
}

setup_file() {
	command -v "$(stockfish_path)" >/dev/null || skip "no stockfish"
	export PATH="$(dirname "$(stockfish_path)"):$PATH"
	cd "$BATS_FILE_TMPDIR"
	build OUT=ref -j2 > ref.log 2>&1
}

@test "every stage per chunk; the same records and shards as the pipeline run by hand on the whole input" {
	cd "$BATS_FILE_TMPDIR"
	[ -f ref/shards/manifest.json ]
	games=$(grep -c '^\[Event ' "$GAMES")
	chunks=$(( (games + 5) / 6 ))
	for d in chunks filtered evaluated targets pqr; do
		[ "$(ls ref/$d/chunk-*.pos.zst | wc -l)" -eq "$chunks" ] || fail "$d"
	done
	! find ref -name '*.part' | grep -q .
	# the chunks are pgn2pos's records of the whole input
	cmp <(pgn2pos "$GAMES" 2>/dev/null | posdump --json) <(cat ref/chunks/chunk-*.pos.zst | posdump --json)
	# by hand: the same tools over the whole input, unchunked (the draws
	# of posfilter and pqr-sample are per record, the evaluations per
	# game), then shard
	mkdir -p byhand
	pgn2pos "$GAMES" 2>/dev/null | posfilter --seed 1 --keep 0.8 'ply >= 2 && !check' 2>/dev/null |
	    uci-eval -d 3 -m 1 -O Hash=16 -j 2 --reproducible 2>/dev/null | softtarget 2>/dev/null |
	    pqr-sample --per-position 1 --seed 1 -o byhand/whole.pos 2>/dev/null
	cmp <(posdump --json byhand/whole.pos) <(cat ref/pqr/chunk-*.pos.zst | posdump --json)
	shard --seed 1 --split train=0.75,val=0.25 --records-per-shard 500 -o byhand/shards byhand/whole.pos 2>/dev/null
	cmp <(shards ref/shards) <(shards byhand/shards)
	[ "$(shards ref/shards | wc -l)" -ge 3 ]
	# nothing left to do: a second make runs no stage
	run build OUT=ref
	assert_success
	assert_output ""
}

@test "make -j1 gives the shards of make -j2" {
	cd "$BATS_FILE_TMPDIR"
	build OUT=j1 -j1 > /dev/null 2>&1
	cmp <(shards ref/shards) <(shards j1/shards)
	cmp ref/shards/.settings j1/shards/.settings
}

@test "killed with SIGKILL at random points and run again: the same shards" {
	cd "$BATS_FILE_TMPDIR"
	rm -rf k
	for i in 1 2 3 4; do
		# a random point in the first seconds of the build (or of what
		# is left of it)
		ms=$(( (RANDOM % 2500) + 100 ))
		echo "kill $i after $ms ms" >&3
		setsid bash -c "cd '$BATS_FILE_TMPDIR' && $(declare -f build); MK='$MK' BUILD_DIR='$BUILD_DIR' GAMES='$GAMES' build OUT=k -j2" \
		    > /dev/null 2>&1 &
		pid=$!
		sleep "$(awk -v m="$ms" 'BEGIN { print m / 1000 }')"
		kill -KILL -- "-$pid" 2>/dev/null || true
		wait "$pid" || true
		# whatever is there under a final name is complete
		for f in $(find k -name 'chunk-*.pos.zst' ! -path '*/cache/*'); do
			posdump -c "$f" > /dev/null 2>&1 || fail "$f is not a complete stream"
		done
	done
	build OUT=k -j2 > /dev/null 2>&1
	cmp <(shards ref/shards) <(shards k/shards)
	! find k -name 'chunk-*.pos.zst.part' -newer k/shards/manifest.json | grep -q .
}

@test "other settings into the same OUT make again the stages they touch, and only those" {
	cd "$BATS_FILE_TMPDIR"
	rm -rf re
	cp -a ref re
	mtimes() { stat -c '%n %Y.%y' re/"$1"/chunk-*.pos.zst; }
	mtimes chunks > chunks.0; mtimes evaluated > evaluated.0; mtimes pqr > pqr.0
	sleep 1
	# another shard setting: only the shards
	run build OUT=re SHARDS='--split train=0.5,val=0.5 --records-per-shard 500'
	assert_success
	assert_output --partial "posflow.mk: shards: the settings changed"
	refute_output --partial "evaluated: the settings changed"
	cmp evaluated.0 <(mtimes evaluated)
	cmp pqr.0 <(mtimes pqr)
	[ "$(jq -r .command re/shards/manifest.json)" != "$(jq -r .command ref/shards/manifest.json)" ]
	# another depth: the evaluations and everything after them, not the
	# chunks; back to the first settings, the shards of the first build
	run build OUT=re DEPTH=2
	assert_success
	assert_output --partial "posflow.mk: evaluated: the settings changed"
	refute_output --partial "chunks: the settings changed"
	cmp chunks.0 <(mtimes chunks)
	! cmp -s evaluated.0 <(mtimes evaluated)
	run build OUT=re
	assert_success
	cmp <(shards ref/shards) <(shards re/shards)
	# without GAMES: a usage message
	run make -s -f "$MK" BIN="$BUILD_DIR/bin" OUT=x
	assert_failure
	assert_output --partial "give GAMES="
	# but make clean needs none
	cp -a re re-clean
	run make -s -f "$MK" OUT=re-clean clean
	assert_success
	[ ! -e re-clean ]
}

@test "make -n with other settings names the stages once and writes or removes nothing" {
	cd "$BATS_FILE_TMPDIR"
	rm -rf dry
	cp -a ref dry
	find dry -type f -printf '%p %s %T@\n' | sort > dry.0
	run build OUT=dry DEPTH=2 -n
	assert_success
	assert_output --partial "posflow.mk: evaluated: the settings changed; its files would be made again (make -n: nothing removed)"
	refute_output --partial "chunks: the settings changed"
	# each once (make -n runs the second make too)
	[ "$(grep -c 'evaluated: the settings changed' <<< "$output")" -eq 1 ]
	find dry -type f -printf '%p %s %T@\n' | sort | cmp dry.0 -
	# a real run afterwards still sees the change
	run build OUT=dry DEPTH=2
	assert_success
	assert_output --partial "posflow.mk: evaluated: the settings changed; its files are made again"
}

@test "settings that cannot be recorded (a full disk) stop the build: the files of the old settings are not taken for up to date" {
	cd "$BATS_FILE_TMPDIR"
	rm -rf full
	cp -a ref full
	# no file can be written (ulimit -f 0, as a full disk): the new
	# depth's settings cannot be recorded, nor the old files removed
	full() { (ulimit -f 0 && build "$@"); }
	run full OUT=full DEPTH=2
	assert_failure
	assert_output --partial "posflow.mk: full/evaluated: cannot record the stage's settings"
	refute_output --partial "Nothing to be done"
	grep -qx 'DEPTH=3' full/evaluated/.settings
	cmp <(shards ref/shards) <(shards full/shards)
	# the same settings need no writing: a finished build is still
	# up to date where nothing can be written
	run full OUT=full
	assert_success
	assert_output ""
}

@test "stages configured off are skipped: positions straight to shards" {
	cd "$BATS_FILE_TMPDIR"
	run make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES="$GAMES" CHUNK=20 OUT=plain
	assert_success
	[ ! -d plain/evaluated ] && [ ! -d plain/filtered ]
	pgn2pos "$GAMES" -o all.pos 2>/dev/null
	n=$(posdump -c all.pos | cut -d' ' -f1)
	[ "$(jq .records_in plain/shards/manifest.json)" -eq "$n" ]
}

@test "a GAMES file changed under its name (games added, a download mended; a file in a GAMES directory, not one whose name begins with a dot) is split again, and every stage after it made again" {
	cd "$BATS_FILE_TMPDIR"
	rm -rf grow
	cp "$TESTDATA/lichess_db_10k.pgn" mine.pgn
	plain() { make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES=mine.pgn CHUNK=20 OUT=grow "$@"; }
	run plain
	assert_success
	[ "$(jq .records_in grow/shards/manifest.json)" -eq "$(pgn2pos mine.pgn 2>/dev/null | posdump -c | cut -d' ' -f1)" ]
	run plain
	assert_success
	refute_output --partial "the settings changed"
	# a cluster node that cannot see the games changes nothing
	mv mine.pgn away.pgn
	run plain list-chunks
	assert_success
	refute_output --partial "the settings changed"
	[ -f grow/chunks/.done ] && [ -f grow/chunks/chunk-000000.pos.zst ]
	mv away.pgn mine.pgn
	cat "$GAMES" >> mine.pgn
	run plain
	assert_success
	assert_output --partial "posflow.mk: chunks: the settings changed"
	[ "$(jq .records_in grow/shards/manifest.json)" -eq "$(pgn2pos mine.pgn 2>/dev/null | posdump -c | cut -d' ' -f1)" ]
	# a file grown in a GAMES directory
	rm -rf gd
	mkdir gd
	cp "$TESTDATA/lichess_db_10k.pgn" gd/a.pgn
	run make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES=gd CHUNK=20 OUT=grow-d
	assert_success
	cat "$GAMES" >> gd/a.pgn
	run make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES=gd CHUNK=20 OUT=grow-d
	assert_success
	assert_output --partial "posflow.mk: chunks: the settings changed"
	[ "$(jq .records_in grow-d/shards/manifest.json)" -eq "$(pgn2pos gd 2>/dev/null | posdump -c | cut -d' ' -f1)" ]
	# names with a dot first, which pgn2pos leaves out (an rsync
	# temporary file, .git): nothing to split again
	mkdir -p gd/.git
	cp gd/a.pgn gd/.a.pgn.XyZ12
	cp gd/a.pgn gd/.git/b.pgn
	run make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES=gd CHUNK=20 OUT=grow-d
	assert_success
	refute_output --partial "the settings changed"
	# a file cut short, then mended: the split of the whole
	gzip -c mine.pgn > full.gz
	head -c $(( $(stat -c %s full.gz) / 2 )) full.gz > g.pgn.gz
	run make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES=g.pgn.gz CHUNK=20 OUT=cut
	assert_failure
	cp full.gz g.pgn.gz
	run make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES=g.pgn.gz CHUNK=20 OUT=cut
	assert_success
	cmp <(pgn2pos mine.pgn 2>/dev/null | posdump --json) <(cat cut/chunks/chunk-* | posdump --json)
}

@test "a wildcard in GAMES stands for the files it matches: one grown, or one more matched, is split again" {
	cd "$BATS_FILE_TMPDIR"
	rm -rf gw gw-out
	mkdir gw
	cp "$TESTDATA/lichess_db_10k.pgn" gw/a.pgn
	cp "$TESTDATA/lichess_db_10k.pgn" gw/b.pgn
	count() { cat gw/*.pgn | pgn2pos 2>/dev/null | posdump -c | cut -d' ' -f1; }
	glob() { make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES='gw/*.pgn' CHUNK=20 OUT=gw-out "$@"; }
	run glob
	assert_success
	[ "$(jq .records_in gw-out/shards/manifest.json)" -eq "$(count)" ]
	run glob
	assert_success
	refute_output --partial "the settings changed"
	# a file grown
	cat "$GAMES" >> gw/b.pgn
	run glob
	assert_success
	assert_output --partial "posflow.mk: chunks: the settings changed"
	[ "$(jq .records_in gw-out/shards/manifest.json)" -eq "$(count)" ]
	# one more file matched
	cp "$TESTDATA/lichess_db_10k.pgn" gw/c.pgn
	run glob
	assert_success
	assert_output --partial "posflow.mk: chunks: the settings changed"
	[ "$(jq .records_in gw-out/shards/manifest.json)" -eq "$(count)" ]
	# where the games cannot be seen, nothing changes
	mv gw gw-away
	run glob list-chunks
	assert_success
	refute_output --partial "the settings changed"
	mv gw-away gw
}

@test "GAMES names with characters special to the shell reach pgn2pos as they are" {
	cd "$BATS_FILE_TMPDIR"
	rm -rf odd odd-out
	mkdir odd
	cp "$TESTDATA/lichess_db_10k.pgn" "odd/games(1);it's.pgn"
	cp "$TESTDATA/lichess_db_10k.pgn" 'odd/$HOME&`x`.pgn'
	run make -s -f "$MK" BIN="$BUILD_DIR/bin" CHUNK=3 OUT=odd-out \
	    GAMES="odd/games(1);it's.pgn odd/\$\$HOME&\`x\`.pgn"
	assert_success
	cmp <(pgn2pos "odd/games(1);it's.pgn" 'odd/$HOME&`x`.pgn' 2>/dev/null | posdump --json) \
	    <(cat odd-out/chunks/chunk-*.pos.zst | posdump --json)
	[ "$(jq .records_in odd-out/shards/manifest.json)" -eq "$(cat odd/* | pgn2pos 2>/dev/null | posdump -c | cut -d' ' -f1)" ]
}

@test "SHALLOW, COMPLEXITY and REPAIR: two evaluations, then complexity and Panda's repair" {
	cd "$BATS_FILE_TMPDIR"
	run make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES="$TESTDATA/lichess_db_10k.pgn" \
	    CHUNK=3 OUT=deep SHALLOW=1 DEPTH=4 MULTIPV=all KEEP_DEPTHS=yes \
	    COMPLEXITY=yes REPAIR=panda -j2
	assert_success
	# every position has a depth-1 and a depth-4 evaluation, a complexity
	# (but the terminal ones) and a repair extension
	cat deep/repaired/chunk-*.pos.zst | posdump --json > all.json
	n=$(wc -l < all.json)
	[ "$n" -eq "$(cat deep/chunks/chunk-*.pos.zst | posdump -c | cut -d' ' -f1)" ]
	[ "$(jq -c '[.exts[] | select(.type == "eval") | .depth] | select(index(1) != null and index(4) != null)' all.json | wc -l)" -ge $((n - 5)) ]
	[ "$(jq -c 'select(any(.exts[]; .type == "complexity"))' all.json | wc -l)" -ge $((n - 5)) ]
	[ "$(jq -c 'select(any(.exts[]; .type == "repair" and .mode == "panda"))' all.json | wc -l)" -eq "$n" ]
	# a stage that pipes two tools fails when the first does
	run make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES="$TESTDATA/lichess_db_10k.pgn" \
	    CHUNK=3 OUT=bad SHALLOW=1 DEPTH=4 ENGINE=/nonexistent
	assert_failure
	[ ! -f bad/evaluated/chunk-000000.pos.zst ]
}

@test "settings that cannot work are refused before anything runs; shards wait for a complete split" {
	cd "$BATS_FILE_TMPDIR"
	mk() { make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES="$TESTDATA/lichess_db_10k.pgn" "$@"; }
	mkdir -p 'x y' keep && echo precious > keep/file
	while IFS='|' read -r setting message; do
		run mk OUT=bs $setting
		assert_failure
		assert_output --partial "posflow.mk: $message"
		[ ! -e bs ] || fail "$setting: wrote bs"
	done <<-'EOF'
	KEEP_DEPTHS=maybe|KEEP_DEPTHS='maybe': yes or no
	DEPTH=2 NODES=1000|DEPTH='2' NODES='1000': give one search limit, DEPTH or NODES
	DEPTH=3 MULTIPV=all TAIL=1|TAIL scores the moves beyond MULTIPV's count: give MULTIPV=N, not all
	REPAIR=fix DEPTH=2|REPAIR='fix': candidates or panda
	REPAIR=panda|COMPLEXITY and REPAIR need an evaluation: give DEPTH or NODES
	COMPLEXITY=yes DEPTH=2|COMPLEXITY needs MULTIPV=all KEEP_DEPTHS=yes
	COMPLEXITY=--mode=nodes DEPTH=2|COMPLEXITY in nodes mode compares two evaluations: give SHALLOW
	REPAIR=candidates DEPTH=2|REPAIR=candidates compares two evaluations: give SHALLOW
	EOF
	# a name with a blank: refused, nothing written in either word's place
	run mk OUT='keep x y'
	assert_failure
	assert_output --partial "OUT='keep x y': give one directory name, without blanks"
	run mk OUT='keep x y' clean
	assert_failure
	[ "$(cat keep/file)" = precious ]
	# a character special to the shell: refused, nothing run after it
	rm -rf x
	for out in 'keep;x' 'keep&&x' 'keep`date>x`' 'x(1)'; do
		run mk OUT="$out"
		assert_failure
		assert_output --partial "OUT='$out': give a directory name without any of"
		run mk OUT="$out" clean
		assert_failure
		[ ! -e x ] && [ ! -e 'x(1)' ] || fail "OUT=$out: made $(ls -d x*)"
		[ "$(cat keep/file)" = precious ]
	done
	# the shards of a split cut short (its chunks partly there, no .done)
	mk OUT=part CHUNK=2 chunks
	rm part/chunks/.done part/chunks/chunk-000002.pos.zst
	run mk OUT=part CHUNK=2 shards
	assert_failure
	assert_output --partial "the split into part/chunks is not complete"
	[ ! -e part/shards/manifest.json ]
	# make (all) finishes the split, then the shards hold every game
	run mk OUT=part CHUNK=2
	assert_success
	[ "$(jq .records_in part/shards/manifest.json)" -eq "$(pgn2pos "$TESTDATA/lichess_db_10k.pgn" 2>/dev/null | posdump -c | cut -d' ' -f1)" ]
}

@test "SEED touches posfilter's stage only when SAMPLE draws with it" {
	cd "$BATS_FILE_TMPDIR"
	mk() { make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES="$TESTDATA/lichess_db_10k.pgn" CHUNK=2 OUT=fs FILTER='ply >= 2' "$@"; }
	run mk
	assert_success
	run mk SEED=5 -n
	assert_success
	assert_output --partial "posflow.mk: shards: the settings changed"
	refute_output --partial "posflow.mk: filtered: the settings changed"
	run mk SEED=5 SAMPLE='--keep 0.5' -n
	assert_output --partial "posflow.mk: filtered: the settings changed"
}

@test "SEED reaches Panda's maybe draws (REPAIR=panda), and makes the repair again" {
	cd "$BATS_FILE_TMPDIR"
	mk() { make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES="$TESTDATA/lichess_db_10k.pgn" CHUNK=3 OUT=ps DEPTH=2 REPAIR=panda "$@"; }
	run mk SEED=7
	assert_success
	c=ps/targets/chunk-000000.pos.zst
	# (the seed changes Panda's records here: else this would show nothing)
	! cmp -s <(repair-mark --mode panda --seed 7 "$c" 2>/dev/null | posdump --json) \
	    <(repair-mark --mode panda --seed 1 "$c" 2>/dev/null | posdump --json)
	cmp <(repair-mark --mode panda --seed 7 "$c" 2>/dev/null | posdump --json) \
	    <(posdump --json ps/repaired/chunk-000000.pos.zst)
	run mk SEED=1
	assert_success
	assert_output --partial "posflow.mk: repaired: the settings changed"
	refute_output --partial "posflow.mk: evaluated: the settings changed"
	cmp <(repair-mark --mode panda --seed 1 "$c" 2>/dev/null | posdump --json) \
	    <(posdump --json ps/repaired/chunk-000000.pos.zst)
}

@test "HASH and UCI reach Panda's searches (REPAIR=panda) as they reach uci-eval's, and are among the repair's settings" {
	cd "$BATS_FILE_TMPDIR"
	# the tools, repair-mark through a wrapper that notes its arguments
	mkdir -p wbin
	for t in "$BUILD_DIR"/bin/*; do ln -sf "$t" wbin/; done
	rm wbin/repair-mark
	printf '#!/bin/sh\necho "$*" >> %s/rm-args\nexec %s "$@"\n' "$PWD" \
	    "$BUILD_DIR/bin/repair-mark" > wbin/repair-mark
	chmod +x wbin/repair-mark
	mk() { make -s -f "$MK" BIN="$PWD/wbin" GAMES="$TESTDATA/lichess_db_10k.pgn" CHUNK=3 OUT=ph DEPTH=1 REPAIR=panda "$@"; }
	run mk HASH=8 UCI='-O Threads=1'
	assert_success
	run cat rm-args
	assert_output --partial "--mode panda --seed 1 -O Hash=8 -O Threads=1 "
	grep -qx 'HASH=8' ph/repaired/.settings
	grep -qx 'UCI=-O Threads=1' ph/repaired/.settings
}

@test "without ENGINE, another POSFLOW_ENGINE makes the evaluations again" {
	cd "$BATS_FILE_TMPDIR"
	pe() { POSFLOW_ENGINE=$1 make -s -f "$MK" BIN="$BUILD_DIR/bin" \
	    GAMES="$TESTDATA/lichess_db_10k.pgn" CHUNK=3 OUT=pe DEPTH=2; }
	run pe "$(stockfish_path)"
	assert_success
	run pe "$(stockfish_path)"
	assert_success
	refute_output --partial "the settings changed"
	# an engine that cannot evaluate: the evaluations are made again with
	# it, and fail
	run pe /bin/false
	assert_failure
	assert_output --partial "posflow.mk: evaluated: the settings changed"
	[ ! -e pe/shards/manifest.json ]
}

@test "an engine upgraded in place makes the searches again; a build recorded before the engine's file was a setting is kept; a cluster job removes nothing" {
	cd "$BATS_FILE_TMPDIR"
	printf '#!/bin/sh\nexec %s "$@"\n' "$(stockfish_path)" > sf
	chmod +x sf
	up() { make -s -f "$MK" BIN="$BUILD_DIR/bin" ENGINE="$PWD/sf" \
	    GAMES="$TESTDATA/lichess_db_10k.pgn" CHUNK=3 OUT=up DEPTH=2 \
	    TARGETS='--value tanh' "$@"; }
	run up
	assert_success
	grep -q "^ENGINE_FILE=$PWD/sf@" up/evaluated/.settings
	run up
	assert_success
	refute_output --partial "the settings changed"
	# the same name, another engine (apt upgrade): searched again
	printf '#!/bin/sh\n# 2\nexec %s "$@"\n' "$(stockfish_path)" > sf.new
	chmod +x sf.new
	mv sf.new sf
	run up
	assert_success
	assert_output --partial "posflow.mk: evaluated: the settings changed"
	assert_output --partial "uci-eval: "
	# a cluster job (one) on a node whose copy differs takes the
	# recorded engine file: nothing removed
	touch -d '2001-01-01' sf
	run up one C=chunk-000000.pos.zst
	assert_success
	refute_output --partial "the settings changed"
	[ -e up/targets/chunk-000001.pos.zst ]
	touch sf
	run up
	assert_output --partial "posflow.mk: evaluated: the settings changed"
	# settings recorded before the engine's file was among them: the
	# line is added, the files kept
	for s in up/*/.settings; do
		grep -v '^ENGINE_FILE=' "$s" > s.tmp && mv s.tmp "$s"
	done
	run up
	assert_success
	refute_output --partial "the settings changed"
	refute_output --partial "uci-eval: "
	grep -q "^ENGINE_FILE=$PWD/sf@" up/evaluated/.settings
	grep -q "^ENGINE_FILE=$PWD/sf@" up/targets/.settings
}

@test "a network UCI names (-O EvalFile=) changed in place makes the searches again; a log the engine writes does not" {
	cd "$BATS_FILE_TMPDIR"
	printf 'net 1' > my.nnue
	nn() { make -s -f "$MK" BIN="$BUILD_DIR/bin" \
	    ENGINE="$BUILD_DIR/tests/tools/fake-engine" \
	    UCI="-O EvalFile=my.nnue -O 'Debug Log File=dbg.log'" \
	    GAMES="$TESTDATA/lichess_db_10k.pgn" CHUNK=3 OUT=nn DEPTH=2 "$@"; }
	run nn
	assert_success
	grep -q "^ENGINE_FILE=.* my.nnue@5@" nn/evaluated/.settings
	printf 'x' > dbg.log
	run nn
	assert_success
	refute_output --partial "the settings changed"
	printf 'net 2' > my.nnue
	touch -d '2001-01-01' my.nnue
	run nn
	assert_success
	assert_output --partial "posflow.mk: evaluated: the settings changed"
	assert_output --partial "uci-eval: "
}

@test "posflow.mk at a path with blanks: the second makes (all, stages, one) find it" {
	cd "$BATS_FILE_TMPDIR"
	rm -rf "my posflow" bl
	mkdir "my posflow"
	cp "$MK" "my posflow/posflow.mk"
	mkb() { make -s -f "$BATS_FILE_TMPDIR/my posflow/posflow.mk" BIN="$BUILD_DIR/bin" \
	    GAMES="$TESTDATA/lichess_db_10k.pgn" CHUNK=2 FILTER='ply >= 2' OUT=bl "$@"; }
	run mkb chunks
	assert_success
	run mkb one C=chunk-000001.pos.zst
	assert_success
	[ -f bl/filtered/chunk-000001.pos.zst ]
	run mkb stages
	assert_success
	run mkb
	assert_success
	[ -f bl/shards/manifest.json ]
	# and from its own directory
	(cd "my posflow" && make -s -f posflow.mk BIN="$BUILD_DIR/bin" \
	    GAMES="$TESTDATA/lichess_db_10k.pgn" CHUNK=2 OUT=../bl2) 2>/dev/null
	[ -f bl2/shards/manifest.json ]
}

@test "GAMES of thousands of files, a directory or a wildcard: no command line too long; a file changed is split again" {
	cd "$BATS_FILE_TMPDIR"
	rm -rf many many-d many-g
	mkdir many
	awk '/^\[Event /{n++} n==1' "$TESTDATA/lichess_db_10k.pgn" > one-game.pgn
	for ((i = 0; i < 3000; i++)); do
		cp one-game.pgn "many/round-$(printf %05d "$i")-of-a-long-event-name.pgn"
	done
	n=$(pgn2pos one-game.pgn 2>/dev/null | posdump -c | cut -d' ' -f1)
	for g in many 'many/*.pgn'; do
		o=many-d
		[ "$g" = many ] || o=many-g
		run make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES="$g" CHUNK=1000 OUT=$o
		assert_success
		[ "$(jq .records_in $o/shards/manifest.json)" -eq $((3000 * n)) ]
		run make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES="$g" CHUNK=1000 OUT=$o
		assert_success
		refute_output --partial "the settings changed"
	done
	touch -d '1 hour ago' many/round-00007-of-a-long-event-name.pgn
	run make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES=many CHUNK=1000 OUT=many-d
	assert_success
	assert_output --partial "posflow.mk: chunks: the settings changed"
}

@test "thousands of chunks: the shards and list-chunks, with no command line too long" {
	cd "$BATS_FILE_TMPDIR"
	rm -rf chunky
	mkdir chunky
	awk '/^\[Event /{n++} n==1' "$TESTDATA/lichess_db_10k.pgn" > one-game.pgn
	for ((i = 0; i < 3000; i++)); do
		cp one-game.pgn "chunky/$i.pgn"
	done
	n=$(pgn2pos one-game.pgn 2>/dev/null | posdump -c | cut -d' ' -f1)
	# one game a chunk: 3000 chunks under a long OUT, some 200 KiB of
	# their names
	o=a-long-name-for-the-output-of-the-build-of-a-month
	run make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES=chunky CHUNK=1 OUT=$o
	assert_success
	[ "$(jq .records_in $o/shards/manifest.json)" -eq $((3000 * n)) ]
	run make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES=chunky CHUNK=1 OUT=$o list-chunks
	assert_success
	[ "${#lines[@]}" -eq 3000 ]
	[ "${lines[0]}" = chunk-000000.pos.zst ] && [ "${lines[2999]}" = chunk-002999.pos.zst ]
}

@test "TAIL with NODES: the tail searched by nodes (--tail-nodes)" {
	cd "$BATS_FILE_TMPDIR"
	run make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES="$TESTDATA/lichess_db_10k.pgn" \
	    CHUNK=3 OUT=tn NODES=3000 MULTIPV=2 TAIL=500
	assert_success
	refute_output --partial "usage"
	cmp <(uci-eval -n 3000 -m 2 --tail-nodes 500 -O Hash=16 -j 1 --reproducible \
	    tn/chunks/chunk-000000.pos.zst 2>/dev/null | posdump --json) \
	    <(posdump --json tn/evaluated/chunk-000000.pos.zst)
}
