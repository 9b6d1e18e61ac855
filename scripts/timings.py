#!/usr/bin/env python3
"""Timing tables for endbook: criterion benches plus end-to-end `generate` runs.

Runs, in one go on this machine:
  1. `cargo bench --bench kernels --bench probe` (kernel sweeps, mirror
     transposes, change packing, movegens, the book encoder and book
     lookups on the 12-seed data, and the row sweeps of the 16-seed level),
     built by cargo from this checkout: --binary does not apply to them
     (--skip-benches where there is no cargo);
  2. `endbook oware generate` for N = 9..12: every kernel (and auto) on run
     sweeps (the default) and on dense sweeps, on 1 thread and on all
     threads; frontier and hybrid sweeps; each movegen; REPEAT times each;
  3. the article's C++ program for N = 9 (compiled with g++ -O3 -march=native
     from the path given; never copied into the project), REPEAT times, and
     with --enlarged, its enlarged version at -DNSEEDS=12 (the article's
     algorithm sized for 12 seeds and 200 layers), min(REPEAT, 3) times
     (about 5 s a run).
Writes results/<cpu-model>-family-<cpu-family>/<date>.md and .csv with every
configuration column.

Usage: scripts/timings.py --article ../shared/anchors/article-oware-book.cpp \
           [--enlarged ../shared/anchors/article-oware-book-enlarged.cpp] [--repeat 5]
"""

import argparse
import csv
import datetime
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "target" / "release" / "endbook"
CRITERION = ROOT / "target" / "criterion"


def cpuinfo(field):
    """The first value of `field` in /proc/cpuinfo, or None."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip() == field:
            return value.strip()
    return None


def cpu_model():
    return cpuinfo("model name") or "unknown-cpu"


def cpu_family():
    family = cpuinfo("cpu family")
    return int(family) if family else None


def cpu_model_number():
    model = cpuinfo("model")
    return int(model) if model else None


GNU_TIME = Path("/usr/bin/time")

# Lines of a failed child's stderr shown with the failure.
STDERR_TAIL = 10


def usage_error(message):
    """Bad input or a missing tool, found before any work: one line on stderr, exit status 2."""
    print(message, file=sys.stderr)
    sys.exit(2)


def seed_counts(text, option, example):
    """The comma list of seed counts `text` given to `option`, each at least 1, or a usage error."""
    try:
        counts = [int(n) for n in text.split(",")]
    except ValueError:
        usage_error(f"{option} {text!r}: expected a comma list of seed counts, e.g. {example}")
    if min(counts) < 1:
        usage_error(f"{option} {text!r}: seed counts must be at least 1")
    return counts


def describe_exit(code, report=""):
    """A child's end as words: `exit code N` or `killed by signal SIGNAME`, from its return code (negative for
    a signal) or, under GNU time (which exits 128 + N), from GNU time's report."""
    match = re.search(r"terminated by signal (\d+)", report)
    number = int(match.group(1)) if match else -code if code < 0 else None
    if number is None:
        return f"exit code {code}"
    try:
        return f"killed by signal {signal.Signals(number).name}"
    except ValueError:
        return f"killed by signal {number}"


def check_executable(path, option):
    """Exits 2 unless `path` (given as `option`) is an executable file."""
    if not Path(path).is_file():
        usage_error(f"{option} {path}: no such file")
    if not os.access(path, os.X_OK):
        usage_error(f"{option} {path}: not executable")


def check_source(path, option, alternative=""):
    """Exits 2 unless `path` (given as `option`) is a C++ source that can be compiled: the file exists and g++ is
    on PATH (else the message names how to install it, and `alternative`)."""
    if not Path(path).is_file():
        usage_error(f"{option} {path}: no such file")
    if shutil.which("g++") is None:
        usage_error(f"g++ not found on PATH, needed to compile {option} {path}: install it (Debian: apt-get install "
                    f"g++){alternative}")


def check_program(path, option):
    """A program given either as a .cpp source (compiled with g++) or built: exits 2 unless it can be used."""
    if Path(path).suffix == ".cpp":
        check_source(path, option, " or pass a build of it")
    else:
        check_executable(path, option)


