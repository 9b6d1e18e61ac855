#!/usr/bin/env python3
"""Check endbook's bear-off books against gnubg's two-sided databases, and time both.

gnubg is a check, never a build dependency: when `makebearoff` is not on
PATH or in /usr/games, this script runs `apt-get install -y gnubg` (Debian's
`gnubg` package; needs root and a Debian-based system: else it stops and
says so). It builds gnubg's two-sided databases with `makebearoff -t 6xC -f
FILE` (cubeful, 6 points, C checkers), builds endbook's books with `endbook
bearoff generate --checkers C --cube` (--binary PATH, default
target/release/endbook, built with `cargo build --release` first only when
cargo is there and no --binary is given), and compares every entry of every
pair of positions.

  check  [--checkers 6 8]   compare every entry, print the largest differences
  bench  [--repeat N]       time `makebearoff -t 6x8` and `endbook bearoff
                            generate --checkers 8 --cube` in the same run

Peak memory is in MB (10^6 bytes), as in the other scripts' tables. Bad
options, a missing endbook and a makebearoff that cannot be installed stop
the script with one line and exit status 2; a check outside the tolerance
exits 1.

gnubg's file (bearoff.c, makebearoff.c): a 40-byte text header
("gnubg-TS-06-08-1..."), then per pair four little-endian uint16 `u`, value
`u / 32767.5 - 1`: the cubeless equity 2p-1 and the no-double equities with
the cube owned by the player on roll, centred, owned by the opponent. The
pair (on roll `X`, opponent `O`) is entry `idx(X) * n + idx(O)`, n = C(C+6, 6).
gnubg numbers a side a1..a6 (a1 on the ace point) by writing its checkers as
a bit string and ranking it in the combinatorial number system: with
c_1 = a6, c_k = c_(k-1) + a_(7-k) + 1 (so c_6 = checkers + 5),
idx = sum over k of C(c_k, k). (Re-derived from gnubg's PositionBearoff; no
gnubg code is used.)

endbook's book (src/games/bearoff/book.rs): the container header with five
parameters (checkers, cube flag, slots N, encoding 1, values K), one section
of N*N*K little-endian uint16. Sides are in slots sorted by (pips, checkers,
counts from point 1, lexicographic), each pip class padded to a multiple of
8; value k of pair (m, o) is at ((m // 8 * N + o) * K + k) * 8 + m % 8;
P(win) = u / 65535, equities 2u / 65535 - 1. The script rebuilds this
layout from that description alone.
"""

import argparse
import itertools
import math
import os
import shutil
import statistics
import struct
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timings import ROOT, describe_exit, endbook_binary, usage_error, timed as timed_command  # noqa: E402
KINDS = ["cubeless", "owned", "centred", "opponent owns"]
# Most checkers a side: endbook's limit (`bearoff generate --checkers`, 1 to 15).
MAX_CHECKERS = 15
GAMES_MAKEBEAROFF = Path("/usr/games/makebearoff")


def find_makebearoff():
    return shutil.which("makebearoff") or (str(GAMES_MAKEBEAROFF) if GAMES_MAKEBEAROFF.exists() else None)


def makebearoff():
    """gnubg's makebearoff; installed with `apt-get install -y gnubg` when missing (exits 2 when that cannot be)."""
    found = find_makebearoff()
    if found:
        return found
    how = "install Debian's gnubg package (as root: apt-get install gnubg), which provides /usr/games/makebearoff"
    if shutil.which("apt-get") is None:
        usage_error(f"makebearoff not found and no apt-get to install it: {how}")
    print("makebearoff not found: apt-get install -y gnubg", file=sys.stderr)
    install = subprocess.run(["apt-get", "install", "-y", "gnubg"])
    if install.returncode != 0:
        usage_error(f"makebearoff not found and `apt-get install -y gnubg` failed "
                    f"({describe_exit(install.returncode)}): {how}")
    found = find_makebearoff()
    if not found:
        usage_error(f"makebearoff not found after `apt-get install -y gnubg`: {how}")
    return found


def timed(command):
    """Runs `command`; returns (wall seconds, peak RSS in MB, 10^6 bytes) (timings.py's `timed`)."""
    wall, peak, _, _ = timed_command(command)
    return wall, peak / 1e6


def gnubg_database(workdir, checkers):
    path = workdir / f"gnubg-ts-6x{checkers}.bd"
    if not path.exists():
        print(f"building {path.name} with makebearoff -t 6x{checkers} ...", file=sys.stderr)
        wall, rss = timed([makebearoff(), "-t", f"6x{checkers}", "-f", str(path)])
        print(f"  {wall:.1f} s, {rss:.0f} MB", file=sys.stderr)
    return path


