#!/usr/bin/env bats
# The Python loader (scripts/posflow on libposflow.so): records() reads
# back exactly what posdump --json shows, batches() gives the features,
# targets and policy that the records hold (checked against an independent
# reading in tests/tools/loader_check.py), damage raises an error naming
# the file and record after the records before it, and
# posflow.torch.ShardDataset yields every record once per epoch over 2
# ranks x 2 workers, and a tiny model trained on it learns.

load helper

CHECK="$TOP/tests/tools/loader_check.py"
TORCHCHECK="$TOP/tests/tools/loader_torch.py"
MKREC="$BUILD_DIR/tests/tools/mkrec"

setup_file() {
	setup_python || return 1
	# The bundled games through the pipeline: evaluations with per-move
	# tables, policy and value targets, PQR triples; then shards.
	local d="$BATS_FILE_TMPDIR"
	pgn2pos "$TESTDATA/lichess_db_100k.pgn" 2>/dev/null |
		uci-eval --engine "$(stockfish_path)" --depth 1 --multipv all 2>/dev/null |
		softtarget --value tanh 2>/dev/null |
		pqr-sample 2>/dev/null > "$d/rich.pos"
	shard -o "$d/shards" --split train=0.8,val=0.2 --shards 3 --seed 5 \
		"$d/rich.pos" 2>/dev/null
}

@test "records() equals posdump --json record by record (a stream, and a shard directory's split)" {
	d="$BATS_FILE_TMPDIR"
	posdump --json "$d/rich.pos" > want.jsonl
	[ "$(wc -l < want.jsonl)" -eq 2817 ]
	run "$PY" "$CHECK" json want.jsonl "$d/rich.pos"
	assert_success
	assert_output "records: 2817 records equal posdump --json"
	posdump --json $(jq -r '.shards[] | select(.split == "val") | .file' "$d/shards/manifest.json" | sed "s|^|$d/shards/|") > val.jsonl
	run "$PY" -c "
import json, posflow
got = list(posflow.records('$d/shards', split='val'))
want = [json.loads(l) for l in open('val.jsonl')]
assert got == want and len(got) > 100, (len(got), len(want))
print(len(got))"
	assert_success
}

@test "batches(): features (ALL, H, V, D1, D2, both perspectives), planes, value, score, result, policy, move, PQR equal the records" {
	run "$PY" "$CHECK" batches "$BATS_FILE_TMPDIR/rich.pos"
	assert_success
	assert_line --regexp '^batches: 2817 rows equal the records \(best [0-9]+, move [0-9]+, policy [0-9]+, pqr [0-9]+, score [0-9]+, value [0-9]+\)$'
	assert_line "batches: white perspective ok"
}

