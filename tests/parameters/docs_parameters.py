#!/usr/bin/python3
"""The parameter tables in docs/ are the declared table's: each layer's page holds, between
`<!-- parameters:LAYER -->` and `<!-- end parameters -->`, exactly what
`xmsg_info --parameters-markdown LAYER` prints. Regenerate with scripts/update-parameter-docs.py.

usage: docs_parameters.py XMSG_INFO DOCS_DIR
"""
import re
import subprocess
import sys

xmsg_info, docs = sys.argv[1:3]
PAGES = {"runtime": "running.md", "collectives": "collectives.md", "shm": "shm.md", "tcp": "tcp.md",
         "verbs": "verbs.md", "launcher": "launcher.md"}
failures = []
for layer, page in PAGES.items():
    text = open(f"{docs}/{page}", encoding="utf-8").read()
    blocks = re.findall(rf"<!-- parameters:{layer} -->\n(.*?)<!-- end parameters -->", text, re.S)
    want = subprocess.run([xmsg_info, "--parameters-markdown", layer], check=True, capture_output=True,
                          text=True).stdout
    if len(blocks) != 1:
        failures.append(f"docs/{page}: {len(blocks)} '<!-- parameters:{layer} -->' blocks, expected 1")
    elif blocks[0] != want:
        have_rows, want_rows = set(blocks[0].splitlines()), set(want.splitlines())
        diff = [f"  docs only: {r}" for r in sorted(have_rows - want_rows)] + \
               [f"  table only: {r}" for r in sorted(want_rows - have_rows)]
        failures.append(f"docs/{page} disagrees with the table for layer {layer}:\n" + "\n".join(diff or ["  (order)"]))
for f in failures:
    print("FAILED:", f)
print(f"docs_parameters: {len(PAGES)} pages, {len(failures)} disagreeing")
sys.exit(1 if failures else 0)