def endbook_book(binary, workdir, checkers):
    """endbook's book, generated anew unless one newer than the binary is there
    (a book from an earlier build would check that build, not this one)."""
    path = workdir / f"endbook-{checkers}-cube.book"
    if not path.exists() or path.stat().st_mtime < binary.stat().st_mtime:
        timed_command(
            [str(binary), "bearoff", "generate", "--checkers", str(checkers), "--cube", "--out", str(path)]
        )
    return path


def sides(checkers):
    """Every side (a1..a6, a1 on point 1) with at most `checkers` checkers."""
    for counts in itertools.product(range(checkers + 1), repeat=6):
        if sum(counts) <= checkers:
            yield counts


def gnubg_index(side):
    total = sum(side)
    c = [side[5]]
    for k in range(2, 7):
        c.append(c[-1] + side[6 - k] + 1)
    assert c[5] == total + 5
    return sum(math.comb(c[k - 1], k) for k in range(1, 7))


def endbook_slots(checkers):
    """Slot of every side in endbook's layout, and the slot count."""
    pips = lambda s: sum((i + 1) * n for i, n in enumerate(s))
    order = sorted(sides(checkers), key=lambda s: (pips(s), sum(s), s))
    slots, slot = {}, 0
    for p, group in itertools.groupby(order, key=pips):
        for side in group:
            slots[side] = slot
            slot += 1
        slot += -slot % 8
    return slots, slot


def read_gnubg(path, checkers):
    data = path.read_bytes()
    header = data[:40].decode("ascii", "replace")
    expected = f"gnubg-TS-06-{checkers:02d}-1"
    if not header.startswith(expected):
        raise SystemExit(f"{path}: header {header[:16]!r}, expected {expected!r} (cubeful)")
    n = math.comb(checkers + 6, 6)
    values = struct.unpack_from(f"<{n * n * 4}H", data, 40)
    return n, values


def read_endbook(path):
    data = path.read_bytes()
    if data[:8] != b"ENDBOOK\0" or data[12:16] != b"BOFF":
        raise SystemExit(f"{path}: not an endbook bear-off book")
    params, sections = struct.unpack_from("<II", data, 16)
    checkers, cube, slots, encoding, values = struct.unpack_from(f"<{params}Q", data, 24)
    assert params == 5 and cube == 1 and encoding == 1 and values == 4 and sections == 1
    offset, length = struct.unpack_from("<QQ", data, 24 + 8 * params)
    assert length == slots * slots * 4 * 2
    return checkers, slots, struct.unpack_from(f"<{slots * slots * 4}H", data, offset)


