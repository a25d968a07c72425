#!/usr/bin/env python3
"""Packs a prebuilt pith binary as a pip wheel, the layout maturin's `bin` bindings produce
(`pith_agent-VERSION.data/scripts/pith`), so `pip install`, `pipx install` and `uv tool install`
put `pith` on PATH. dist/build.sh uses it to wheel the binary it already built instead of
building it a second time; the release workflow may use `maturin build` (pyproject.toml) instead.

    python3 dist/wheel.py BINARY VERSION PLATFORM_TAG OUT_DIR
"""

import base64
import hashlib
import os
import sys
import zipfile

NAME = "pith_agent"


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def main():
    binary, version, tag, out = sys.argv[1:5]
    readme = open(os.path.join(os.path.dirname(__file__), "pypi-README.md")).read()
    info = f"{NAME}-{version}.dist-info"
    files = [
        (f"{NAME}-{version}.data/scripts/pith", open(binary, "rb").read(), 0o755),
        (f"{info}/METADATA", (
            "Metadata-Version: 2.1\n"
            "Name: pith-agent\n"
            f"Version: {version}\n"
            "Summary: A terminal coding agent that never runs into the context window\n"
            "License: MIT\n"
            "Requires-Python: >=3.8\n"
            "Description-Content-Type: text/markdown\n\n" + readme).encode(), 0o644),
        (f"{info}/WHEEL", (
            "Wheel-Version: 1.0\n"
            "Generator: pith dist/wheel.py\n"
            "Root-Is-Purelib: false\n"
            + "".join(f"Tag: py3-none-{t}\n" for t in tag.split("."))).encode(), 0o644),
    ]
    record = [record_line(p, d) for p, d, _ in files] + [f"{info}/RECORD,,"]
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
    os.makedirs(out, exist_ok=True)
    wheel = os.path.join(out, f"{NAME}-{version}-py3-none-{tag}.whl")
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data, mode in files:
            entry = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            entry.external_attr = (0o100000 | mode) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    print(wheel)


if __name__ == "__main__":
    main()
