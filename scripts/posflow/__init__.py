"""posflow: read posflow streams and shard directories from Python.

The reading is done by libposflow.so (the same C code as the tools) through
ctypes; nothing is compiled at import time.

    import posflow
    for rec in posflow.records("out/train-00000.pos.zst"):
        print(rec["fen"], rec["result"])          # as posdump --json shows it
    for b in posflow.batches("out/", split="train", batch_size=4096):
        b["features"]      # int32 [n, 32]: ALL-768 indices, -1 padded
        b["value"], b["score"], b["result"]        # float32 [n]

See README.md ("Python and PyTorch") for every option and key, and
posflow.torch.ShardDataset for a PyTorch IterableDataset over a shard
directory.
"""

import ctypes
import json
import os
import warnings

import numpy as np

__all__ = ["Error", "records", "batches", "manifest", "shard_paths",
           "feature_count", "version", "POLICY_SIZE"]

POLICY_SIZE = 1858          # lczero-training's policy index
_FEATURE_BLOCKS = {"ALL": (0x01, 768), "H": (0x02, 96), "V": (0x04, 96),
                   "D1": (0x08, 180), "D2": (0x10, 180)}
_BLOCK = 32                 # indices per block in a row
_VALUE_METHODS = {None: 0, "tanh": 1, "logistic": 2, "wdl": 3,
                  "wdl_engine": 4, "linear": 5}


class Error(Exception):
    """Damaged input or a read error: "file: record N: reason"."""


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        from . import _install          # written by make install
        yield os.path.join(_install.LIBDIR, "libposflow.so.0")
    except ImportError:
        pass
    # In the source tree: scripts/posflow -> $BUILD/libposflow.so
    top = os.path.dirname(os.path.dirname(here))
    for build in (os.environ.get("POSFLOW_BUILD"),
                  os.path.join(top, os.environ.get("BUILD", "build"))):
        if build:
            yield os.path.join(build, "libposflow.so")
    yield "libposflow.so.0"


def _load():
    env = os.environ.get("POSFLOW_LIB")
    if env:
        # the library asked for, or none: another one found instead would
        # hide a mistyped path (or a sanitizer build not being tested)
        try:
            return ctypes.CDLL(env)
        except OSError as e:
            raise ImportError("posflow: POSFLOW_LIB=%s: %s" % (env, e))
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("posflow: libposflow.so not found (set POSFLOW_LIB "
                      "or run make); tried: " + ", ".join(tried))


_lib = _load()


class _Opts(ctypes.Structure):
    _fields_ = [("features", ctypes.c_uint),
                ("perspective", ctypes.c_int),
                ("policy_width", ctypes.c_int),
                ("eval", ctypes.c_char_p),
                ("value_method", ctypes.c_int),
                ("stride", ctypes.c_uint64),
                ("offset", ctypes.c_uint64)]


_P = ctypes.c_void_p
_BATCH_FIELDS = ["features", "features_opp", "features_q", "features_r",
                 "has_pqr", "value", "score", "result", "policy_index",
                 "policy_prob", "planes", "move", "best", "ply",
                 "game_id"]


class _Batch(ctypes.Structure):
    _fields_ = [(name, _P) for name in _BATCH_FIELDS]


_lib.pf_loader_open.restype = _P
_lib.pf_loader_open.argtypes = [ctypes.POINTER(ctypes.c_char_p),
                                ctypes.c_size_t, ctypes.POINTER(_Opts),
                                ctypes.c_char_p, ctypes.c_size_t]
_lib.pf_loader_width.restype = ctypes.c_int
_lib.pf_loader_width.argtypes = [_P]
_lib.pf_loader_feature_count.restype = ctypes.c_int
_lib.pf_loader_feature_count.argtypes = [_P]
_lib.pf_loader_fill.restype = ctypes.c_long
_lib.pf_loader_fill.argtypes = [_P, ctypes.POINTER(_Batch), ctypes.c_size_t]
_lib.pf_loader_next_json.restype = ctypes.c_int
_lib.pf_loader_next_json.argtypes = [_P, ctypes.POINTER(ctypes.c_void_p),
                                     ctypes.POINTER(ctypes.c_size_t)]
_lib.pf_loader_error.restype = ctypes.c_char_p
_lib.pf_loader_error.argtypes = [_P]
_lib.pf_loader_free.restype = None
_lib.pf_loader_free.argtypes = [_P]
_lib.pf_version.restype = ctypes.c_char_p
_lib.pf_version.argtypes = []


