"""Symbolization through binutils, on a small program compiled here with
debug info: the function and offset of an address, its source line and its
disassembly, and the disassembly of bytes given directly."""

import subprocess

import pytest

from hotline.results.symbols import Symbolizer, disassemble_bytes
from tests.conftest import require_tools

SOURCE = """\
long counter;

long bump(long by)
{
	counter += by;
	return counter;
}

int main(void) { return (int)bump(1); }
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    require_tools("gcc", "nm", "addr2line", "objdump")
    directory = tmp_path_factory.mktemp("sym")
    (directory / "prog.c").write_text(SOURCE)
    subprocess.run(["gcc", "-g", "-O1", "-fno-inline", "-o", "prog", "prog.c"],
                   cwd=directory, check=True)
    return directory / "prog"


def test_function_offset_line_and_disassembly(program):
    symbols = Symbolizer(program)
    bump = symbols.function_named("bump")
    assert bump is not None and bump.size > 0
    assert symbols.function(bump.start + 1) == bump
    assert symbols.function(bump.start + bump.size) != bump
    # The first instruction of bump belongs to its opening line or its body.
    line = symbols.source_lines([bump.start])[bump.start]
    assert line.split(":")[0].endswith("prog.c") and int(line.split(":")[1]) in (4, 5)
    listing = symbols.disassemble(bump.start, bump.start + bump.size)
    assert min(listing) == bump.start
    assert any(text.startswith("ret") for _, text in listing.values())
    nm = subprocess.run(["nm", str(program)], capture_output=True, text=True).stdout
    counter = next(int(f[0], 16) for f in map(str.split, nm.splitlines()) if f[-1] == "counter")
    assert symbols.data_object(counter + 7).name == "counter"     # 8 bytes: +0 .. +7
    beyond = symbols.data_object(counter + 8)
    assert beyond is None or beyond.name != "counter"


def test_bytes_are_disassembled_at_their_address():
    assert disassemble_bytes(0x1000, "c60700") == "movb $0x0,(%rdi)"
    assert disassemble_bytes(0xffffffff81000000, "f0802ffe") == "lock subb $0xfe,(%rdi)"


INLINED = """\
long counter;

static inline __attribute__((always_inline)) void bump(long by)
{
	counter += by;
}

__attribute__((noinline)) long twice(long by)
{
	bump(by);
	bump(by);
	return counter;
}

int main(void) { return (int)twice(1); }
"""


def test_the_functions_inlined_at_an_instruction_innermost_first(tmp_path):
    require_tools("gcc", "nm", "addr2line", "objdump")
    (tmp_path / "inl.c").write_text(INLINED)
    subprocess.run(["gcc", "-g", "-O1", "-o", "inl", "inl.c"], cwd=tmp_path, check=True)
    symbols = Symbolizer(tmp_path / "inl")
    twice = symbols.function_named("twice")
    listing = symbols.disassemble(twice.start, twice.start + twice.size)
    chains = symbols.inline_functions(list(listing))
    # bump's additions were compiled into twice: some instruction is bump's
    # inlined in twice; the return is twice's own.
    assert ["bump", "twice"] in chains.values()
    ret = next(pc for pc, (_, text) in listing.items() if text.startswith("ret"))
    assert chains[ret] == ["twice"]
    # The same frames' source lines: bump's line, then the call's in twice.
    inlined = next(pc for pc, chain in chains.items() if chain == ["bump", "twice"])
    lines = symbols.inline_lines([inlined, ret])
    assert [line.split(":")[0].endswith("inl.c") for line in lines[inlined]] == [True, True]
    assert int(lines[inlined][0].split(":")[1].split()[0]) == 5      # counter += by;
    assert len(lines[ret]) == 1
