"""Checks of the Python loader (tests/loader.bats), each against an
independent reading of the same records: posdump --json's lines, and the
features, targets and policy indices recomputed here from the FENs and the
JSON.  Exits 1 with the first difference.

usage: loader_check.py json POSDUMP_JSONL PATH...
       loader_check.py batches PATH...
"""

import math
import sys

import numpy as np

import posflow

ROLES = "pnbrqk"


def lc0_list():
    """lczero-training's policy index, rebuilt from its definition: from
    each square, the queen-line and knight destinations in square order,
    then the q/r/b promotions from the 7th rank."""
    names = []
    for fr in range(64):
        f0, r0 = fr % 8, fr // 8
        for to in range(64):
            if to == fr:
                continue
            df, dr = to % 8 - f0, to // 8 - r0
            line = df == 0 or dr == 0 or abs(df) == abs(dr)
            knight = sorted((abs(df), abs(dr))) == [1, 2]
            if line or knight:
                names.append(sq(fr) + sq(to))
    for f in range(8):
        for df in (-1, 0, 1):
            if 0 <= f + df < 8:
                for p in "qrb":
                    names.append("abcdefgh"[f] + "7" + "abcdefgh"[f + df]
                                 + "8" + p)
    assert len(names) == 1858, len(names)
    return {n: i for i, n in enumerate(names)}


