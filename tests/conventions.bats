#!/usr/bin/env bats
# The conventions every posflow tool follows (posflow(7)): --help prints
# exactly the man page's SYNOPSIS, --version, usage errors exit 2 with
# nothing on stdout, binary output is refused on a terminal, every tool
# has a man page, a bats file and a README line, and every man page is
# mandoc -Tlint clean.

load helper

tools() {
	local f
	for f in "$TOP"/cmd/*.c; do
		basename "$f" .c
	done
}

# The options a tool cannot run without (uci-eval needs a search limit).
required() {
	case $1 in
	uci-eval) echo "--depth 1" ;;
	posexport | posimport) echo "-F bin" ;;	# (plain is text: posexport
						# writes it to a terminal)
	posfilter) echo "-e true" ;;
	esac
}

# The SYNOPSIS of a man page as one line of words.
synopsis() {
	mandoc -Tascii -O width=300 "$1" | col -b |
		awk '/^SYNOPSIS/ {on = 1; next} /^[A-Z]/ {on = 0} on' |
		tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//'
}

@test "every tool has a man page, a bats file and a README line" {
	for t in $(tools); do
		[ -f "$TOP/man/man1/$t.1" ] || fail "no man/man1/$t.1"
		[ -f "$TOP/tests/$t.bats" ] || fail "no tests/$t.bats"
		grep -q "\`$t\`" "$TOP/README.md" || fail "README lacks $t"
	done
}

@test "every man page is mandoc -Tlint clean" {
	run mandoc -Tlint -Wwarning "$TOP"/man/man1/*.1 "$TOP"/man/man5/*.5 \
		"$TOP"/man/man7/*.7
	assert_success
	assert_output ""
}

@test "--help prints the man page SYNOPSIS and exits 0" {
	for t in $(tools); do
		run "$t" --help
		assert_success
		got=$(printf '%s\n' "$output" | sed '1s/^usage: //' |
			tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//')
		want=$(synopsis "$TOP/man/man1/$t.1")
		[ "$got" = "$want" ] ||
			fail "$t --help: '$got' but SYNOPSIS says '$want'"
	done
}

@test "--version names the tool and posflow" {
	for t in $(tools); do
		run "$t" --version
		assert_success
		assert_output --regexp "^$t \(posflow\) [0-9]+\.[0-9]+\.[0-9]+$"
	done
}

@test "-h and -V, where the SYNOPSIS lists them, are --help and --version" {
	local n=0
	for t in $(tools); do
		# the first group of single-letter flags: "[-fhVz]"
		flags=$(synopsis "$TOP/man/man1/$t.1" |
			grep -o '^[^ ]* \[-[A-Za-z]*\]' | sed 's/.*\[-//; s/\]//' || true)
		help=$("$t" --help)
		version=$("$t" --version)
		if [[ $flags == *h* ]]; then
			run "$t" -h
			assert_success
			[ "$output" = "$help" ] || fail "$t -h: '$output'"
			n=$((n + 1))
		fi
		if [[ $flags == *V* ]]; then
			run "$t" -V
			assert_success
			[ "$output" = "$version" ] || fail "$t -V: '$output'"
		fi
	done
	# the record filters at least (pf_filter_getopt)
	[ "$n" -ge 8 ] || fail "only $n tools list -h"
}

@test "an unknown option exits 2 with usage on stderr, nothing on stdout" {
	for t in $(tools); do
		run --separate-stderr "$t" --no-such-option
		[ "$status" -eq 2 ] || fail "$t: status $status"
		[ -z "$output" ] || fail "$t wrote to stdout: $output"
		[[ "$stderr" == *usage:* ]] || fail "$t: no usage: $stderr"
	done
}

@test "numbers in options are decimal, in expressions decimal or hex integers: hex floats, inf and nan are usage errors" {
	# strtod reads "0x1p-1" as 0.5 and "inf" as infinity: a typo or a
	# pasted hex value must not become a setting.
	FAKE="$BUILD_DIR/tests/tools/fake-engine"
	for bad in 0x1p-1 0X.8 inf nan 0.5x; do
		for c in "pgn2pos --sample $bad" "posfilter --keep $bad -e true" \
		    "softtarget --temperature $bad" "complexity --threshold $bad" \
		    "repair-mark --threshold $bad -e $FAKE" \
		    "shard --split train=$bad -o out"; do
			run --separate-stderr $c /dev/null
			[ "$status" -eq 2 ] || fail "$c: status $status: $stderr"
			[[ "$stderr" == *"$bad"* ]] || fail "$c: $stderr"
		done
		run --separate-stderr posfilter -e "ply > $bad" /dev/null
		[ "$status" -eq 2 ] || fail "-e 'ply > $bad': status $status: $stderr"
	done
	# decimal forms still read, and in an expression a hexadecimal
	# integer (a game id as posdump shows it)
	run pgn2pos --sample 5e-1 -o /dev/null /dev/null
	assert_success
	run posfilter -e 'ply > 1.5e1 || game == 0x2A' -o /dev/null /dev/null
	assert_success
}

@test "binary output is refused on a terminal unless -f" {
	# posdump and posstat write text; every other tool writes a record
	# stream.
	for t in $(tools); do
		case $t in posdump | posstat) continue ;; esac
		run script -qec "$t $(required "$t") -o /dev/tty < /dev/null" /dev/null
		[ "$status" -eq 1 ] || fail "$t: status $status"
		[[ "$output" == *terminal* ]] || fail "$t: $output"
	done
}

@test "a missing input file is exit 1 naming the file" {
	for t in $(tools); do
		run --separate-stderr "$t" $(required "$t") -o out \
			"$BATS_TEST_TMPDIR/nonexistent"
		[ "$status" -eq 1 ] || fail "$t: status $status"
		[[ "$stderr" == *"$t: "*nonexistent* ]] || fail "$t: $stderr"
	done
}

@test "make install puts every tool, man page and the dataset build under PREFIX" {
	run make -s -C "$TOP" install PREFIX="$BATS_TEST_TMPDIR/prefix" \
		BUILD="$BUILD_DIR"
	assert_success
	for t in $(tools); do
		[ -x "prefix/bin/$t" ] || fail "no prefix/bin/$t"
		[ -f "prefix/share/man/man1/$t.1" ] || fail "no man page for $t"
		run "prefix/bin/$t" --version
		assert_success
	done
	[ -f prefix/share/man/man5/posflow.5 ]
	[ -f prefix/share/man/man7/posflow.7 ]
	cmp "$TOP/scripts/posflow.mk" prefix/share/posflow/posflow.mk
	# the cluster scripts find the installed makefile
	run prefix/bin/posflow-parallel --help
	assert_success
	run prefix/bin/posflow-slurm --help
	assert_success
	run prefix/bin/posflow-slurm -- OUT=x
	refute_output --partial "no makefile"
}

@test "getopt's own messages name the tool, not its path" {
	for t in $(tools); do
		run --separate-stderr "$(command -v "$t")" -Q
		[ "$status" -eq 2 ] || fail "$t: status $status"
		[[ "$stderr" == "$t: "* ]] || fail "$t: $stderr"
	done
}
