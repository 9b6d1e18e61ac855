#!/usr/bin/env python3
"""Checks every value of an Oware book against the dense port.

Compiles scripts/dense_port.cpp (the article's algorithm in C++, written
apart from the crate; its arrays for 9 and 12 seeds have the SHA-256 of the
article program's) for the book's seed count and turn limit, runs it with
--flat, and compares what it writes, every layer of every board, byte for
byte (by SHA-256 and length) with `endbook oware export --layers LIMIT --out -`
of the book. Both are streamed through pipes and hashed as they come: nothing
is written to disk. The two run side by side (the port on one thread).

The port holds two layers and a 32-byte record per board: 9.7 GB at 20 seeds,
where it took about 10 minutes on the project's 2-core machine.

    scripts/check_port.py --book oware-20.book

Exits 1 when they differ, after printing both digests.
"""

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timings import BINARY, ROOT, compile_cpp  # noqa: E402


def book_shape(book):
    """(max seeds, turn limit) from `endbook oware info`."""
    info = subprocess.run([str(BINARY), "oware", "info", "--book", str(book)], check=True,
                          capture_output=True, text=True).stdout
    seeds = re.search(r"^max seeds\s+(\d+)", info, re.M)
    limit = re.search(r"^turn limit\s+(\d+)", info, re.M)
    if not seeds or not limit:
        sys.exit(f"cannot read the seed count and turn limit from `endbook oware info`:\n{info}")
    return int(seeds.group(1)), int(limit.group(1))


def hashed(stream, result):
    """Hashes `stream` to its end into result (digest, length)."""
    digest = hashlib.sha256()
    length = 0
    for block in iter(lambda: stream.read(1 << 22), b""):
        digest.update(block)
        length += len(block)
    result.extend([digest.hexdigest(), length])


def run_hashed(command, name):
    """Starts `command`, hashing its stdout on a thread; returns (process, thread, result, start)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE)
    result = []
    thread = threading.Thread(target=hashed, args=(process.stdout, result), name=name)
    thread.start()
    return process, thread, result, time.monotonic()


def finish(process, thread, result, start, name):
    thread.join()
    if process.wait() != 0:
        sys.exit(f"{name} failed (exit {process.returncode})")
    return result[0], result[1], time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--book", type=Path, required=True, help="the Oware book to check")
    parser.add_argument("--port", type=Path, default=ROOT / "scripts" / "dense_port.cpp",
                        help="the port's source (default scripts/dense_port.cpp)")
    args = parser.parse_args()
    if not BINARY.exists():
        sys.exit(f"{BINARY} is missing: run `cargo build --release` first")
    seeds, limit = book_shape(args.book)
    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / f"dense-port-{seeds}"
        compile_cpp(args.port, program, f"-DNSEEDS={seeds}", f"-DLAYERS={limit}")
        print(f"{args.book}: {seeds} seeds, {limit} layers; the port and the export run side by side",
              file=sys.stderr)
        # The port writes its layers to a pipe given as /dev/fd/N.
        read_end, write_end = os.pipe()
        port = subprocess.Popen([str(program), "--flat", f"/dev/fd/{write_end}"], pass_fds=(write_end,),
                                stdout=subprocess.DEVNULL)
        os.close(write_end)
        port_result = []
        port_stream = open(read_end, "rb")
        port_thread = threading.Thread(target=hashed, args=(port_stream, port_result))
        port_start = time.monotonic()
        port_thread.start()
        export = run_hashed([str(BINARY), "oware", "export", "--book", str(args.book), "--layers", str(limit),
                             "--out", "-"], "export")
        ours = finish(*export, "endbook oware export")
        theirs = finish(port, port_thread, port_result, port_start, "the dense port")
    print(f"export:     {ours[1]:,} bytes, SHA-256 {ours[0]}, {ours[2]:.1f} s")
    print(f"dense port: {theirs[1]:,} bytes, SHA-256 {theirs[0]}, {theirs[2]:.1f} s")
    if ours[:2] != theirs[:2]:
        print("they differ", file=sys.stderr)
        sys.exit(1)
    print(f"identical: every value of the {seeds}-seed book, {limit} layers, is the port's")


if __name__ == "__main__":
    main()
