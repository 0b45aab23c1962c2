"""./hotline export --pprof RUN: a run's misses as a pprof profile, so that
`go tool pprof -http=: FILE` (or any pprof viewer) browses them: by
function, by source line, by instruction, flame graphs, with the kernel's
inlined functions as frames.

The format is pprof's profile.proto, declared in hotline's own pprof.proto
beside this file with pprof's field numbers, and written through protoc's
generated classes (pprof_pb2.py, made from it by Debian's protoc;
tests/test_protos.py checks that they are what protoc makes of it now).

What the profile holds:

- sample types: for every level with misses (L1I, L1D, L2, L3), its misses
  (LEVEL-misses), its misses by cause (LEVEL-compulsory, ... LEVEL-upgrade)
  and its modelled stall cycles (LEVEL-cycles; sum cycles within one
  level, never across levels, as in the tables);
- one sample per (instruction, CPU, access kind, data object.field), with
  the labels cpu (a number), kind and data;
- one location per instruction: its address and, for the kernel, the
  inline chain addr2line reads from the run's vmlinux (innermost first,
  the outermost being the symbol the tables name), with file and line;
  user-space instructions are one function, [user].
"""

import gzip
import re
import subprocess
from pathlib import Path

import pandas as pd

from hotline import outputs
from hotline.report import pprof_pb2
from hotline.results.objects import KERNEL_START, describe
from hotline.results.schema import CAUSES, LEVELS

USER, NO_SYMBOL = "[user]", "[kernel]"
DEFAULT_TYPE = "L1D-misses"
SAMPLE_KEYS = ["pc", "cpu", "kind", "object", "field"]
# The build tree's prefix in the DWARF paths (kernel/build.py builds there).
TREE_PREFIX = re.compile(r"^.*?/kernel-work/src/")

def sample_types(levels: list[str]) -> list[tuple[str, str]]:
    """(type, unit) of every value of a sample, in order."""
    types = []
    for level in levels:
        types.append((f"{level}-misses", "count"))
        types += [(f"{level}-{cause}", "count") for cause in CAUSES]
        types.append((f"{level}-cycles", "cycles"))
    return types


def sample_values(misses: pd.DataFrame, levels: list[str]) -> pd.DataFrame:
    """One row per sample (SAMPLE_KEYS), one column per sample type."""
    keyed = misses.groupby([*SAMPLE_KEYS, "level", "cause"], as_index=False, observed=True)[
        ["count", "cycles"]].sum()
    columns = {}
    for level in levels:
        at = keyed[keyed["level"] == level]
        columns[f"{level}-misses"] = at.groupby(SAMPLE_KEYS)["count"].sum()
        for cause in CAUSES:
            columns[f"{level}-{cause}"] = at[at["cause"] == cause].groupby(SAMPLE_KEYS)[
                "count"].sum()
        columns[f"{level}-cycles"] = at.groupby(SAMPLE_KEYS)["cycles"].sum()
    table = pd.DataFrame(columns).fillna(0).astype("int64")
    return table.reindex(columns=[t for t, _ in sample_types(levels)]).reset_index()


def inline_frames(vmlinux: Path | None, pcs: list[int]) -> dict[int, list[tuple[str, str, int]]]:
    """{pc: [(function, file, line), ...]} innermost inlined function first,
    from the DWARF of vmlinux (addr2line -i); {} without a vmlinux."""
    if vmlinux is None or not pcs:
        return {}
    out = subprocess.run(["addr2line", "-a", "-f", "-i", "-e", str(vmlinux)],
                         input="".join(f"{pc:x}\n" for pc in pcs), capture_output=True,
                         text=True, check=True).stdout.splitlines()
    frames: dict[int, list[tuple[str, str, int]]] = {}
    current, i = None, 0
    while i < len(out):
        if re.fullmatch(r"0x[0-9a-f]+", out[i]):
            current = int(out[i], 16)
            frames[current] = []
            i += 1
            continue
        function, where = out[i], out[i + 1] if i + 1 < len(out) else "??:0"
        path, _, line = TREE_PREFIX.sub("", where.split(" (discriminator")[0]).rpartition(":")
        frames[current].append((function if function != "??" else "",
                                "" if path == "??" else path,
                                int(line) if line.isdigit() else 0))
        i += 2
    return frames


class _Strings:
    def __init__(self):
        self.table = [""]
        self.index = {"": 0}

    def __call__(self, text: str) -> int:
        if text not in self.index:
            self.index[text] = len(self.table)
            self.table.append(text)
        return self.index[text]


