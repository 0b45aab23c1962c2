"""Python access to the C cache model (plugins/cachemodel/), through ctypes:
for tests and for comparing it against other models.  The QEMU plugin links
the same C code."""

import ctypes
from dataclasses import dataclass
from functools import cache

from hotline.errors import HotlineError
from hotline.plugins import INCLUSION, build_cache_model
from hotline.specs import SystemSpec

KINDS = {"ifetch": 0, "load": 1, "store": 2, "rmw": 3}
OUTCOMES = ("not-reached", "hit", "compulsory", "capacity", "conflict", "coherence", "upgrade")
SOURCES = ("l1", "l2", "l3", "peer", "memory")


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
    return lib


def _cache(size_kib: float, assoc: int, latency: int) -> _CacheConfig:
    return _CacheConfig(int(size_kib * 1024), assoc, latency)


class CacheModel:
    def __init__(self, *, cores: int, l1i, l1d, l2, l3=None, line_bytes: int = 64,
                 inclusion: str = "non-inclusive", memory_latency: int = 200,
                 peer_latency: int = 60, store_buffer_entries: int = 32,
                 store_buffer_window: int = 64):
        """Caches as (size_kib, assoc, latency) triples; l3 None for none."""
        config = _Config(cores, line_bytes, _cache(*l1i), _cache(*l1d), _cache(*l2),
                         _cache(*l3) if l3 else _CacheConfig(0, 0, 0), INCLUSION[inclusion],
                         memory_latency, peer_latency, store_buffer_entries,
                         store_buffer_window)
        lib = _library()
        error = lib.cm_config_error(ctypes.byref(config))
        if error:
            raise HotlineError(f"cache model: {error.decode()}")
        self._lib = lib
        self._model = lib.cm_new(ctypes.byref(config))
        self._result = _Result()
        self._icount = [0] * cores

    @classmethod
    def from_system(cls, system: SystemSpec) -> "CacheModel":
        c = system.caches
        level = lambda x: (x.size_kib, x.assoc, x.latency_cycles) if x else None
        return cls(cores=system.cpus, line_bytes=c.line_bytes, l1i=level(c.l1i),
                   l1d=level(c.l1d), l2=level(c.l2), l3=level(c.l3), inclusion=c.inclusion,
                   memory_latency=system.latency.memory_cycles,
                   peer_latency=system.latency.cache_to_cache_cycles,
                   store_buffer_entries=system.store_buffer.entries,
                   store_buffer_window=system.store_buffer.window_instructions)

    def __del__(self):
        if getattr(self, "_model", None):
            self._lib.cm_free(self._model)

    def access(self, core: int, kind: str, addr: int, size: int = 8, pc: int = 0,
               icount: int | None = None) -> Access:
        """One access; icount defaults to counting this core's accesses."""
        if icount is None:
            self._icount[core] += 1
            icount = self._icount[core]
        r = self._result
        self._lib.cm_access(self._model, core, pc, addr, size, KINDS[kind], icount,
                            ctypes.byref(r))
        coherence = r.stolen_by >= 0
        return Access(OUTCOMES[r.l1], OUTCOMES[r.l2], OUTCOMES[r.l3], SOURCES[r.source],
                      r.cycles, r.stolen_by if coherence else None,
                      r.stolen_by_pc if coherence else None,
                      r.store_pc if r.partial_write else None)
