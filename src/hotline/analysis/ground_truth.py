"""The host's own cores as the reference for what the models assume: the
differences bench/groundtruth.py measured natively (bench/results/
groundtruth-host.json; docs/groundtruth.md), by the claims they bear on."""

import json
import re
from pathlib import Path

from hotline import paths
from hotline.errors import HotlineError
from hotline.inputs import read_text

HOST = paths.REPO / "bench" / "results" / "groundtruth-host.json"


def _claims_of(bears_on: str) -> set[str]:
    """The claims a difference bears on: those named before its colon
    ("C9's positive control: ..." bears on C9)."""
    return set(re.findall(r"\bC\d+\b", bears_on.partition(":")[0]))


def for_claim(claim: str, path: Path = HOST) -> tuple[str, list[dict]]:
    """What the host is (its CPU, the unit) and the differences measured on
    it that bear on `claim`; ("", []) where there is no host record."""
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
