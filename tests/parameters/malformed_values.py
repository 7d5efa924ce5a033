#!/usr/bin/python3
"""Every declared parameter, set to a value its type refuses, fails a real job started by xmsgrun
with that parameter's own message (NAME='value': expected ...), promptly and with a non-zero exit;
an undeclared XMSG_* variable is reported once per job, with the nearest name, and the job runs.

usage: malformed_values.py XMSG_INFO XMSGRUN PROGRAM
"""
import json
import os
import subprocess
import sys

xmsg_info, xmsgrun, program = sys.argv[1:4]
# A value each type refuses (text parameters accept anything and are checked where they are used).
BAD = {"flag": "maybe", "integer": "12x", "bytes": "12x", "choice": "no-such-choice"}

declared = json.loads(subprocess.run([xmsg_info, "--parameters", "--json"], check=True,
                                     capture_output=True, text=True).stdout)["declared"]
base = {k: v for k, v in os.environ.items() if not k.startswith("XMSG_")}
failures = []


def run_job(env, ranks=2):
    return subprocess.run([xmsgrun, "--timeout", "30", "-n", str(ranks), program], env=env,
                          capture_output=True, text=True, timeout=60)


checked = 0
for p in declared:
    bad = BAD.get(p["type"])
    if bad is None:
        continue
    name = p["name"]
    job = run_job(dict(base, **{name: bad}))
    output = job.stdout + job.stderr
    expected = f"{name}='{bad}': expected"
    checked += 1
    if job.returncode in (0, 124) or expected not in output:
        failures.append(f"{name}={bad}: exit {job.returncode}, output lacks \"{expected}\":\n{output}")

job = run_job(dict(base, XMSG_TRANSPORT="tcp", XMSG_EAGER_LIMT="1K"), ranks=3)
output = job.stdout + job.stderr
for line in ("XMSG_TRANSPORT is not an xmsg parameter (did you mean XMSG_TRANSPORTS?)",
             "XMSG_EAGER_LIMT is not an xmsg parameter (did you mean XMSG_EAGER_LIMIT?)"):
    if output.count(line) != 1:
        failures.append(f"'{line}' appears {output.count(line)} times, not once per job:\n{output}")
if job.returncode != 0 or output.count("parameters_job: rank") != 3:
    failures.append(f"the job with undeclared variables did not run: exit {job.returncode}:\n{output}")

for f in failures:
    print("FAILED:", f)
print(f"malformed_values: {checked} parameters checked, {len(failures)} failures")
sys.exit(1 if failures or checked < 40 else 0)