def profile(misses: pd.DataFrame, vmlinux: Path | None, comments: list[str],
            time_nanos: int = 0):
    """The Profile message of a run's misses table (schema.MISSES columns)."""
    s = _Strings()
    levels = [lv for lv in LEVELS if lv in set(misses["level"])]
    types = sample_types(levels)
    values = sample_values(misses, levels)
    p = pprof_pb2.Profile(sample_type=[pprof_pb2.ValueType(type=s(t), unit=s(u))
                                       for t, u in types])
    p.mapping.add(id=1, memory_start=KERNEL_START, memory_limit=(1 << 64) - 1,
                  filename=s(str(vmlinux) if vmlinux else "vmlinux"), has_functions=True,
                  has_filenames=True, has_line_numbers=True,
                  has_inline_frames=vmlinux is not None)
    p.mapping.add(id=2, memory_start=0, memory_limit=KERNEL_START, filename=s(USER),
                  has_functions=True)

    code = misses.drop_duplicates("pc").set_index("pc")[["symbol", "source_line"]]
    kernel_pcs = sorted(int(pc) for pc in code.index if pc >= KERNEL_START)
    frames = inline_frames(vmlinux, kernel_pcs)
    functions: dict[tuple[str, str], int] = {}

    def function_id(name: str, file: str) -> int:
        if (name, file) not in functions:
            functions[(name, file)] = len(functions) + 1
            p.function.add(id=functions[(name, file)], name=s(name), system_name=s(name),
                           filename=s(file))
        return functions[(name, file)]

    locations: dict[int, int] = {}
    for pc, (symbol, source_line) in code.iterrows():
        pc = int(pc)
        location = p.location.add(id=len(locations) + 1, address=pc,
                                  mapping_id=1 if pc >= KERNEL_START else 2)
        locations[pc] = location.id
        if pc < KERNEL_START:
            location.line.add(function_id=function_id(USER, ""))
            continue
        chain = frames.get(pc) or []
        if not chain:
            path, _, line = source_line.rpartition(":")
            chain = [("", path, int(line) if line.isdigit() else 0)]
        # The outermost frame is the function the tables name (nm's symbol:
        # clones such as .isra.0 keep their name there).
        chain[-1] = (symbol or NO_SYMBOL, chain[-1][1], chain[-1][2])
        for name, file, line in chain:
            location.line.add(function_id=function_id(name or NO_SYMBOL, file), line=line)

    cpu, kind, data = s("cpu"), s("kind"), s("data")
    for row in values.itertuples(index=False):
        p.sample.add(location_id=[locations[int(row.pc)]],
                     value=[int(v) for v in row[len(SAMPLE_KEYS):]],
                     # cpu as a string: pprof drops a number label of 0 without a unit.
                     label=[pprof_pb2.Label(key=cpu, str=s(str(int(row.cpu)))),
                            pprof_pb2.Label(key=kind, str=s(row.kind)),
                            pprof_pb2.Label(key=data, str=s(describe(row.object, row.field)))])
    p.comment.extend(s(c) for c in comments)
    p.time_nanos = time_nanos
    if (DEFAULT_TYPE, "count") in types:
        p.default_sample_type = s(DEFAULT_TYPE)
    p.string_table.extend(s.table)
    return p


def write(p, path: Path) -> Path:
    """The profile, gzip-compressed (as pprof stores them), reproducibly."""
    return outputs.write_bytes(path, gzip.compress(p.SerializeToString(deterministic=True),
                                                   mtime=0))


def read(path: Path):
    """A profile file (gzip-compressed or not) as a Profile message."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    p = pprof_pb2.Profile()
    p.ParseFromString(data)
    return p


def totals(p) -> dict[str, int]:
    """The sum of each sample type over all samples."""
    names = [p.string_table[t.type] for t in p.sample_type]
    sums = [0] * len(names)
    for sample in p.sample:
        for i, v in enumerate(sample.value):
            sums[i] += v
    return dict(zip(names, sums))


def export_run(run_dir: Path, out: Path | None = None) -> Path:
    """Write RUN/misses.pb.gz (or out) from a run's misses table."""
    from hotline.report.run import Run, header
    run = Run.read(run_dir)
    nanos = run.manifest.created_ns
    comments = [f"{k}: {v}" for k, v in header(run.manifest)]
    comments.append("hotline cache model: misses by level and cause; LEVEL-cycles are "
                    "modelled stall cycles (sum within one level only)")
    p = profile(run.tables.misses, run.kernel / "vmlinux", comments, nanos)
    return write(p, out or run_dir / "misses.pb.gz")
