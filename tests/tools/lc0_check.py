"""Reads posexport -F lc0 chunks as lczero-training's chunkparser does
(struct layout of V6TrainingData, planes unpacked with np.unpackbits) and
checks every field against the records' JSON (posflow.records), with the
feature helpers of loader_check.py, in lc0's input format 1 to 5, 132 or
133 (default 1): planes, transforms, castling and en passant bytes as lc0's
src/neural/encoder.cc and src/trainingdata/trainingdata.cc write them,
reimplemented here from FENs.  Exits 1 at the first difference.

usage: lc0_check.py CHUNKDIR STREAM [INPUT_FORMAT]
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
from loader_check import LC0, lc0_index, pieces, fail, sq   # noqa: E402

NAMES = {i: n for n, i in LC0.items()}

V6 = struct.Struct("<II7432s832sBBBBBBBBfffffffffffffffIHHfI")
assert V6.size == 8356

FLIP, MIRROR, TRANSPOSE = 1, 2, 4


def square(name):
    return "abcdefgh".index(name[0]) + 8 * (int(name[1]) - 1)


def tf_square(s, t):
    """lc0's Transform of a square: flip the file, mirror the rank,
    transpose (row, col) -> (7 - col, 7 - row), in that order."""
    r, c = s // 8, s % 8
    if t & FLIP:
        c = 7 - c
    if t & MIRROR:
        r = 7 - r
    if t & TRANSPOSE:
        r, c = 7 - c, 7 - r
    return r * 8 + c


def tf_mask(m, t):
    out = 0
    for s in range(64):
        if m >> s & 1:
            out |= 1 << tf_square(s, t)
    return out


def bitboards(fen, us):
    """12 square sets (ours p..k, theirs p..k) of fen from colour us's
    view, as ints, a1 = bit 0 (mirrored by rank when us is black)."""
    p = [0] * 12
    for s, c, r in pieces(fen):
        if us == 1:
            s ^= 56
        p[(0 if c == us else 6) + r] |= 1 << s
    return p


def choose_transform(fen, fmt):
    """lc0's ChooseTransform (src/neural/encoder.cc), read from its code."""
    if fmt < 3 or fen.split()[2] != "-":
        return 0
    us = 1 if fen.split()[1] == "b" else 0
    p = bitboards(fen, us)
    king = p[5]
    t = 0
    if king & 0x0F0F0F0F0F0F0F0F:
        t |= FLIP
        king = tf_mask(king, FLIP)
    if p[0] | p[6]:
        return t
    if king & 0xFFFFFFFF00000000:
        t |= MIRROR
        king = tf_mask(king, MIRROR)
    if king & 0xE0C08000:
        return t | TRANSPOSE
    if king & 0x10204080:
        ours = p[0] | p[1] | p[2] | p[3] | p[4] | p[5]
        theirs = p[6] | p[7] | p[8] | p[9] | p[10] | p[11]
        for v in (ours | theirs, ours, p[5] | p[11], p[4] | p[10],
                  p[3] | p[9], p[1] | p[7], p[2] | p[8]):
            v = tf_mask(v, t)
            alt = tf_mask(v, TRANSPOSE)
            if v < alt:
                return t
            if v > alt:
                return t | TRANSPOSE
    return t


