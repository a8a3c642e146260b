"""PyTorch checks of the loader (tests/loader.bats).

usage: loader_torch.py epochs DIR     every record once per epoch over
                                      2 ranks x 2 DataLoader workers
       loader_torch.py even DIR       ranks get the same number of
                                      whole batches (epoch_batches()), each
                                      record at most once, few left out
       loader_torch.py damage DIR     a damaged shard in a copy of DIR:
                                      the rows before the damage, then
                                      the error, shuffled or not, with
                                      drop_last or not, on 1 and 2 ranks
       loader_torch.py evendamage DIR with even=True and errors "warn" or
                                      "ignore", ranks short of records
                                      read their shards again: the same
                                      number of batches on every rank
       loader_torch.py train DIR      a linear model on the 768 features
                                      learns: the loss falls
"""

import itertools
import os
import shutil
import sys
import tempfile
import warnings

import numpy as np
import torch

import posflow
from posflow.torch import ShardDataset


def fail(msg):
    print("loader_torch: " + msg)
    sys.exit(1)


def keys_of(batch):
    # game ids: uint64 from posflow.batches, int64 (same bits) in tensors
    return [(g % (1 << 64), p) for g, p in zip(batch["game_id"].tolist(),
                                               batch["ply"].tolist())]


def epoch_keys(directory, epoch, workers=2, ranks=2, **kw):
    seen = []
    for rank in range(ranks):
        kw.setdefault("even", False)
        ds = ShardDataset(directory, "train", batch_size=50, seed=11,
                          rank=rank, world_size=ranks, **kw)
        ds.set_epoch(epoch)
        dl = torch.utils.data.DataLoader(ds, batch_size=None,
                                         num_workers=workers)
        for b in dl:
            if not isinstance(b["features"], torch.Tensor):
                fail("a batch holds no tensors")
            seen.extend(keys_of(b))
    return seen


def check_epochs(directory):
    want = []
    for b in posflow.batches(directory, 1000, split="train"):
        want.extend(keys_of(b))
    if len(set(want)) != len(want):
        fail("the input repeats a (game, ply): the check needs unique keys")
    nshards = len(posflow.shard_paths(directory, "train"))
    orders = []
    for epoch in (0, 1):
        got = epoch_keys(directory, epoch)
        if len(got) != len(want) or sorted(got) != sorted(want):
            dup = len(got) - len(set(got))
            fail("epoch %d: %d records (%d repeated), want each of %d once"
                 % (epoch, len(got), dup, len(want)))
        orders.append(got)
    if orders[0] == orders[1]:
        fail("epochs 0 and 1 came in the same order")
    if epoch_keys(directory, 1) != orders[1]:
        fail("epoch 1 read twice came in different orders")
    # more consumers than shards: every shard read by all, every C-th kept
    got = epoch_keys(directory, 0, workers=3, ranks=3)
    if sorted(got) != sorted(want):
        fail("9 consumers over %d shards: records lost or repeated" % nshards)
    # persistent workers keep their copy of the dataset across epochs:
    # set_epoch reaches them all the same, forked or spawned
    for ctx in ("fork", "spawn"):
        ds = ShardDataset(directory, "train", batch_size=50, seed=11,
                          rank=0, world_size=1)
        dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2,
                                         persistent_workers=True,
                                         multiprocessing_context=ctx)
        for epoch in (0, 1, 0):
            ds.set_epoch(epoch)
            got = [k for b in dl for k in keys_of(b)]
            if got != epoch_keys(directory, epoch, ranks=1):
                fail("persistent workers (%s), epoch %d: not the order of "
                     "fresh workers" % (ctx, epoch))
    print("epochs: %d records once per epoch over 2 ranks x 2 workers "
          "(%d shards), and over 3 x 3; epochs differ in order; persistent "
          "workers follow set_epoch" % (len(want), nshards))


