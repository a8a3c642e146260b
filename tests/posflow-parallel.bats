#!/usr/bin/env bats
# scripts/posflow-parallel, the dataset build with its per-chunk stages run
# by GNU Parallel over ssh, tested for real: an sshd of the test's own on
# 127.0.0.1 and 127.0.0.2 (two "hosts" of one job slot each, key
# authentication made here).  The shards equal those of the local
# posflow.mk build; both hosts ran chunks; nothing is left on the hosts;
# a rerun sends only the chunks whose last file is missing; a failed chunk
# fails the build; a build interrupted and run again gives the same shards.

load helper

MK="$TOP/scripts/posflow.mk"
PP="$TOP/scripts/posflow-parallel"
GAMES="$TESTDATA/lichess_db_100k.pgn"

# The variables of every build here (4 chunks of 12 games: two per host,
# each chunk costing a few ssh connections).  X is no posflow.mk variable:
# it only has to reach the hosts' make intact (a quote, parallel's {},
# a command substitution and && exit 1 for their shell).
VARS=(BIN="$BUILD_DIR/bin" GAMES="$GAMES" CHUNK=12 DEPTH=3
	FILTER='ply >= 2 && !check' PQR=1
	SHARDS='--split train=0.75,val=0.25 --records-per-shard 500')
X="X=it's {} {.} \$(exit 1) \`exit 1\` \"\" && exit 1 ! \\"

# An ssh command line to the test's sshd on address $1.
login() {
	echo "ssh -p $SSH_PORT -i $BATS_FILE_TMPDIR/id -o StrictHostKeyChecking=no" \
	    "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o BatchMode=yes" \
	    "-o ConnectTimeout=10 $(id -un)@$1"
}

start_sshd() {
	local d=$BATS_FILE_TMPDIR i
	for _ in 1 2 3 4 5; do
		SSH_PORT=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		cat > "$d/sshd_config" <<-EOF
		Port $SSH_PORT
		ListenAddress 127.0.0.1
		ListenAddress 127.0.0.2
		HostKey $d/host_key
		PidFile $d/sshd.pid
		AuthorizedKeysFile $d/authorized_keys
		PubkeyAuthentication yes
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		UsePAM no
		StrictModes no
		PermitRootLogin prohibit-password
		MaxStartups 100
		MaxSessions 100
		LogLevel VERBOSE
		EOF
		rm -f "$d/sshd.pid"
		/usr/sbin/sshd -f "$d/sshd_config" -E "$d/sshd.log" || continue
		for ((i = 0; i < 40; i++)); do
			if $(login 127.0.0.1) true 2>/dev/null &&
			    $(login 127.0.0.2) true 2>/dev/null; then
				return 0
			fi
			sleep 0.25
		done
		stop_sshd
	done
	return 1
}

# A reason the ssh tests cannot run here (bats does not take a skip in
# setup_file well): recorded, said once, and each of those tests skips
# with it; the others still run.
no_cluster() {
	export PP_SKIP=$1
	echo "# posflow-parallel.bats: skipping the ssh tests: $1" >&3
}

need_cluster() {
	[ -z "${PP_SKIP:-}" ] || skip "$PP_SKIP"
}

stop_sshd() {
	local f=$BATS_FILE_TMPDIR/sshd.pid
	if [ -s "$f" ]; then
		kill "$(cat "$f")" 2>/dev/null || true
		rm -f "$f"
	fi
}

setup_file() {
	if ldd "$BUILD_DIR/bin/posdump" | grep -q libasan; then
		no_cluster "the tools are built with AddressSanitizer (SANITIZE=1): the cluster tests run without it"
		return 0
	fi
	command -v parallel >/dev/null || { no_cluster "no GNU Parallel (Debian: parallel)"; return 0; }
	[ -x /usr/sbin/sshd ] || { no_cluster "no /usr/sbin/sshd (Debian: openssh-server)"; return 0; }
	command -v ssh >/dev/null || { no_cluster "no ssh (Debian: openssh-client)"; return 0; }
	command -v rsync >/dev/null || { no_cluster "no rsync"; return 0; }
	command -v "$(stockfish_path)" >/dev/null || { no_cluster "no stockfish"; return 0; }
	export PATH="$(dirname "$(stockfish_path)"):$PATH"
	mkdir -p /run/sshd 2>/dev/null || { no_cluster "cannot make /run/sshd for sshd"; return 0; }
	cd "$BATS_FILE_TMPDIR"
	ssh-keygen -q -t ed25519 -N '' -C posflow-test -f id
	ssh-keygen -q -t ed25519 -N '' -C posflow-test-host -f host_key
	cp id.pub authorized_keys
	start_sshd || { cat sshd.log >&3 2>/dev/null; false; } ||
		{ no_cluster "sshd would not start on 127.0.0.1 and 127.0.0.2"; return 0; }
	export SSH_PORT
	printf '1/%s\n' "$(login 127.0.0.1)" "$(login 127.0.0.2)" > hosts
	# Without "N/": the slots come from -j.
	printf '%s\n' "$(login 127.0.0.1)" "$(login 127.0.0.2)" > hosts-j
	REMOTE_HOME=$(getent passwd "$(id -un)" | cut -d: -f6)
	export REMOTE_HOME
	touch start
	make -s -f "$MK" "${VARS[@]}" OUT=ref -j2 > ref.log 2>&1
	"$PP" --sshloginfile hosts --joblog par.joblog "${VARS[@]}" "$X" \
	    OUT=par > par.log 2>&1
	echo $? > par.status
}

