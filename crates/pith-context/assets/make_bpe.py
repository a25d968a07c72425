#!/usr/bin/env python3
"""Writes the compact BPE tables pith counts with (`src/bpe.rs`) from tiktoken's `.tiktoken` files.

    python3 assets/make_bpe.py ~/.cargo/registry/src/*/tiktoken-rs-0.12.*/assets

A `.tiktoken` file is one `base64(token) rank` line per token, ranks 0, 1, 2 … in order: 3.6 MB
for o200k, parsed with 200,000 base64 decodes. The compact form drops the ranks (a token's rank is
its position) and the base64: each token is one length byte and its bytes. The test
`bpe::tests::the_compact_tables_are_tiktokens` checks every token against tiktoken-rs.
"""
import base64, os, sys

src = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
for name in ["o200k_base", "cl100k_base"]:
    out = bytearray()
    for expected, line in enumerate(open(os.path.join(src, name + ".tiktoken"), "rb")):
        token, rank = line.split()
        assert int(rank) == expected, f"{name}: rank {rank} at line {expected}"
        raw = base64.b64decode(token)
        assert 0 < len(raw) < 256
        out.append(len(raw))
        out += raw
    with open(os.path.join(here, name + ".bpe"), "wb") as f:
        f.write(out)
    print(name, expected + 1, "tokens,", len(out), "bytes")