def check_even(directory):
    want = set()
    for b in posflow.batches(directory, 1000, split="train"):
        want.update(keys_of(b))
    nshards = len(posflow.shard_paths(directory, "train"))
    # 2 ranks without workers: fewer shards than consumers or not, a
    # multiple of them or not
    for ranks, workers, size in ((2, 0, 50), (2, 0, 7), (3, 2, 20),
                                 (nshards, 0, 30), (nshards + 1, 1, 9)):
        consumers = ranks * max(1, workers)
        for shuffle in (False, True):
            what = "%d ranks x %d workers, batches of %d, shuffle=%s" % (
                ranks, workers, size, shuffle)
            seen, steps = [], []
            for rank in range(ranks):
                # even is the default with more than one rank
                ds = ShardDataset(directory, "train", batch_size=size,
                                  seed=11, shuffle=shuffle, rank=rank,
                                  world_size=ranks)
                ds.set_epoch(1)
                n = 0
                for b in torch.utils.data.DataLoader(
                        ds, batch_size=None, num_workers=workers):
                    if len(b["ply"]) != size:
                        fail("%s: a batch of %d rows" % (what, len(b["ply"])))
                    seen.extend(keys_of(b))
                    n += 1
                if n != ds.epoch_batches(workers):
                    fail("%s: rank %d: %d batches, epoch_batches() says %d"
                         % (what, rank, n, ds.epoch_batches(workers)))
                steps.append(n)
            if len(set(steps)) != 1:
                fail("%s: batches per rank %s" % (what, steps))
            if len(seen) != len(set(seen)) or not set(seen) <= want:
                fail("%s: records repeated or not in the input" % what)
            # the consumers' shares differ by at most the shards' sizes;
            # each consumer leaves out less than two batches
            if len(want) - len(seen) >= 2 * size * consumers:
                fail("%s: %d of %d records left out" % (what,
                     len(want) - len(seen), len(want)))
    # a split too small for a batch on every consumer: none, said so
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = ShardDataset(directory, "train", batch_size=len(want), seed=11,
                          rank=0, world_size=2)
        n = sum(1 for _ in ds)
    if n != 0 or not any("fill no batch" in str(w.message) for w in caught):
        fail("batches larger than a rank's share: %d batches, warnings %s"
             % (n, [str(w.message) for w in caught]))
    print("even: equal whole batches on every rank, as epoch_batches() "
          "says, over %d shards" % nshards)


def check_damage(directory):
    # the second shard: read whole by rank 1 of 2; the third: by both,
    # every other record, after a shard read whole
    for shard in (1, 2):
        tmp = tempfile.mkdtemp()
        try:
            hits = damage(directory, tmp, shard)
        finally:
            shutil.rmtree(tmp)
        if hits[1:] != ([False, True] if shard == 1 else [True, True]):
            fail("shard %d damaged: ranks 0 and 1 of 2 read the damage: %s"
                 % (shard, hits[1:]))
    print("damage: the rows before the damage, then the error naming the "
          "shard, shuffled or not, with drop_last or not, on 1 and 2 ranks")


def damage(directory, tmp, shard):
    # a copy of DIR with a byte of a training shard flipped; whether the
    # damage was read, by rank 0 of 1, ranks 0 and 1 of 2 (unshuffled)
    damaged_copy(directory, tmp, [shard], 0.5)
    bad = posflow.shard_paths(tmp, "train")[shard]
    # one rank (the shards whole), and two (3 shards: one whole for each,
    # then every other record of the third, damaged or not)
    hits = []
    for shuffle, drop_last, ranks, rank in itertools.product(
            (False, True), (False, True), (1, 2), (0, 1)):
        if rank >= ranks:
            continue
        what = "shuffle=%s, drop_last=%s, rank %d of %d" % (
            shuffle, drop_last, rank, ranks)
        ds = ShardDataset(tmp, "train", batch_size=50, seed=11,
                          shuffle=shuffle, drop_last=drop_last,
                          rank=rank, world_size=ranks, even=False)
        # the records before the damage, in this epoch's plan
        before, hit = [], False
        try:
            for paths, stride, offset in ds.plan(rank, ranks):
                for b in posflow.batches(paths, 1000, stride=stride,
                                         offset=offset):
                    before.extend(keys_of(b))
        except posflow.Error:
            hit = True
        got, err = [], None
        try:
            for b in torch.utils.data.DataLoader(ds, batch_size=None):
                got.extend(keys_of(b))
        except posflow.Error as e:
            err = str(e)
        if not hit and err is not None:
            fail("%s: an error, yet this rank reads no damage: %s"
                 % (what, err))
        if hit and err is None:
            fail("%s: no error for the damaged shard" % what)
        if hit and not err.startswith(bad + ": "):
            fail("%s: the error does not name the shard: %s"
                 % (what, err))
        if not shuffle and not drop_last:
            hits.append(hit)
        # every row before the damage first, or every row of the rank
        # (in whole batches with drop_last)
        n = len(before) // 50 * 50 if drop_last else len(before)
        if len(got) != n or not set(got) <= set(before):
            fail("%s: %d rows before the error, want %d of the %d "
                 "records before the damage"
                 % (what, len(got), n, len(before)))
    return hits


