"""Layout facts read from a built vmlinux, for attributing addresses to data.

From DWARF: sizeof(struct page), the offset and size of each of its named
fields (anonymous unions and structs flattened), and the bit number of every
PG_ flag (enum pageflags).  From the symbol table and .data: the initial values
of vmemmap_base and page_offset_base (with nokaslr and 4-level paging they
stay so at run time).  The struct page of pfn p is at vmemmap_base + p * size.
"""

import struct
from pathlib import Path

from elftools.elf.elffile import ELFFile

from hotline.errors import HotlineError

LAYOUT_SYMBOLS = ("vmemmap_base", "page_offset_base")
_QUALIFIERS = {"DW_TAG_typedef", "DW_TAG_const_type", "DW_TAG_volatile_type",
               "DW_TAG_atomic_type"}


def _name(die) -> str | None:
    attr = die.attributes.get("DW_AT_name")
    return attr.value.decode() if attr else None


def _strip(type_die):
    while type_die.tag in _QUALIFIERS:
        type_die = type_die.get_DIE_from_attribute("DW_AT_type")
    return type_die


def _byte_size(type_die) -> int:
    type_die = _strip(type_die)
    if "DW_AT_byte_size" in type_die.attributes:
        return type_die.attributes["DW_AT_byte_size"].value
    if type_die.tag == "DW_TAG_array_type":
        count = 1
        for sub in type_die.iter_children():
            if sub.tag == "DW_TAG_subrange_type":
                if "DW_AT_count" in sub.attributes:
                    count *= sub.attributes["DW_AT_count"].value
                elif "DW_AT_upper_bound" in sub.attributes:
                    count *= sub.attributes["DW_AT_upper_bound"].value + 1
                else:
                    count = 0  # flexible array member
        return count * _byte_size(type_die.get_DIE_from_attribute("DW_AT_type"))
    raise HotlineError(f"cannot size DWARF type {type_die.tag} at offset {type_die.offset}")


def _members(struct_die, base: int = 0):
    """(name, offset, size) of every named member, anonymous aggregates flattened."""
    for member in struct_die.iter_children():
        if member.tag != "DW_TAG_member":
            continue
        offset = base + member.attributes.get("DW_AT_data_member_location",
                                              _Zero).value
        type_die = _strip(member.get_DIE_from_attribute("DW_AT_type"))
        name = _name(member)
        if name is None and type_die.tag in ("DW_TAG_structure_type", "DW_TAG_union_type"):
            yield from _members(type_die, offset)
        elif name is not None:
            yield name, offset, _byte_size(type_die)


class _Zero:
    value = 0


def struct_fields(struct_die) -> list[dict]:
    """Named fields in declaration order.  Union alternatives overlap; the first
    declared of each overlapping group is marked primary (for struct page: the
    page-cache/anonymous view: flags, lru, mapping, index, private, ...)."""
    fields, taken = [], []
    for name, offset, size in _members(struct_die):
        end = offset + size
        primary = size > 0 and all(end <= a or offset >= b for a, b in taken)
        if primary:
            taken.append((offset, end))
        fields.append({"name": name, "offset": offset, "size": size, "primary": primary})
    return fields


def _find_types(dwarf, struct_name: str, enum_name: str):
    """The first complete definitions of `struct struct_name` and `enum enum_name`,
    looking only at each compile unit's top-level DIEs (parsing every DIE of a
    vmlinux would take minutes)."""
    found_struct = found_enum = None
    for cu in dwarf.iter_CUs():
        for die in cu.get_top_DIE().iter_children():
            if (found_struct is None and die.tag == "DW_TAG_structure_type"
                    and _name(die) == struct_name and "DW_AT_byte_size" in die.attributes):
                found_struct = die
            elif (found_enum is None and die.tag == "DW_TAG_enumeration_type"
                    and _name(die) == enum_name):
                found_enum = die
        if found_struct is not None and found_enum is not None:
            break
    if found_struct is None:
        raise HotlineError(f"no DWARF definition of struct {struct_name}; was the kernel "
                           "built with CONFIG_DEBUG_INFO_DWARF5?")
    return found_struct, found_enum


def _symbol_values(elf, names) -> dict[str, int]:
    """Initial 8-byte values of data symbols, read from their sections."""
    symtab = elf.get_section_by_name(".symtab")
    if symtab is None:
        raise HotlineError("vmlinux has no symbol table")
    values = {}
    for name in names:
        symbols = symtab.get_symbol_by_name(name)
        if not symbols:
            continue
        sym = symbols[0]
        section = elf.get_section(sym["st_shndx"])
        data = section.data()
        start = sym["st_value"] - section["sh_addr"]
        values[name] = struct.unpack_from("<Q", data, start)[0]
    return values


def read_layout(path: Path, struct_name: str = "page", enum_name: str = "pageflags") -> dict:
    with open(path, "rb") as f:
        elf = ELFFile(f)
        if not elf.has_dwarf_info():
            raise HotlineError(f"{path} has no DWARF debug info")
        struct_die, enum_die = _find_types(elf.get_dwarf_info(), struct_name, enum_name)
        flags = {}
        if enum_die is not None:
            for e in enum_die.iter_children():
                if e.tag == "DW_TAG_enumerator":
                    flags.setdefault(_name(e), e.attributes["DW_AT_const_value"].value)
        symbols = _symbol_values(elf, LAYOUT_SYMBOLS)
    return {
        "struct": struct_name,
        "sizeof": struct_die.attributes["DW_AT_byte_size"].value,
        "fields": struct_fields(struct_die),
        "flag_bits": flags,
        "symbols": {k: hex(v) for k, v in symbols.items()},
    }
