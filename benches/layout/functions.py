#!/usr/bin/env python3
"""Turns callgrind runs of a stripped binary into a linker script.

Usage: functions.py MAP BINARY SCRIPT CALLGRIND_FILE...

MAP is the linker's map of exactly the binary that ran (TOOLPORT_LINK_MAP),
BINARY its path as callgrind saw it; the runs were made with
`--dump-instr=yes`, so every instruction executed is listed by its address
in the binary. SCRIPT gathers each function any of them ran, run by run
(what the first run needed, then what the next one added, and so on), into
an output section of its own before `.text`: by its exact name, and by a
pattern that leaves out the parts of a name that change when a crate's
dependencies or the toolchain change (the hash, the crate disambiguator, the
ThinLTO suffix).
"""
import bisect
import re
import sys


def text_functions(map_path):
    """(start, end, symbol) of every function in the map's .text, sorted.

    Rust puts each function in a section of its own, named `.text.` and the
    function's mangled symbol; the map's symbol lines are demangled, so the
    names come from the input section lines: "VMA LMA Size Align  file.o:(.text.NAME)".
    """
    line_re = re.compile(r"^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+ (\s*)(.*)$")
    out = []
    in_text = False
    for line in open(map_path, errors="replace"):
        m = line_re.match(line)
        if not m:
            continue
        vma, size, indent, rest = int(m.group(1), 16), int(m.group(2), 16), m.group(3), m.group(4)
        if not indent:  # an output section
            in_text = rest.strip().split(".")[1:2] == ["text"]  # .text, .text.start
            continue
        section = re.search(r":\(\.text\.(.+)\)$", rest)
        if in_text and section and size:
            out.append((vma, vma + size, section.group(1)))
    out.sort()
    return out


def cost_lines(callgrind_path):
    """(object, function, position, cost, is_call) of each cost line of a run.

    Cost lines start with the instruction's position: absolute (0x...),
    relative to the previous one (+N, -N) or the same (*), then the line
    number's, then the cost. Positions are offsets in the object (what the map
    calls VMA), for a PIE as for a library. A line after `calls=` is a call's
    inclusive cost (`is_call`).
    """
    objects, names = {}, {}
    current, function, position, call_line = None, None, 0, False
    for line in open(callgrind_path, errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"^(c?)ob=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3) is not None:
                objects[m.group(2)] = m.group(3)
            if not m.group(1):
                current = objects.get(m.group(2))
            continue
        m = re.match(r"^(c?)fn=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3) is not None:
                names[m.group(2)] = m.group(3)
            if not m.group(1):
                function = names.get(m.group(2))
            continue
        if line.startswith("calls="):
            call_line = True
            continue
        if not line or not (line[0] in "+-*" or line.startswith("0x")):
            continue
        fields = line.split()
        token = fields[0]
        if token.startswith("0x"):
            position = int(token, 16)
        elif token[0] == "+":
            position += int(token[1:])
        elif token[0] == "-":
            position -= int(token[1:])
        cost = int(fields[2]) if len(fields) > 2 and fields[2].isdigit() else 0
        yield current, function, position, cost, call_line
        call_line = False


def executed(callgrind_path, binary):
    """Addresses of the instructions a callgrind run executed in `binary`."""
    for obj, _, position, _, _ in cost_lines(callgrind_path):
        if obj == binary:
            yield position


def pattern(name):
    """The section of `name`, with what a rebuild may change as `*`."""
    name = re.sub(r"\.llvm\.\d+$", "", name)
    name = re.sub(r"17h[0-9a-f]{16}E$", "17h*", name)
    name = re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", name)
    return ".text." + name


def write_script(path, groups):
    """A linker script putting the groups' functions first, group by group.

    Exact names come first, every group's, then every group's patterns: a
    section goes to the first line it matches, so while the names are fresh
    the functions that run lie together in the order the runs met them, and
    the other instances of their generic functions, which the patterns also
    take, lie behind them, untouched. Once the names have gone stale, the
    patterns alone still keep the groups together.
    """
    exact = [".text." + name for group in groups for name in group]
    patterns = list(dict.fromkeys(pattern(name) for group in groups for name in group))
    with open(path, "w") as out:
        out.write("/* Made by benches/layout/order.sh; see crates/toolport/build.rs. */\n")
        out.write("SECTIONS\n{\n  .text.start :\n  {\n")
        out.writelines(f"    *({section})\n" for section in exact + patterns)
        out.write("  }\n}\nINSERT BEFORE .text;\n")


def main():
    map_path, binary, script_path, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    functions = text_functions(map_path)
    starts = [start for start, _, _ in functions]
    order, placed, size, groups = [], set(), 0, []
    for run in runs:
        before, before_size = len(order), size
        for address in executed(run, binary):
            i = bisect.bisect_right(starts, address) - 1
            if i < 0:
                continue
            start, end, name = functions[i]
            if address < end and name not in placed:
                placed.add(name)
                order.append(name)
                size += end - start
        groups.append(order[before:])
        print(f"{run}: {len(order) - before} functions more, {(size - before_size) / 1048576:.2f} MiB", file=sys.stderr)
    write_script(script_path, groups)
    total = sum(end - start for start, end, _ in functions)
    print(f"{len(order)} functions, {size / 1048576:.2f} MiB of {total / 1048576:.2f} MiB of text", file=sys.stderr)


if __name__ == "__main__":
    main()