def damaged_copy(directory, tmp, shards, at):
    # a copy of DIR with a byte of the given training shards flipped, at
    # the fraction at of their size
    for name in os.listdir(directory):
        shutil.copy(os.path.join(directory, name), tmp)
    for i in shards:
        bad = posflow.shard_paths(tmp, "train")[i]
        with open(bad, "r+b") as f:
            f.seek(int(os.path.getsize(bad) * at))
            c = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([c[0] ^ 0xFF]))


def check_evendamage(directory):
    want = set()
    for b in posflow.batches(directory, 1000, split="train"):
        want.update(keys_of(b))
    nshards = len(posflow.shard_paths(directory, "train"))
    tmp = tempfile.mkdtemp()
    try:
        # the second shard cut near its start: the rank that reads it
        # whole runs short
        damaged_copy(directory, tmp, [1], 0.1)
        for errors, shuffle, workers in itertools.product(
                ("warn", "ignore"), (False, True), (0, 2)):
            what = "errors=%s, shuffle=%s, %d workers" % (errors, shuffle,
                                                          workers)
            steps, again = [], 0
            for rank in range(2):
                ds = ShardDataset(tmp, "train", batch_size=50, seed=11,
                                  shuffle=shuffle, rank=rank, world_size=2,
                                  errors=errors)
                n, seen = 0, []
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    for b in torch.utils.data.DataLoader(
                            ds, batch_size=None, num_workers=workers):
                        if len(b["ply"]) != 50:
                            fail("%s: a batch of %d rows"
                                 % (what, len(b["ply"])))
                        seen.extend(keys_of(b))
                        n += 1
                if n != ds.epoch_batches(workers):
                    fail("%s: rank %d: %d batches, epoch_batches() says %d"
                         % (what, rank, n, ds.epoch_batches(workers)))
                if not set(seen) <= want:
                    fail("%s: rows not in the input" % what)
                again += len(seen) - len(set(seen))
                if workers == 0 and errors == "warn":
                    again_said = any("reads its shards again" in
                                     str(w.message) for w in caught)
                    if again_said != (len(seen) != len(set(seen))):
                        fail("%s: rank %d: rows read again %d, said %s"
                             % (what, rank, len(seen) - len(set(seen)),
                                again_said))
                steps.append(n)
            if len(set(steps)) != 1 or again == 0:
                fail("%s: batches per rank %s, rows read again %d"
                     % (what, steps, again))
        shutil.rmtree(tmp)
        tmp = tempfile.mkdtemp()
        # every shard cut at its start: nothing to fill a batch with
        damaged_copy(directory, tmp, range(nshards), 0.0)
        ds = ShardDataset(tmp, "train", batch_size=50, seed=11, rank=0,
                          world_size=2, errors="ignore")
        try:
            n = sum(1 for _ in ds)
            fail("every shard damaged: %d batches, no error" % n)
        except posflow.Error as e:
            if "cannot keep the ranks in step" not in str(e):
                fail("every shard damaged: %s" % e)
    finally:
        shutil.rmtree(tmp)
    print("evendamage: the same number of batches on every rank, as "
          "epoch_batches() says, though a shard is damaged; none at all "
          "is an error")


def check_train(directory):
    torch.manual_seed(0)
    model = torch.nn.EmbeddingBag(posflow.feature_count("ALL") + 1, 1,
                                  mode="sum", padding_idx=768)
    torch.nn.init.zeros_(model.weight)
    bias = torch.zeros(1, requires_grad=True)
    opt = torch.optim.Adam(list(model.parameters()) + [bias], lr=0.01)
    ds = ShardDataset(directory, "train", batch_size=256, seed=3)
    losses, step = [], 0
    for epoch in range(100):
        ds.set_epoch(epoch)
        for b in torch.utils.data.DataLoader(ds, batch_size=None):
            feats = b["features"].long()
            feats[feats < 0] = 768
            target = b["result"]
            keep = ~torch.isnan(target)
            pred = torch.sigmoid(model(feats).squeeze(1) + bias)
            loss = torch.nn.functional.binary_cross_entropy(pred[keep],
                                                            target[keep])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            step += 1
            if step == 300:
                break
        if step == 300:
            break
    first, last = np.mean(losses[:20]), np.mean(losses[-20:])
    print("train: %d steps, loss %.4f over the first 20, %.4f over the "
          "last 20" % (step, first, last))
    if step < 300 or not last < 0.9 * first:
        fail("the loss did not fall by 10%")


if __name__ == "__main__":
    {"epochs": check_epochs, "even": check_even, "damage": check_damage,
     "evendamage": check_evendamage,
     "train": check_train}[sys.argv[1]](sys.argv[2])