def endbook_binary(binary, nice=False):
    """The endbook to run: `binary` when given, else target/release/endbook, built first with `cargo build
    --release` where cargo is on PATH (under `nice -n 19` with `nice`). Exits 2 unless it is an executable
    file, 1 when the build fails."""
    if binary is None:
        binary = BINARY
        if shutil.which("cargo"):
            build = subprocess.run((["nice", "-n", "19"] if nice else []) + ["cargo", "build", "--release", "--quiet"],
                                   cwd=ROOT)
            if build.returncode != 0:
                sys.exit(f"cargo build --release failed ({describe_exit(build.returncode)})")
        if not binary.exists():
            usage_error(f"no endbook at {binary} and no cargo to build it: build it (cargo build --release) or "
                        "pass --binary")
    check_executable(binary, "--binary")
    return binary


def timed(command, cwd=None):
    """Runs command; returns (wall seconds, peak RSS in bytes, stdout, user + system CPU seconds).

    The peak comes from GNU time (/usr/bin/time) where it is installed. A
    child's own ru_maxrss is no use for small runs: Linux carries into it the
    peak of the process it was started from (this interpreter, about 16 MB),
    so a 10 MB run reads 16 MB. GNU time's own is about 2 MB. Without it,
    ru_maxrss is taken, an upper bound.

    The child's stderr is kept aside: when it fails, the script exits
    (status 1) naming its exit code or signal, with the last lines of it."""
    with tempfile.NamedTemporaryFile(mode="r", suffix=".rss") as rss, tempfile.TemporaryFile() as errors:
        wrapped = [GNU_TIME, "-f", "%M", "-o", rss.name, *command] if GNU_TIME.exists() else command
        start = time.perf_counter()
        try:
            process = subprocess.Popen(wrapped, cwd=cwd, stdout=subprocess.PIPE, stderr=errors)
        except OSError as error:
            sys.exit(f"cannot run {command[0]}: {error.strerror}")
        stdout = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        if status != 0:
            report = rss.read() if wrapped is not command else ""
            errors.seek(0)
            tail = errors.read().decode(errors="replace").rstrip().splitlines()[-STDERR_TAIL:]
            sys.exit(f"failed ({describe_exit(os.waitstatus_to_exitcode(status), report)}): "
                     f"{' '.join(map(str, command))}" + "".join(f"\n  {line}" for line in tail))
        peak_kib = int(rss.read().split()[-1]) if wrapped is not command else usage.ru_maxrss
    return wall, peak_kib * 1024, stdout.decode(), usage.ru_utime + usage.ru_stime


def results_folder():
    """results/<cpu-model>-family-<cpu-family>."""
    # The model name alone does not tell CPU generations apart ("AMD EPYC").
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", cpu_model()).strip("-") + f"-family-{cpu_family()}"
    return ROOT / "results" / name


