#!/usr/bin/env python3
"""Self cost per function of a callgrind run of a stripped release binary.

Usage: profile.py MAP BINARY CALLGRIND_FILE [TOP]

MAP is the linker's map of exactly the binary that ran (TOOLPORT_LINK_MAP, with
TOOLPORT_LAYOUT=off so every function sits in .text), BINARY its path as
callgrind saw it, and the run was made with `--dump-instr=yes`. Each executed
instruction's cost goes to the function of the map that holds its address;
other objects (libc, the loader) are listed by the names callgrind gives them.
Prints the TOP (default 40) functions of each, as a share of all instructions.
"""
import bisect
import collections
import sys

from functions import cost_lines, text_functions


def costs(callgrind_path, binary, functions):
    """(cost per function of `binary`, cost per (object, function) elsewhere)."""
    starts = [start for start, _, _ in functions]
    ours, others = collections.Counter(), collections.Counter()
    for obj, function, position, cost, is_call in cost_lines(callgrind_path):
        if is_call:
            continue  # a call's inclusive cost: its callee's lines count it
        if obj == binary:
            i = bisect.bisect_right(starts, position) - 1
            inside = i >= 0 and position < functions[i][1]
            ours[functions[i][2] if inside else "?"] += cost
        else:
            others[f"{(obj or '?').rsplit('/', 1)[-1]}: {function or '?'}"] += cost
    return ours, others


def main():
    map_path, binary, run = sys.argv[1:4]
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    ours, others = costs(run, binary, text_functions(map_path))
    total = sum(ours.values()) + sum(others.values())
    print(f"{total:,} instructions, {sum(ours.values()):,} in {binary}")
    for counter in (ours, others):
        for name, cost in counter.most_common(top):
            print(f"{cost / total * 100:6.2f} % {cost:>12,}  {name}")


if __name__ == "__main__":
    main()
