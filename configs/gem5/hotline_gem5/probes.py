"""hotline's extension (configs/gem5/extras) on a board: the objects that
listen to its cores and caches and write hotline's tables.

- HotlineCycleProfile, one per O3 core, listening to the core and to its
  L1D and L2 (a sampled run's O3 cores are the ones that take over for each
  window);
- in a sampled run, HotlineRetireCount on every atomic and O3 core (the
  run's own count of what its windows estimate) and HotlineTranslationCarry
  on each atomic/O3 pair (each window's O3 core starts with the TLB entries
  its atomic twin held);
- HotlineMissProfile, one for the system, listening to every L1D and L2.

They are made when gem5 connects the board (Board's after_connect hook, in
gem5's _pre_instantiate), once the cache hierarchy has made its caches, and
become the board's children."""

from __future__ import annotations


def extension_built(sim_object: str) -> bool:
    """Whether this gem5 was built with hotline's extension (EXTRAS=
    configs/gem5/extras) and so has sim_object (HotlineCycleProfile,
    HotlineMissProfile, HotlineRetireCount, HotlineTranslationCarry); a gem5
    built from an older checkout may have one and not the other."""
    import m5.objects
    return hasattr(m5.objects, sim_object)


class Probes:
    """What the extension measures on one board.  The lists are empty, and
    miss_profile None, until attach() has run, and stay so for what was not
    asked for."""

    def __init__(self, *, cycle_profile: bool, sampled: bool,
                 miss_profile: dict | None) -> None:
        """cycle_profile: a cycle profile on each O3 core; sampled: the
        board's processor is a SampledProcessor; miss_profile:
        HotlineMissProfile's parameters besides the caches, or None."""
        self._cycle_profile = cycle_profile
        self._sampled = sampled
        self._miss_profile = miss_profile
        self.cycle_profiles: list = []
        self.retire_counts: list = []
        self.translation_carries: list = []
        self.miss_profile = None

    def attach(self, board) -> None:
        """Makes the objects and gives them to board (whose cache hierarchy
        has l1dcaches and l2caches, one per core)."""
        caches = board.get_cache_hierarchy()
        processor = board.get_processor()
        cores = processor.get_cores()
        if self._cycle_profile:
            from m5.objects import HotlineCycleProfile
            profiled = processor.o3_cores() if self._sampled else cores
            self.cycle_profiles = [
                HotlineCycleProfile(manager=cpu.get_simobject(), l1d=caches.l1dcaches[i],
                                    l2=caches.l2caches[i]) for i, cpu in enumerate(profiled)]
            board.hotline_cycle_profiles = self.cycle_profiles
        if self._sampled:
            from m5.objects import HotlineRetireCount, HotlineTranslationCarry
            o3 = processor.o3_cores()
            # The atomic cores' counts, then the O3 cores' (run_params.RETIRE_CORES).
            self.retire_counts = [HotlineRetireCount(manager=cpu.get_simobject())
                                  for cpu in cores + o3]
            self.translation_carries = [
                HotlineTranslationCarry(atomic=a.get_simobject(), o3=b.get_simobject())
                for a, b in zip(cores, o3)]
            board.hotline_retire_counts = self.retire_counts
            board.hotline_translation_carries = self.translation_carries
        if self._miss_profile is not None:
            from m5.objects import HotlineMissProfile
            self.miss_profile = HotlineMissProfile(l1ds=caches.l1dcaches, l2s=caches.l2caches,
                                                   **self._miss_profile)
            board.hotline_miss_profile = self.miss_profile
