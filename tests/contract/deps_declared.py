#!/usr/bin/python3
"""Every external program the project's scripts and tests run comes from a package the project
itself installs.

A fresh machine has only the base image, and `make test` installs what scripts/deps/*.txt names
(scripts/install-deps.sh). A program that a script runs but no list names works only where some
earlier session installed it by hand: this check finds such programs before a new machine does.

What is scanned: the shell scripts under tests/, benchmarks/, scripts/ and .ci/, the commands that
CMake tests run (COMMAND lines, `sh -c` strings, find_program names), and the programs the Python
benchmark drivers start (shutil.which / subprocess argument lists). A program is accepted when the
Debian package that owns it is named in scripts/deps/*.txt, or is essential / priority required
(dpkg, coreutils, bash, ... are on every Debian system). A program that is not on this machine at
all fails too: after `make deps` everything a test runs must be here.

Usage: deps_declared.py SOURCE_DIR
Prints one line per program checked and exits 1 naming every undeclared one.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

SHELL_WORDS = set("""
if then else elif fi for while until do done case esac in function select time
! { } [[ ]] [ test echo printf exit return set shift read cd pwd export local unset trap wait
eval exec source . true false break continue type command builtin getopts hash kill let
declare readonly mapfile readarray umask ulimit alias jobs fg bg disown shopt printf : - --
""".split())

# Commands that look like programs to the scanner but are not run on the host: guest-init.sh is
# the guest's /init and runs busybox applets that softroce-run.sh links into the initramfs.
NOT_HOST_SCRIPTS = {"tests/softroce/guest-init.sh"}

# Prefixes that run the next word as the program.
WRAPPERS = {"exec", "sudo", "$SUDO", "env", "nice", "time", "command", "nohup", "setsid"}
WRAPPERS_WITH_ARG = {"timeout": 1, "chrt": 2, "taskset": 1, "flock": 1}


def declared_packages(src):
    pkgs = set()
    d = os.path.join(src, "scripts", "deps")
    for name in sorted(os.listdir(d)):
        if name.endswith(".txt"):
            with open(os.path.join(d, name)) as f:
                for line in f:
                    pkgs.update(line.split("#", 1)[0].split())
    return pkgs


def _balanced(text, i, open_ch, close_ch):
    """text[i] is just past open_ch; returns (inner, index past close_ch)."""
    depth, j = 1, i
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "'" :
            k = text.find("'", j + 1)
            j = len(text) if k < 0 else k + 1
            continue
        if c == open_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth == 0:
                return text[i:j], j + 1
        j += 1
    return text[i:], len(text)


def shell_commands(text):
    """The words of every simple command in shell text, with command substitutions and
    `sh -c` scripts parsed too. Returns a list of (words, ended_by_unopened_paren)."""
    out = []
    words, word, have_word = [], [], False
    depth = 0
    i, n = 0, len(text)

    def end_word():
        nonlocal word, have_word
        if have_word:
            words.append("".join(word))
        word, have_word = [], False

    def end_command(pattern=False):
        nonlocal words
        end_word()
        if words:
            out.append((words, pattern))
        words = []

    while i < n:
        c = text[i]
        if c == "#" and not have_word:
            k = text.find("\n", i)
            i = n if k < 0 else k
            continue
        if c == "\\":
            if i + 1 < n and text[i + 1] == "\n":
                i += 2
                continue
            word.append(text[i + 1:i + 2]); have_word = True
            i += 2
            continue
        if c == "'":
            k = text.find("'", i + 1)
            k = n if k < 0 else k
            word.append(text[i + 1:k]); have_word = True
            i = k + 1
            continue
        if c == '"':
            j = i + 1
            buf = []
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    buf.append(text[j + 1:j + 2]); j += 2; continue
                if text.startswith("$(", j):
                    inner, j = _balanced(text, j + 2, "(", ")")
                    out.extend(shell_commands(inner))
                    buf.append("$S")
                    continue
                if text[j] == "`":
                    k = text.find("`", j + 1)
                    k = n if k < 0 else k
                    out.extend(shell_commands(text[j + 1:k]))
                    buf.append("$S"); j = k + 1
                    continue
                buf.append(text[j]); j += 1
            word.append("".join(buf)); have_word = True
            i = j + 1
            continue
        if text.startswith("$(", i):
            inner, i = _balanced(text, i + 2, "(", ")")
            if not inner.startswith("("):  # $(( arithmetic ))
                out.extend(shell_commands(inner))
            word.append("$S"); have_word = True
            continue
        if text.startswith("${", i):
            _inner, i = _balanced(text, i + 2, "{", "}")
            word.append("$V"); have_word = True
            continue
        if c == "`":
            k = text.find("`", i + 1)
            k = n if k < 0 else k
            out.extend(shell_commands(text[i + 1:k]))
            word.append("$S"); have_word = True
            i = k + 1
            continue
        if c in " \t":
            end_word(); i += 1; continue
        if c in ";&|\n":
            end_command(); i += 1; continue
        if c == "(":
            if words or have_word:  # name() function definition or array=(...)
                end_word(); words = []; word = []
            depth += 1; i += 1; continue
        if c == ")":
            if depth > 0:
                depth -= 1; end_command()
            else:
                end_command(pattern=True)
            i += 1; continue
        if c in "<>":
            end_word()
            # a redirection: skip the operator and its target word
            j = i
            while j < n and text[j] in "<>&": j += 1
            while j < n and text[j] in " \t": j += 1
            words.append("$R")
            i = j
            # consume the target as a normal word, then drop it
            k = i
            while k < n and text[k] not in " \t;&|\n()": k += 1
            i = k
            words.pop()
            continue
        word.append(c); have_word = True; i += 1
    end_command()
    return out


KEYWORDS = {"if", "then", "else", "elif", "while", "until", "do", "!", "time", "{", "}", "fi", "done",
            "esac", "coproc"}
NOT_COMMANDS = {"for", "case", "[[", "[", "]]", "function", "select", "in", ";;"}


def programs_of(words, functions):
    i = 0
    while i < len(words):
        w = words[i]
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=", w) or w in KEYWORDS or w in WRAPPERS:
            i += 1
            continue
        if w in WRAPPERS_WITH_ARG:
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
            i += WRAPPERS_WITH_ARG[w]
            continue
        break
    found = set()
    # a wrapped command line (harness -- sh -c 'SCRIPT') runs SCRIPT wherever it appears
    for k in range(len(words) - 2):
        if words[k] in ("sh", "bash") and words[k + 1] == "-c" and k != i:
            found |= {words[k]} | shell_programs(words[k + 2])
    if i >= len(words):
        return found
    w = words[i]
    if i > 0 and words[i - 1] == "command" and w in ("-v", "-V"):
        return set()  # command -v PROG only asks whether PROG exists
    if w in NOT_COMMANDS or w in SHELL_WORDS or w in functions:
        return found
    if "$" in w or not re.match(r"^[A-Za-z0-9_./+-]+$", w) or re.match(r"^[0-9]", w):
        return found
    if "/" in w and not w.startswith(("/bin/", "/sbin/", "/usr/")):
        return found  # a path inside the project or the build tree
    found.add(w)
    if w in ("sh", "bash") and i + 2 < len(words) and words[i + 1] == "-c":
        found |= shell_programs(words[i + 2])
    return found


def without_heredocs(text):
    """Drops here-document bodies: they are data, not commands."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        for m in re.finditer(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?", line):
            while i < len(lines) and lines[i].strip() != m.group(1):
                i += 1
            i += 1
    return "\n".join(out)


