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
dealt out to the consumers, the DataLoader workers of every distributed
rank: with S shards and C consumers, consumer c reads shards c, c + C, ...
of that order; when there are fewer shards than consumers, every consumer
reads every shard and keeps every C-th record of it instead.  Either way
each record is yielded exactly once per epoch over all consumers.  Within a
consumer, rows are mixed across shuffle_batches consecutive batches with a
permutation drawn from (seed, epoch, consumer).

Ranks: rank and world_size default to torch.distributed's when it is
initialised, else to the RANK and WORLD_SIZE environment variables, else
0 and 1.  Tensors have the dtypes of posflow.batches, except game_id:
int64 with the same 64 bits (torch has no uint64).

Consumers get whole shards, so their shares are equal only when C divides
S (shards of equal size, as shard --shards writes them) or S < C: then
the number of batches differs by about one per worker between ranks.
Otherwise some consumers get one shard more than others, and a rank can
get many more batches than another (S = 3 over 2 ranks without workers:
two shards against one).  A DistributedDataParallel job needs equal
counts: write a multiple of world_size * num_workers shards, or use
drop_last and join() or a fixed number of steps per epoch.
"""

import multiprocessing
import multiprocessing.context
import os

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
    """

    def __init__(self, directory, split="train", batch_size=1024, seed=0,
                 shuffle=True, shuffle_batches=8, rank=None,
                 world_size=None, **batch_options):
        super().__init__()
        self.directory = directory
        self.split = split
        self.shards = posflow.shard_paths(directory, split)
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.shuffle_batches = max(1, int(shuffle_batches))
        self.rank, self.world_size = _rank_world(rank, world_size)
        if not 0 <= self.rank < self.world_size:
            raise ValueError("posflow: rank %d not in 0..%d"
                             % (self.rank, self.world_size - 1))
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

    def plan(self, consumer, consumers):
        """(paths, stride, offset) that consumer reads this epoch."""
        order = list(range(len(self.shards)))
        if self.shuffle:
            rng = np.random.default_rng([self.seed, self._current_epoch()])
            order = list(rng.permutation(len(self.shards)))
        paths = [self.shards[i] for i in order]
        if len(paths) >= consumers:
            return paths[consumer::consumers], 0, 0
        return paths, consumers, consumer

    def __iter__(self):
        consumer, consumers = self._consumer()
        paths, stride, offset = self.plan(consumer, consumers)
        if not paths:
            return
        opts = dict(self.options)
        drop_last = opts.pop("drop_last", False)
        if not self.shuffle or self.shuffle_batches == 1:
            # batches' drop_last: a short batch before damage is dropped
            # and the error raised, not taken for the end
            for b in posflow.batches(paths, self.batch_size, stride=stride,
                                     offset=offset, drop_last=drop_last,
                                     **opts):
                yield _tensors(b)
            return
        it = posflow.batches(paths, self.batch_size, stride=stride,
                             offset=offset, **opts)
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
            yield _tensors({k: v[idx] for k, v in cat.items()})
