#!/usr/bin/env python3
"""Thread scaling of `endbook oware generate`: one table per machine.

For each planned book size N and thread count K, runs
`endbook oware generate --max-seeds N --threads K` (kernel and movegen
`auto`) REPEAT times, and records the wall clock of the whole command, the
user + system CPU time, the peak RSS, the sweeps' and the tail's share as the
program reports them, which kernel `auto` took, and the SHA-256 of the book.
Every run of one N must write the same book, whatever the thread count: the
script stops at the first that does not. With --article (and --enlarged), the
article's C++ program at N=9 (and its enlarged version at -DNSEEDS=12) is
timed in the same run (5 and 3 runs) and the tables give its time over ours
at that N (column `article / this`, `enlarged / this`): a .cpp is compiled
with g++ -O3 -march=native (never copied), a built program is run as it is
(for a machine without g++). With --port scripts/dense_port.cpp, the dense
two-layer port of the article's algorithm (one thread, no book; issue 4's
yardstick) is compiled at -DNSEEDS=N for each N of --port-seeds (default 16)
and timed --port-repeat times in the same run, and its values with 200 turns
left, per seed count, must equal those of the book (`endbook oware stats`):
the table gives its time over ours at that N (column `port / this`; each
reference has its own column, so --port-seeds 9 or 12 sits beside the
article's programs, not over them).

Needs no cargo: --binary takes a built endbook (default target/release/endbook,
built with `cargo build --release` when cargo is there), so the script runs on
a machine that has only Python and, for the article, g++.

Writes results/<cpu-model>-family-<cpu-family>/<date>-scaling.md and .csv
(or into --results DIR).

Plan: space-separated items N:THREADS:REPEAT, THREADS a comma list or `all`
(1, 2, 4, ... up to the core count, and the core count). Default:
"9:all:5 12:all:5 16:all:3".

Usage: scripts/scaling.py [--plan "12:all:5 20:8,16:1"] [--binary PATH] \\
           [--article ../shared/anchors/article-oware-book.cpp] \\
           [--enlarged ../shared/anchors/article-oware-book-enlarged.cpp]
"""

import argparse
import csv
import datetime
import hashlib
import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timings import (check_program, commit_label, compile_cpp, cpu_family, cpu_model,  # noqa: E402
                     cpu_model_number, endbook_binary, repeated, results_folder, seed_counts, summarize, summary,
                     timed, usage_error)


def thread_counts(spec, cores):
    if spec == "all":
        counts, k = set(), 1
        while k < cores:
            counts.add(k)
            k *= 2
        counts.add(cores)
        return sorted(counts)
    return [int(k) for k in spec.split(",")]


def parse_plan(plan, cores):
    items = []
    for item in plan.split():
        try:
            n, threads, repeat = item.split(":")
            items.append((int(n), thread_counts(threads, cores), int(repeat)))
        except ValueError:
            usage_error(f"plan item {item!r}: expected N:THREADS:REPEAT, e.g. 12:1,2,4:5 or 16:all:3")
        if items[-1][0] < 1 or items[-1][2] < 1 or min(items[-1][1]) < 1:
            usage_error(f"plan item {item!r}: N, threads and repeats must be at least 1")
    if not items:
        usage_error(f"--plan {plan!r}: empty; give at least one item N:THREADS:REPEAT, e.g. \"9:all:5\"")
    return items


# The reference programs, in column order: (key, column, what the header says it is).
REFERENCES = [
    ("article", "article / this", "the article's program (--article, N=9, 5 runs)"),
    ("enlarged", "enlarged / this", "the article's program enlarged (--enlarged, -DNSEEDS=12, N=12, 3 runs)"),
    ("port", "port / this", "the dense two-layer port (scripts/dense_port.cpp at -DNSEEDS=N, one thread, values "
                            "checked against the book; N={seeds}, {repeat} run{plural})"),
]


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def reported(stdout, pattern, default=None):
    match = re.search(pattern, stdout, re.M)
    return match.group(1) if match else default