def version():
    """The library's version, "posflow X.Y.Z"."""
    return _lib.pf_version().decode()


def _blocks(features):
    mask = 0
    for name in features.upper().replace(" ", "").split("+"):
        if name not in _FEATURE_BLOCKS:
            raise ValueError("posflow: unknown feature block %r (ALL, H, V, "
                             "D1, D2, joined with +)" % name)
        mask |= _FEATURE_BLOCKS[name][0]
    return mask


def feature_count(features="ALL"):
    """How many distinct indices a feature set has (768 for ALL)."""
    m = _blocks(features)
    return sum(n for bit, n in _FEATURE_BLOCKS.values() if m & bit)


def manifest(directory):
    """A shard directory's manifest.json as a dict."""
    with open(os.path.join(directory, "manifest.json")) as f:
        return json.load(f)


def shard_paths(directory, split=None):
    """The shard files of a directory (of one split), in manifest order."""
    m = manifest(directory)
    out = [os.path.join(directory, s["file"]) for s in m["shards"]
           if split is None or s["split"] == split]
    if split is not None and not out and split not in m.get("splits", {}):
        raise ValueError("posflow: %s: no split %r" % (directory, split))
    return out


def _paths(paths, split=None):
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    out = []
    for p in paths:
        p = os.fspath(p)
        if isinstance(p, bytes):
            p = p.decode()
        if os.path.isdir(p):
            out.extend(shard_paths(p, split))
        else:
            out.append(p)
    return out


class _Loader:
    def __init__(self, paths, features="ALL", perspective="stm",
                 policy_width=0, eval=None, value=None, stride=0, offset=0):
        self._h = None          # for close() when a check below raises
        if perspective not in ("stm", "white"):
            raise ValueError("posflow: perspective is 'stm' or 'white'")
        if value not in _VALUE_METHODS:
            raise ValueError("posflow: value is one of tanh, logistic, wdl, "
                             "wdl_engine, linear or None")
        if int(stride) < 0 or int(offset) < 0 or \
                int(offset) >= max(int(stride), 1):
            raise ValueError("posflow: stride and offset are whole numbers "
                             "with offset < stride (or both 0: every "
                             "record)")
        self.paths = paths
        arr = (ctypes.c_char_p * max(len(paths), 1))(
            *[os.fsencode(p) for p in paths])
        self._opts = _Opts(_blocks(features),
                           0 if perspective == "stm" else 1,
                           int(policy_width),
                           None if eval is None else eval.encode(),
                           _VALUE_METHODS[value],
                           int(stride), int(offset))
        err = ctypes.create_string_buffer(256)
        self._h = _lib.pf_loader_open(arr, len(paths),
                                      ctypes.byref(self._opts), err, 256)
        if not self._h:
            raise ValueError("posflow: " + err.value.decode(errors="replace"))
        self.width = _lib.pf_loader_width(self._h)
        self.features = _lib.pf_loader_feature_count(self._h)

    def error(self):
        return _lib.pf_loader_error(self._h).decode(errors="replace")

    def close(self):
        if self._h:
            _lib.pf_loader_free(self._h)
            self._h = None

    def __del__(self):
        self.close()


def _check_errors(errors):
    if errors not in ("raise", "warn", "ignore"):
        raise ValueError("posflow: errors is 'raise', 'warn' or 'ignore'")


def _damage(msg, errors):
    if errors == "raise":
        raise Error(msg)
    if errors == "warn":
        warnings.warn("posflow: " + msg, RuntimeWarning, stacklevel=3)


def records(paths, split=None, errors="raise"):
    """Yield one dict per record, with the keys and values posdump --json
    shows.  paths: a stream, a shard directory (split chooses one) or a
    list of them.  errors: "raise" (posflow.Error), "warn" or "ignore" for
    damaged input; records before the damage are yielded first."""
    _check_errors(errors)
    loader = _Loader(_paths(paths, split))
    ptr = ctypes.c_void_p()
    n = ctypes.c_size_t()
    try:
        while True:
            rc = _lib.pf_loader_next_json(loader._h, ctypes.byref(ptr),
                                          ctypes.byref(n))
            if rc == 0:
                return
            if rc < 0:
                _damage(loader.error(), errors)
                continue
            yield json.loads(ctypes.string_at(ptr.value, n.value))
    finally:
        loader.close()


