"""The host's own cores as the reference for what the models assume: the
differences bench/groundtruth.py measured natively (bench/results/
groundtruth-host.json; docs/groundtruth.md), by the claims they bear on;
and the arithmetic that makes a difference of two patterns out of
bench/groundtruth.c's report, natively or in a guest."""

import json
import re
from pathlib import Path

from hotline import paths
from hotline.errors import HotlineError
from hotline.inputs import read_text

HOST = paths.REPO / "bench" / "results" / "groundtruth-host.json"


def net(cycles: list[float], baseline: list[float]) -> list[float]:
    """Each round's ticks per iteration less that round's baseline."""
    if len(cycles) != len(baseline):
        raise ValueError(f"{len(cycles)} rounds against {len(baseline)} baseline rounds")
    return [c - b for c, b in zip(cycles, baseline)]


def paired_differences(a: list[float], b: list[float]) -> list[float]:
    """Round by round, a less b (both measured in the same rounds)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} rounds against {len(b)}: not paired")
    return [x - y for x, y in zip(a, b)]


def pattern_difference(records: list[dict], a: str, b: str) -> list[float] | None:
    """Round by round, pattern a's net ticks less pattern b's, from the
    program's report (one record a pattern, as bench/groundtruth.c prints
    them); None where either was skipped or not run."""
    found = {r["pattern"]: r for r in records if "skipped" not in r}
    if a not in found or b not in found:
        return None
    return paired_differences(*(net(found[p]["cycles"], found[p]["baseline_cycles"])
                                for p in (a, b)))


def _claims_of(bears_on: str) -> set[str]:
    """The claims a difference bears on: those named before its colon
    ("C9's positive control: ..." bears on C9)."""
    return set(re.findall(r"\bC\d+\b", bears_on.partition(":")[0]))


def for_claim(claim: str, path: Path | None = None) -> tuple[str, list[dict]]:
    """What the host is (its CPU, the unit) and the differences measured on
    it that bear on `claim` (from path, HOST unless given); ("", []) where
    there is no host record."""
    path = HOST if path is None else path
    if not path.is_file():
        return "", []
    try:
        record = json.loads(read_text(path))
        cpu = record["cpu"]
        host = (f"{cpu['model_name']} (family {cpu['family']}, model {cpu['model']}"
                f"{', under a hypervisor' if cpu.get('hypervisor') else ''}), "
                f"{record['unit']}, median of {record['rounds']} rounds")
        found = [d for d in record["differences"] if claim in _claims_of(d["bears_on"])]
    except (ValueError, KeyError, TypeError) as e:
        raise HotlineError(f"{path}: not a ground-truth record bench/groundtruth.py wrote "
                           f"({type(e).__name__}: {e}); run it again") from None
    return host, found


def describe(difference: dict) -> str:
    """What a difference is, and "11.8 (11.7 to 12.8, 96% interval of the
    median)"."""
    low, high = difference["interval"]
    return (f"{difference['bears_on']} ({difference['difference']}): "
            f"{difference['median']:.1f} ({low:.1f} to {high:.1f}, "
            f"{difference['coverage']:.0%} interval of the median)")
