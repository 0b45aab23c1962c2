"""The experiment specs' claim matrices against what the claims need: each
claims experiment (QEMU's, gem5's, the 32-byte lines', the seeds' scale,
the O3 ones) plans every run that its claims' needs name, the parts of
claims-seed hold the runs of the claims they decide, and the
page-replacement writers write more than the guest's memory."""

import pytest

from hotline import paths
from hotline.analysis.claims import CLAIMS
from hotline.analysis.claims.common import BASE, CHAIN
from hotline.experiment import load_spec, plan
from hotline.specs import load_system


def covered(need, runs, o3: bool | None) -> set[str]:
    """The variants of `need` that the planned `runs` have."""
    found = set()
    for run in runs:
        system = load_system(run.system)
        if (run.workload == need.workload and system.cpus == need.cpus
                and set(need.params) <= set(run.overrides)
                and (o3 is None or (system.gem5.roi_cpu == "o3") == o3)):
            found.add(run.variant)
    return found & set(need.variants)


ALL_SEEDS = ("000", "001", "002", "003", "004")
# Needs that an experiment of their own holds: C6's spin time needs the
# page-replacement writers on sampled O3 cores, hours that claims-gem5's
# smoke matrix leaves to claims-gem5-lru-replacement.
ELSEWHERE = {("C6", "lruwriters", True): "claims-gem5-lru-replacement"}


@pytest.mark.parametrize("spec, backend, seeds", [
    ("claims-smoke", "qemu", ALL_SEEDS),
    ("claims-gem5", "gem5", ALL_SEEDS),
    ("claims-32b", "qemu", ("000", "001")),     # the claims whose line size matters
    ("claims-seed", "qemu", ("000", "001")),    # those the seeds' scale can change
])
def test_the_claims_experiments_have_every_run_the_claims_need(spec, backend, seeds):
    """The experiment specs' matrices against what each claim of these
    seeds says it needs: QEMU runs every need but gem5's O3 ones; gem5
    every need, in the experiment ELSEWHERE names where it names one."""
    experiments = paths.REPO / "configs" / "experiments"
    runs = plan(load_spec(experiments / f"{spec}.toml"))
    for claim in (c for c in CLAIMS.values() if c.seed in seeds):
        for need in claim.needs:
            if backend == "qemu" and need.o3:
                continue
            where = ELSEWHERE.get((claim.id, need.workload, need.o3))
            have = covered(need, plan(load_spec(experiments / f"{where}.toml")) if where
                           else runs, need.o3 if backend == "gem5" else None)
            assert have == set(need.variants), (claim.id, need, have)


def test_the_seed_scale_fork_storm_holds_the_runs_of_the_claims_it_names():
    """claims-seed-forkstorm is the part of claims-seed that decides C1-C3:
    every QEMU need of C2 and C3, and C1's kernels (its side array beside
    is left to claims-seed), at the seed's scale, as in claims-seed."""
    experiments = paths.REPO / "configs" / "experiments"
    runs = plan(load_spec(experiments / "claims-seed-forkstorm.toml"))
    whole = plan(load_spec(experiments / "claims-seed.toml"))
    assert {(r.variant, r.workload, r.system, r.scale) for r in runs} < \
        {(r.variant, r.workload, r.system, r.scale) for r in whole}
    for claim in ("C1", "C2", "C3"):
        for need in (n for n in CLAIMS[claim].needs if not n.o3):
            wanted = {BASE, CHAIN} if claim == "C1" else set(need.variants)
            assert covered(need, runs, None) == wanted, (claim, need)


def test_the_seed_scale_c5_runs_are_those_c5_needs_without_the_model():
    """claims-seed-c5 is the part of claims-seed that decides C5, at the
    seed's scale: every run C5 needs, and no cache model, since C5 reads
    the kernel's counters only."""
    experiments = paths.REPO / "configs" / "experiments"
    spec = load_spec(experiments / "claims-seed-c5.toml")
    runs = plan(spec)
    whole = plan(load_spec(experiments / "claims-seed.toml"))
    assert {(r.variant, r.workload, r.system, r.scale) for r in runs} <= \
        {(r.variant, r.workload, r.system, r.scale) for r in whole}
    for need in CLAIMS["C5"].needs:
        assert covered(need, runs, None) == set(need.variants), need
    assert spec.qemu.plugin != "hotline-cache"


