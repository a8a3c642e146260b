"""Reads posexport -F lc0 chunks as lczero-training's chunkparser does
(struct layout of V6TrainingData, planes unpacked with np.unpackbits) and
checks every field against the records' JSON (posflow.records), with the
feature helpers of loader_check.py.  Exits 1 at the first difference.

usage: lc0_check.py CHUNKDIR STREAM
"""

import glob
import gzip
import os
import re
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import posflow                       # noqa: E402
from loader_check import lc0_index, pieces, fail   # noqa: E402

V6 = struct.Struct("<II7432s832sBBBBBBBBfffffffffffffffIHHfI")
assert V6.size == 8356


def piece_planes(fen, us, undo_ep=False):
    """12 planes of fen from colour us's view (mirrored when us is black);
    undo_ep: with the double push that made its en passant square taken
    back (lc0's history fill)."""
    pcs = pieces(fen)
    ep = fen.split()[3]
    if undo_ep and ep != "-":
        sq = (int(ep[1]) - 1) * 8 + "abcdefgh".index(ep[0])
        white = ep[1] == "3"            # white pushed: e2 -> e4
        now, was = (sq + 8, sq - 8) if white else (sq - 8, sq + 8)
        pcs = [(was if s == now else s, c, r) for s, c, r in pcs]
    p = np.zeros((12, 64), np.uint8)
    for s, c, r in pcs:
        if us == 1:
            s ^= 56
        p[(0 if c == us else 6) + r][s] = 1
    return p


START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq"


def history_planes(hist, us):
    """The 8 x 12 piece planes lc0 writes for hist (this position first,
    then the ones before it): where hist runs out, lc0's FEN_ONLY fill,
    nothing after the standard start position, else copies of the oldest
    with its double push taken back."""
    out = np.zeros((8, 12, 64), np.uint8)
    for h in range(8):
        if h < len(hist):
            out[h] = piece_planes(hist[h], us)
        elif " ".join(hist[-1].split()[:3]) != START:
            out[h] = piece_planes(hist[-1], us, undo_ep=True)
    return out


def main(chunkdir, stream):
    recs = [r for r in posflow.records(stream) if r["move"] != "-"]
    files = sorted(glob.glob(os.path.join(chunkdir, "training.*.gz")),
                   key=lambda f: int(re.findall(r"\d+", f)[-1]))
    rows = []
    for f in files:
        data = gzip.open(f).read()
        if len(data) % 8356:
            fail("%s: %d bytes, not a multiple of 8356" % (f, len(data)))
        game = [V6.unpack_from(data, o) for o in range(0, len(data), 8356)]
        rows.extend((f, i, len(game), r) for i, r in enumerate(game))
    if len(rows) != len(recs):
        fail("%d rows, %d records with a move" % (len(rows), len(recs)))
    hist = []
    fills = 0
    for (f, i, glen, row), rec in zip(rows, recs):
        (ver, fmt, probs, planes, us_ooo, us_oo, them_ooo, them_oo, stm,
         r50, inv, dummy, root_q, best_q, root_d, best_d, root_m, best_m,
         plies_left, result_q, result_d, played_q, played_d, played_m,
         orig_q, orig_d, orig_m, visits, played_idx, best_idx, kld,
         reserved) = row
        fen = rec["fen"]
        black = fen.split()[1] == "b"
        us = 1 if black else 0
        if (ver, fmt) != (6, 1):
            fail("version/format %d/%d" % (ver, fmt))
        if stm != us or r50 != int(fen.split()[4]):
            fail("%s: side to move %d, rule50 %d" % (fen, stm, r50))
        cast = fen.split()[2]
        want = [("q" if black else "Q") in cast, ("k" if black else "K") in cast,
                ("Q" if black else "q") in cast, ("K" if black else "k") in cast]
        if [us_ooo, us_oo, them_ooo, them_oo] != [int(x) for x in want]:
            fail("%s: castling %s" % (fen, [us_ooo, us_oo, them_ooo, them_oo]))
        p = np.frombuffer(probs, "<f4")
        pol = [x for x in rec["exts"] if x["type"] == "policy"][-1]
        want = np.full(1858, -1, np.float32)
        for m in pol["moves"]:
            want[lc0_index(m["move"], black, fen)] = m["q"] / 65535
        if not np.allclose(p, want, atol=1e-7):
            fail("%s: probabilities differ" % fen)
        pl = np.unpackbits(np.frombuffer(planes, np.uint8)).reshape(104, 64)
        if not np.array_equal(pl[0:12], piece_planes(fen, us)):
            fail("%s: planes of the position differ" % fen)
        # the history: this game's records of the plies before, as far
        # as they run on
        if i == 0 or rec["ply"] != prev_ply + 1:
            hist = []
        hist = [fen] + hist[:7]
        prev_ply = rec["ply"]
        want = history_planes(hist, us)
        for h in range(8):
            if not np.array_equal(pl[13 * h:13 * h + 12], want[h]):
                fail("%s: history plane %d differs (%d known)" % (
                    fen, h, len(hist)))
        fills += len(hist) < 8 and want[len(hist) if len(hist) < 8 else 0].any()
        if played_idx != lc0_index(rec["move"], black, fen):
            fail("%s: played_idx %d" % (fen, played_idx))
        # an unknown result (*) as a draw, as posexport(1) says
        res = {"1-0": 1, "0-1": -1, "1/2-1/2": 0, "*": 0}[rec["result"]]
        if black:
            res = -res
        if result_q != res or result_d != (res == 0):
            fail("%s: result %r %r (%s)" % (fen, result_q, result_d,
                                            rec["result"]))
        if plies_left != glen - i:
            fail("%s: plies_left %r, want %d" % (fen, plies_left, glen - i))
        if not (-1 <= best_q <= 1) or not np.isnan(orig_q):
            fail("%s: q %r orig %r" % (fen, best_q, orig_q))
    print("lc0: %d records in %d chunks read back as the records "
          "(%d with filled history)" % (len(rows), len(files), fills))


main(sys.argv[1], sys.argv[2])
