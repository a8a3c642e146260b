"""posflow.torch: a PyTorch IterableDataset over a shard directory.

    from posflow.torch import ShardDataset
    ds = ShardDataset("out/", split="train", batch_size=4096, seed=1)
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
    for epoch in range(10):
        ds.set_epoch(epoch)
        for b in dl:                  # dicts of tensors, as posflow.batches
            ...

The dataset yields whole batches (so the DataLoader takes batch_size=None).
Each epoch the shards are put in a new order drawn from (seed, epoch) and
dealt out to the C consumers, the DataLoader workers of every distributed
rank.  With S = qC + r shards, consumer c reads shards c, c + C, ... of the
first qC whole, then keeps every C-th record of the last r from its c-th
(all of them when S < C): each record goes to one consumer, and the
consumers' shares differ by no more than the shards' sizes do (shard
--shards makes them equal, less the duplicates it drops).  The last r shards are
decompressed by every consumer; a multiple of C shards avoids that.
Within a consumer, rows are mixed across shuffle_batches consecutive
batches with a permutation drawn from (seed, epoch, consumer).

Ranks: rank and world_size default to torch.distributed's when it is
initialised, else to the RANK and WORLD_SIZE environment variables, else
0 and 1.  Tensors have the dtypes of posflow.batches, except game_id:
int64 with the same 64 bits (torch has no uint64).

Every record is yielded once an epoch, except with even=True, the
default with more than one rank: DistributedDataParallel needs the same
number of steps on every rank, so then every consumer yields the same
number of whole batches, the most that the consumer with the fewest
records fills.  That leaves a few records out of each epoch (with shards
of equal size, less than two batches a consumer; others each epoch when
shuffled).  A consumer left short by damaged shards (errors="warn" or
"ignore") reads its shards again for the rest, with a warning.
epoch_batches() gives the number of batches a rank gets in an epoch.
"""

import itertools
import multiprocessing
import multiprocessing.context
import os
import warnings

import numpy as np
import torch
import torch.utils.data

import posflow


def _rank_world(rank, world_size):
    if rank is not None and world_size is not None:
        return rank, world_size
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return (dist.get_rank() if rank is None else rank,
                    dist.get_world_size() if world_size is None
                    else world_size)
    except ImportError:
        pass
    return (int(os.environ.get("RANK", 0)) if rank is None else rank,
            int(os.environ.get("WORLD_SIZE", 1)) if world_size is None
            else world_size)


def _tensors(b):
    # torch has no uint64: game ids become int64 with the same bits
    return {k: torch.from_numpy(v.view(np.int64) if v.dtype == np.uint64
                                else v) for k, v in b.items()}