def check_port(port_csv, stats_csv, n):
    """Stops unless the port's values with 200 turns left, per seed count, are the book's."""
    port = list(csv.DictReader(port_csv.splitlines()))
    stats = {row["seeds"]: row for row in csv.DictReader(stats_csv.splitlines())}
    for row in port:
        theirs = stats.get(row["seeds"])
        if theirs is None or any(row[key] != theirs.get(key) for key in row):
            sys.exit(f"N={n}: the dense port's values at {row['seeds']} seeds differ from the book's")
    if len(port) != n:
        sys.exit(f"N={n}: the dense port printed {len(port)} seed counts")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plan", default="9:all:5 12:all:5 16:all:3",
                        help='items N:THREADS:REPEAT (default "9:all:5 12:all:5 16:all:3")')
    parser.add_argument("--binary", type=Path,
                        help="endbook to run (default target/release/endbook, built with cargo when cargo is there)")
    parser.add_argument("--article", type=Path, help="article-oware-book.cpp (compiled, never copied) or a build of it, timed at N=9")
    parser.add_argument("--enlarged", type=Path,
                        help="article-oware-book-enlarged.cpp (compiled at -DNSEEDS=12, never copied) or such a build")
    parser.add_argument("--port", type=Path, help="scripts/dense_port.cpp (or a build of it for one N), timed at --port-seeds")
    parser.add_argument("--port-seeds", default="16",
                        help="comma list of N for --port (default 16); its ratios go in a `port / this` column of "
                             "their own, never in the article's programs' columns")
    parser.add_argument("--port-repeat", type=int, default=3, help="runs of the port per N (default 3)")
    parser.add_argument("--work", type=Path, help="folder for the books while they are checked (default a temporary one)")
    parser.add_argument("--results", type=Path, help="folder for the tables (default results/<cpu>)")
    parser.add_argument("--commit", help="commit to name in the table (default: from git)")
    args = parser.parse_args()
    cores = os.cpu_count()
    plan = parse_plan(args.plan, cores)
    if args.port_repeat < 1:
        usage_error("--port-repeat must be at least 1")
    port_seeds = seed_counts(args.port_seeds, "--port-seeds", "12,16") if args.port else []
    if args.work is not None and not args.work.is_dir():
        usage_error(f"--work {args.work}: no such folder")
    for source, option in [(args.article, "--article"), (args.enlarged, "--enlarged"), (args.port, "--port")]:
        if source is not None:
            check_program(source, option)

    binary = endbook_binary(args.binary)

    # Reference medians by (program, N): --port-seeds 9 or 12 must not take the article's programs' places.
    rows, references = [], {}
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        tmp = Path(tmp)
        for source, n, flags in [(args.article, 9, []), (args.enlarged, 12, ["-DNSEEDS=12"])]:
            if source is None:
                continue
            program = source.resolve()
            if source.suffix == ".cpp":
                program = tmp / f"article-{n}"
                compile_cpp(source, program, *flags, option="--article" if n == 9 else "--enlarged")
            command = [program, tmp / "flat9.bin"] if n == 9 else [program]
            (median, low, high), _ = repeated(command, 3 if n == 12 else 5, cwd=tmp)
            references["article" if n == 9 else "enlarged", n] = median
            print(f"article N={n}: median {median:.3f} s", file=sys.stderr)
            rows.append({"program": "article C++" if n == 9 else "article enlarged C++ (-DNSEEDS=12)", "N": n,
                         "threads": 1, "kernel": "-", "median_s": median, "min_s": low, "max_s": high, "cpu_s": "",
                         "sweeps_s": "", "tail_s": "", "peak_rss_mb": "", "sha256": ""})
        for n in port_seeds:
            program = args.port.resolve()
            if args.port.suffix == ".cpp":
                program = tmp / f"dense-port-{n}"
                compile_cpp(args.port, program, f"-DNSEEDS={n}", option="--port")
            runs = [timed([program]) for _ in range(args.port_repeat)]
            book = tmp / f"port-check-{n}.book"
            timed([binary, "oware", "generate", "--max-seeds", str(n), "--out", book])
            check_port(runs[0][2], timed([binary, "oware", "stats", "--book", book, "--format", "csv"])[2], n)
            book.unlink()
            (median, low, high), peak = summarize(runs)
            references["port", n] = median
            print(f"dense port N={n}: median {median:.3f} s, its values equal the book's", file=sys.stderr)
            rows.append({"program": f"dense two-layer port (-DNSEEDS={n})", "N": n, "threads": 1, "kernel": "-",
                         "median_s": median, "min_s": low, "max_s": high, "cpu_s": summary([r[3] for r in runs])[0],
                         "sweeps_s": "", "tail_s": "", "peak_rss_mb": peak / 1e6, "sha256": ""})
        for n, counts, repeat in plan:
            book_hash = None
            for threads in counts:
                walls, cpus, peaks, sweeps, tails, kernels = [], [], [], [], [], set()
                for _ in range(repeat):
                    book = tmp / f"oware-{n}.book"
                    wall, peak, out, cpu = timed([binary, "oware", "generate", "--max-seeds", str(n),
                                                  "--threads", str(threads), "--out", book])
                    digest = sha256(book)
                    book.unlink()
                    if book_hash is None:
                        book_hash = digest
                    elif digest != book_hash:
                        sys.exit(f"N={n} on {threads} threads wrote a different book: {digest} against {book_hash}")
                    walls.append(wall)
                    cpus.append(cpu)
                    peaks.append(peak)
                    sweeps.append(float(reported(out, r"sweeps ([0-9.]+) s", "nan")))
                    tails.append(float(reported(out, r"encoding and writing ([0-9.]+) s", "nan")))
                    kernels.add(reported(out, r"^kernel (\S+)", "?"))
                median, low, high = summary(walls)
                rows.append({"program": "endbook", "N": n, "threads": threads, "kernel": "/".join(sorted(kernels)),
                             "median_s": median, "min_s": low, "max_s": high, "cpu_s": summary(cpus)[0],
                             "sweeps_s": summary(sweeps)[0], "tail_s": summary(tails)[0],
                             "peak_rss_mb": max(peaks) / 1e6, "sha256": book_hash})
                print(f"N={n} threads={threads}: median {median:.3f} s (min {low:.3f}, max {high:.3f}), "
                      f"peak {max(peaks) / 1e6:.0f} MB", file=sys.stderr)

    folder = args.results or results_folder()
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.date.today().isoformat()
    columns = ["program", "N", "threads", "kernel", "median_s", "min_s", "max_s", "cpu_s", "sweeps_s", "tail_s",
               "peak_rss_mb", "sha256"]
    with open(folder / f"{stamp}-scaling.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for r in rows:
            writer.writerow([f"{r[c]:.6g}" if isinstance(r[c], float) else r[c] for c in columns])

    one_thread = {r["N"]: r["median_s"] for r in rows if r["program"] == "endbook" and r["threads"] == 1}
    planned = {n for n, _, _ in plan}
    command = f"scripts/scaling.py --plan \"{args.plan}\""
    if args.article:
        command += f" --article {args.article}"
    if args.enlarged:
        command += f" --enlarged {args.enlarged}"
    if args.port:
        command += f" --port {args.port} --port-seeds {args.port_seeds} --port-repeat {args.port_repeat}"
    if args.binary:
        command += f" --binary {args.binary}"
    # One ratio column per reference program timed at an N of the plan, each over the rows of its own N only.
    present = [(key, column, what.format(seeds=",".join(map(str, port_seeds)), repeat=args.port_repeat,
                                     plural="" if args.port_repeat == 1 else "s"))
               for key, column, what in REFERENCES if any(k == key and n in planned for k, n in references)]
    ratios = ""
    if present:
        ratios = (" Ratio columns, each one reference's median over this row's median, at the reference's N only: "
                  + "; ".join(f"`{column}`: {what}" for _, column, what in present) + ".")
    lines = [f"# endbook thread scaling: {cpu_model()}", "",
             f"{stamp}, commit {args.commit or commit_label()}, {cores} threads available, CPU family "
             f"{cpu_family()}, model {cpu_model_number()}. Produced by `{command}`: wall clock of the whole `endbook oware generate "
             "--max-seeds N --threads K` command (kernel and movegen auto), median of the runs with min and max; "
             "CPU is user + system time (median); sweeps and tail (encoding and writing after the last sweep) as "
             "the program reports them. Speedup: the 1-thread median over this row's; efficiency: speedup over K. "
             "Every run of one N wrote the same book (SHA-256 below)." + ratios, "",
             "| N | threads | kernel (auto) | median s | min s | max s | CPU s | sweeps s | tail s | peak RSS MB "
             "| speedup | efficiency |" + "".join(f" {column} |" for _, column, _ in present),
             "|---|---|---|---|---|---|---|---|---|---|---|---|" + "---|" * len(present)]
    for r in rows:
        if r["program"] != "endbook":
            cpu = f"{r['cpu_s']:.2f}" if r["cpu_s"] != "" else ""
            peak = f"{r['peak_rss_mb']:.0f}" if r["peak_rss_mb"] != "" else ""
            lines.append(f"| {r['N']} | 1 | {r['program']} | {r['median_s']:.3f} | {r['min_s']:.3f} | "
                         f"{r['max_s']:.3f} | {cpu} | | | {peak} | | |" + " |" * len(present))
            continue
        base = one_thread.get(r["N"])
        speedup = f"{base / r['median_s']:.2f}x" if base else ""
        efficiency = f"{base / r['median_s'] / r['threads']:.0%}" if base else ""
        against = [references.get((key, r["N"])) for key, _, _ in present]
        lines.append(f"| {r['N']} | {r['threads']} | {r['kernel']} | {r['median_s']:.3f} | {r['min_s']:.3f} | "
                     f"{r['max_s']:.3f} | {r['cpu_s']:.2f} | {r['sweeps_s']:.3f} | {r['tail_s']:.3f} | "
                     f"{r['peak_rss_mb']:.0f} | {speedup} | {efficiency} |"
                     + "".join(f" {reference / r['median_s']:.1f}x |" if reference else " |" for reference in against))
    lines += ["", "Books (SHA-256):", ""]
    for n in sorted({r["N"] for r in rows if r["program"] == "endbook"}):
        lines.append(f"- N={n}: `{next(r['sha256'] for r in rows if r['N'] == n and r['program'] == 'endbook')}`")
    (folder / f"{stamp}-scaling.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {folder / stamp}-scaling.md and .csv", file=sys.stderr)


if __name__ == "__main__":
    main()
