#!/usr/bin/python3
"""Runs one OSU-style benchmark and checks its output shape (bench-smoke ctest).

usage: check_osu_output.py --bench NAME [--timeout S] [--header TEXT]... [--expect-error TEXT]
                          -- LAUNCHER... BINARY [ARGS...]

Passes when the command exits 0 and prints a '#' title line, the column header of NAME, and
exactly one numeric row per message size implied by the -m option (or the benchmark default).
--header TEXT also requires a '#' line containing TEXT (e.g. the buffer placement).
--expect-error TEXT inverts the check: the command must exit non-zero with TEXT on stderr
(a rejected option). It asserts nothing about speed.
"""
import argparse
import math
import os
import signal
import subprocess
import sys

HEADERS = {
    "latency": "Latency (us)",
    "latency_mt": "Latency (us)",
    "bw": "Bandwidth (MB/s)",
    "bibw": "Bandwidth (MB/s)",
    "barrier": "Avg Latency(us)",
    "bcast": "Avg Latency(us)",
    "allreduce": "Avg Latency(us)",
    "allgather": "Avg Latency(us)",
    "reduce_scatter": "Avg Latency(us)",
    "alltoall": "Avg Latency(us)",
    "alltoallv": "Avg Latency(us)",
}
MIN_SIZE = {"latency": 0, "latency_mt": 0, "bw": 1, "bibw": 1, "bcast": 1, "allreduce": 4, "allgather": 1,
            "reduce_scatter": 4, "alltoall": 1,
            "alltoallv": 1}


def expected_sizes(bench, command):
    if bench == "barrier":
        return [0]
    if "-m" not in command:
        sys.exit("check_osu_output: give the benchmark an explicit -m so the sizes are known")
    spec = command[command.index("-m") + 1]
    lo, hi = (spec.split(":") if ":" in spec else (MIN_SIZE[bench], spec))
    lo, hi = max(int(lo), MIN_SIZE[bench]), int(hi)
    sizes = []
    size = lo
    while size <= hi:
        sizes.append(size)
        size = 1 if size == 0 else size * 2
    return sizes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", required=True, choices=sorted(HEADERS))
    parser.add_argument("--timeout", type=float, default=90)
    parser.add_argument("--header", action="append", default=[])
    parser.add_argument("--expect-error")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("missing the command to run after --")

    # Own session so a hung job can be ended as a whole without touching anything else.
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        print(out, err, sep="\n")
        sys.exit(f"FAIL: timed out after {args.timeout} s: {' '.join(command)}")
    print(out, end="")
    print(err, end="", file=sys.stderr)
    if args.expect_error is not None:
        if proc.returncode == 0:
            sys.exit(f"FAIL: exit status 0, expected a failure: {' '.join(command)}")
        if args.expect_error not in err:
            sys.exit(f"FAIL: stderr lacks {args.expect_error!r}")
        print(f"OK: {args.bench}: rejected with exit status {proc.returncode}")
        return
    if proc.returncode != 0:
        sys.exit(f"FAIL: exit status {proc.returncode}: {' '.join(command)}")

    lines = [l for l in out.splitlines() if l.strip()]
    comments = [l for l in lines if l.startswith("#")]
    rows = [l for l in lines if not l.startswith("#")]
    if not any(HEADERS[args.bench] in l and l.startswith("# Size") for l in comments):
        sys.exit(f"FAIL: no '# Size ... {HEADERS[args.bench]}' header line")
    if len(comments) < 2:
        sys.exit("FAIL: expected a title line and a column header")
    for text in args.header:
        if not any(text in l for l in comments):
            sys.exit(f"FAIL: no '#' line containing {text!r}")
    got = []
    values = []
    for row in rows:
        fields = row.split()
        try:
            size, value = int(fields[0]), float(fields[1])
        except (ValueError, IndexError):
            sys.exit(f"FAIL: row is not '<size> <value>': {row!r}")
        if not math.isfinite(value) or value < 0:
            sys.exit(f"FAIL: implausible value in row {row!r}")
        got.append(size)
        values.append(value)
    # A bandwidth table of zeros is a broken computation; one small row printed as 0.000 is a
    # slow run (a loaded machine: a few bytes per scheduler tick), which is not this check's
    # business.
    if args.bench in ("bw", "bibw") and values and max(values) <= 0:
        sys.exit("FAIL: every bandwidth row is 0")
    want = expected_sizes(args.bench, command)
    if got != want:
        sys.exit(f"FAIL: sizes {got}, expected {want}")
    print(f"OK: {args.bench}: {len(got)} rows")


if __name__ == "__main__":
    main()
