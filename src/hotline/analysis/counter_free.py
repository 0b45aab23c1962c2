"""A measuring build against its counting build: is a function the same
code with the counters taken out?

A design's counting build (`pte-chain-inpage`) gives a run its kernel
counters; its measuring build (`pte-chain-inpage-nocounters`: the same
series, then kernel-patches/patches/counters-off) gives its time, with no
instruction of the counters inside the measured functions
(docs/kernels.md, "Counting builds and measuring builds").  Here a
function of the counting build, its counting code left out, is compared
with the same function of the measuring build, instruction by instruction.

Counting code is an instruction that touches the per-CPU counters
(`hotline_counter_state` in objdump's text), that the DWARF line tables
put inside a function that exists only to count (COUNTING_FUNCTIONS,
inlined), or whose source line works a variable that only feeds a counter
(COUNTING_VARIABLES: the chain walk's steps, the contended lock's spins).
Instructions are compared as text with what the two builds place
differently taken out: branch targets, %rip displacements (the symbol
objdump names stays) and kernel addresses as immediates.

Taking a counter out changes how the compiler lays the rest out, in two
ways only, measured on pte_chain_add and pte_chain_remove: registers are
allocated afresh (the walk's step count no longer holds one), and the
out-of-line paths move and share their epilogues (pte_chain_add's
chain-length counts each had a copy of its `pop; pop; jmp`).  So:

- the main path, the instructions from the entry to the first exit (a
  `ret`, or a jump to another function: a tail call or the return thunk),
  which runs the lock, the chain's loads and stores and the unlock, must be
  the same instructions in the same order but for the registers they name
  (a register is reused for other values, so not even one renaming maps
  one build's onto the other's);
- the rest, the out-of-line paths, must hold the same instructions but for
  registers and the control transfers that tie blocks together (jumps,
  push, pop, ret);
- the measuring build has no counting code at all."""

import collections
import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from hotline.kernel.source_text import SourceText
from hotline.results.symbols import Symbolizer

# Functions whose whole body is counting: a counter's increment, and the
# chain-length classification pte_chain_add() does only to count it.
COUNTING_FUNCTIONS = frozenset({"hotline_count", "hotline_count_add", "pte_chain_count_length"})
COUNTER_DATA = "hotline_counter_state"
# Locals that only feed hotline_count_add(), by the source lines that work them.
COUNTING_VARIABLES = re.compile(r"\b(steps|spins)\b")

# objdump's "jne ffffffff81143c12 <pte_chain_remove+0x42>": the target by
# symbol only, as code moves when the counters go.
_TARGET = re.compile(r"\b[0-9a-f]{16} <([^>+]+)(\+0x[0-9a-f]+)?>")
# A normalised jump and the function it goes to.
_TARGET_NAME = re.compile(r"^jmp\s+<([^>]+)>")
# "0x983618(%rip) # ffffffff81ac71f0 <pte_chain_cache>": the symbol stays.
_RIP = re.compile(r"-?0x[0-9a-f]+\(%rip\)( +# [0-9a-f]+)?")
_COMMENT_ADDRESS = re.compile(r"# [0-9a-f]+ <")
# A kernel address as an immediate, or as the displacement of an indexed
# global ("-0x7e53b3a0(,%rax,8)").
_ADDRESS = re.compile(r"\$0xffffffff[0-9a-f]{8}\b|-?0x[0-9a-f]{7,}(?=\()")
# x86-64's general registers, by any of their names (%rax, %eax, %al, %r8d).
_REGISTER = re.compile(r"%(r[0-9]+[dwb]?|[re]?[abcd]x|[abcd][lh]|[re]?[sd]il?|[re]?[sb]pl?)\b")
# The control transfers that tie a function's blocks together.
_LINKS = re.compile(r"^(j[a-z]+|push|pop|ret|nop)\b")


def normalise(text: str) -> str:
    """An instruction's text without the addresses a build places."""
    text = text.removeprefix("* ")
    text = _TARGET.sub(lambda m: f"<{m[1]}>", text)
    text = _RIP.sub("(%rip)", text)
    text = _ADDRESS.sub("ADDRESS", text)
    return _COMMENT_ADDRESS.sub("# <", text)


def shape(text: str) -> str:
    """A normalised instruction with every register one name."""
    return _REGISTER.sub("%reg", text)


def shapes(texts: list[str]) -> collections.Counter:
    """Instructions' shapes, the control transfers left out, counted."""
    return collections.Counter(shape(t) for t in texts if not _LINKS.match(t))


@dataclass
class Listing:
    """One function of one build: its instructions (pc, text), and which
    of them are counting code."""
    function: str
    instructions: list[tuple[int, str]]
    counting: set[int]

    def kept(self) -> list[str]:
        """The normalised text of the instructions that are not counting."""
        return [normalise(text) for pc, text in self.instructions if pc not in self.counting]

    def main_path(self) -> tuple[list[str], list[str]]:
        """kept() split at the first exit: the main path (the exit
        included) and the rest."""
        kept = self.kept()
        for i, text in enumerate(kept):
            target = _TARGET_NAME.match(text)
            if text.startswith("ret") or target and target[1] != self.function:
                return kept[:i + 1], kept[i + 1:]
        return kept, []


def listing(kernel_dir: Path, function: str) -> Listing | None:
    """`function` as the build in kernel_dir compiled it; None if it has no
    such function.  The source text of its lines is read from the build's
    patched sources (kernel/source_text.py); without it, only the counters'
    data and functions mark counting code."""
    symbolizer = Symbolizer(kernel_dir / "vmlinux")
    symbol = symbolizer.function_named(function)
    if symbol is None:
        return None
    code = symbolizer.disassemble(symbol.start, symbol.start + symbol.size)
    pcs = sorted(code)
    inlined = symbolizer.inline_functions(pcs)
    lines = symbolizer.source_lines(pcs)
    source = SourceText.of_build(kernel_dir)
    try:
        text = {pc: (source.line(lines[pc]) if lines.get(pc) else None) or "" for pc in pcs}
    finally:
        source.close()
    counting = {pc for pc in pcs if COUNTER_DATA in code[pc][1]
                or COUNTING_FUNCTIONS.intersection(inlined.get(pc, []))
                or COUNTING_VARIABLES.search(text[pc])}
    return Listing(function, [(pc, code[pc][1]) for pc in pcs], counting)


def differences(counting: Listing, measuring: Listing) -> list[str]:
    """What keeps the measuring build's function from being the counting
    build's without its counting code ([] if nothing): counting code left
    in the measuring build, a main path that differs by more than its
    registers, out-of-line paths that differ by more than registers and
    control transfers."""
    name = measuring.function
    found = [f"{name}: counting code in the measuring build at {pc:#x}: {text}"
             for pc, text in measuring.instructions if pc in measuring.counting]
    (ours, our_rest), (theirs, their_rest) = counting.main_path(), measuring.main_path()
    matcher = difflib.SequenceMatcher(a=[shape(t) for t in ours], b=[shape(t) for t in theirs],
                                      autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            found.append(f"{name}: main path, instructions {i1}-{i2} of the counting build "
                         f"{ours[i1:i2]} are {theirs[j1:j2]} in the measuring build")
    only_ours, only_theirs = shapes(our_rest) - shapes(their_rest), \
        shapes(their_rest) - shapes(our_rest)
    if only_ours or only_theirs:
        found.append(f"{name}: out of line, only in the counting build {dict(only_ours)}, "
                     f"only in the measuring build {dict(only_theirs)}")
    return found