@test "batches(): the keys and dtypes the README lists, batch sizes, drop_last, eval selector, stride" {
	run "$PY" -c "
import numpy as np, posflow
p = '$BATS_FILE_TMPDIR/rich.pos'
bs = list(posflow.batches(p, 1000))
print([len(b['features']) for b in bs])
b = bs[0]
print(sorted(b))
print(b['features'].dtype, b['features'].shape[1], b['value'].dtype, b['score'].dtype, b['result'].dtype, b['move'].dtype, b['game_id'].dtype)
print([len(b['features']) for b in posflow.batches(p, 1000, drop_last=True)])
# the shallow evaluation by selector: the same as deepest here (one depth)
a = np.concatenate([b['score'] for b in posflow.batches(p, 500, eval='depth:1')])
d = np.concatenate([b['score'] for b in posflow.batches(p, 500)])
# depth:7: no engine evaluation has it, so a score only for the
# terminal positions (whose evaluation every selector takes)
term = sum(1 for r in posflow.records(p) if any(x['type'] == 'eval' and x['source'] == 'terminal' for x in r.get('exts', [])))
print(bool(np.array_equal(a, d, equal_nan=True)), int(np.isnan(np.concatenate([b['score'] for b in posflow.batches(p, 500, eval='depth:7')])).sum()) + term, term > 0)
# stride 3: three offsets partition the records
ids = [np.concatenate([b['ply'].astype(np.int64) * 2**32 + (b['game_id'] % 2**32).astype(np.int64) for b in posflow.batches(p, 400, stride=3, offset=o)]) for o in range(3)]
allk = np.concatenate([b['ply'].astype(np.int64) * 2**32 + (b['game_id'] % 2**32).astype(np.int64) for b in posflow.batches(p, 400)])
print(sum(len(i) for i in ids), sorted(np.concatenate(ids).tolist()) == sorted(allk.tolist()))
print(posflow.feature_count('ALL'), posflow.feature_count('ALL+H+V+D1+D2'))
# a stride or offset that splits nothing is refused, not wrapped around
bad = []
for s, o in ((-1, 0), (3, 3), (0, 1), (2, -1)):
    try:
        next(posflow.batches(p, 10, stride=s, offset=o))
    except ValueError:
        bad.append((s, o))
print(bad)
# the other side's view is of the side to move's only
try:
    next(posflow.batches(p, 10, perspective='white', opposite=True))
except ValueError:
    print('opposite white refused')
"
	assert_success
	assert_output "[1000, 1000, 817]
['best', 'features', 'game_id', 'move', 'ply', 'result', 'score', 'value']
int32 32 float32 float32 float32 int32 uint64
[1000, 1000]
True 2817 True
2817 True
768 1320
[(-1, 0), (3, 3), (0, 1), (2, -1)]
opposite white refused"
}

@test "batches(value=...): the value target of a method, of several; the last by default" {
	softtarget --value tanh --value wdl "$BATS_FILE_TMPDIR/rich.pos" -o two.pos 2>/dev/null
	run "$PY" -c "
import numpy as np, posflow
recs = list(posflow.records('two.pos'))
def want(method):
    out = []
    for r in recs:
        v = [x['target'] for x in r.get('exts', []) if x['type'] == 'value' and (method is None or x['method'] == method)]
        out.append(v[-1] if v else np.nan)
    return np.array(out, np.float32)
def got(method):
    return np.concatenate([b['value'] for b in posflow.batches('two.pos', 300, value=method)])
for m in ('tanh', 'wdl_engine', None, 'linear'):
    print(m, bool(np.array_equal(got(m), want(m), equal_nan=True)), int(np.isnan(got(m)).sum()))
print(bool(np.array_equal(got(None), got('wdl_engine'), equal_nan=True)), bool(np.array_equal(got('tanh'), got('wdl_engine'), equal_nan=True)))
"
	assert_success
	assert_output "tanh True 0
wdl_engine True 0
None True 0
linear True 2817
True False"
	# wdl: either form softtarget --value wdl writes (the sigmoid, method
	# 3, or the engine's W/D/L, method 4); wdl_engine only the engine's
	v() { printf '%02x000000%016d0000803f%s' "$1" 0 "$2"; }
	printf '%s\n' "startpos game=1 ply=0 ext=6:$(v 3 0000803e)" \
	    "startpos game=1 ply=1 ext=6:$(v 4 0000403f)" \
	    "startpos game=1 ply=2 ext=6:$(v 1 0000003f)" \
	    "startpos game=1 ply=3 ext=6:$(v 3 0000803e) ext=6:$(v 4 0000403f)" |
	    "$MKREC" > wdl.pos
	run "$PY" -c "
import posflow
for m in ('wdl', 'wdl_engine', 'tanh', None):
    print(m, [float(x) for b in posflow.batches('wdl.pos', 10, value=m) for x in b['value']])
"
	assert_success
	assert_output "wdl [0.25, 0.75, nan, 0.75]
wdl_engine [nan, 0.75, nan, 0.75]
tanh [nan, nan, 0.5, nan]
None [0.25, 0.75, 0.5, 0.75]"
}

