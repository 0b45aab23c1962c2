"""Python access to the C cache model (plugins/cachemodel/), through ctypes:
for tests and for comparing it against other models.  The QEMU plugin links
the same C code.

The C library is the one home of what this module mirrors: the names of
access kinds, outcomes, sources and inclusion policies are read from it
(cm_*_name), and the ctypes structures below are checked against its
layout table (cm_layout) when it is loaded, so that a change on either side
fails at once instead of misreading memory."""

import ctypes
from dataclasses import dataclass
from functools import cache

from hotline.errors import HotlineError
from hotline.simulate.qemu.plugins import build_cache_model


class _CacheConfig(ctypes.Structure):
    _fields_ = [("size_bytes", ctypes.c_uint32), ("assoc", ctypes.c_uint32),
                ("latency", ctypes.c_uint32)]


class _Config(ctypes.Structure):
    _fields_ = [("cores", ctypes.c_uint32), ("line_bytes", ctypes.c_uint32),
                ("l1i", _CacheConfig), ("l1d", _CacheConfig), ("l2", _CacheConfig),
                ("l3", _CacheConfig), ("inclusion", ctypes.c_uint32),
                ("memory_latency", ctypes.c_uint32), ("peer_latency", ctypes.c_uint32),
                ("store_buffer_entries", ctypes.c_uint32),
                ("store_buffer_window", ctypes.c_uint32)]


class _Result(ctypes.Structure):
    _fields_ = [("l1", ctypes.c_uint8), ("l2", ctypes.c_uint8), ("l3", ctypes.c_uint8),
                ("source", ctypes.c_uint8), ("partial_write", ctypes.c_uint8),
                ("stolen_by", ctypes.c_int16), ("cycles", ctypes.c_uint32),
                ("stolen_by_pc", ctypes.c_uint64), ("store_pc", ctypes.c_uint64)]


@dataclass(frozen=True)
class Access:
    """What one access did, level by level."""
    l1: str
    l2: str
    l3: str
    source: str
    cycles: int
    stolen_by: int | None = None
    stolen_by_pc: int | None = None
    partial_write_store_pc: int | None = None


class _Member(ctypes.Structure):
    _fields_ = [("type", ctypes.c_char_p), ("member", ctypes.c_char_p),
                ("offset", ctypes.c_uint32), ("size", ctypes.c_uint32)]


# The C structs the ctypes structures above mirror.
MIRRORS = {"cm_cache_config": _CacheConfig, "cm_config": _Config, "cm_result": _Result}


@dataclass(frozen=True)
class Names:
    """The C enums' names, in enum order (index = the C value)."""
    kinds: tuple[str, ...]        # enum cm_kind
    outcomes: tuple[str, ...]     # enum cm_outcome
    sources: tuple[str, ...]      # enum cm_source
    inclusions: tuple[str, ...]   # enum cm_inclusion


@cache
def _library() -> ctypes.CDLL:
    lib = ctypes.CDLL(str(build_cache_model()))
    lib.cm_new.restype = ctypes.c_void_p
    lib.cm_new.argtypes = [ctypes.POINTER(_Config)]
    lib.cm_config_error.restype = ctypes.c_char_p
    lib.cm_config_error.argtypes = [ctypes.POINTER(_Config)]
    lib.cm_free.argtypes = [ctypes.c_void_p]
    lib.cm_access.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64,
                              ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint32,
                              ctypes.c_uint64, ctypes.POINTER(_Result)]
    lib.cm_layout.restype = ctypes.POINTER(_Member)
    lib.cm_set_threaded.argtypes = [ctypes.c_void_p]
    lib.cm_fetch_hits.restype = ctypes.c_bool
    lib.cm_fetch_hits.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64]
    lib.cm_check.restype = ctypes.c_char_p
    lib.cm_check.argtypes = [ctypes.c_void_p]
    for enum in ("kind", "outcome", "source", "inclusion"):
        function = getattr(lib, f"cm_{enum}_name")
        function.restype = ctypes.c_char_p
        function.argtypes = [ctypes.c_uint32]
    mismatch = layout_mismatch(c_layout(lib))
    if mismatch:
        raise HotlineError(f"cache model: the ctypes mirror disagrees with the C library: "
                           f"{mismatch}; make src/hotline/simulate/qemu/cachemodel.py match "
                           f"plugins/cachemodel/cachemodel.h")
    return lib