class ShardDataset(torch.utils.data.IterableDataset):
    """Batches of a shard directory's split as dicts of tensors.

    directory, split: the shard directory (written by shard) and the split
    to read ("train", "val", ...).  batch_size, and every keyword of
    posflow.batches (features, perspective, opposite, policy,
    policy_width, pqr, planes, eval, value, drop_last, errors).  seed:
    the shuffle's seed; shuffle=False reads shards and rows in manifest
    order.
    shuffle_batches: how many batches a consumer mixes rows across.
    even: every consumer yields the same number of whole batches (default:
    when world_size > 1).
    """

    def __init__(self, directory, split="train", batch_size=1024, seed=0,
                 shuffle=True, shuffle_batches=8, rank=None,
                 world_size=None, even=None, **batch_options):
        super().__init__()
        self.directory = directory
        self.split = split
        self.shards = posflow.shard_paths(directory, split)
        records = {os.path.join(directory, e["file"]): e.get("records")
                   for e in posflow.manifest(directory)["shards"]}
        self.records = [records[p] for p in self.shards]
        self.batch_size = batch_size
        self.seed = seed
        if int(seed) < 0:
            raise ValueError("posflow: seed must not be negative")
        self.shuffle = shuffle
        self.shuffle_batches = max(1, int(shuffle_batches))
        self.rank, self.world_size = _rank_world(rank, world_size)
        if not 0 <= self.rank < self.world_size:
            raise ValueError("posflow: rank %d not in 0..%d"
                             % (self.rank, self.world_size - 1))
        self.even = self.world_size > 1 if even is None else bool(even)
        if self.even and None in self.records:
            raise ValueError("posflow: %s: the manifest lacks record counts"
                             " (even=True needs them)" % directory)
        self.options = batch_options
        self.epoch = 0
        # The epoch in shared memory too: DataLoader workers hold copies
        # of the dataset, made once with persistent_workers=True, and
        # read the epoch from here (fork inherits it, spawn passes it).
        self._shared_epoch = multiprocessing.RawValue("q", 0)

    def set_epoch(self, epoch):
        """Use the shard order and mixing of this epoch (call before each
        epoch, as with DistributedSampler; persistent_workers=True
        workers see it too)."""
        if int(epoch) < 0:
            raise ValueError("posflow: epoch must not be negative")
        self.epoch = int(epoch)
        if self._shared_epoch is not None:
            self._shared_epoch.value = self.epoch

    def _current_epoch(self):
        if self._shared_epoch is not None:
            return int(self._shared_epoch.value)
        return self.epoch

    def __getstate__(self):
        state = self.__dict__.copy()
        # shared memory goes only to a process being started (a spawned
        # worker); any other copy (pickle, deepcopy) keeps the number
        if multiprocessing.context.get_spawning_popen() is None:
            state["_shared_epoch"] = None
            state["epoch"] = self._current_epoch()
        return state

    def _consumer(self):
        info = torch.utils.data.get_worker_info()
        workers, worker = (1, 0) if info is None else (info.num_workers,
                                                       info.id)
        return self.rank * workers + worker, self.world_size * workers

    def _order(self):
        order = list(range(len(self.shards)))
        if self.shuffle:
            rng = np.random.default_rng([self.seed, self._current_epoch()])
            order = list(rng.permutation(len(self.shards)))
        return order

    def plan(self, consumer, consumers):
        """What consumer reads this epoch: a list of (paths, stride,
        offset), read in turn as posflow.batches reads them."""
        paths = [self.shards[i] for i in self._order()]
        whole = len(paths) // consumers * consumers
        out = []
        if whole:
            out.append((paths[consumer:whole:consumers], 0, 0))
        if whole < len(paths):
            out.append((paths[whole:], consumers, consumer))
        return out

    def _counts(self, consumers):
        # the records each consumer reads this epoch, from the manifest
        n = [self.records[i] for i in self._order()]
        whole = len(n) // consumers * consumers
        rest = sum(n[whole:])
        return [sum(n[c:whole:consumers]) + rest // consumers +
                (c < rest % consumers) for c in range(consumers)]

    def epoch_batches(self, num_workers=0):
        """The number of batches this rank yields this epoch, with
        num_workers DataLoader workers (with even=False, of undamaged
        shards; even=True yields it whatever errors skips)."""
        workers = max(1, num_workers)
        counts = self._counts(self.world_size * workers)
        drop_last = self.options.get("drop_last", False)
        if self.even:
            return workers * (min(counts) // self.batch_size)
        mine = counts[self.rank * workers:(self.rank + 1) * workers]
        return sum(n // self.batch_size +
                   (not drop_last and n % self.batch_size > 0)
                   for n in mine)

    def __iter__(self):
        consumer, consumers = self._consumer()
        opts = dict(self.options)
        drop_last = opts.pop("drop_last", False) or self.even
        shuffled = self.shuffle and self.shuffle_batches > 1

        def epoch():
            # unshuffled, batches' drop_last: a short batch before damage
            # is dropped and the error raised, not taken for the end
            it = self._read(self.plan(consumer, consumers), opts,
                            drop_last and not shuffled)
            if shuffled:
                it = self._shuffled(it, consumer, drop_last)
            return it

        if self.even:
            counts = self._counts(consumers)
            if sum(counts) > 0 and min(counts) < self.batch_size:
                warnings.warn("posflow: %s, split %s: %d records over %d "
                              "consumers fill no batch of %d each, so "
                              "even=True yields none (even=False yields "
                              "them)" % (self.directory, self.split,
                                         sum(counts), consumers,
                                         self.batch_size))
            it = self._even(epoch, min(counts) // self.batch_size,
                            consumer)
        else:
            it = epoch()
        for b in it:
            yield _tensors(b)

    def _even(self, epoch, quota, consumer):
        # quota batches, however many damaged shards skip (errors="warn"
        # or "ignore"): a consumer that runs short reads its shards
        # again, since a rank with fewer steps hangs the others
        n = 0
        while n < quota:
            it, got = epoch(), 0
            try:
                for b in it:
                    yield b
                    got += 1
                    if n + got == quota:
                        break
            finally:
                it.close()
            n += got
            if n == quota:
                return
            if got == 0:
                raise posflow.Error("%s, split %s: consumer %d read no "
                                    "whole batch of its %d (damaged "
                                    "shards): even=True cannot keep the "
                                    "ranks in step" % (self.directory,
                                                       self.split, consumer,
                                                       quota))
            warnings.warn("posflow: %s, split %s: consumer %d read %d of "
                          "its %d batches (damaged shards): it reads its "
                          "shards again for the rest, so that every rank "
                          "takes the same number of steps"
                          % (self.directory, self.split, consumer, n,
                             quota), RuntimeWarning)

    def _read(self, plan, opts, drop_last):
        # batches of the plan's parts in turn, rows carried over from one
        # part to the next: only the last batch may be short
        size = self.batch_size
        carry = None
        try:
            for paths, stride, offset in plan:
                for b in posflow.batches(paths, size, stride=stride,
                                         offset=offset,
                                         drop_last=drop_last and
                                         len(plan) == 1, **opts):
                    if carry is not None:
                        b = {k: np.concatenate([carry[k], v])
                             for k, v in b.items()}
                        carry = None
                    if len(b["features"]) > size:
                        yield {k: v[:size] for k, v in b.items()}
                        b = {k: v[size:] for k, v in b.items()}
                    if len(b["features"]) < size:
                        carry = b
                    else:
                        yield b
        except posflow.Error:
            # the rows before the damage first, as posflow.batches
            if carry is not None and not drop_last:
                yield carry
            raise
        if carry is not None and not drop_last:
            yield carry

    def _shuffled(self, it, consumer, drop_last):
        rng = np.random.default_rng([self.seed, self._current_epoch(),
                                     consumer, 0x5f])
        pool = []
        while True:
            try:
                b = next(it)
            except StopIteration:
                break
            except posflow.Error:
                # the rows before the damage first, as posflow.batches
                if pool:
                    yield from self._mix(pool, rng, drop_last)
                raise
            pool.append(b)
            if len(pool) == self.shuffle_batches:
                yield from self._mix(pool, rng, drop_last)
                pool = []
        if pool:
            yield from self._mix(pool, rng, drop_last)

    def _mix(self, pool, rng, drop_last):
        cat = {k: np.concatenate([b[k] for b in pool]) for k in pool[0]}
        n = len(cat["features"])
        perm = rng.permutation(n)
        for s in range(0, n, self.batch_size):
            idx = perm[s:s + self.batch_size]
            if drop_last and len(idx) < self.batch_size:
                return
            yield {k: v[idx] for k, v in cat.items()}