@pytest.mark.parametrize("spec", ["claims-seed", "claims-lru-replacement",
                                  "claims-gem5-lru-replacement"])
def test_the_page_replacement_experiments_write_more_than_the_guests_memory(spec):
    """C6 under page replacement, as seed 001's load was: every C6 need is
    in these specs (QEMU's leave out the O3 one; the gem5 one is where
    ELSEWHERE says it is), and their writers write more than the guest's
    memory, so that the kernel must reclaim (the smoke writers' files fit)."""
    loaded = load_spec(paths.REPO / "configs" / "experiments" / f"{spec}.toml")
    runs, gem5 = plan(loaded), loaded.backend == "gem5"
    for need in CLAIMS["C6"].needs:
        if need.o3 and not gem5:
            continue
        assert covered(need, runs, need.o3 if gem5 else None) == set(need.variants), need
    writers = [r for r in runs if r.workload == "lruwriters"]
    assert writers
    for run in writers:
        params = dict(run.params)
        assert params["writers"] * params["file_mib"] > load_system(run.system).memory_mib, run


@pytest.mark.parametrize("spec", ["claims-o3-tiny", "claims-o3-tiny-32b"])
def test_the_o3_experiments_have_every_o3_run_the_fork_storm_claims_need(spec):
    """The tiny O3 fork storms decide C1, C2 and C4 on time: every O3 need
    of a fork storm claim is in them, on O3 cores."""
    runs = plan(load_spec(paths.REPO / "configs" / "experiments" / f"{spec}.toml"))
    needs = [(claim.id, need) for claim in CLAIMS.values() for need in claim.needs
             if need.o3 and need.workload == "forkstorm"]
    assert {claim for claim, _ in needs} == {"C1", "C2", "C4"}
    for claim, need in needs:
        assert covered(need, runs, True) == set(need.variants), (claim, need)


def test_the_tiny_o3_experiment_has_every_o3_run_the_microbenchmark_claim_needs():
    """claims-o3-tiny decides C11 on time too: its O3 need (lmbench-lite on
    baseline and pgd-cache) is in it, on O3 cores; the 32-byte twin leaves
    it out (C11 is not about the line size)."""
    [need] = [n for n in CLAIMS["C11"].needs if n.o3]
    experiments = paths.REPO / "configs" / "experiments"
    assert covered(need, plan(load_spec(experiments / "claims-o3-tiny.toml")), True) == \
        set(need.variants)
    assert not covered(need, plan(load_spec(experiments / "claims-o3-tiny-32b.toml")), True)


def test_the_tiny_o3_experiment_has_every_o3_run_the_script_storm_claims_need():
    """C8 (the kernel profile in cycles) and C9 (the load replays) take one
    script on O3 cores: claims-o3-tiny has every such run; the 32-byte twin
    leaves them out."""
    experiments = paths.REPO / "configs" / "experiments"
    needs = [(claim.id, need) for claim in CLAIMS.values() for need in claim.needs
             if need.o3 and need.workload == "scriptstorm"]
    assert {claim for claim, _ in needs} == {"C8", "C9"}
    for claim, need in needs:
        assert covered(need, plan(load_spec(experiments / "claims-o3-tiny.toml")), True) == \
            set(need.variants), claim
        assert not covered(need, plan(load_spec(experiments / "claims-o3-tiny-32b.toml")), True)


def test_the_c3_experiment_repeats_every_run_c3_needs_where_cpus_run_at_once():
    """claims-gem5-c3 gives C3 five runs where CPUs run at once: every run
    C3 needs, on gem5's cores (which contend as hardware does, unlike
    QEMU's vCPU turns), each cell five times."""
    spec = load_spec(paths.REPO / "configs" / "experiments" / "claims-gem5-c3.toml")
    runs = plan(spec)
    assert spec.backend == "gem5" and spec.repeats == 5
    for need in CLAIMS["C3"].needs:
        assert covered(need, runs, None) == set(need.variants), need
    assert {r.repeat for r in runs} == set(range(5))
