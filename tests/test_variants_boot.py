"""Kernel variants end to end: each builds (0 compiler warnings), boots 4
vCPUs, runs the fork storm and the page-cache writers at smoke scale and
passes its self-checks (a run whose checks fail is a failed run, see
guest_log.counter_problem), with the counters of its mechanism non-zero; a
measuring build (`-nocounters`) has no counters, and says so at boot.

CI builds and boots baseline and pte-chain only; every variant is checked by
`./hotline test -m allvariants` (or `./hotline run
configs/experiments/variants-check.toml`), which takes about an hour on 2
cores with a cold ccache (docs/kernel-counters.md)."""

import json

import pytest

from hotline import paths
from hotline.experiment import run_experiment
from hotline.kernel.build import build_kernel
from hotline.kernel.variants import available_variants
from tests.conftest import require_tools

CHECK = paths.CONFIGS / "experiments" / "variants-check.toml"
CI_VARIANTS = ["baseline", "pte-chain"]
# The counters each variant's mechanism must move in the fork storm (f) or
# the writers (w); every kernel counts rmap, lru_lock and unlock_page.
MECHANISM = {
    "pte-chain": {"f": ["chain_lock", "chain_len_2", "chain_walk_steps"]},
    "pte-chain-direct": {"f": ["chain_lock", "chain_direct"]},
    "pte-chain-hashlock": {"f": ["chain_lock", "chain_walk_steps"]},
    "pte-chain-inpage": {"f": ["chain_lock", "chain_len_2", "chain_walk_steps"]},
    "pte-chain-inpage-locked": {"f": ["chain_lock", "chain_len_2", "chain_walk_steps"]},
    "pgd-cache": {"f": ["pgd_cache_hit"]},
}
EVERY = {"f": ["rmap_add_fork", "rmap_add_fault", "rmap_remove_zap", "pgd_alloc",
               "unlock_page"],
         "w": ["lru_lock", "unlock_page"]}


def check_variant(variant, tmp_path):
    require_tools("qemu-system-x86_64", "make", "gcc", "mke2fs")
    kernel = build_kernel(variant)
    log = (kernel.directory / "build.log").read_text(errors="replace")
    assert "warning:" not in log, f"{variant}: compiler warnings in {kernel.directory}/build.log"
    spec = tmp_path / f"check-{variant}.toml"
    spec.write_text("\n".join(
        f'variants = ["{variant}"]' if line.startswith("variants") else line
        for line in CHECK.read_text().splitlines() if not line.startswith("            \"")))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOTLINE_RESULTS", str(tmp_path / "results"))
        runs = run_experiment(spec)
    assert len(runs) == 2
    for run in runs:
        assert run.failure is None, f"{run.run_id}: {run.failure}"
        manifest = json.loads((run.directory / "manifest.json").read_text())
        entry = manifest["guest"]["counters"]
        if variant.endswith("-nocounters"):
            # A measuring build: no /proc/hotline/counters, so no counts at
            # all rather than zeros (kernel-patches/patches/counters-off).
            assert entry is None, f"{run.run_id}: counters from a measuring build"
            log = (run.directory / "guest.log").read_text(errors="replace")
            assert "hotline: counters compiled out" in log
            continue
        assert entry is not None, f"{run.run_id}: no hotline-counters line"
        which = "f" if "forkstorm" in run.run_id else "w"
        for name in EVERY[which] + MECHANISM.get(variant, {}).get(which, []):
            assert entry["counters"][name] > 0, f"{run.run_id}: counter {name} is 0"
        if variant.startswith("pte-chain"):
            assert entry["since_boot"]["chain_miss"] == 0
            assert entry["check"]["chain_entries"] == entry["check"]["mapped_ptes"]
            assert entry["check"]["chain_mismatch_pages"] == 0


@pytest.mark.boot
@pytest.mark.parametrize("variant", CI_VARIANTS)
def test_variant_in_ci(variant, tmp_path):
    check_variant(variant, tmp_path)


@pytest.mark.boot
@pytest.mark.allvariants
@pytest.mark.parametrize("variant", sorted(set(available_variants()) - set(CI_VARIANTS)))
def test_every_other_variant(variant, tmp_path):
    check_variant(variant, tmp_path)


def test_the_check_experiment_names_every_variant():
    text = CHECK.read_text()
    for variant in available_variants():
        assert f'"{variant}"' in text, variant