def shell_programs(text):
    text = without_heredocs(text)
    functions = set(re.findall(r"(?m)^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_-]*)\s*\(\)", text))
    found = set()
    for words, pattern in shell_commands(text):
        if not pattern:
            found |= programs_of(words, functions)
    return found


def cmake_programs(text):
    found = set(re.findall(r"find_program\(\s*\w+\s+([A-Za-z0-9_.+-]+)", text))
    for m in re.finditer(r"COMMAND\s+([A-Za-z][A-Za-z0-9_.+-]*)", text):
        found.add(m.group(1))
    for m in re.finditer(r'sh -c "((?:[^"\\]|\\.)*)"', text):
        found |= shell_programs(m.group(1).replace('\\"', '"'))
    # targets built by the project and CMake's own words are not external programs
    targets = set(re.findall(r"add_(?:executable|library|custom_target)\(\s*([A-Za-z0-9_.+-]+)", text))
    return found - targets


def python_programs(text):
    found = set(re.findall(r'shutil\.which\("([^"]+)"\)', text))
    found |= set(re.findall(r'\[\s*"([a-z][a-z0-9_.+-]*)",\s*"-', text))
    return found


def owner(path):
    """The package that owns path; with merged /usr, dpkg may know it under /bin or /usr/bin."""
    name = os.path.basename(path)
    for candidate in (path, os.path.realpath(path), "/bin/" + name, "/sbin/" + name,
                      "/usr/bin/" + name, "/usr/sbin/" + name):
        r = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        lines = [l for l in r.stdout.splitlines() if not l.startswith("diversion ")]
        if r.returncode == 0 and lines:
            return "\n".join(lines).split(":", 1)[0].split(",")[0].strip()
    return None