def c_layout(lib: ctypes.CDLL | None = None) -> set[tuple[str, str, int, int]]:
    """The C structs' members as (struct, member, offset, size); member ""
    gives the struct's size."""
    table = (lib or _library()).cm_layout()
    members = set()
    for i in range(1000):
        m = table[i]
        if m.type is None:
            return members
        members.add((m.type.decode(), m.member.decode(), m.offset, m.size))
    raise HotlineError("cache model: cm_layout() has no terminating entry")


def ctypes_layout() -> set[tuple[str, str, int, int]]:
    """The same, of the ctypes structures that mirror them."""
    members = set()
    for name, structure in MIRRORS.items():
        members.add((name, "", 0, ctypes.sizeof(structure)))
        for field, _ in structure._fields_:
            descriptor = getattr(structure, field)
            members.add((name, field, descriptor.offset, descriptor.size))
    return members


def layout_mismatch(c: set[tuple[str, str, int, int]]) -> str | None:
    """What differs between the C layout and the ctypes mirrors, or None."""
    mirrored = ctypes_layout()
    if c == mirrored:
        return None
    show = lambda m: f"{m[0]}.{m[1] or '(size)'} at {m[2]}, {m[3]} bytes"
    return "; ".join([*(f"C has {show(m)}" for m in sorted(c - mirrored)),
                      *(f"ctypes has {show(m)}" for m in sorted(mirrored - c))])


@cache
def names() -> Names:
    lib = _library()

    def listed(enum: str) -> tuple[str, ...]:
        function = getattr(lib, f"cm_{enum}_name")
        found = []
        while (name := function(len(found))) is not None:
            found.append(name.decode())
        return tuple(found)

    return Names(listed("kind"), listed("outcome"), listed("source"), listed("inclusion"))


def _cache(size_kib: float, assoc: int, latency: int) -> _CacheConfig:
    return _CacheConfig(int(size_kib * 1024), assoc, latency)


class CacheModel:
    def __init__(self, *, cores: int, l1i, l1d, l2, l3=None, line_bytes: int = 64,
                 inclusion: str = "non-inclusive", memory_latency: int = 200,
                 peer_latency: int = 60, store_buffer_entries: int = 32,
                 store_buffer_window: int = 64, threaded: bool = False):
        """Caches as (size_kib, assoc, latency) triples; l3 None for none.
        threaded: the model as multi-threaded TCG runs it (cm_set_threaded),
        lock-free hits and all, here still one access at a time."""
        lib, self._names = _library(), names()
        if inclusion not in self._names.inclusions:
            raise HotlineError(f"cache model: inclusion {inclusion!r} is none of "
                               f"{', '.join(self._names.inclusions)}")
        config = _Config(cores, line_bytes, _cache(*l1i), _cache(*l1d), _cache(*l2),
                         _cache(*l3) if l3 else _CacheConfig(0, 0, 0),
                         self._names.inclusions.index(inclusion), memory_latency,
                         peer_latency, store_buffer_entries, store_buffer_window)
        error = lib.cm_config_error(ctypes.byref(config))
        if error:
            raise HotlineError(f"cache model: {error.decode()}")
        self._lib = lib
        self._model = lib.cm_new(ctypes.byref(config))
        if not self._model:
            raise HotlineError("cache model: not memory enough for these caches on this host")
        self.threaded = threaded
        if threaded:
            lib.cm_set_threaded(self._model)
        self._result = _Result()
        self._icount = [0] * cores

    def __del__(self):
        if getattr(self, "_model", None):
            self._lib.cm_free(self._model)

    def check(self) -> str | None:
        """None if the hierarchy is coherent and consistent, else what is
        wrong (cm_check)."""
        error = self._lib.cm_check(self._model)
        return error.decode() if error else None

    def fetch_hits(self, core: int, addr: int) -> bool:
        """Whether a fetch of addr's line hits the core's last fetched line
        (cm_fetch_hits: the plugin's shortcut, which changes nothing)."""
        return self._lib.cm_fetch_hits(self._model, core, addr)

    def access(self, core: int, kind: str, addr: int, size: int = 8, pc: int = 0,
               icount: int | None = None) -> Access:
        """One access; icount defaults to counting this core's accesses."""
        if icount is None:
            self._icount[core] += 1
            icount = self._icount[core]
        r, n = self._result, self._names
        self._lib.cm_access(self._model, core, pc, addr, size, n.kinds.index(kind), icount,
                            ctypes.byref(r))
        coherence = r.stolen_by >= 0
        return Access(n.outcomes[r.l1], n.outcomes[r.l2], n.outcomes[r.l3], n.sources[r.source],
                      r.cycles, r.stolen_by if coherence else None,
                      r.stolen_by_pc if coherence else None,
                      r.store_pc if r.partial_write else None)