def compare(gnubg_path, book_path, checkers):
    """Every pair's four values: (pairs, worst (difference, pair) per value, mean per value)."""
    n, theirs = read_gnubg(gnubg_path, checkers)
    book_checkers, book_slots, ours = read_endbook(book_path)
    assert book_checkers == checkers
    slots, slot_count = endbook_slots(checkers)
    assert slot_count == book_slots, (slot_count, book_slots)
    table = [(gnubg_index(s), slots[s], s) for s in sides(checkers)]
    assert sorted(g for g, _, _ in table) == list(range(n))
    worst = [(0.0, None)] * 4
    total = [0.0] * 4
    pairs = 0
    for gx, mx, x in table:
        base = (mx // 8 * slot_count) * 32 + mx % 8
        their_row = (gx * n) * 4
        for go, mo, o in table:
            g = their_row + go * 4
            b = base + mo * 32
            ours_values = (
                2.0 * ours[b] / 65535.0 - 1.0,  # P(win) as the equity 2p - 1
                2.0 * ours[b + 8] / 65535.0 - 1.0,
                2.0 * ours[b + 16] / 65535.0 - 1.0,
                2.0 * ours[b + 24] / 65535.0 - 1.0,
            )
            for k in range(4):
                diff = abs(ours_values[k] - (theirs[g + k] / 32767.5 - 1.0))
                total[k] += diff
                if diff > worst[k][0]:
                    worst[k] = (diff, (x, o))
            pairs += 1
    return pairs, worst, [t / pairs for t in total]


def run_check(args, binary):
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    failed = False
    # The table is printed once every comparison is done: a failure leaves no half table on stdout.
    lines = []
    for checkers in args.checkers:
        pairs, worst, mean = compare(
            gnubg_database(workdir, checkers), endbook_book(binary, workdir, checkers), checkers
        )
        for k, kind in enumerate(KINDS):
            diff, where = worst[k]
            at = "" if where is None else f"{' '.join(map(str, where[0]))}; {' '.join(map(str, where[1]))}"
            lines.append(f"| 6x{checkers} | {pairs:,} | {kind} | {diff:.2e} | {mean[k]:.2e} | {at} |")
            failed |= diff > args.tolerance
    print("| table | pairs | value (as equity) | max abs difference | mean abs difference | at (X to move; O) |")
    print("|---|---|---|---|---|---|")
    print("\n".join(lines))
    print()
    print(f"every entry within {args.tolerance:g}: {'no' if failed else 'yes'}")
    return 1 if failed else 0


def run_bench(args, binary):
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    tool = makebearoff()
    rows = []
    for repeat in range(args.repeat):
        for name, command in [
            ("endbook bearoff generate --checkers 8 --cube",
             [str(binary), "bearoff", "generate", "--checkers", "8", "--cube",
              "--out", str(workdir / "bench-8-cube.book")]),
            ("makebearoff -t 6x8",
             [tool, "-t", "6x8", "-f", str(workdir / "bench-6x8.bd")]),
        ]:
            if name.startswith("makebearoff") and repeat >= args.gnubg_repeat:
                continue
            wall, rss = timed(command)
            rows.append((name, wall, rss))
            print(f"{name}: {wall:.3f} s, {rss:.0f} MB", file=sys.stderr)
    # The timed runs must also agree: every entry within the tolerance (compared before any table is printed).
    _, worst, _ = compare(workdir / "bench-6x8.bd", workdir / "bench-8-cube.book", 8)
    largest = max(diff for diff, _ in worst)
    print("| command | runs | median wall s | peak RSS MB |")
    print("|---|---|---|---|")
    medians = {}
    for name in dict.fromkeys(r[0] for r in rows):
        walls = [r[1] for r in rows if r[0] == name]
        rss = max(r[2] for r in rows if r[0] == name)
        medians[name] = statistics.median(walls)
        print(f"| `{name}` | {len(walls)} | {medians[name]:.3f} | {rss:.0f} |")
    ours, theirs = medians.values()
    print()
    print(f"makebearoff / endbook: {theirs / ours:.0f}x ({os.cpu_count()} cores, "
          f"endbook on all of them, makebearoff single-threaded)")
    print(f"the two timed outputs agree on every entry within {largest:.2e}")
    return 0 if largest <= args.tolerance else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", default=str(ROOT / "target" / "gnubg-check"),
                        help="where databases and books are kept between runs (default target/gnubg-check)")
    binary_help = ("endbook to run (default target/release/endbook, built with `cargo build --release` only when "
                   "cargo is there and no --binary is given)")
    parser.add_argument("--binary", type=Path, help=binary_help)
    tolerance_help = "largest absolute difference allowed between any two values, as equities (default 2e-4)"
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="compare every entry",
                           description="Compare every entry of gnubg's 6xC cubeful two-sided databases with endbook's "
                                       "books; the table is printed once every comparison is done.")
    check.add_argument("--binary", type=Path, default=argparse.SUPPRESS, help=binary_help)
    check.add_argument("--checkers", type=int, nargs="+", default=[6, 8],
                       help=f"most checkers a side of each table compared, 1 to {MAX_CHECKERS} (default 6 8; "
                            "makebearoff takes about 6 minutes at 8)")
    check.add_argument("--tolerance", type=float, default=2e-4, help=tolerance_help)
    bench = sub.add_parser("bench", help="time makebearoff -t 6x8 against endbook",
                           description="Time `makebearoff -t 6x8` against `endbook bearoff generate --checkers 8 "
                                       "--cube` in the same run; the two outputs must agree within --tolerance.")
    bench.add_argument("--binary", type=Path, default=argparse.SUPPRESS, help=binary_help)
    bench.add_argument("--repeat", type=int, default=5, help="endbook runs (default 5)")
    bench.add_argument("--gnubg-repeat", type=int, default=1,
                       help="makebearoff runs, 1 to --repeat (default 1; 6 min each)")
    bench.add_argument("--tolerance", type=float, default=2e-4,
                       help="largest absolute difference allowed between the two timed outputs' values, as "
                            "equities (default 2e-4)")
    args = parser.parse_args()
    if args.tolerance < 0:
        usage_error(f"--tolerance {args.tolerance:g}: must be at least 0")
    if args.command == "check":
        bad = [c for c in args.checkers if not 1 <= c <= MAX_CHECKERS]
        if bad:
            usage_error(f"--checkers {' '.join(map(str, bad))}: each must be 1 to {MAX_CHECKERS}")
    else:
        if args.repeat < 1:
            usage_error("--repeat must be at least 1")
        if not 1 <= args.gnubg_repeat <= args.repeat:
            usage_error(f"--gnubg-repeat {args.gnubg_repeat}: must be 1 to --repeat ({args.repeat})")
    binary = endbook_binary(args.binary, nice=True)
    return run_check(args, binary) if args.command == "check" else run_bench(args, binary)


if __name__ == "__main__":
    sys.exit(main())
