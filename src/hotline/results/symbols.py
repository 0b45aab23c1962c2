"""Kernel symbols of a run's own vmlinux, through binutils: function and
offset of an instruction (nm), its source line and those of the functions
inlined at it (addr2line, from the DWARF line tables) and its disassembly
(objdump), also of the bytes the guest
actually ran where the kernel patched its text at boot."""

import bisect
import re
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

# The kernel is built in a fixed work directory (kernel/build.py); source
# lines are reported relative to the tree.
_TREE_PREFIX = re.compile(r"^.*?/kernel-work/src/")
# address:<TAB>bytes<TAB>instruction (objdump -w)
_OBJDUMP_INSN = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]+?)\s*\t(.*)$")


@dataclass(frozen=True)
class Symbol:
    name: str
    start: int
    size: int


def _run(command: list[str], stdin: str | None = None) -> str:
    return subprocess.run(command, input=stdin, capture_output=True, text=True,
                          check=True).stdout


class Symbolizer:
    def __init__(self, vmlinux: Path):
        self.vmlinux = vmlinux
        self._lines: dict[int, str] = {}   # source lines already looked up

    @cached_property
    def _symbols(self) -> dict[str, list[Symbol]]:
        """Sized symbols by kind, "text" and "data", sorted by address."""
        kinds: dict[str, list[Symbol]] = {"text": [], "data": []}
        for line in _run(["nm", "-S", "--defined-only", str(self.vmlinux)]).splitlines():
            fields = line.split()
            if len(fields) != 4:
                continue   # no size: a label, not an object or function
            address, size, kind, name = fields
            kind = "text" if kind in "tTwW" else "data" if kind in "dDbBrR" else None
            if kind and int(size, 16):
                kinds[kind].append(Symbol(name, int(address, 16), int(size, 16)))
        for symbols in kinds.values():
            symbols.sort(key=lambda s: s.start)
        return kinds

    @cached_property
    def _starts(self) -> dict[str, list[int]]:
        return {kind: [s.start for s in symbols] for kind, symbols in self._symbols.items()}

    def _find(self, kind: str, address: int) -> Symbol | None:
        symbols = self._symbols[kind]
        i = bisect.bisect_right(self._starts[kind], address) - 1
        if i >= 0 and address < symbols[i].start + symbols[i].size:
            return symbols[i]
        return None

    def function(self, pc: int) -> Symbol | None:
        return self._find("text", pc)

    def data_object(self, address: int) -> Symbol | None:
        return self._find("data", address)

    def function_named(self, name: str) -> Symbol | None:
        return next((s for s in self._symbols["text"] if s.name == name), None)

    def source_lines(self, pcs: list[int]) -> dict[int, str]:
        """file:line of each pc ("" where the line tables have none)."""
        new = sorted({pc for pc in pcs if pc not in self._lines})
        if new:
            out = _run(["addr2line", "-e", str(self.vmlinux)],
                       "".join(f"{pc:x}\n" for pc in new)).splitlines()
            for pc, text in zip(new, out):
                text = _TREE_PREFIX.sub("", text.split(" (discriminator")[0])
                self._lines[pc] = "" if text.startswith("??") else text
        return {pc: self._lines[pc] for pc in pcs}

    def _inline_frames(self, pcs: list[int]) -> dict[int, list[tuple[str, str]]]:
        """(function, file:line) of each pc through the functions inlined at
        it, innermost first, as addr2line -a -f -i prints them ("??" where
        the debug information has none)."""
        pcs = sorted(set(pcs))
        if not pcs:
            return {}
        out = _run(["addr2line", "-a", "-f", "-i", "-e", str(self.vmlinux)],
                   "".join(f"{pc:x}\n" for pc in pcs)).splitlines()
        frames: dict[int, list[tuple[str, str]]] = {}
        chain: list[tuple[str, str]] = []
        i = 0
        while i < len(out):
            if out[i].startswith("0x"):     # -a: each address before its frames
                chain = frames.setdefault(int(out[i], 16), [])
                i += 1
                continue
            # -f: a frame is its function's name, then its file:line.
            chain.append((out[i], out[i + 1] if i + 1 < len(out) else "??"))
            i += 2
        return {pc: frames.get(pc, []) for pc in pcs}

    def inline_lines(self, pcs: list[int]) -> dict[int, list[str]]:
        """file:line of each pc through the functions inlined at it,
        innermost first ([] where the line tables have none)."""
        return {pc: [_TREE_PREFIX.sub("", line.split(" (discriminator")[0])
                     for _, line in chain if not line.startswith("??")]
                for pc, chain in self._inline_frames(pcs).items()}

    def inline_functions(self, pcs: list[int]) -> dict[int, list[str]]:
        """The functions each pc is in, innermost first: those inlined at
        it, then the one it was compiled into ([] where the debug
        information has none)."""
        return {pc: [function for function, _ in chain if function != "??"]
                for pc, chain in self._inline_frames(pcs).items()}

    def disassemble(self, start: int, end: int) -> dict[int, tuple[str, str]]:
        """(bytes in hex, instruction text) of every instruction in [start, end)."""
        out = _run(["objdump", "-d", "-w", f"--start-address={start:#x}",
                    f"--stop-address={end:#x}", str(self.vmlinux)])
        listing = {}
        for line in out.splitlines():
            m = _OBJDUMP_INSN.match(line)
            if m:
                listing[int(m.group(1), 16)] = (m.group(2).replace(" ", ""),
                                                " ".join(m.group(3).split()))
        return listing


def disassemble_bytes(pc: int, code: str) -> str:
    """The instruction that `code` (hex) encodes at address pc."""
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(bytes.fromhex(code))
        f.flush()
        out = _run(["objdump", "-D", "-w", "-b", "binary", "-m", "i386:x86-64",
                    f"--adjust-vma={pc:#x}", f"--stop-address={pc + 1:#x}", f.name])
    for line in out.splitlines():
        m = _OBJDUMP_INSN.match(line)
        if m:
            return " ".join(m.group(3).split())
    return ""
