#!/usr/bin/env python3
"""Checks every value of an Oware book against the dense port.

Compiles scripts/dense_port.cpp (the article's algorithm in C++, written
apart from the crate; its arrays for 9 and 12 seeds have the SHA-256 of the
article program's) for the book's seed count and turn limit, runs it with
--flat, and compares what it writes, every layer of every board, byte for
byte (by SHA-256 and length) with `endbook oware export --layers LIMIT --out -`
of the book. Both are streamed through pipes and hashed as they come: nothing
is written to disk. The two run side by side (the port on one thread).

The port holds two layers and a 32-byte record per board: a peak of 7.5 GB
at 20 seeds, where it took 31 minutes on the project's 2-core machine with
its 45 GB hashed beside it (about 10 minutes without writing).

    scripts/check_port.py --book oware-20.book

Exits 1 when they differ, after printing both digests.
"""

import argparse
import hashlib
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timings import (BINARY, ROOT, check_executable, check_source, compile_cpp, describe_exit,  # noqa: E402
                     usage_error)


def book_shape(binary, book):
    """(max seeds, turn limit) from `endbook oware info`."""
    run = subprocess.run([str(binary), "oware", "info", "--book", str(book)], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(run.stderr.strip())
    info = run.stdout
    seeds = re.search(r"^max seeds\s+(\d+)", info, re.M)
    limit = re.search(r"^turn limit\s+(\d+)", info, re.M)
    if not seeds or not limit:
        sys.exit(f"cannot read the seed count and turn limit from `endbook oware info`:\n{info}")
    return int(seeds.group(1)), int(limit.group(1))


def hashed(stream, result, layer=None, prefixes=()):
    """Hashes `stream` to its end into result (digest, length[, prefix digests]).

    With `layer` (bytes a layer) and `prefixes` (byte counts), also hashes
    the first `p` bytes of each layer for each `p`: the flat export of the
    book of fewer seeds, whose layers are the first boards of each layer."""
    digest = hashlib.sha256()
    parts = [hashlib.sha256() for _ in prefixes]
    length = 0
    for block in iter(lambda: stream.read(layer or 1 << 22), b""):
        digest.update(block)
        if prefixes:
            pending = memoryview(block)
            while pending:
                at = length % layer
                run = min(layer - at, len(pending))
                for part, keep in zip(parts, prefixes):
                    if at < keep:
                        part.update(pending[:min(keep - at, run)])
                length += run
                pending = pending[run:]
        else:
            length += len(block)
    result.extend([digest.hexdigest(), length, [part.hexdigest() for part in parts]])


def run_hashed(command, name, layer=None, prefixes=()):
    """Starts `command`, hashing its stdout on a thread; returns (process, thread, result, start)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE)
    result = []
    thread = threading.Thread(target=hashed, args=(process.stdout, result, layer, prefixes), name=name,
                              daemon=True)
    thread.start()
    return process, thread, result, time.monotonic()


def finish(process, thread, result, start, name, other=None):
    """(digest, length, seconds, prefix digests) once `process` and its hashing `thread` are done;
    if it failed, stops `other` and exits."""
    thread.join()
    if process.wait() != 0:
        if other is not None:
            other.kill()
        sys.exit(f"{name} failed ({describe_exit(process.returncode)})")
    return result[0], result[1], time.monotonic() - start, result[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--book", type=Path, required=True, help="the Oware book to check")
    parser.add_argument("--port", type=Path, default=ROOT / "scripts" / "dense_port.cpp",
                        help="the port's source (default scripts/dense_port.cpp), compiled with g++")
    parser.add_argument("--binary", type=Path, default=BINARY,
                        help="endbook to export the book with (default target/release/endbook; this script never "
                             "builds it)")
    parser.add_argument("--each-seed-count", action="store_true",
                        help="also print the SHA-256 of the flat export of the book of each smaller seed count "
                             "(the first boards of each layer), equal to the port's when the whole is")
    args = parser.parse_args()
    if args.binary == BINARY and not BINARY.exists():
        usage_error(f"{BINARY} is missing: run `cargo build --release` first, or pass --binary")
    check_executable(args.binary, "--binary")
    if not args.book.is_file():
        usage_error(f"--book {args.book}: no such file")
    check_source(args.port, "--port")
    seeds, limit = book_shape(args.binary, args.book)
    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / f"dense-port-{seeds}"
        compile_cpp(args.port, program, f"-DNSEEDS={seeds}", f"-DLAYERS={limit}", option="--port")
        print(f"{args.book}: {seeds} seeds, {limit} layers; the port and the export run side by side",
              file=sys.stderr)
        # The port writes its layers to a pipe given as /dev/fd/N.
        read_end, write_end = os.pipe()
        port = subprocess.Popen([str(program), "--flat", f"/dev/fd/{write_end}"], pass_fds=(write_end,),
                                stdout=subprocess.DEVNULL)
        os.close(write_end)
        port_result = []
        port_stream = open(read_end, "rb")
        port_thread = threading.Thread(target=hashed, args=(port_stream, port_result), daemon=True)
        port_start = time.monotonic()
        port_thread.start()
        # Boards with 1..=n seeds, for each n: C(n + 12, 12) - 1.
        prefixes = [math.comb(n + 12, 12) - 1 for n in range(1, seeds + 1)] if args.each_seed_count else []
        export = run_hashed([str(args.binary), "oware", "export", "--book", str(args.book), "--layers", str(limit),
                             "--out", "-"], "export", prefixes[-1] if prefixes else None, prefixes)
        ours = finish(*export, "endbook oware export", other=port)
        theirs = finish(port, port_thread, port_result, port_start, "the dense port")
    print(f"export:     {ours[1]:,} bytes, SHA-256 {ours[0]}, {ours[2]:.1f} s")
    print(f"dense port: {theirs[1]:,} bytes, SHA-256 {theirs[0]}, {theirs[2]:.1f} s")
    if ours[:2] != theirs[:2]:
        print("they differ", file=sys.stderr)
        sys.exit(1)
    print(f"identical: every value of the {seeds}-seed book, {limit} layers, is the port's")
    if args.each_seed_count:
        print(f"flat exports ({limit} layers) of the books of fewer seeds, taken from it:")
        for n, (boards, digest) in enumerate(zip(prefixes, ours[3]), start=1):
            print(f"  {n:2} seeds: {boards * limit:,} bytes, SHA-256 {digest}")


if __name__ == "__main__":
    main()
