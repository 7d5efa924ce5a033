#!/usr/bin/python3
"""Rewrites the parameter tables of docs/ from the declared table (bootstrap/src/parameter_table.cpp):
every `<!-- parameters:LAYER -->` ... `<!-- end parameters -->` block gets what
`xmsg_info --parameters-markdown LAYER` prints. The contract test docs_parameters checks the result.

usage: scripts/update-parameter-docs.py [build/bin/xmsg_info]
"""
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
xmsg_info = sys.argv[1] if len(sys.argv) > 1 else str(root / "build/bin/xmsg_info")
block = re.compile(r"(<!-- parameters:([a-z]+) -->\n)(.*?)(<!-- end parameters -->)", re.S)
for page in sorted((root / "docs").glob("*.md")):
    text = page.read_text(encoding="utf-8")

    def table(m):
        rows = subprocess.run([xmsg_info, "--parameters-markdown", m.group(2)], check=True, capture_output=True,
                              text=True).stdout
        return m.group(1) + rows + m.group(4)

    updated = block.sub(table, text)
    if updated != text:
        page.write_text(updated, encoding="utf-8")
        print(f"updated {page.relative_to(root)}")
