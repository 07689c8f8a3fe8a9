#!/usr/bin/env python3
"""Lists the functions longer than LIMIT lines under each ROOT and exits 1 when there is one.

Usage: long_functions.py LIMIT ROOT...
Reads clang-formatted C++ (.clang-format: Google's style), where a function defined at namespace scope opens its
body at the end of a line that starts in column 0 and closes it with a '}' in column 0; lambdas and local
classes count in the function around them. Members defined inside a class body are not seen: the class's
file is still held small by review."""
import pathlib
import re
import sys

limit = int(sys.argv[1]); roots = sys.argv[2:]
skip = re.compile(r'^(namespace|struct|class|enum|union|extern|template\s*<[^>]*>\s*(struct|class))\b|^\s*(#|//)')
bad = 0
for root in roots:
    for p in sorted(pathlib.Path(root).rglob('*')):
        if p.suffix not in ('.cc', '.h', '.cpp') or 'tests/data' in str(p): continue
        lines = p.read_text(errors='replace').split('\n')
        start = None
        for i, l in enumerate(lines):
            if start is None:
                if l and not l[0].isspace() and l.rstrip().endswith('{') and not skip.match(l) and '=' not in l.split('(')[0]:
                    start = i
            elif l.startswith('}'):
                n = i - start + 1
                if n > limit:
                    print(f'{p}:{start+1}: {n} lines: {lines[start].strip()[:90]}'); bad += 1
                start = None
sys.exit(1 if bad else 0)