def index(uci, black, fen, t):
    """lc0_index of the move seen through transform t."""
    i = lc0_index(uci, black, fen)
    if t == 0:
        return i
    name = NAMES[i]
    fr, to = tf_square(square(name[0:2]), t), tf_square(square(name[2:4]), t)
    return LC0["abcdefgh"[fr % 8] + str(fr // 8 + 1) + "abcdefgh"[to % 8] +
               str(to // 8 + 1) + name[4:]]


def piece_planes(fen, us, undo_ep=False):
    """12 planes of fen from colour us's view (mirrored when us is black);
    undo_ep: with the double push that made its en passant square taken
    back (lc0's history fill)."""
    pcs = pieces(fen)
    ep = fen.split()[3]
    if undo_ep and ep != "-":
        sq = square(ep)
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


def lc0_ep(fen, prev):
    """The en passant square lc0's board has in fen (a name or "-"), prev
    the FEN before it or None: lc0's ApplyMove sets one after every
    double push beside an enemy pawn, legal capture or not; a FEN's
    own where the move is unknown."""
    ep = fen.split()[3]
    if ep != "-" or prev is None:
        return ep
    c = 0 if prev.split()[1] == "w" else 1
    before = {s for s, col, r in pieces(prev) if col == c and r == 0}
    after = {s for s, col, r in pieces(fen) if col == c and r == 0}
    gone, came = before - after, after - before
    if len(gone) != 1 or len(came) != 1:
        return "-"
    fr, to = gone.pop(), came.pop()
    if to - fr != (16 if c == 0 else -16) or fr // 8 != (1 if c == 0 else 6):
        return "-"
    enemy = {s for s, col, r in pieces(fen) if col != c and r == 0}
    if not any(s in enemy and s // 8 == to // 8 and abs(s % 8 - to % 8) == 1
               for s in (to - 1, to + 1)):
        return "-"
    return sq((fr + to) // 2)


def history_planes(hist, reps, eps, us, fmt, t):
    """The 8 x 13 planes lc0 writes for hist (this position first, then
    the ones before it, consecutive plies), reps[i] when hist[i] occurred
    before in the game, eps[i] its en passant square for lc0: EncodePositionNoTransform read from lc0's code
    (formats 3 to 5 stop at a change of castling rights, at an en passant
    square and after a zeroing move; 5 keeps only repeats after slot 0),
    and where hist runs out lc0's FEN_ONLY fill: nothing after the
    standard start position, else copies of the oldest with its double
    push taken back."""
    out = np.zeros((8, 13, 64), np.uint8)
    cur = hist[0].split()
    canon, v2 = fmt >= 3, fmt in (5, 133)
    slot = k = 0
    while slot < 8 and (v2 or k < 8):
        fill = k >= len(hist)
        fen = hist[-1] if fill else hist[k]
        rep = reps[-1] if fill else reps[k]
        f = fen.split()
        k += 1
        if canon and k > 1 and (f[2] != cur[2] or
                                (f[3] if fill else eps[k - 1]) != "-"):
            break
        if fill and " ".join(f[:3]) == START:
            break
        if v2 and slot > 0 and not rep:
            if int(f[4]) == 0 or fill:
                break
            continue
        out[slot, :12] = piece_planes(fen, us, undo_ep=fill)
        out[slot, 12] = rep
        slot += 1
        if canon and int(f[4]) == 0:
            break
    if t:
        for h in range(8):
            for i in range(12):
                m = sum(1 << s for s in range(64) if out[h, i, s])
                m = tf_mask(m, t)
                out[h, i] = [m >> s & 1 for s in range(64)]
    return out


def rook_files(fen, colour):
    """The files of colour's castling rooks, (queen side, king side), None
    where the right is gone; X-FEN: K and Q the outermost rook, a letter
    its file."""
    f = fen.split()
    rank = 0 if colour == 0 else 7
    rooks = [s % 8 for s, c, r in pieces(fen) if c == colour and r == 3 and
             s // 8 == rank]
    king = [s % 8 for s, c, r in pieces(fen) if c == colour and r == 5][0]
    qs = ks = None
    for ch in f[2]:
        if (ch.isupper()) != (colour == 0) or ch == "-":
            continue
        low = ch.lower()
        if low == "k":
            ks = max(x for x in rooks if x > king)
        elif low == "q":
            qs = min(x for x in rooks if x < king)
        else:
            x = "abcdefgh".index(low)
            if x > king:
                ks = x
            else:
                qs = x
    return qs, ks


def main(chunkdir, stream, fmt=1):
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
    hist, reps, seen = [], [], set()
    fills = transformed = deep = eponly = 0
    for j, ((f, i, glen, row), rec) in enumerate(zip(rows, recs)):
        (ver, rfmt, probs, planes, us_ooo, us_oo, them_ooo, them_oo, stm,
         r50, inv, dummy, root_q, best_q, root_d, best_d, root_m, best_m,
         plies_left, result_q, result_d, played_q, played_d, played_m,
         orig_q, orig_d, orig_m, visits, played_idx, best_idx, kld,
         reserved) = row
        fen = rec["fen"]
        fl = fen.split()
        black = fl[1] == "b"
        us = 1 if black else 0
        t = choose_transform(fen, fmt)
        transformed += t != 0
        if (ver, rfmt) != (6, fmt):
            fail("version/format %d/%d" % (ver, rfmt))
        if r50 != int(fl[4]):
            fail("%s: rule50 %d" % (fen, r50))
        # the history: this game's records of the plies before, as far
        # as they run on; a repeat: the position earlier in the game, for
        # lc0 (a position with an en passant square only lc0 sets is new)
        if i == 0:
            seen = set()
        if i == 0 or rec["ply"] != prev_ply + 1:
            hist, reps, eps = [], [], []
        ep = lc0_ep(fen, hist[0] if hist else None)
        key = " ".join(fl[:4])
        hist = [fen] + hist[:256]
        reps = [ep == fl[3] and key in seen] + reps[:256]
        eps = [ep] + eps[:256]
        if ep == fl[3]:
            seen.add(key)
        prev_ply = rec["ply"]
        eponly += ep != fl[3]
        # side to move, or (3 to 5) the en passant file through the
        # transform, with the transform and the side in invariance_info
        if fmt >= 3:
            want = 0
            if ep != "-":
                want = 1 << tf_square("abcdefgh".index(ep[0]), t & FLIP)
            if stm != want or inv != t | us << 7:
                fail("%s: en passant byte %d, invariance %d (transform %d)"
                     % (fen, stm, inv, t))
        elif stm != us or inv != 0:
            fail("%s: side to move %d, invariance %d" % (fen, stm, inv))
        if fmt == 1:
            cast = fl[2]
            want = [("q" if black else "Q") in cast,
                    ("k" if black else "K") in cast,
                    ("Q" if black else "q") in cast,
                    ("K" if black else "k") in cast]
            want = [int(x) for x in want]
        else:
            (uq, uk), (tq, tk) = rook_files(fen, us), rook_files(fen, 1 - us)
            want = [0 if x is None else 1 << x for x in (uq, uk, tq, tk)]
        if [us_ooo, us_oo, them_ooo, them_oo] != want:
            fail("%s: castling %s, want %s" % (
                fen, [us_ooo, us_oo, them_ooo, them_oo], want))
        p = np.frombuffer(probs, "<f4")
        pol = [x for x in rec["exts"] if x["type"] == "policy"][-1]
        want = np.full(1858, -1, np.float32)
        for m in pol["moves"]:
            want[index(m["move"], black, fen, t)] = m["q"] / 65535
        if not np.allclose(p, want, atol=1e-7):
            fail("%s: probabilities differ (transform %d)" % (fen, t))
        pl = np.unpackbits(np.frombuffer(planes, np.uint8)).reshape(104, 64)
        want = history_planes(hist, reps, eps, us, fmt, t)
        for h in range(8):
            if not np.array_equal(pl[13 * h:13 * h + 13], want[h]):
                fail("%s: history slot %d differs (%d known, format %d, "
                     "transform %d)" % (fen, h, len(hist), fmt, t))
        filled = want[:, :12].any(axis=(1, 2)).sum()
        fills += filled > min(len(hist), 8)
        deep += fmt in (5, 133) and filled > 1 and not reps[1:2] == [True]
        if played_idx != index(rec["move"], black, fen, t):
            fail("%s: played_idx %d" % (fen, played_idx))
        # an unknown result (*) as a draw, as posexport(1) says
        res = {"1-0": 1, "0-1": -1, "1/2-1/2": 0, "*": 0}[rec["result"]]
        if black:
            res = -res
        if result_q != res or result_d != (res == 0):
            fail("%s: result %r %r (%s)" % (fen, result_q, result_d,
                                            rec["result"]))
        # to the game's last position in the input, by ply
        left = recs[j - i + glen - 1]["ply"] + 1 - rec["ply"]
        if plies_left != left:
            fail("%s: plies_left %r, want %d" % (fen, plies_left, left))
        if not (-1 <= best_q <= 1) or not np.isnan(orig_q):
            fail("%s: q %r orig %r" % (fen, best_q, orig_q))
    print("lc0: %d records in %d chunks read back as the records "
          "(%d with filled history)" % (len(rows), len(files), fills))
    if fmt >= 3:
        print("lc0: input format %d: %d transformed, %d with a repeat "
              "further back than the last ply, %d with an en passant "
              "square for lc0 alone" % (fmt, transformed, deep, eponly))


main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1)