def sq(s):
    return "abcdefgh"[s % 8] + str(s // 8 + 1)


LC0 = lc0_list()


def mirror(uci):
    return "".join(c if not c.isdigit() else str(9 - int(c)) for c in uci)


def lc0_index(uci, black, fen):
    # castling (a king moving two files onto no rook of its own; Chess960
    # moves are written king takes rook already): lc0 encodes it as the
    # king taking its own rook
    fr = "abcdefgh".index(uci[0]) + 8 * (int(uci[1]) - 1)
    to = "abcdefgh".index(uci[2]) + 8 * (int(uci[3]) - 1)
    c = 1 if black else 0
    if (fr, c, 5) in pieces(fen) and (to, c, 3) not in pieces(fen) and \
            abs(ord(uci[2]) - ord(uci[0])) == 2:
        uci = uci[:2] + ("h" if uci[2] > uci[0] else "a") + uci[3:]
    if black:
        uci = mirror(uci)
    if len(uci) == 5 and uci[4] == "n":
        uci = uci[:4]
    return LC0[uci]


def pieces(fen):
    """(square, colour 0 white / 1 black, role 0..5) of a FEN's board."""
    out = []
    rows = fen.split()[0].split("/")
    for i, row in enumerate(rows):
        rank, f = 7 - i, 0
        for ch in row:
            if ch.isdigit():
                f += int(ch)
                continue
            out.append((rank * 8 + f, 0 if ch.isupper() else 1,
                        ROLES.index(ch.lower())))
            f += 1
    return sorted(out)


def feature_row(fen, flip):
    """ALL, H, V, D1, D2 blocks (32 each), -1 padded: loader.h's table."""
    blocks = [[], [], [], [], []]
    offs = [0, 768, 864, 960, 1140]
    for s, c, r in pieces(fen):
        if flip:
            s, c = s ^ 56, c ^ 1
        cr = c * 6 + r
        f, k = s % 8, s // 8
        vals = [cr * 64 + s, cr * 8 + f, cr * 8 + k, cr * 15 + f - k + 7,
                cr * 15 + f + k]
        for b in range(5):
            blocks[b].append(offs[b] + vals[b])
    row = []
    for b in blocks:
        row.extend(sorted(b) + [-1] * (32 - len(b)))
    return row


def attacks(pcs, sq0, colour, role):
    """Squares a piece of colour and role on sq0 attacks (pcs: occupied
    squares)."""
    f0, r0 = sq0 % 8, sq0 // 8
    out = set()

    def ray(df, dr, slide):
        f, r = f0 + df, r0 + dr
        while 0 <= f < 8 and 0 <= r < 8:
            out.add(r * 8 + f)
            if not slide or (r * 8 + f) in pcs:
                return
            f, r = f + df, r + dr
    if role == 0:
        d = 1 if colour == 0 else -1
        for df in (-1, 1):
            ray(df, d, False)
    elif role == 1:
        for df, dr in ((1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1),
                       (-1, -2), (-2, -1)):
            ray(df, dr, False)
    else:
        dirs = []
        if role in (2, 4, 5):
            dirs += [(1, 1), (1, -1), (-1, 1), (-1, -1)]
        if role in (3, 4, 5):
            dirs += [(1, 0), (-1, 0), (0, 1), (0, -1)]
        for df, dr in dirs:
            ray(df, dr, role != 5)
    return out


def planes_of(fen):
    """Seed 004's 14 planes from the side to move's view (loader.h)."""
    black = fen.split()[1] == "b"
    us = 1 if black else 0
    flip = 56 if black else 0
    pcs = pieces(fen)
    occ = {s for s, c, r in pcs}
    p = np.zeros((14, 64), np.uint8)
    att = [set(), set()]
    for s, c, r in pcs:
        p[(0 if c == us else 6) + r][s ^ flip] = 1
        att[c] |= attacks(occ, s, c, r)
    for s in att[us]:
        p[12][s ^ flip] = 1
    for s in att[1 - us]:
        p[13][s ^ flip] = 1
    return p.reshape(14, 8, 8)


def sortrow(a):
    """Each 32-wide block sorted (the oracle lists indices in square order
    of the unflipped board, the loader too; sorting makes it order-free)."""
    a = list(a)
    out = []
    for i in range(0, len(a), 32):
        blk = [x for x in a[i:i + 32] if x >= 0]
        out.extend(sorted(blk) + [-1] * (32 - len(blk)))
    return out


def fail(msg):
    print("loader_check: " + msg)
    sys.exit(1)


def check_json(jsonl, paths):
    import json
    with open(jsonl) as f:
        want = [json.loads(line) for line in f]
    got = list(posflow.records(paths))
    if len(got) != len(want):
        fail("records: %d records, posdump shows %d" % (len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            fail("record %d differs:\n  %s\n  %s" % (i + 1, g, w))
    print("records: %d records equal posdump --json" % len(got))


def deepest_eval(exts):
    best = None
    for x in exts:
        if x["type"] == "eval" and x["source"] in ("engine", "terminal"):
            if best is None or x.get("depth", 0) >= best.get("depth", 0):
                best = x
    return best


def deepest_cp(exts):
    best = deepest_eval(exts)
    return None if best is None else best["cp"]


def check_batches(paths):
    recs = list(posflow.records(paths))
    rows = {k: [] for k in ()}
    parts = list(posflow.batches(paths, batch_size=37,
                                 features="ALL+H+V+D1+D2", opposite=True,
                                 policy=True, policy_width=256, pqr=True,
                                 planes=True))
    if any(len(p["features"]) != 37 for p in parts[:-1]):
        fail("a batch before the last is short")
    b = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    n = len(recs)
    if len(b["features"]) != n:
        fail("batches: %d rows, %d records" % (len(b["features"]), n))
    checked = dict(value=0, score=0, policy=0, pqr=0, move=0, best=0)
    if b["planes"].shape[1:] != (14, 8, 8) or b["planes"].dtype != np.uint8:
        fail("planes: %s %s" % (b["planes"].dtype, b["planes"].shape))
    for i, r in enumerate(recs):
        black = r["fen"].split()[1] == "b"
        exp = feature_row(r["fen"], black)
        if sortrow(b["features"][i]) != exp:
            fail("record %d: features %s, want %s" % (
                i + 1, list(b["features"][i]), exp))
        if sortrow(b["features_opp"][i]) != feature_row(r["fen"], not black):
            fail("record %d: features_opp differ" % (i + 1))
        if not np.array_equal(b["planes"][i], planes_of(r["fen"])):
            fail("record %d: planes differ:\n%s\nwant\n%s" % (
                i + 1, b["planes"][i], planes_of(r["fen"])))
        exts = r.get("exts", [])
        vals = [x for x in exts if x["type"] == "value"]
        v = b["value"][i]
        if vals:
            if abs(v - vals[-1]["target"]) > 1e-6:
                fail("record %d: value %r, want %r" % (i + 1, v,
                                                       vals[-1]["target"]))
            checked["value"] += 1
        elif not math.isnan(v):
            fail("record %d: value %r where there is none" % (i + 1, v))
        cp = deepest_cp(exts)
        s = b["score"][i]
        if cp is None:
            if not math.isnan(s):
                fail("record %d: score %r where there is none" % (i + 1, s))
        else:
            if s != cp:
                fail("record %d: score %r, want %r" % (i + 1, s, cp))
            checked["score"] += 1
        res = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(r["result"])
        if res is not None and black and res != 0.5:
            res = 1.0 - res
        if res is None:
            if not math.isnan(b["result"][i]):
                fail("record %d: result where there is none" % (i + 1))
        elif b["result"][i] != res:
            fail("record %d: result %r, want %r" % (i + 1, b["result"][i],
                                                     res))
        ck = r["fen"]
        pols = [x for x in exts if x["type"] == "policy"]
        want = {}
        if pols:
            for m in pols[-1]["moves"]:
                want[lc0_index(m["move"], black, ck)] = m["q"] / 65535.0
            checked["policy"] += 1
        got = {int(j): float(p) for j, p in zip(b["policy_index"][i],
                                                b["policy_prob"][i])
               if j >= 0}
        if set(got) != set(want) or any(abs(got[j] - want[j]) > 1e-6
                                         for j in got):
            fail("record %d: policy %s, want %s" % (i + 1, got, want))
        mv = r["move"]
        wm = -1 if mv == "-" else lc0_index(mv, black, ck)
        if b["move"][i] != wm:
            fail("record %d: move %d, want %d (%s)" % (i + 1, b["move"][i],
                                                      wm, mv))
        checked["move"] += mv != "-"
        ev = deepest_eval(exts)
        bm = "-" if ev is None else ev["best"]
        wb = -1 if bm == "-" else lc0_index(bm, black, ck)
        if b["best"][i] != wb:
            fail("record %d: best %d, want %d (%s)" % (i + 1, b["best"][i],
                                                      wb, bm))
        checked["best"] += bm != "-"
        if b["ply"][i] != r["ply"] or "%016x" % b["game_id"][i] != r["game"]:
            fail("record %d: ply or game id differ" % (i + 1))
        pq = [x for x in exts if x["type"] == "pqr"]
        if bool(b["has_pqr"][i]) != bool(pq):
            fail("record %d: has_pqr %r" % (i + 1, b["has_pqr"][i]))
        if pq:
            for key in ("q", "r"):
                fen = pq[-1][key]
                if sortrow(b["features_" + key][i]) != \
                        feature_row(fen, fen.split()[1] == "b"):
                    fail("record %d: features_%s differ" % (i + 1, key))
            checked["pqr"] += 1
        elif any(x != -1 for x in b["features_q"][i]):
            fail("record %d: features_q without a triple" % (i + 1))
    print("batches: %d rows equal the records (%s)" % (
        n, ", ".join("%s %d" % kv for kv in sorted(checked.items()))))
    for k, c in checked.items():
        if c == 0:
            fail("nothing of %s was checked: the input lacks it" % k)
    # white's perspective: no flip
    wb = np.concatenate([p["features"] for p in posflow.batches(
        paths, batch_size=1000, perspective="white")])
    for i, r in enumerate(recs):
        if sortrow(wb[i]) != feature_row(r["fen"], False)[:32]:
            fail("record %d: white-perspective features differ" % (i + 1))
    print("batches: white perspective ok")


if __name__ == "__main__":
    if sys.argv[1] == "json":
        check_json(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "batches":
        check_batches(sys.argv[2:])
    else:
        fail("unknown check " + sys.argv[1])