teardown_file() {
	stop_sshd
}

@test "the shards of the local build; both hosts ran chunks, over ssh; nothing left on the hosts" {
	need_cluster
	cd "$BATS_FILE_TMPDIR"
	[ -f ref/shards/manifest.json ]
	[ "$(cat par.status)" -eq 0 ] || fail "posflow-parallel failed: $(cat par.log)"
	cmp <(shards ref/shards) <(shards par/shards)
	[ "$(shards par/shards | wc -l)" -ge 3 ]
	# every chunk went to a host, once, and came back
	n=$(ls ref/chunks/chunk-*.pos.zst | wc -l)
	[ "$n" -eq 4 ]
	[ "$(tail -n +2 par.joblog | wc -l)" -eq "$n" ]
	[ "$(tail -n +2 par.joblog | awk -F'\t' '$7 != 0' | wc -l)" -eq 0 ]
	cmp <(ls ref/pqr) <(ls par/pqr)
	grep -q "posflow-parallel: $n chunks, $n to run on the hosts" par.log
	# both hosts, and through the sshd: the stages ran there, not here
	tail -n +2 par.joblog | cut -f2 | grep -q '@127\.0\.0\.1$'
	tail -n +2 par.joblog | cut -f2 | grep -q '@127\.0\.0\.2$'
	grep -q ' on 127\.0\.0\.1 port ' sshd.log
	grep -q ' on 127\.0\.0\.2 port ' sshd.log
	grep -q 'Accepted publickey' sshd.log
	for d in filtered evaluated targets cache; do
		# (the directories hold the stages' settings, never a file
		# of a chunk: no stage ran here)
		! ls par/$d 2>/dev/null | grep -q . || fail "par/$d: made here: $(ls par/$d)"
	done
	# nothing left on the hosts: each job's working directory under
	# ~/.parallel/tmp removed with the chunk, its stages and its cache;
	# nothing made in the login directory
	run find "$REMOTE_HOME/.parallel/tmp" -mindepth 1 -newer start \
	    \( -name 'chunk-*' -o -name "$(hostname)-*" \)
	assert_output ""
	[ ! -e "$REMOTE_HOME/par" ]
	run find "$REMOTE_HOME" -maxdepth 3 -name 'chunk-*.pos.zst' -newer start
	assert_output ""
}

@test "a failed chunk fails the build; run again, only the missing chunk is sent, the same shards" {
	need_cluster
	cd "$BATS_FILE_TMPDIR"
	[ "$(cat par.status)" -eq 0 ]
	rm par/pqr/chunk-000002.pos.zst
	touch before
	# the tools are not at --remote-bin on the hosts: that chunk fails,
	# no shards are made
	run "$PP" --sshloginfile hosts --joblog fail.joblog \
	    --remote-bin /nonexistent "${VARS[@]}" OUT=par
	assert_failure 1
	assert_output --partial "posflow-parallel: 4 chunks, 1 to run on the hosts"
	assert_output --partial "posflow-parallel: 1 chunk(s) failed"
	[ ! -e par/pqr/chunk-000002.pos.zst ]
	[ ! par/shards/manifest.json -nt before ]
	# run again: that chunk alone goes to a host
	run "$PP" --sshloginfile hosts --joblog resume.joblog "${VARS[@]}" OUT=par
	assert_success
	assert_output --partial "posflow-parallel: 4 chunks, 1 to run on the hosts"
	[ "$(tail -n +2 resume.joblog | wc -l)" -eq 1 ]
	tail -n +2 resume.joblog | grep -q 'C=chunk-000002\.pos\.zst'
	[ "$(find par/pqr -newer before -type f)" = par/pqr/chunk-000002.pos.zst ]
	[ par/shards/manifest.json -nt before ]
	cmp <(shards ref/shards) <(shards par/shards)
	for d in filtered evaluated targets cache; do
		# (the directories hold the stages' settings, never a file
		# of a chunk: no stage ran here)
		! ls par/$d 2>/dev/null | grep -q . || fail "par/$d: made here: $(ls par/$d)"
	done
	# nothing to send: the shards are kept
	touch after
	run "$PP" --sshloginfile hosts --joblog none.joblog "${VARS[@]}" OUT=par
	assert_success
	assert_output --partial "posflow-parallel: 4 chunks, 0 to run on the hosts"
	[ ! -e none.joblog ]
	[ ! par/shards/manifest.json -nt after ]
}