@test "damage: records before it come first, then posflow.Error names the file and record; errors='warn' goes on" {
	posdump -c "$BATS_FILE_TMPDIR/rich.pos" >/dev/null
	"$PY" -c "
import posflow
" || fail "import"
	# two copies of the stream, the second with a flipped byte in its
	# first block's payload: the block is dropped whole
	cp "$BATS_FILE_TMPDIR/rich.pos" a.pos
	cp "$BATS_FILE_TMPDIR/rich.pos" b.pos
	printf '\xff' | dd of=b.pos bs=1 seek=100 conv=notrunc 2>/dev/null
	run "$PY" -c "
import posflow
n = 0
try:
    for b in posflow.batches(['a.pos', 'b.pos'], 500):
        n += len(b['features'])
except posflow.Error as e:
    print('error after', n, ':', e)
"
	assert_success
	assert_output --regexp '^error after 2817 : b\.pos: .*checksum'
	# with drop_last, every batch is whole: the short one before the
	# damage is dropped, then the error raised
	run "$PY" -c "
import posflow
sizes = []
try:
    for b in posflow.batches(['a.pos', 'b.pos'], 500, drop_last=True):
        sizes.append(len(b['features']))
except posflow.Error as e:
    print(sorted(set(sizes)), sum(sizes), 'then', type(e).__name__)
"
	assert_success
	assert_output "[500] 2500 then Error"
	run "$PY" -W always -c "
import posflow
print(sum(len(b['features']) for b in posflow.batches(['a.pos', 'b.pos'], 500, errors='warn')))
print(sum(1 for r in posflow.records(['b.pos'], errors='ignore')))
"
	assert_success
	# the damaged block is lost, everything else is read
	n=$(posdump -c b.pos 2>/dev/null | cut -d' ' -f1)
	[ "$n" -lt 2817 ] && [ "$n" -gt 2000 ]
	assert_line "$((2817 + n))"
	assert_line "$n"
	assert_output --partial "RuntimeWarning"
	# a missing file and bad options
	run "$PY" -c "
import posflow
try:
    list(posflow.batches('nonexistent.pos', 10))
except posflow.Error as e:
    print(e)
try:
    posflow.batches('a.pos', features='ALL+X').__next__()
except ValueError as e:
    print(e)
"
	assert_success
	assert_line "nonexistent.pos: No such file or directory"
	assert_line --partial "unknown feature block 'X'"
}

