#!/usr/bin/python3
"""Make the middle block of a one-frame zstd file a reserved block type,
which libzstd refuses where it meets it: zstd_break_block.py in out"""
import sys

d = bytearray(open(sys.argv[1], "rb").read())
assert d[:4] == b"\x28\xb5\x2f\xfd", "not a zstd frame"
fhd = d[4]
single = (fhd >> 5) & 1
at = 5 + (0 if single else 1) + [0, 1, 2, 4][fhd & 3]
at += [1 if single else 0, 2, 4, 8][fhd >> 6]
blocks = []
while True:
    h = int.from_bytes(d[at:at + 3], "little")
    blocks.append(at)
    size = 1 if (h >> 1) & 3 == 1 else h >> 3
    at += 3 + size
    if h & 1:
        break
assert len(blocks) >= 3, "too few blocks"
b = blocks[len(blocks) // 2]
d[b] |= 6			# block type 3: reserved
open(sys.argv[2], "wb").write(d)
print(len(blocks) // 2, len(blocks))