@test "killed during the run and run again (-j 1 per host): the same shards" {
	need_cluster
	cd "$BATS_FILE_TMPDIR"
	rm -rf k
	touch kill-start
	setsid "$PP" --sshloginfile hosts-j -j 1 --joblog k1.joblog "${VARS[@]}" OUT=k \
	    > k1.log 2>&1 &
	pid=$!
	# until the first chunk is back (two run at a time, four to do)
	for ((i = 0; i < 600; i++)); do
		ls k/pqr/chunk-*.pos.zst > /dev/null 2>&1 && break
		sleep 0.1
	done
	kill -TERM -- "-$pid" 2>/dev/null || true
	wait "$pid" || true
	# a return under way may still finish (parallel runs it in a
	# process group of its own): until the last files stay the same
	prev=
	for ((i = 0; i < 20; i++)); do
		now=$(ls k/pqr 2>/dev/null)
		[ "$now" = "$prev" ] && [ "$i" -ge 3 ] && break
		prev=$now
		sleep 1
	done
	back=$(ls k/pqr/chunk-*.pos.zst 2>/dev/null | wc -l)
	echo "# $back chunk(s) back before the kill" >&3
	[ "$back" -ge 1 ] && [ "$back" -lt 4 ]
	for f in k/pqr/chunk-*.pos.zst; do
		posdump -c "$f" > /dev/null 2>&1 || fail "$f is not a complete stream"
	done
	# the killed jobs' working directories on the hosts (no cleanup
	# after a kill)
	find "$REMOTE_HOME/.parallel/tmp" -mindepth 1 -maxdepth 1 -newer kill-start \
	    -name "$(hostname)-*" -exec test -d '{}/k/chunks' ';' -exec rm -rf '{}' +
	run "$PP" --sshloginfile hosts-j -j 1 --joblog k2.joblog "${VARS[@]}" OUT=k
	assert_success
	[ "$(tail -n +2 k2.joblog | wc -l)" -eq $((4 - back)) ]
	cmp <(shards ref/shards) <(shards k/shards)
}

@test "posflow.mk's variables in the environment reach the hosts: the shards of the same build by make" {
	need_cluster
	cd "$BATS_FILE_TMPDIR"
	rm -rf envref envpar
	mkdir envref
	cp -a ref/cache envref/
	SEED=5 make -s -f "$MK" "${VARS[@]}" OUT=envref -j2 > envref.log 2>&1
	# (the seed changes the records: else this would show nothing)
	! cmp -s <(cat ref/pqr/chunk-*.pos.zst | posdump --json) \
	    <(cat envref/pqr/chunk-*.pos.zst | posdump --json)
	run env SEED=5 "$PP" --sshloginfile hosts "${VARS[@]}" OUT=envpar
	assert_success
	cmp <(cat envref/pqr/chunk-*.pos.zst | posdump --json) \
	    <(cat envpar/pqr/chunk-*.pos.zst | posdump --json)
	cmp <(shards envref/shards) <(shards envpar/shards)
	# a variable in the MAKEFLAGS of a make above (make dataset SEED=5)
	# reaches no make: not the hosts', and not the one here either
	rm -rf mfpar
	run env MAKEFLAGS=' -- SEED=5' "$PP" --sshloginfile hosts "${VARS[@]}" OUT=mfpar
	assert_success
	cmp <(cat ref/pqr/chunk-*.pos.zst | posdump --json) \
	    <(cat mfpar/pqr/chunk-*.pos.zst | posdump --json)
	cmp <(shards ref/shards) <(shards mfpar/shards)
}

@test "usage errors exit 2" {
	cd "$BATS_FILE_TMPDIR"
	run --separate-stderr "$PP" "${VARS[@]}" OUT=u
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == *"posflow-parallel: give --sshloginfile FILE"* ]]
	[ ! -e u ]
	run "$PP" --sshloginfile no-such-file "${VARS[@]}" OUT=u
	[ "$status" -eq 2 ]
	echo some-host > u-hosts	# (never reached: usage comes first)
	run "$PP" --sshloginfile u-hosts "${VARS[@]}" OUT=u shards
	[ "$status" -eq 2 ]
	assert_output --partial "not VAR=value: shards"
	run "$PP" --sshloginfile u-hosts --no-such-option "${VARS[@]}" OUT=u
	[ "$status" -eq 2 ]
	# no games, or none left by a later GAMES=: usage, as posflow-slurm's
	run env -u GAMES "$PP" --sshloginfile u-hosts DEPTH=3 OUT=u
	[ "$status" -eq 2 ]
	assert_output --partial "posflow-parallel: give GAMES="
	run "$PP" --sshloginfile u-hosts "${VARS[@]}" GAMES=' ' OUT=u
	[ "$status" -eq 2 ]
	assert_output --partial "posflow-parallel: give GAMES="
	echo 1/: > here
	run "$PP" --sshloginfile here "${VARS[@]}" OUT=u
	[ "$status" -eq 2 ]
	[ ! -e u ]
	# settings posflow.mk refuses: usage too, nothing split
	run "$PP" --sshloginfile u-hosts "${VARS[@]}" KEEP_DEPTHS=maybe OUT=u
	[ "$status" -eq 2 ]
	assert_output --partial "posflow.mk: KEEP_DEPTHS='maybe': yes or no"
	[ ! -e u/chunks ]
	run "$PP" --help
	assert_success
	assert_output --partial "usage: posflow-parallel --sshloginfile FILE"
}