def with_direct_dependencies(pkgs):
    """The declared packages and what each directly depends on (python3 brings python3-minimal,
    which owns /usr/bin/python3)."""
    out = set(pkgs)
    for p in pkgs:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Depends},${Pre-Depends}", p],
                           capture_output=True, text=True)
        for alt in r.stdout.split(","):
            for dep in alt.split("|"):
                dep = dep.strip().split(" ")[0].split(":")[0]
                if dep:
                    out.add(dep)
    return out


def is_base(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Essential} ${Priority}", pkg],
                       capture_output=True, text=True)
    return r.returncode == 0 and (r.stdout.startswith("yes") or "required" in r.stdout)


def main():
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    declared = declared_packages(src)
    uses = {}  # program -> set of files
    project_targets = set()
    for top in ("tests", "benchmarks", "scripts", ".ci", "tools", "examples", "runtime",
                "transport", "launcher", "bootstrap"):
        for root, _dirs, files in os.walk(os.path.join(src, top)):
            for name in files:
                path = os.path.join(root, name)
                if name == "CMakeLists.txt":
                    with open(path) as f:
                        project_targets |= set(re.findall(
                            r"add_(?:executable|library|custom_target)\(\s*([A-Za-z0-9_.+-]+)", f.read()))
    for top in ("tests", "benchmarks", "scripts", ".ci"):
        for root, _dirs, files in os.walk(os.path.join(src, top)):
            for name in files:
                path = os.path.join(root, name)
                rel = os.path.relpath(path, src)
                if rel in NOT_HOST_SCRIPTS:
                    continue
                try:
                    with open(path, errors="replace") as f:
                        text = f.read()
                except OSError:
                    continue
                first = text.split("\n", 1)[0]
                if name.endswith(".sh") or re.match(r"#!.*\b(ba)?sh\b", first):
                    progs = shell_programs(text)
                elif name == "CMakeLists.txt":
                    progs = cmake_programs(text)
                elif name.endswith(".py") or re.match(r"#!.*python", first):
                    progs = python_programs(text)
                else:
                    continue
                for p in progs - project_targets:
                    uses.setdefault(p, set()).add(rel)

    brought = with_direct_dependencies(declared)
    bad = []
    for prog in sorted(uses):
        where = ", ".join(sorted(uses[prog]))
        path = prog if prog.startswith("/") else shutil.which(prog, path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
        if not path or not os.path.exists(path):
            bad.append(f"{prog}: not installed (used by {where}); name its Debian package in scripts/deps/")
            continue
        real = os.path.realpath(path)
        pkg = owner(path) or owner(real)
        if pkg is None:
            bad.append(f"{prog}: {path} belongs to no Debian package (used by {where})")
        elif pkg in declared:
            print(f"ok {prog}: {pkg} (declared)")
        elif pkg in brought:
            print(f"ok {prog}: {pkg} (a dependency of a declared package)")
        elif is_base(pkg):
            print(f"ok {prog}: {pkg} (essential/required)")
        else:
            bad.append(f"{prog}: from package {pkg}, which no scripts/deps/*.txt names (used by {where})")
    for b in bad:
        print("UNDECLARED " + b)
    print(f"{len(uses) - len(bad)} programs declared, {len(bad)} undeclared")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