def commit_label():
    """The checked-out commit, marked when tracked files differ from it; "unknown" outside a git checkout."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"
    if not commit:
        return "unknown"
    return commit + (" with uncommitted changes" if dirty else "")


def compile_cpp(source, output, *flags, option="source"):
    """Builds one of the article's C++ programs as the tables quote it: g++ -O3 -march=native. Exits 2 without g++
    or the source (given as `option`), 1 when g++ fails (its errors are on stderr)."""
    check_source(source, option)
    build = subprocess.run(["g++", "-O3", "-march=native", *flags, "-o", str(output), str(Path(source).resolve())])
    if build.returncode != 0:
        sys.exit(f"g++ failed to compile {source} ({describe_exit(build.returncode)})")


def summary(samples):
    return statistics.median(samples), min(samples), max(samples)


def summarize(runs):
    """Of runs as `timed` returns them: (median, min, max) of the wall clock, and the largest peak RSS in bytes."""
    return summary([run[0] for run in runs]), max(run[1] for run in runs)


def repeated(command, repeat, cwd=None):
    """Runs command `repeat` times: `summarize` of the runs."""
    return summarize([timed(command, cwd=cwd) for _ in range(repeat)])


def run_benches():
    """`cargo bench` on this checkout (never --binary): the criterion results."""
    print("running cargo bench --bench kernels --bench probe ...", file=sys.stderr)
    bench = subprocess.run(["cargo", "bench", "--bench", "kernels", "--bench", "probe", "--", "--noplot"], cwd=ROOT,
                           stdout=subprocess.DEVNULL)
    if bench.returncode != 0:
        sys.exit(f"cargo bench failed ({describe_exit(bench.returncode)})")
    return collect_benches(BENCH_GROUPS)


# The criterion groups reported, in table order.
BENCH_GROUPS = ["sweep", "rows", "rows16", "transpose", "packing", "movegen", "encode", "probe"]


def collect_benches(groups):
    """The latest criterion results of `groups`, from target/criterion."""
    rows = []
    for group in groups:
        for estimates in sorted((CRITERION / group).glob("**/new/estimates.json")):
            bench_dir = estimates.parent
            name = bench_dir.parent.relative_to(CRITERION / group).as_posix()
            sample = json.loads((bench_dir / "sample.json").read_text())
            per_iter = [t / n / 1e9 for t, n in zip(sample["times"], sample["iters"])]
            benchmark = json.loads((bench_dir / "benchmark.json").read_text())
            throughput = benchmark.get("throughput") or {}
            elements = throughput.get("Elements")
            median, low, high = summary(per_iter)
            rows.append({"group": group, "name": name, "median": median, "min": low, "max": high,
                         "elements": elements})
    return rows


def generate_configs(seeds, threads_all):
    """The end-to-end configurations: (N, kernel, movegen, sweep, threads)."""
    configs = []
    for n in seeds:
        for threads in sorted({1, threads_all}):
            # Run sweeps build no child cache, so no move generator (the
            # command refuses --movegen with them).
            for kernel in ["auto", "scalar", "portable", "avx2"]:
                configs.append((n, kernel, "-", "runs", threads))
            for kernel in ["auto", "scalar", "portable", "avx2"]:
                configs.append((n, kernel, "auto", "dense", threads))
            for sweep in ["frontier", "hybrid"]:
                configs.append((n, "auto", "auto", sweep, threads))
        for movegen in ["scalar", "bmi2"]:
            configs.append((n, "auto", movegen, "hybrid", threads_all))
        configs.append((n, "auto", "auto", "hybrid all-levels-at-once", threads_all))
    return configs


def generate_args(n, kernel, movegen, sweep, threads):
    """`endbook`'s arguments for one configuration, all but --out."""
    args = ["oware", "generate", "--max-seeds", str(n), "--kernel", kernel, "--sweep", sweep.split()[0],
            "--threads", str(threads)]
    if movegen != "-":
        args += ["--movegen", movegen]
    if sweep.endswith("all-levels-at-once"):
        args.append("--all-levels-at-once")
    return args


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--article", type=Path,
                        help="path to article-oware-book.cpp (compiled, never copied); required, except with "
                             "--print-commands")
    parser.add_argument("--enlarged", type=Path,
                        help="path to article-oware-book-enlarged.cpp, run at -DNSEEDS=12 (compiled, never copied)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="runs per configuration (default 5; the enlarged program min(REPEAT, 3))")
    parser.add_argument("--seeds", default="9,10,11,12", help="book sizes to time (default 9,10,11,12)")
    parser.add_argument("--skip-benches", action="store_true", help="only the end-to-end runs")
    parser.add_argument("--binary", type=Path,
                        help="time this endbook build in the end-to-end runs (default target/release/endbook, "
                             "built with cargo when cargo is there); the criterion benches do not use it: "
                             "`cargo bench` builds them from this checkout, so on a machine without cargo add "
                             "--skip-benches")
    parser.add_argument("--results", type=Path, help="folder for the tables (default results/<cpu>)")
    parser.add_argument("--commit", help="commit to name in the table (default: from git)")
    parser.add_argument("--print-commands", action="store_true",
                        help="print the end-to-end runs' `endbook` arguments (all but --out), one JSON list "
                             "a line, and stop: nothing is built or run (the project's tests check that the "
                             "command accepts each)")
    args = parser.parse_args()
    if args.repeat < 1:
        usage_error("--repeat must be at least 1")
    seeds = seed_counts(args.seeds, "--seeds", "9,10,11,12")
    threads_all = os.cpu_count()
    if args.print_commands:
        # Into a pipe that closes early (`| head`), end as other tools do.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        for config in generate_configs(seeds, threads_all):
            print(json.dumps(generate_args(*config)))
        return
    if args.article is None:
        usage_error("--article is required (the article's program is timed beside the runs)")
    if not args.skip_benches and shutil.which("cargo") is None:
        usage_error("cargo not found: the criterion benches are built and run by `cargo bench` (install Rust, "
                    "https://rustup.rs), or pass --skip-benches to time only the end-to-end runs")
    check_source(args.article, "--article")
    if args.enlarged:
        check_source(args.enlarged, "--enlarged")
    enlarged_runs = max(1, min(args.repeat, 3))  # about 5 s a run

    binary = endbook_binary(args.binary)
    bench_rows = [] if args.skip_benches else run_benches()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        article = tmp / "article"
        compile_cpp(args.article, article, option="--article")
        configs = generate_configs(seeds, threads_all)
        for n, kernel, movegen, sweep, threads in configs:
            samples, peaks, chosen = [], [], None
            for _ in range(args.repeat):
                book = tmp / f"oware-{n}.book"
                wall, peak, out, _ = timed([binary] + generate_args(n, kernel, movegen, sweep, threads)
                                           + ["--out", book])
                samples.append(wall)
                peaks.append(peak)
                match = re.search(r"^kernel (\S+)", out, re.M)
                chosen = match.group(1) if match else kernel
                book.unlink()
            median, low, high = summary(samples)
            label = kernel if kernel != "auto" else f"auto ({chosen})"
            rows.append({"program": "endbook", "kernel": label, "movegen": movegen, "sweep": sweep,
                         "threads": threads, "N": n, "median_s": median, "min_s": low, "max_s": high,
                         "peak_rss_mb": max(peaks) / 1e6})
            print(f"N={n} kernel={label} movegen={movegen} sweep={sweep} threads={threads}: "
                  f"median {median:.3f} s", file=sys.stderr)
        (median, low, high), peak = repeated([article, tmp / "flat9.bin"], args.repeat, cwd=tmp)
        article_row = {"program": "article C++ (g++ -O3 -march=native)", "kernel": "-", "movegen": "-",
                       "sweep": "dense", "threads": 1, "N": 9, "median_s": median, "min_s": low, "max_s": high,
                       "peak_rss_mb": peak / 1e6}
        rows.append(article_row)
        print(f"article N=9: median {median:.3f} s", file=sys.stderr)
        enlarged_row = None
        if args.enlarged:
            enlarged = tmp / "enlarged"
            compile_cpp(args.enlarged, enlarged, "-DNSEEDS=12", option="--enlarged")
            (median, low, high), peak = repeated([enlarged], enlarged_runs, cwd=tmp)
            enlarged_row = {"program": "article enlarged C++ (-DNSEEDS=12)", "kernel": "-", "movegen": "-",
                            "sweep": "dense", "threads": 1, "N": 12, "median_s": median, "min_s": low,
                            "max_s": high, "peak_rss_mb": peak / 1e6}
            rows.append(enlarged_row)
            print(f"article enlarged N=12: median {median:.3f} s", file=sys.stderr)

    model = cpu_model()
    folder = args.results or results_folder()
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.date.today().isoformat()
    commit = args.commit or commit_label()
    command = f"scripts/timings.py --article {args.article} --repeat {args.repeat} --seeds {args.seeds}"
    if args.skip_benches:
        command += " --skip-benches"
    if args.binary:
        command += f" --binary {args.binary}"
    if args.enlarged:
        command += f" --enlarged {args.enlarged}"

    with open(folder / f"{stamp}.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["kind", "program", "kernel", "movegen", "sweep", "threads", "N", "median_s", "min_s",
                         "max_s", "peak_rss_mb", "throughput_per_s"])
        for r in rows:
            writer.writerow(["generate", r["program"], r["kernel"], r["movegen"], r["sweep"], r["threads"], r["N"],
                             f"{r['median_s']:.6f}", f"{r['min_s']:.6f}", f"{r['max_s']:.6f}",
                             f"{r['peak_rss_mb']:.1f}", ""])
        for b in bench_rows:
            parts = b["name"].split("/")
            sweeps = b["group"] in ("sweep", "rows", "rows16")
            kernel = parts[0] if sweeps else "-"
            movegen = parts[0] if b["group"] == "movegen" else "-"
            threads = (1 if parts[1] == "1-thread" else threads_all) if sweeps else 1
            if b["group"] == "probe":
                kernel = f"book encoding {parts[0]}"
            if b["group"] == "packing":
                kernel = f"packing {parts[0]}"
            if b["group"] == "transpose":
                kernel, threads = "transpose", 1 if parts[0] == "1-thread" else threads_all
            if b["group"] == "encode":
                # The whole book's encodings, and the top level alone on one
                # thread and on all.
                kernel = f"book encoder {parts[0]}"
                threads = 1 if parts[0].endswith("1-thread") else threads_all
            rate = b["elements"] / b["median"] if b["elements"] else ""
            sweep = {"rows": "runs", "rows16": "runs", "transpose": "runs", "encode": "-"}.get(b["group"], "dense")
            seeds = 16 if b["group"] == "rows16" or parts[0].startswith("16-seeds") else 12
            writer.writerow([f"bench-{b['group']}", "endbook", kernel, movegen, sweep, threads, seeds,
                             f"{b['median']:.6f}", f"{b['min']:.6f}", f"{b['max']:.6f}", "",
                             f"{rate:.4g}" if rate else ""])

    article_median = article_row["median_s"]
    runs = f"each configuration run {args.repeat} times"
    if enlarged_row:
        runs += f" (the article's enlarged program {enlarged_runs} times)"
    benches = ""
    if not args.skip_benches:
        benches = (" The criterion benches are built and run by `cargo bench` from this checkout, not from the "
                   f"--binary {args.binary} timed end to end." if args.binary else
                   " The criterion benches are built and run by `cargo bench` from this checkout.")
    lines = [f"# endbook timings: {model}", "",
             f"{stamp}, commit {commit}, {threads_all} threads available, CPU family {cpu_family()}, "
             f"model {cpu_model_number()}. "
             f"Produced by `{command}`; {runs}, wall clock of the whole "
             "command (building the child cache, sweeping, writing the book). Sweeps run level by level "
             "unless the sweep column says otherwise. The last column: the article's program at N=9 "
             "(and its enlarged version at N=12, where measured) over this row's median." + benches, "",
             "## End-to-end `endbook oware generate`", "",
             "| N | kernel | movegen | sweep | threads | median s | min s | max s | peak RSS MB | article / this |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        reference = {9: article_median, 12: enlarged_row and enlarged_row["median_s"]}.get(r["N"])
        ratio = f"{reference / r['median_s']:.2f}x" if reference and r["program"] == "endbook" else ""
        name = r["program"] if r["program"] != "endbook" else ""
        lines.append(f"| {r['N']} | {r['kernel'] if not name else name} | {r['movegen']} | {r['sweep']} | {r['threads']} | "
                     f"{r['median_s']:.3f} | {r['min_s']:.3f} | {r['max_s']:.3f} | {r['peak_rss_mb']:.0f} | {ratio} |")
    if bench_rows:
        lines += ["", "## criterion benches (12-seed data, rows16 the 16-seed level; per iteration; "
                  "encode: the book's records, or the 12-seed level's, throughput in changes; probe: 100,000 lookups)", "",
                  "| bench | median ms | min ms | max ms | throughput (median) |", "|---|---|---|---|---|"]
        for b in bench_rows:
            rate = f"{b['elements'] / b['median'] / 1e6:.1f} M/s" if b["elements"] else ""
            lines.append(f"| {b['group']}/{b['name']} | {b['median'] * 1e3:.2f} | {b['min'] * 1e3:.2f} | "
                         f"{b['max'] * 1e3:.2f} | {rate} |")
    (folder / f"{stamp}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {folder / stamp}.md and .csv", file=sys.stderr)


if __name__ == "__main__":
    main()