def _ptr(a):
    return a.ctypes.data_as(_P) if a is not None else None


def batches(paths, batch_size=1024, split=None, features="ALL",
            perspective="stm", opposite=False, policy=False, policy_width=64,
            pqr=False, planes=False, eval=None, value=None, drop_last=False, stride=0,
            offset=0, errors="raise"):
    """Yield dicts of NumPy arrays, batch_size rows each (the last batch
    may be shorter unless drop_last; with drop_last, the short batch
    before damage is dropped too, and the error raised).

    Always: features (int32 [n, 32 * blocks], -1 padded), value, score
    (centipawns, side to move), result (1 / 0.5 / 0 for the side to move)
    as float32 [n] with NaN where the record has none, move (int32 played
    move's policy index, -1), best (int32: the best move of the evaluation
    eval chooses, -1), ply (int32), game_id (uint64).
    opposite=True adds features_opp (the other side's view; with
    perspective "stm" only);
    policy=True adds policy_index (int32 [n, policy_width], -1 padded) and
    policy_prob (float32, 0 padded); pqr=True adds features_q, features_r
    and has_pqr (bool); planes=True adds planes (uint8 [n, 14, 8, 8]: seed
    004's 12 piece planes, the side to move's first, and the squares each
    side attacks, from the side to move's view).  features: "ALL", or
    blocks joined with "+", e.g.
    "ALL+H+V+D1+D2".  eval: the evaluation selector for score (deepest,
    first, last, pgn, depth:N, nodes:N, movetime:N).  value: the value
    target of that method (tanh, logistic, wdl, wdl_engine, linear; wdl
    takes either form softtarget --value wdl writes, the engine's W/D/L or
    the sigmoid; None: the record's last, the one softtarget wrote last).  stride/offset keep
    record i when i % stride == offset (splitting one input over workers;
    0 <= offset < stride, or both 0 for every record: else ValueError).
    """
    if batch_size < 1:
        raise ValueError("posflow: batch_size must be positive")
    if opposite and perspective != "stm":
        raise ValueError("posflow: opposite=True is the other side's "
                         "view of perspective='stm' only")
    _check_errors(errors)
    loader = _Loader(_paths(paths, split), features, perspective,
                     policy_width if policy else 0, eval, value, stride,
                     offset)
    w, k = loader.width, (policy_width if policy else 0)
    try:
        while True:
            a = {
                "features": np.empty((batch_size, w), np.int32),
                "value": np.empty(batch_size, np.float32),
                "score": np.empty(batch_size, np.float32),
                "result": np.empty(batch_size, np.float32),
                "move": np.empty(batch_size, np.int32),
                "best": np.empty(batch_size, np.int32),
                "ply": np.empty(batch_size, np.int32),
                "game_id": np.empty(batch_size, np.uint64),
            }
            if opposite:
                a["features_opp"] = np.empty((batch_size, w), np.int32)
            if policy:
                a["policy_index"] = np.empty((batch_size, k), np.int32)
                a["policy_prob"] = np.empty((batch_size, k), np.float32)
            if planes:
                a["planes"] = np.empty((batch_size, 14, 8, 8), np.uint8)
            if pqr:
                a["features_q"] = np.empty((batch_size, w), np.int32)
                a["features_r"] = np.empty((batch_size, w), np.int32)
                a["has_pqr"] = np.empty(batch_size, np.int8)
            got, end, damage = 0, False, None
            while got < batch_size:
                # Rows got.. of each array: a slice along the first axis
                # of a C-contiguous array is contiguous.
                b = _Batch(*[_ptr(a[name][got:]) if name in a else None
                             for name in _BATCH_FIELDS])
                n = _lib.pf_loader_fill(loader._h, ctypes.byref(b),
                                        batch_size - got)
                if n < 0:
                    if errors == "raise":
                        # the rows before the damage first
                        damage = loader.error()
                        break
                    _damage(loader.error(), errors)
                    continue
                if n == 0:
                    end = True
                    break
                got += n
            if damage is None and (got == 0 or
                                   (drop_last and got < batch_size)):
                return
            if "has_pqr" in a:
                a["has_pqr"] = a["has_pqr"].view(np.bool_)
            if got < batch_size:
                a = {key: v[:got] for key, v in a.items()}
            if got > 0 and not (drop_last and got < batch_size):
                yield a
            if damage is not None:
                raise Error(damage)
            if end:
                return
    finally:
        loader.close()
