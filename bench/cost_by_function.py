"""A callgrind or cachegrind profile's instructions charged to the source
function whose lines they came from, inlined code included: with -flto most of
the model is inlined into a few functions, and callgrind's own per-function
totals say only where the code was inlined to, not whose code it was.

    .venv/bin/python bench/cost_by_function.py PROFILE [--groups]

Reads a cachegrind profile, or a callgrind one written with
`--compress-pos=no` (positions must be absolute), and prints, per source
function of the files under plugins/ and bench/, the instructions (Ir) of its
lines, and with --groups the sums of bench/README.md's parts of the model
(GROUPS).  A function is the span of lines from one top-level definition to
the next, found by the shape of a C definition (its name and "(" at the
start of a line or after its return type, with no ";" after the ")").
"""

import argparse
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# The parts of hotline-cache's work, by the function (file:function) whose lines
# did it.  A function not named is in "other".
GROUPS = {
    "weave (hold and deliver)": ["weave.c:*"],
    "store buffer (reads after partial writes)": [
        "cachemodel.c:" + f for f in ("first_granule", "last_granule", "filter_slot",
                                      "youngest_overlap", "check_partial_write",
                                      "record_store")],
    "3C shadows and first-touch sets": [
        "cachemodel.c:" + f for f in ("seen_test_and_set", "hash_line", "shadow_slot",
                                      "shadow_unhash", "list_unlink", "list_push_head",
                                      "shadow_touch", "shadow_access", "classify")],
    "coherence and L3": [
        "cachemodel.c:" + f for f in ("stolen_slot", "stolen_find", "stolen_mark", "stolen_clear",
                                      "remote_begin", "remote_end",
                                      "take_state", "drop_private", "write_back",
                                      "invalidate_others", "evict_from_l3", "fill_l3")],
    "private L1/L2 lookups and fills": [
        "cachemodel.c:" + f for f in ("cache_set", "cache_find", "cache_find_unlocked",
                                      "cache_touch", "cache_victim", "cache_drop", "probe",
                                      "fill_l2", "fill_l1", "mru_word", "mru_hit",
                                      "forget_mru", "prev_hit", "access_line",
                                      "access_line_unthreaded", "placed_modified",
                                      "set_source", "cm_access", "cm_fetch_hits")],
    # Past the two most recent lines: the L1's set, then on a miss the L2, the
    # other cores' L2s and the L3, in one function.
    "the L1 slow path (L2, other cores, L3)": ["cachemodel.c:access_line_slow"],
    # What the plugin does around the model: a block's fetch loop, the call into
    # the model, the per-instruction counters and the miss tuples.
    "the plugin around the model": ["hotline-cache.c:*", "account.c:*", "records.c:*",
                                    "output.c:*"],
    # bucket() hashes the miss tuples, the instruction records and the weave's words.
    "hashing (bucket)": ["hotline-cache.h:bucket"],
}

ATTRIBUTE = re.compile(r"__attribute__\(\(.*?\)\)\s*")
DEFINITION = re.compile(r"^(?:[A-Za-z_][\w \t\*]*?[\s\*])?(\w+)\s*\([^;]*$")


def functions(source: Path) -> list[tuple[int, str]]:
    """(first line, name) of each top-level function definition, in order."""
    found = []
    lines = source.read_text(errors="replace").splitlines()
    for number, line in enumerate(lines, 1):
        line = ATTRIBUTE.sub("", line)
        match = DEFINITION.match(line)
        if not match or line[0] in " \t#{}/" or line.rstrip().endswith(";"):
            continue
        # A definition's body opens before the next ";" (a declaration's ends first).
        rest = "\n".join(lines[number - 1:number + 6])
        brace, semicolon = rest.find("{"), rest.find(";")
        if brace >= 0 and (semicolon < 0 or brace < semicolon):
            found.append((number, match.group(1)))
    return found


def function_of(spans: list[tuple[int, str]], line: int) -> str | None:
    name = None
    for first, candidate in spans:
        if first > line:
            break
        name = candidate
    return name


def costs(profile: Path) -> Counter:
    """Ir per (file name, line) over the whole profile, calls' inclusive
    costs left out (each is counted in the callee's own lines)."""
    names: dict[str, str] = {}
    per_line: Counter = Counter()
    current = None
    skip_next = False
    for raw in profile.read_text(errors="replace").splitlines():
        if not raw:
            continue
        key, _, value = raw.partition("=")
        if key in ("fl", "fi", "fe", "cfi", "cfl"):
            # callgrind names a file once, "(id) name", then "(id)", its ids
            # shared by all five keys; cachegrind gives the name each time.
            match = re.match(r"\((\d+)\)(?: (.*))?$", value)
            if match and match.group(2):
                names[match.group(1)] = match.group(2)
            if not key.startswith("c"):     # a call's file is the callee's
                current = names.get(match.group(1)) if match else value
        elif key == "calls":
            skip_next = True
        elif raw[0].isdigit():
            if skip_next:
                skip_next = False
                continue
            fields = raw.split()
            if len(fields) >= 2 and current:
                per_line[(current, int(fields[0]))] += int(fields[1])
    return per_line


def by_function(profile: Path) -> Counter:
    """Ir per "file:function" of hotline's sources, the rest as "(outside hotline)"."""
    sources: dict[str, tuple[str, list] | None] = {}    # each file read once
    result: Counter = Counter()
    for (file, line), ir in costs(profile).items():
        if file not in sources:
            path = Path(file) if Path(file).is_absolute() else REPO / file
            sources[file] = (path.name, functions(path)) \
                if REPO in path.resolve().parents and path.is_file() else None
        if sources[file] is None:
            result["(outside hotline)"] += ir
            continue
        name, spans = sources[file]
        result[f"{name}:{function_of(spans, line)}"] += ir
    return result


def by_group(functions_ir: Counter) -> Counter:
    """by_function's counts summed by GROUPS; the rest as "other"."""
    result: Counter = Counter()
    for name, ir in functions_ir.items():
        file = name.split(":")[0]
        result[next((group for group, members in GROUPS.items()
                     if name in members or f"{file}:*" in members), "other")] += ir
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--groups", action="store_true")
    args = parser.parse_args()
    if not args.profile.is_file():
        raise SystemExit(f"cost_by_function: {args.profile}: no such file")
    functions_ir = by_function(args.profile)
    total = sum(functions_ir.values())
    print(f"{'function':<48}{'Ir':>16}{'share':>8}")
    for name, ir in functions_ir.most_common():
        print(f"{name:<48}{ir:>16,}{ir / total:>8.1%}")
    if args.groups:
        print()
        for group, ir in by_group(functions_ir).most_common():
            print(f"{group:<48}{ir:>16,}{ir / total:>8.1%}")
    print(f"{'total':<48}{total:>16,}")


if __name__ == "__main__":
    main()
