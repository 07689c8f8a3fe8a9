#!/usr/bin/env python3
"""The docs say only what is so.

1. Every example output marked `<!-- example: CASE/NAME [lines=N] [exit] -->` is the golden run's own output
   (tests/golden/CASE/NAME.out, the committed traces of one run): the fenced block after the marker must be
   `$ shardscope ARGS` (ARGS from NAME.args, run in tests/golden/CASE) and the first N lines of its stdout.
   --update rewrites those blocks (scripts/update-golden calls it after the goldens).
2. No page names a command that does not exist: in code (`$ ` lines of fenced blocks, and `spans`), each `shardscope VERB` is
   one of the CLI's subcommands and each `scripts/NAME` is a file in the repository.

usage: docs_check.py REPO SHARDSCOPE_BINARY [--update] [FILE.md ...]   (default: README.md and docs/*.md)
"""
import glob, os, re, subprocess, sys

MARK = re.compile(r"^<!-- example: (\S+)/(\S+?)((?: lines=\d+)?)((?: exit)?) -->$")
VERB = re.compile(r"(?:^|[\s/`(])shardscope (-{0,2}[a-z][a-z-]*)")
SCRIPT = re.compile(r"(?:^|[\s`(./])(scripts/[A-Za-z0-9_.-]+)")


def subcommands(binary):
    text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    names, on = set(), False
    for line in text.splitlines():
        if line.strip().upper().startswith("SUBCOMMANDS"):
            on = True
            continue
        if on:
            m = re.match(r"^\s+([a-z][a-z-]*)\b", line)
            if m:
                names.add(m.group(1))
            elif line.strip() and not line.startswith(" "):
                on = False
    return names


def golden_block(repo, case, name, lines, with_exit):
    base = os.path.join(repo, "tests", "golden", case, name)
    args = open(base + ".args").readline().split()
    out = open(base + ".out").read()
    stdout, _, rest = out.partition("\n--- stderr\n")
    body = stdout.split("\n")
    if lines:
        body = body[:lines]
    cmd = "$ shardscope " + " ".join(args) + ('; echo "exit $?"' if with_exit else "")
    cmd += "    # in tests/golden/" + case
    block = [cmd] + body
    if with_exit:
        block.append("exit " + rest.rsplit("--- exit ", 1)[1].strip())
    return block


def code_text(text):
    """The fenced blocks' command lines and the inline code spans of a Markdown page, with their line numbers."""
    out, fenced = [], False
    for no, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            if line.startswith("$ "):  # a command; the lines after it are its output
                out.append((no, line))
        else:
            out.extend((no, span) for span in re.findall(r"`([^`]+)`", line))
    return out


def check_page(repo, path, verbs, update):
    problems = []
    text = open(path).read()
    lines = text.split("\n")
    rel = os.path.relpath(path, repo)
    i, changed = 0, False
    while i < len(lines):
        m = MARK.match(lines[i])
        if not m:
            i += 1
            continue
        case, name = m.group(1), m.group(2)
        n = int(m.group(3).split("=")[1]) if m.group(3) else 0
        if not os.path.exists(os.path.join(repo, "tests", "golden", case, name + ".out")):
            problems.append(f"{rel}:{i + 1}: example names tests/golden/{case}/{name}.out, which does not exist")
            i += 1
            continue
        want = golden_block(repo, case, name, n, bool(m.group(4)))
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            problems.append(f"{rel}:{i + 1}: an example marker must be followed by a fenced block")
            i += 1
            continue
        end = i + 2
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if lines[i + 2:end] != want:
            if update:
                lines[i + 2:end] = want
                end = i + 2 + len(want)
                changed = True
            else:
                problems.append(f"{rel}:{i + 3}: the example is not tests/golden/{case}/{name}.out's output "
                                "(scripts/update-golden rewrites it)")
        i = end + 1
    if changed:
        open(path, "w").write("\n".join(lines))
    for no, code in code_text("\n".join(lines)):
        for verb in VERB.findall(code):
            if not verb.startswith("-") and verb not in verbs:
                problems.append(f"{rel}:{no}: `shardscope {verb}`: there is no such command ({', '.join(sorted(verbs))})")
        for script in SCRIPT.findall(code):
            if not os.path.isfile(os.path.join(repo, script)):
                problems.append(f"{rel}:{no}: `{script}` does not exist")
    return problems


def main():
    args = [a for a in sys.argv[1:] if a != "--update"]
    update = "--update" in sys.argv[1:]
    repo, binary, pages = args[0], args[1], args[2:]
    if not pages:
        pages = [os.path.join(repo, "README.md")] + sorted(glob.glob(os.path.join(repo, "docs", "*.md")))
    verbs = subcommands(binary)
    if not verbs:
        print(f"docs_check: `{binary} --help` lists no subcommands")
        return 2
    problems = [p for page in pages for p in check_page(repo, page, verbs, update)]
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
