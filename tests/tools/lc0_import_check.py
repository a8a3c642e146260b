"""Checks posimport -F lc0 against the records posexport -F lc0 wrote the
chunks from: the same positions (the full-move number aside: V6 holds no
ply, posimport counts from each chunk's first record), moves, results (an
unknown one as the draw the chunks hold) and games (an imported game is
one original game; one original game is one imported game, unless a gap
in its plies splits it, and its plies count from the first); W/D/L within
a per mille of the original evaluation's (the chunks hold it as Q and D);
the best move; and every legal move's probability within a quantum
(1/65535) of the original policy target.  Exits 1 at the first
difference.

usage: lc0_import_check.py ORIGINAL IMPORTED
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import posflow                       # noqa: E402
from loader_check import fail        # noqa: E402


def ext(r, t):
    xs = [x for x in r["exts"] if x["type"] == t]
    return xs[-1] if xs else None


def main(orig, imported):
    a = [r for r in posflow.records(orig) if r["move"] != "-"]
    b = list(posflow.records(imported))
    if len(a) != len(b):
        fail("%d records with a move, %d imported" % (len(a), len(b)))
    games, first, nxt = {}, {}, {}
    for ra, rb in zip(a, b):
        fa, fb = ra["fen"].split(), rb["fen"].split()
        res = ra["result"] if ra["result"] != "*" else "1/2-1/2"
        if fa[:5] != fb[:5] or ra["move"] != rb["move"] or \
                res != rb["result"]:
            fail("%s %s %s: imported as %s %s %s" % (
                ra["fen"], ra["move"], ra["result"], rb["fen"], rb["move"],
                rb["result"]))
        g = ra["game"]
        if games.setdefault(rb["game"], g) != g:
            fail("%s: imported game %s holds two games" % (ra["fen"],
                                                           rb["game"]))
        first.setdefault(g, ra["ply"])
        if nxt.get(g, ra["ply"]) == ra["ply"] and \
                rb["ply"] != ra["ply"] - first[g]:
            fail("%s: ply %d imported as %d" % (ra["fen"], ra["ply"],
                                                rb["ply"]))
        nxt[g] = ra["ply"] + 1 if nxt.get(g, ra["ply"]) == ra["ply"] \
            else -1
        ea, eb = ext(ra, "eval"), ext(rb, "eval")
        if eb["source"] != "import" or "wdl" not in eb or "wdl" not in ea:
            fail("%s: evaluation %r" % (ra["fen"], eb))
        if any(abs(x - y) > 1 for x, y in zip(ea["wdl"], eb["wdl"])):
            fail("%s: W/D/L %r imported as %r" % (ra["fen"], ea["wdl"],
                                                  eb["wdl"]))
        if ea.get("best") and eb.get("best") != ea["best"]:
            fail("%s: best %r imported as %r" % (ra["fen"], ea.get("best"),
                                                 eb.get("best")))
        pa = {m["move"]: m["q"] for m in ext(ra, "policy")["moves"]}
        pb = ext(rb, "policy")
        if pb["method"] != "import" or \
                set(pa) != {m["move"] for m in pb["moves"]}:
            fail("%s: policy moves differ" % ra["fen"])
        for m in pb["moves"]:
            if abs(m["q"] - pa[m["move"]]) > 1:
                fail("%s: %s probability %d imported as %d" % (
                    ra["fen"], m["move"], pa[m["move"]], m["q"]))
    split = len(games) - len(set(games.values()))
    whole = [g for g in nxt if nxt[g] != -1]
    if any(list(games.values()).count(g) != 1 for g in whole):
        fail("games without a gap imported as more than one")
    print("lc0 import: %d records of %d games as written (%d more games "
          "where plies had a gap)" % (len(b), len(set(games.values())),
                                      split))


main(sys.argv[1], sys.argv[2])
