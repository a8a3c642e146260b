#!/usr/bin/env bats
# Whole pipelines: pgn2pos | uci-eval | softtarget | posdump keeps every
# record, its order and everything earlier stages added; records flow
# through a pipeline while the producer is still running.

load helper

GAMES="$TESTDATA/lichess_db_10k.pgn"

@test "pgn2pos | uci-eval | softtarget keeps every record, in order, with all data" {
	pgn2pos -q "$GAMES" | uci-eval -d 2 -m all --no-newgame 2>/dev/null |
		softtarget --value tanh > out.pos
	pgn2pos -q "$GAMES" > pos.pos
	# Same records, same order, same core fields and metadata.
	diff <(posdump --fields fen,game,ply,move,result,meta,clock pos.pos) \
		<(posdump --fields fen,game,ply,move,result,meta,clock out.pos)
	n=$(posdump -c pos.pos | cut -d' ' -f1)
	[ "$n" -gt 200 ]
	# Every record has an evaluation; every record that is not terminal
	# has a policy over all its legal moves summing to 65535, and a value.
	run jq -r -s '
		[ .[] | select((.flags | index("mate") or index("stalemate")) | not) ]
		| map(
			([.exts[] | select(.type == "eval")] | length) >= 1 and
			([.exts[] | select(.type == "policy")][0].moves
			    | map(.q) | add) == 65535 and
			([.exts[] | select(.type == "movescores")][0].moves | length) ==
			([.exts[] | select(.type == "policy")][0].moves | length) and
			([.exts[] | select(.type == "value")] | length) == 1)
		| all' <(posdump -j out.pos)
	assert_output true
}

@test "a pipeline passes records on while its producer is still running" {
	# The producer writes one game, then waits until the end of the
	# pipeline has shown it before it ends; if any stage held the record
	# back until its input ended, the producer gives up after 20 s and
	# leaves a mark.
	pgn2pos -q "$GAMES" --max-plies 3 | head -c 100000 > first.pos
	mkfifo shown
	(
		cat first.pos
		if timeout 20 head -n 1 shown > /dev/null; then
			:
		else
			echo held > held.mark
		fi
	) | softtarget --policy none --value tanh | posdump --fields ply > shown
	[ ! -e held.mark ]
}

@test "a damaged stream in the middle of a pipeline: exit 1 there, every good record on" {
	pgn2pos -q "$GAMES" > pos.pos
	size=$(stat -c %s pos.pos)
	head -c $((size / 2)) pos.pos > half.pos
	run bash -c 'cat half.pos | softtarget --policy none --value tanh 2>err |
		posdump -c; echo "rc=${PIPESTATUS[1]}"'
	assert_line --index 1 "rc=1"
	n=$(echo "${lines[0]}" | cut -d' ' -f1)
	[ "$n" -gt 0 ]
	grep -q 'truncated' err
}
