#!/usr/bin/env bats
# scripts/posflow-slurm: posflow.mk's build as a Slurm job array and a
# dependent shard job, on a private single-node cluster started here
# (munged, slurmctld and slurmd on 127.0.0.1, all under temporary
# directories): the shards equal a local make's; one array task per chunk;
# a resubmission redoes only the missing chunk; a failing chunk fails --wait
# (no hang).  Where the cluster cannot start (no slurm-wlm or munge, not
# allowed to run them, tools built with AddressSanitizer) those tests skip
# saying why; the usage and submission-logic tests run with a stand-in
# sbatch and need no cluster.

load helper

MK="$TOP/scripts/posflow.mk"
PS="$TOP/scripts/posflow-slurm"
GAMES="$TESTDATA/lichess_db_100k.pgn"

# The build's variables, as given to make and to posflow-slurm.
VARS=(BIN="$BUILD_DIR/bin" GAMES="$GAMES" CHUNK=6 DEPTH=3
    FILTER='ply >= 2 && !check' PQR=1
    SHARDS='--split train=0.75,val=0.25 --records-per-shard 500')

# A field (JobState=...) of every record scontrol shows for a job.
field() {
	scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

cluster_log() {
	local f
	for f in "$CL"/log/* "${MUNGE_DIR:-/nonexistent}"/log; do
		[ -s "$f" ] || continue
		echo "# --- $f" >&3
		tail -n 15 "$f" | sed 's/^/#   /' >&3
	done
}

# A private cluster: munged on its own socket with a key made here,
# slurmctld and slurmd in the foreground (background jobs of this file),
# free ports, everything under CL and MUNGE_DIR.  Returns 1 with REASON.
start_cluster() {
	CL=$BATS_FILE_TMPDIR/cluster
	mkdir -p "$CL/state" "$CL/spool" "$CL/log"
	# munged wants every directory above its socket searchable by all,
	# and a short socket path: its own directory under /tmp
	MUNGE_DIR=$(mktemp -d /tmp/posflow-munge.XXXXXX) || { REASON="mktemp failed"; return 1; }
	echo "$MUNGE_DIR" > "$BATS_FILE_TMPDIR/munge.dir"
	chmod 755 "$MUNGE_DIR"
	dd if=/dev/urandom of="$MUNGE_DIR/key" bs=1024 count=1 2>/dev/null
	chmod 0400 "$MUNGE_DIR/key"
	munged -F --socket="$MUNGE_DIR/sock" --key-file="$MUNGE_DIR/key" \
	    --pid-file="$MUNGE_DIR/pid" --log-file="$MUNGE_DIR/log" \
	    --seed-file="$MUNGE_DIR/seed" > "$CL/log/munged.out" 2>&1 3>&- &
	echo $! > "$CL/munged.pid"
	local i
	for ((i = 0; i < 50; i++)); do
		munge -n -S "$MUNGE_DIR/sock" 2>/dev/null | unmunge -S "$MUNGE_DIR/sock" >/dev/null 2>&1 && break
		sleep 0.2
	done
	[ "$i" -lt 50 ] || { REASON="munged did not start"; return 1; }

	local ports user
	ports=$(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])') || { REASON="no free ports (python3)"; return 1; }
	user=$(id -un)
	cat > "$CL/slurm.conf" <<-EOF
	ClusterName=posflowtest
	SlurmctldHost=localhost(127.0.0.1)
	SlurmctldPort=${ports% *}
	SlurmdPort=${ports#* }
	SlurmUser=$user
	SlurmdUser=$user
	AuthType=auth/munge
	AuthInfo=socket=$MUNGE_DIR/sock
	CredType=cred/munge
	MpiDefault=none
	ProctrackType=proctrack/linuxproc
	TaskPlugin=task/none
	SelectType=select/cons_tres
	SelectTypeParameters=CR_Core
	ReturnToService=2
	MinJobAge=3600
	StateSaveLocation=$CL/state
	SlurmdSpoolDir=$CL/spool
	SlurmctldPidFile=$CL/slurmctld.pidfile
	SlurmdPidFile=$CL/slurmd.pidfile
	SlurmctldLogFile=$CL/log/slurmctld.log
	SlurmdLogFile=$CL/log/slurmd.log
	NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
	PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
	EOF
	export SLURM_CONF=$CL/slurm.conf
	slurmctld -D > "$CL/log/slurmctld.out" 2>&1 3>&- &
	echo $! > "$CL/slurmctld.pid"
	slurmd -D -N localhost > "$CL/log/slurmd.out" 2>&1 3>&- &
	echo $! > "$CL/slurmd.pid"
	for ((i = 0; i < 60; i++)); do
		[ "$(sinfo -h -n localhost -o %T 2>/dev/null)" = idle ] && return 0
		kill -0 "$(cat "$CL/slurmctld.pid")" 2>/dev/null || { REASON="slurmctld exited"; return 1; }
		kill -0 "$(cat "$CL/slurmd.pid")" 2>/dev/null || { REASON="slurmd exited"; return 1; }
		sleep 1
	done
	REASON="the node is not idle after 60 s (sinfo: $(sinfo -h -o %T 2>&1 | head -1))"
	return 1
}

stop_cluster() {
	local cl=$BATS_FILE_TMPDIR/cluster p n
	if [ -f "$cl/slurm.conf" ] && [ -f "$cl/slurmctld.pid" ]; then
		SLURM_CONF=$cl/slurm.conf scancel --user="$(id -un)" 2>/dev/null || true
	fi
	for p in slurmd slurmctld munged; do
		[ -f "$cl/$p.pid" ] || continue
		n=$(cat "$cl/$p.pid")
		kill "$n" 2>/dev/null || continue
		for ((i = 0; i < 50; i++)); do
			kill -0 "$n" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL "$n" 2>/dev/null || true
	done
	if [ -f "$BATS_FILE_TMPDIR/munge.dir" ]; then
		rm -rf "$(cat "$BATS_FILE_TMPDIR/munge.dir")"
	fi
}

setup_file() {
	export NO_CLUSTER=""
	local t
	if ldd "$BUILD_DIR/bin/posdump" | grep -q libasan; then
		NO_CLUSTER="tools built with AddressSanitizer (SANITIZE=1): the Slurm cluster tests do not run under it"
	elif ! command -v "$(stockfish_path)" >/dev/null; then
		NO_CLUSTER="no stockfish"
	else
		for t in munged munge unmunge slurmctld slurmd sbatch scontrol sinfo scancel python3; do
			if ! command -v "$t" >/dev/null; then
				NO_CLUSTER="no $t: install slurm-wlm and munge (Debian) for the Slurm tests"
				break
			fi
		done
	fi
	if [ -z "$NO_CLUSTER" ]; then
		export PATH="$(dirname "$(stockfish_path)"):$PATH"
		REASON=""
		if ! start_cluster; then
			NO_CLUSTER="a single-node Slurm cluster on 127.0.0.1 did not start: $REASON"
			echo "# posflow-slurm.bats: $NO_CLUSTER; its logs:" >&3
			cluster_log
			stop_cluster
		fi
	fi
	if [ -n "$NO_CLUSTER" ]; then
		echo "# posflow-slurm.bats: skipping the cluster tests: $NO_CLUSTER" >&3
		return 0
	fi
	# the reference: the same build by make, here
	cd "$BATS_FILE_TMPDIR"
	make -s -f "$MK" "${VARS[@]}" OUT=ref -j2 > ref.log 2>&1
}

teardown_file() {
	stop_cluster
}

need_cluster() {
	[ -z "$NO_CLUSTER" ] || skip "$NO_CLUSTER"
	cd "$BATS_FILE_TMPDIR"
}

@test "slurm: the array and the shard job give the shards of a local make; one task per chunk" {
	need_cluster
	[ -f ref/shards/manifest.json ]
	n=$(ls ref/chunks/chunk-*.pos.zst | wc -l)
	[ "$n" -ge 4 ]
	run --separate-stderr timeout 600 "$PS" --wait -- "${VARS[@]}" OUT=sl
	echo "$stderr"
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} =~ ^chunks\ [0-9]+$ ]]
	[[ ${lines[1]} =~ ^shards\ [0-9]+$ ]]
	aid=${lines[0]#chunks } sid=${lines[1]#shards }
	[[ $stderr == *"$n chunks, $n to do"* ]]
	# the same shards as make here
	cmp <(shards ref/shards) <(shards sl/shards)
	[ "$(shards sl/shards | wc -l)" -ge 3 ]
	cmp <(cat ref/pqr/chunk-*.pos.zst | posdump --json) <(cat sl/pqr/chunk-*.pos.zst | posdump --json)
	[ -z "$(find sl -name '*.part')" ]
	# one array task per chunk, each completed, each on its own chunk
	[ "$(field "$aid" ArrayTaskId | sort -n | tr '\n' ' ')" = "$(seq 0 $((n - 1)) | tr '\n' ' ')" ]
	[ "$(field "$aid" JobState | sort -u)" = COMPLETED ]
	[ "$(ls sl/slurm/chunks-"$aid"_*.out | wc -l)" -eq "$n" ]
	cmp <(sed -n 's/^posflow-slurm: task .*: //p' sl/slurm/chunks-"$aid"_*.out | sort) \
	    <(cd ref/chunks && ls chunk-*.pos.zst)
	[ "$(grep -l 'pqr-sample .* sl/targets/chunk-' sl/slurm/chunks-"$aid"_*.out | wc -l)" -eq "$n" ]
	# the shard job waited for the array: it started after the last task ended
	[ "$(field "$sid" JobState)" = COMPLETED ]
	last_end=$(field "$aid" EndTime | sort | tail -1)
	[[ ! "$(field "$sid" StartTime)" < "$last_end" ]]
	grep -q 'posflow-slurm: job .*: shards' sl/slurm/shards-"$sid".out
	# and made no chunk's stages itself: the array's tasks did
	grep -q '/shard -f --seed' sl/slurm/shards-"$sid".out
	[ "$(grep -c -E '/(posfilter|uci-eval|softtarget|pqr-sample) ' sl/slurm/shards-"$sid".out)" -eq 0 ]
}

@test "slurm: resubmitted after a final file is removed, only that chunk is redone; the same shards" {
	need_cluster
	[ -f sl/shards/manifest.json ] || fail "needs the build of the first test"
	stat -c '%n %.9Y' sl/*/chunk-*.pos.zst | sort > before
	rm sl/pqr/chunk-000003.pos.zst
	run --separate-stderr timeout 600 "$PS" --wait -- "${VARS[@]}" OUT=sl
	echo "$stderr"
	assert_success
	[[ $stderr == *", 1 to do"* ]]
	[ "${#lines[@]}" -eq 2 ]
	aid=${lines[0]#chunks }
	# one task, for chunk 3
	[ "$(field "$aid" ArrayTaskId)" = 3 ]
	[ -f sl/pqr/chunk-000003.pos.zst ]
	stat -c '%n %.9Y' sl/*/chunk-*.pos.zst | sort > after
	# every other file, and chunk 3's earlier stages, as they were
	[ "$(diff before after | grep -c '^[<>]')" -eq 2 ]
	[ "$(diff before after | grep '^[<>]' | grep -v -c 'sl/pqr/chunk-000003.pos.zst ')" -eq 0 ]
	cmp <(shards ref/shards) <(shards sl/shards)
	# nothing to do: no array, the shard job alone, the shards untouched
	m=$(stat -c %.9Y sl/shards/manifest.json)
	run --separate-stderr timeout 300 "$PS" --wait -- "${VARS[@]}" OUT=sl
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} =~ ^shards\ [0-9]+$ ]]
	[ "$(stat -c %.9Y sl/shards/manifest.json)" = "$m" ]
}

@test "slurm: a failing chunk fails --wait, naming it; the shard job is cancelled" {
	need_cluster
	run --separate-stderr timeout 300 "$PS" --wait -- BIN="$BUILD_DIR/bin" GAMES="$GAMES" \
	    CHUNK=20 DEPTH=3 ENGINE=/bin/false OUT=bad
	echo "$stderr"
	[ "$status" -eq 1 ]
	sid=${lines[1]#shards }
	[[ $stderr == *"chunk-000000.pos.zst: FAILED (see "*"/bad/slurm/chunks-"* ]]
	[[ $stderr == *"posflow-slurm: shard job $sid: CANCELLED"* ]]
	[ "$(field "$sid" JobState)" = CANCELLED ]
	[ ! -e bad/shards/manifest.json ]
	[ -z "$(ls bad/evaluated/chunk-* 2>/dev/null)" ]
}

# A stand-in for sbatch and scontrol: logs each sbatch call's arguments,
# answers job ids 101, 102, ...; MaxArraySize from MAXARR.
fake_slurm() {
	mkdir -p fake
	cat > fake/sbatch <<-'EOF'
	#!/bin/bash
	n=$(( $(cat "$FAKE_LOG" 2>/dev/null | wc -l) + 101 ))
	echo "$*" >> "$FAKE_LOG"
	echo "$n"
	EOF
	cat > fake/scontrol <<-'EOF'
	#!/bin/bash
	[ "$1 $2" = "show config" ] && echo "MaxArraySize            = $MAXARR"
	exit 0
	EOF
	chmod +x fake/sbatch fake/scontrol
	export PATH="$PWD/fake:$PATH" FAKE_LOG=$PWD/sbatch.log MAXARR=${1:-1001}
}

@test "submission: only the missing chunks, arrays within MaxArraySize (one after another with --max-running), the shard job after them all" {
	fake_slurm 3
	make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES="$GAMES" CHUNK=6 FILTER='ply >= 2' OUT=o \
	    chunks 2>/dev/null
	make -s -f "$MK" BIN="$BUILD_DIR/bin" GAMES="$GAMES" CHUNK=6 FILTER='ply >= 2' OUT=o \
	    o/filtered/chunk-000001.pos.zst o/filtered/chunk-000004.pos.zst 2>/dev/null
	[ "$(ls o/chunks | wc -l)" -eq 8 ]
	run --separate-stderr "$PS" --partition=p1 --max-running 2 -- BIN="$BUILD_DIR/bin" \
	    GAMES="$GAMES" CHUNK=6 FILTER='ply >= 2' OUT=o
	echo "$stderr"
	assert_success
	# chunks 0 2 3 5 6 7 to do: arrays at 0 (0,2), 3 (0,2) and 6 (0-1);
	# --max-running 2 holds over them all: each array after the first
	# waits for the one before it
	assert_output "chunks 101
chunks 102
chunks 103
shards 104"
	[[ $stderr == *"8 chunks, 6 to do, 2 already in o/filtered"* ]]
	o=$PWD/o/slurm
	cat > want <<-EOF
	--parsable --chdir=$PWD --job-name=posflow-chunks --array=0,2%2 --output=$o/chunks-%A_%a.out --partition=p1 $o/chunk.sh 0
	--parsable --chdir=$PWD --job-name=posflow-chunks --array=0,2%2 --dependency=afterany:101 --output=$o/chunks-%A_%a.out --partition=p1 $o/chunk.sh 3
	--parsable --chdir=$PWD --job-name=posflow-chunks --array=0-1%2 --dependency=afterany:102 --output=$o/chunks-%A_%a.out --partition=p1 $o/chunk.sh 6
	--parsable --chdir=$PWD --job-name=posflow-shards --dependency=afterok:101:102:103 --kill-on-invalid-dep=yes --output=$o/shards-%j.out --partition=p1 $o/shards.sh
	EOF
	diff want sbatch.log
	# the task's script takes chunk BASE + SLURM_ARRAY_TASK_ID through its
	# stages, with the variables as given (spaces, &&, ! and quotes)
	run env SLURM_ARRAY_JOB_ID=102 SLURM_ARRAY_TASK_ID=2 bash o/slurm/chunk.sh 3
	assert_success
	assert_line "posflow-slurm: task 102_2 on $(hostname): chunk-000005.pos.zst"
	[ -f o/filtered/chunk-000005.pos.zst ]
	[ ! -f o/filtered/chunk-000003.pos.zst ]
	cmp <(posfilter -e 'ply >= 2' o/chunks/chunk-000005.pos.zst 2>/dev/null | posdump --json) \
	    <(posdump --json o/filtered/chunk-000005.pos.zst)
	grep -q "FILTER=ply\\\\ \\\\>=\\\\ 2" o/slurm/chunk.sh
	# submitted again: chunk 5 is done now
	rm sbatch.log
	run --separate-stderr "$PS" -- BIN="$BUILD_DIR/bin" GAMES="$GAMES" CHUNK=6 FILTER='ply >= 2' OUT=o
	assert_success
	[[ $stderr == *"8 chunks, 5 to do, 3 already in o/filtered"* ]]
	# another FILTER: the filtered files were made with other settings,
	# every chunk is to do again (and their old files are gone)
	run --separate-stderr "$PS" -- BIN="$BUILD_DIR/bin" GAMES="$GAMES" CHUNK=6 FILTER='ply >= 3' OUT=o
	assert_success
	[[ $stderr == *"8 chunks, 8 to do, 0 already in o/filtered"* ]]
	[ -z "$(ls o/filtered/chunk-* 2>/dev/null)" ]
	grep -qx 'FILTER=ply >= 3' o/filtered/.settings
	grep -q -- "--array=0-2 .* 0\$" sbatch.log
}

@test "a games file changed while the tasks run: a task takes its chunk from the split as submitted, and removes nothing" {
	fake_slurm
	cp "$TESTDATA/lichess_db_10k.pgn" g.pgn
	v=(BIN="$BUILD_DIR/bin" GAMES=g.pgn CHUNK=2 FILTER='ply >= 2' OUT=o)
	run --separate-stderr "$PS" -- "${v[@]}"
	assert_success
	[ "$(ls o/chunks/chunk-*.pos.zst | wc -l)" -eq 3 ]
	run env SLURM_ARRAY_JOB_ID=101 SLURM_ARRAY_TASK_ID=0 bash o/slurm/chunk.sh 0
	assert_success
	# a download into the games (here: games added) while the array runs
	cat "$TESTDATA/lichess_db_10k.pgn" >> g.pgn
	run env SLURM_ARRAY_JOB_ID=101 SLURM_ARRAY_TASK_ID=1 bash o/slurm/chunk.sh 0
	assert_success
	refute_output --partial "the settings changed"
	[ "$(ls o/chunks/chunk-*.pos.zst | wc -l)" -eq 3 ]
	[ -f o/chunks/.done ]
	[ -f o/filtered/chunk-000000.pos.zst ] && [ -f o/filtered/chunk-000001.pos.zst ]
	run bash o/slurm/shards.sh
	assert_success
	refute_output --partial "the settings changed"
	[ -f o/shards/manifest.json ]
	# the next submission splits the games as they are now
	run --separate-stderr "$PS" -- "${v[@]}"
	assert_success
	[[ $stderr == *"posflow.mk: chunks: the settings changed"* ]]
	[ "$(ls o/chunks/chunk-*.pos.zst | wc -l)" -eq 5 ]
}

@test "usage errors exit 2; a failed split exits 1 before anything is submitted" {
	fake_slurm
	run "$PS"
	[ "$status" -eq 2 ]
	assert_output --partial "posflow-slurm: give -- and the build's VAR=value words"
	run "$PS" --wait --
	[ "$status" -eq 2 ]
	run "$PS" -- GAMES=x.pgn notavar
	[ "$status" -eq 2 ]
	assert_output --partial "posflow-slurm: not a VAR=value word: notavar"
	run env -u GAMES "$PS" -- DEPTH=3
	[ "$status" -eq 2 ]
	assert_output --partial "give GAMES="
	run "$PS" --max-running 0 -- GAMES=x.pgn
	[ "$status" -eq 2 ]
	# settings posflow.mk refuses: usage too, nothing split or submitted
	run "$PS" -- BIN="$BUILD_DIR/bin" GAMES="$TESTDATA/lichess_db_10k.pgn" KEEP_DEPTHS=maybe OUT=o
	[ "$status" -eq 2 ]
	assert_output --partial "posflow.mk: KEEP_DEPTHS='maybe': yes or no"
	[ ! -e o/chunks ] && [ ! -e sbatch.log ]
	run "$PS" --help
	assert_success
	assert_output --partial "sbatch --array"
	[ ! -e sbatch.log ]
	# the split fails (no such games): exit 1, nothing submitted
	run "$PS" -- BIN="$BUILD_DIR/bin" GAMES=/nonexistent.pgn OUT=o
	[ "$status" -eq 1 ]
	assert_output --partial "posflow-slurm: the split failed"
	[ ! -e sbatch.log ]
}