@test "damage late in a zstd shard: the records of the blocks before it come first, then posflow.Error names the shard and the record" {
	# a small shard (less than the reader decodes at once), two blocks
	d="$BATS_FILE_TMPDIR/shards"
	f=$(jq -r '[.shards[] | select(.split == "val")][0].file' "$d/manifest.json")
	cp "$d/$f" bad.pos.zst
	# libzstd hands out nothing of a call that fails, and the reader
	# gave it the whole shard at once: damage anywhere in it lost every
	# record before it, and the error ('zstd: ... at offset 0') named
	# none
	run "$PY" -c "
import os, posflow
key = lambda b: list(zip(b['game_id'].tolist(), b['ply'].tolist()))
good = [k for b in posflow.batches('$d/$f', 1000) for k in key(b)]
with open('bad.pos.zst', 'r+b') as f:
    f.seek(os.path.getsize('bad.pos.zst') * 9 // 10)
    c = f.read(1)
    f.seek(-1, os.SEEK_CUR)
    f.write(bytes([c[0] ^ 0xff]))
got = []
try:
    for b in posflow.batches('bad.pos.zst', 10):
        got.extend(key(b))
    print('no error')
except posflow.Error as e:
    print(len(good) > 50, len(got) > len(good) // 2, got == good[:len(got)])
    print(e)
"
	assert_success
	assert_line --index 0 "True True True"
	assert_line --index 1 --regexp '^bad\.pos\.zst: .*records? [0-9]+'
	# errors='ignore': no record of a damaged block.  The failing call
	# cut a block short, and its records before the cut were handed out
	# unchecked, damaged ones among them.
	f=$(jq -r '[.shards[] | select(.split == "train")][0].file' "$d/manifest.json")
	run "$PY" -c "
import os, shutil, posflow
good = {(r['game'], r['ply']): r for r in posflow.records('$d/$f')}
wrong = 0
for i in range(9, 17):
    shutil.copy('$d/$f', 'c.pos.zst')
    with open('c.pos.zst', 'r+b') as f:
        f.seek(os.path.getsize('c.pos.zst') * i // 20)
        c = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([c[0] ^ 0xff]))
    wrong += sum(good.get((r['game'], r['ply'])) != r
                 for r in posflow.records('c.pos.zst', errors='ignore'))
print(len(good) > 300, wrong)
"
	assert_success
	assert_output "True 0"
}

@test "a zstd shard whose frame checksum alone is damaged: every record, then posflow.Error naming the shard and the last record" {
	d="$BATS_FILE_TMPDIR/shards"
	f=$(jq -r '[.shards[] | select(.split == "val")][0].file' "$d/manifest.json")
	cp "$d/$f" bad.pos.zst
	# the frame's last 4 bytes are its XXH64: found wrong after the
	# end block, the message named an offset and no record
	run "$PY" -c "
import os, posflow
good = sum(len(b['ply']) for b in posflow.batches('$d/$f', 1000))
with open('bad.pos.zst', 'r+b') as f:
    f.seek(-2, os.SEEK_END)
    c = f.read(1)
    f.seek(-1, os.SEEK_CUR)
    f.write(bytes([c[0] ^ 0xff]))
got = 0
try:
    for b in posflow.batches('bad.pos.zst', 10):
        got += len(b['ply'])
    print('no error')
except posflow.Error as e:
    print(good, got)
    print(e)
"
	assert_success
	n=$(jq '[.shards[] | select(.split == "val")][0].records' "$d/manifest.json")
	assert_line --index 0 "$n $n"
	assert_line --index 1 --regexp "^bad\.pos\.zst: zstd: .* at offset [0-9]+ after record $n\$"
}

@test "errors= other than raise, warn or ignore is a ValueError, not damage passed over in silence" {
	cp "$BATS_FILE_TMPDIR/rich.pos" b.pos
	printf '\xff' | dd of=b.pos bs=1 seek=100 conv=notrunc 2>/dev/null
	run "$PY" -W always -c "
import posflow
for f in (lambda: posflow.batches('b.pos', 500, errors='warning'),
          lambda: posflow.records('b.pos', errors='Raise')):
    try:
        print(sum(1 for _ in f()))
    except ValueError as e:
        print(e)
"
	assert_success
	assert_output "posflow: errors is 'raise', 'warn' or 'ignore'
posflow: errors is 'raise', 'warn' or 'ignore'"
}

@test "an evaluation of a score kind posflow(5) does not define is an error naming the record, never centipawns" {
	eval_hex 900 2
	printf '%s\n' "startpos game=1 result=1-0 eval=cp:30@depth:5" \
	    "startpos game=2 result=1-0 ext=2:$HEX" | "$MKREC" > k.pos
	run "$PY" -W error -c "
import posflow
n = 0
try:
    for b in posflow.batches('k.pos', 1, value='tanh'):
        print(b['score'].tolist())
except posflow.Error as e:
    print(e)
try:
    posflow.batches('k.pos', value='nonsense').__next__()
except ValueError as e:
    print(type(e).__name__)
"
	assert_success
	assert_output "[30.0]
k.pos: record 2: malformed evaluation
ValueError"
}

@test "ShardDataset: every record once per epoch over 2 ranks x 2 workers, epochs reshuffled, reproducible" {
	"$PY" -c 'import torch' 2>/dev/null || fail "no torch for $PY (Debian: python3-torch)"
	# (stderr apart: torch warns that 9 consumers exceed the 2 cores)
	run --separate-stderr "$PY" "$TORCHCHECK" epochs "$BATS_FILE_TMPDIR/shards"
	assert_success
	assert_output --regexp '^epochs: [0-9]+ records once per epoch over 2 ranks x 2 workers \(3 shards\), and over 3 x 3; epochs differ in order; persistent workers follow set_epoch$'
	# a negative seed or epoch is refused where it is given, not at the
	# first batch
	run "$PY" -c "
from posflow.torch import ShardDataset
d = '$BATS_FILE_TMPDIR/shards'
for f in (lambda: ShardDataset(d, seed=-1), lambda: ShardDataset(d).set_epoch(-1)):
    try:
        f()
    except ValueError as e:
        print(e)
"
	assert_success
	assert_output "posflow: seed must not be negative
posflow: epoch must not be negative"
}

@test "ShardDataset: with several ranks every rank gets the same number of whole batches, as epoch_batches() says, whatever the shard count" {
	"$PY" -c 'import torch' 2>/dev/null || fail "no torch for $PY (Debian: python3-torch)"
	run --separate-stderr "$PY" "$TORCHCHECK" even "$BATS_FILE_TMPDIR/shards"
	assert_success
	assert_output "even: equal whole batches on every rank, as epoch_batches() says, over 3 shards"
}

@test "ShardDataset: a damaged shard: the rows before the damage, then posflow.Error naming it, shuffled or not, with drop_last or not" {
	"$PY" -c 'import torch' 2>/dev/null || fail "no torch for $PY (Debian: python3-torch)"
	run "$PY" "$TORCHCHECK" damage "$BATS_FILE_TMPDIR/shards"
	assert_success
	assert_output "damage: the rows before the damage, then the error naming the shard, shuffled or not, with drop_last or not, on 1 and 2 ranks"
}

@test "ShardDataset: even=True with errors warn or ignore: a rank left short by a damaged shard reads its shards again, so every rank takes the same number of steps" {
	"$PY" -c 'import torch' 2>/dev/null || fail "no torch for $PY (Debian: python3-torch)"
	run --separate-stderr "$PY" "$TORCHCHECK" evendamage "$BATS_FILE_TMPDIR/shards"
	assert_success
	assert_output "evendamage: the same number of batches on every rank, as epoch_batches() says, though a shard is damaged; none at all is an error"
}

@test "training: a linear model on the 768 features, fed by ShardDataset, lowers its loss" {
	"$PY" -c 'import torch' 2>/dev/null || fail "no torch for $PY (Debian: python3-torch)"
	run "$PY" "$TORCHCHECK" train "$BATS_FILE_TMPDIR/shards"
	assert_success
	assert_output --regexp '^train: 300 steps, loss 0\.[0-9]+ over the first 20, 0\.[0-9]+ over the last 20$'
}

@test "make install puts the library and the module under PREFIX, and the installed module loads it" {
	san=
	ldd "$POSFLOW_LIB" | grep -q libasan && san=1
	cd "$TOP"
	run make -s install SANITIZE=$san BUILD="${BUILD_DIR#$TOP/}" PREFIX="$BATS_TEST_TMPDIR/p" DESTDIR=
	assert_success
	cd "$BATS_TEST_TMPDIR"
	[ -f p/lib/libposflow.so.0 ] && [ -L p/lib/libposflow.so ]
	[ -f p/lib/python3/dist-packages/posflow/__init__.py ]
	[ -f p/lib/python3/dist-packages/posflow/torch.py ]
	run env -u POSFLOW_LIB -u POSFLOW_BUILD PYTHONPATH=p/lib/python3/dist-packages \
		"$PY" -c 'import posflow; print(posflow._lib._name, posflow.version())'
	assert_success
	assert_output --regexp "^$BATS_TEST_TMPDIR/p/lib/libposflow.so.0 posflow [0-9.]+$"
}

@test "POSFLOW_LIB that does not load is an import error naming it, not another library found instead" {
	run env POSFLOW_LIB="$BATS_TEST_TMPDIR/nonexistent.so" "$PY" -c \
		'import posflow; print(posflow._lib._name)'
	assert_failure
	assert_output --partial "POSFLOW_LIB=$BATS_TEST_TMPDIR/nonexistent.so"
	# the one named is the one loaded
	run "$PY" -c 'import posflow; print(posflow._lib._name)'
	assert_success
	assert_output "$POSFLOW_LIB"
}
