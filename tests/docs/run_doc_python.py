#!/usr/bin/env python3
"""The docs' Python runs: every ```python block of README.md and docs/*.md, run by this interpreter in the
source tree (the paths the examples name are the committed runs'), must exit 0. What a block writes goes
to temporary folders (the examples use tempfile), never into the tree: the tree's status is checked after.

usage: run_doc_python.py SOURCE_DIR   (PYTHONPATH: the built package, build/python)
"""
import glob
import os
import re
import subprocess
import sys

src = sys.argv[1]
os.chdir(src)
before = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True).stdout
ran = failed = 0
for page in ["README.md", *sorted(glob.glob("docs/*.md"))]:
    text = open(page, encoding="utf-8").read()
    for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
        line = text.count("\n", 0, m.start()) + 1
        ran += 1
        p = subprocess.run([sys.executable, "-c", m.group(1)], capture_output=True, text=True, timeout=240)
        if p.returncode != 0:
            failed += 1
            print(f"FAILED (exit {p.returncode}): {page}:{line}")
            print("\n".join("  " + l for l in p.stderr.splitlines()[-8:]))
        else:
            print(f"ran {page}:{line}:\n" + "\n".join("  " + l for l in p.stdout.splitlines()))
after = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True).stdout
if after != before:
    failed += 1
    print("FAILED: an example wrote into the source tree:\n" + after)
print(f"{ran} Python examples run, {failed} failed")
sys.exit(0 if ran > 0 and failed == 0 else 1)
