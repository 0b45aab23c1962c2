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
(`hotline_counter_state` in objdump's text) or that the DWARF line tables
put inside a function that exists only to count (COUNTING_FUNCTIONS,
inlined).  An instruction of the counting build whose source line works a
variable that only feeds a counter (COUNTING_VARIABLES: the chain walk's
steps, the contended lock's spins) may be counting code, or the line's
other work (pte-chain-direct's `for (steps = 0; (pc = *link); ...)` loads
the chain's head): it is compared where the measuring build has it and
excused where it lacks it.  Instructions are compared as text with what
the two builds place differently taken out: branch targets, %rip
displacements (the symbol objdump names stays) and kernel addresses as
immediates.

Taking a counter out changes how the compiler lays the rest out, in four
ways, measured on the pte_chain designs' pte_chain_add and pte_chain_remove:
registers are allocated afresh (the walk's step count no longer holds one,
and pte-chain-inpage-locked's pte_chain_remove saves one register fewer);
blocks move, in and out of line; branches are inverted (pte-chain-direct's
pte_chain_remove falls through to its walk in one build and branches to it
in the other); and shared tails are copied or merged (pte_chain_add's
chain-length counts each had a copy of its `pop; pop; jmp`, and
pte-chain-direct's counting build gives its failed allocation a copy of
the unlock's `lock btr; decl __preempt_count` and its epilogue, which the
measuring build shares).  So:

- the main path, the instructions run from the entry to the first exit (a
  `ret`, or a jump to another function: a tail call or the return thunk),
  every jump within the function taken and every conditional branch going
  where the counting build's main path goes, which runs the lock, the
  chain's loads and stores and the unlock, must be the same instructions
  in the same order but for the registers they name (a register is reused
  for other values, so not even one renaming maps one build's onto the
  other's), the registers saved and restored (push, pop) and the
  conditions of its branches;
- the rest, the out-of-line paths, must hold the same instructions but for
  registers, the control transfers that tie blocks together (jumps, push,
  pop, ret), and the second copy of a run of three or more instructions
  that the same build has twice;
- the measuring build has no counting code at all."""

import collections
import difflib
import re
from dataclasses import dataclass, field
from functools import cached_property
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
# A conditional branch (not `jmp`), whose condition gcc may invert.
_BRANCH = re.compile(r"^j(?!mp\b)[a-z]+\b")
# "0x0(%rbp)": x86 encodes no base of %rbp or %r13 without a displacement.
_ZERO_DISPLACEMENT = re.compile(r"(?<![\w$-])0x0\(")
# Saving and restoring a callee-saved register: which ones a function
# saves is its register allocation's.
_SAVES = re.compile(r"^(push|pop)\b")
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
    """A normalised instruction with every register one name (and without
    the zero displacement that %rbp and %r13 as a base need)."""
    return _REGISTER.sub("%reg", _ZERO_DISPLACEMENT.sub("(", text))


def branchless(text: str) -> str:
    """A shape with a conditional branch's condition left out: which way a
    branch goes is layout (gcc inverts one to fall through the other way)."""
    return _BRANCH.sub("jcc", text)


def shapes(texts: list[str]) -> collections.Counter:
    """Instructions' shapes, the control transfers left out, counted."""
    return collections.Counter(shape(t) for t in texts if not _LINKS.match(t))


# How many instructions a run holds whose second copy is the compiler's.
COPIED_BLOCK = 3


@dataclass
class Listing:
    """One function of one build: its instructions (pc, text), which of
    them are counting code (they touch the counters' data or are inlined
    from a counting function), and which may be (their source line works a
    variable that only feeds a counter, and may do other work too: the
    walk's `for (steps = 0; (pc = *link); ...)` loads the chain's head)."""
    function: str
    instructions: list[tuple[int, str]]
    counting: set[int]
    maybe: set[int] = field(default_factory=set)

    @cached_property
    def _order(self) -> list[int]:
        return [pc for pc, _ in self.instructions]

    @cached_property
    def _raw(self) -> dict[int, str]:
        return dict(self.instructions)

    @cached_property
    def normalised(self) -> dict[int, str]:
        """Each instruction's normalised text."""
        return {pc: normalise(text) for pc, text in self.instructions}

    @cached_property
    def _at(self) -> dict[int, int]:
        return {pc: i for i, pc in enumerate(self._order)}

    def _jumps_within(self, pc: int) -> bool:
        target = _TARGET_NAME.match(self.normalised[pc])
        return bool(target) and target[1] == self.function

    def _exits(self, pc: int) -> bool:
        """A `ret`, or a jump to another function (a tail call, the return
        thunk)."""
        target = _TARGET_NAME.match(self.normalised[pc])
        return self.normalised[pc].startswith("ret") or bool(target) and target[1] != self.function

    def _jumped_to(self, pc: int) -> int:
        """The index of the instruction the jump at pc goes to (past the
        last if it is none of the function's)."""
        address = int(_TARGET.search(self._raw[pc])[0][:16], 16)
        return self._at.get(address, len(self._order))

    def _shape(self, pc: int) -> str:
        return branchless(shape(self.normalised[pc]))

    def main_path(self, guide: "Listing | None" = None) -> tuple[list[str], list[str]]:
        """The normalised text of paths()."""
        main, rest = self.paths(guide)
        return [self.normalised[pc] for pc in main], [self.normalised[pc] for pc in rest]

    def paths(self, guide: "Listing | None" = None) -> tuple[list[int], list[int]]:
        """The instructions that are not counting, split: the main path,
        from the entry to the first exit (the exit included), every jump
        within the function taken (and left out: it is layout) and every
        conditional branch falling through, or, with a guide (the other
        build of the function), going where the guide's main path goes next,
        as gcc may invert a branch when the code around it changes; and the
        rest, in the order laid out."""
        order = self._order

        def lands(i: int) -> str | None:
            """The shape of the first instruction run from order[i] on that
            is neither counting nor a jump within the function."""
            seen = set()
            while i < len(order) and i not in seen:
                seen.add(i)
                if self._jumps_within(order[i]):
                    i = self._jumped_to(order[i])
                elif order[i] in self.counting:
                    i += 1
                else:
                    return self._shape(order[i])
            return None

        # The guide's main path: (shape, may be counting).
        expected = [] if guide is None else \
            [(guide._shape(pc), pc in guide.maybe) for pc in guide.paths()[0]]
        path, on_path, taken, i, g = [], set(), set(), 0, 0
        while i < len(order) and order[i] not in on_path:
            pc = order[i]
            path.append(pc)
            on_path.add(pc)
            if self._exits(pc):
                break
            if self._jumps_within(pc):
                taken.add(pc)
                i = self._jumped_to(pc)
                continue
            if expected and pc not in self.counting:
                # Step over the guide's instructions that may be counting
                # code and are not this one, then past this one.
                mine, k = self._shape(pc), g
                while k < len(expected) and expected[k][0] != mine and expected[k][1]:
                    k += 1
                if k < len(expected) and expected[k][0] == mine:
                    g = k + 1
                # What the guide may run next: its instructions up to the
                # first that is surely not counting code.
                k = g
                while k < len(expected) and expected[k][1]:
                    k += 1
                wanted = {shaped for shaped, _ in expected[g:k + 1]}
                if _BRANCH.match(self.normalised[pc]) and lands(i + 1) not in wanted and \
                        lands(self._jumped_to(pc)) in wanted:
                    i = self._jumped_to(pc)
                    continue
            i += 1
        return ([pc for pc in path if pc not in self.counting and pc not in taken],
                [pc for pc in order if pc not in on_path and pc not in self.counting])

    def copies(self) -> collections.Counter:
        """The shapes of the instructions (control transfers left out) in a
        second copy of a run: COPIED_BLOCK or more instructions that are not
        counting, followed as they run (jumps within the function taken,
        conditional branches falling through), the same as a run that
        begins elsewhere in the function, as gcc duplicates a shared tail
        (an unlock and its epilogue) into each path that reaches it."""
        order = self._order

        def run(i: int) -> tuple[tuple[str, ...], set[int]]:
            shapes_run, ran = [], set()
            while i < len(order) and len(shapes_run) < COPIED_BLOCK and i not in ran:
                ran.add(i)
                if self._jumps_within(order[i]):
                    i = self._jumped_to(order[i])
                    continue
                if order[i] not in self.counting:
                    shapes_run.append(self._shape(order[i]))
                    if self._exits(order[i]):
                        break
                i += 1
            return tuple(shapes_run), ran

        first: dict[tuple[str, ...], set[int]] = {}
        copied: set[int] = set()
        for i, pc in enumerate(order):
            if pc in self.counting or _LINKS.match(self.normalised[pc]):
                continue
            shapes_run, ran = run(i)
            if len(shapes_run) < COPIED_BLOCK:
                continue
            if shapes_run in first and i not in first[shapes_run]:
                copied |= ran - first[shapes_run]
            first.setdefault(shapes_run, ran)
        return collections.Counter(
            shape(self.normalised[order[i]]) for i in sorted(copied)
            if order[i] not in self.counting and not _LINKS.match(self.normalised[order[i]]))


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
                or COUNTING_FUNCTIONS.intersection(inlined.get(pc, []))}
    maybe = {pc for pc in pcs if COUNTING_VARIABLES.search(text[pc])} - counting
    return Listing(function, [(pc, code[pc][1]) for pc in pcs], counting, maybe)


def differences(counting: Listing, measuring: Listing) -> list[str]:
    """What keeps the measuring build's function from being the counting
    build's without its counting code ([] if nothing): counting code left
    in the measuring build, a main path that differs by more than its
    registers, out-of-line paths that differ by more than registers and
    control transfers.  The counting build's instructions that may be
    counting code are compared where the measuring build has them and
    excused where it lacks them; the measuring build's are its own code
    (it has no counters whose variables they could work)."""
    name = measuring.function
    found = [f"{name}: counting code in the measuring build at {pc:#x}: {text}"
             for pc, text in measuring.instructions if pc in measuring.counting]
    our_main, our_rest_pcs = counting.paths()
    our_main = [pc for pc in our_main if not _SAVES.match(counting.normalised[pc])]
    ours, our_rest = [counting.normalised[pc] for pc in our_main], \
        [counting.normalised[pc] for pc in our_rest_pcs]
    optional = [pc in counting.maybe for pc in our_main]
    theirs, their_rest = measuring.main_path(counting)
    theirs = [t for t in theirs if not _SAVES.match(t)]

    def shaped(texts: list[str]) -> list[str]:
        return [branchless(shape(t)) for t in texts]
    matcher = difflib.SequenceMatcher(a=shaped(ours), b=shaped(theirs), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        required = shaped([t for t, maybe in zip(ours[i1:i2], optional[i1:i2]) if not maybe])
        if tag != "equal" and required != shaped(theirs[j1:j2]):
            found.append(f"{name}: main path, instructions {i1}-{i2} of the counting build "
                         f"{ours[i1:i2]} are {theirs[j1:j2]} in the measuring build")
    # What one build's out-of-line paths hold more of, beyond the copies
    # of blocks it lays out twice (and, the counting build's, beyond what
    # may be counting code).
    maybe_rest = shapes([counting.normalised[pc] for pc in our_rest_pcs if pc in counting.maybe])
    only_ours = shapes(our_rest) - shapes(their_rest) - counting.copies() - maybe_rest
    only_theirs = shapes(their_rest) - shapes(our_rest) - measuring.copies()
    if only_ours or only_theirs:
        found.append(f"{name}: out of line, only in the counting build {dict(only_ours)}, "
                     f"only in the measuring build {dict(only_theirs)}")
    return found
