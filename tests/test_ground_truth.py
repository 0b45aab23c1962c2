"""The host's measurements beside the claims they bear on
(analysis/ground_truth.py): on a hand-made record, and on the committed one,
whose C9 figures the claims page shows."""

import json

import pytest

from hotline.analysis import claims, claims_page, ground_truth
from hotline.errors import HotlineError

RECORD = {
    "cpu": {"model_name": "Some x86", "family": "6", "model": "94", "hypervisor": False},
    "unit": "TSC ticks per iteration", "rounds": 10,
    "differences": [
        {"difference": "a - b", "bears_on": "C9: the byte lock's cost", "median": 11.84,
         "interval": [11.7, 12.77], "coverage": 0.9648},
        {"difference": "c - d", "bears_on": "C9's positive control: forwarding fails",
         "median": 20.05, "interval": [19.9, 20.86], "coverage": 0.9648},
        {"difference": "e - f", "bears_on": "C3/C4/C6: a line moving", "median": 25.2,
         "interval": [23.5, 25.5], "coverage": 0.9648}]}


def test_a_difference_bears_on_the_claims_named_before_its_colon(tmp_path):
    path = tmp_path / "host.json"
    path.write_text(json.dumps(RECORD))
    host, c9 = ground_truth.for_claim("C9", path)
    assert host == "Some x86 (family 6, model 94), TSC ticks per iteration, median of 10 rounds"
    assert [d["difference"] for d in c9] == ["a - b", "c - d"]
    assert [d["difference"] for d in ground_truth.for_claim("C4", path)[1]] == ["e - f"]
    assert ground_truth.for_claim("C5", path)[1] == []
    assert ground_truth.describe(c9[0]) == (
        "C9: the byte lock's cost (a - b): 11.8 (11.7 to 12.8, 96% interval of the median)")


def test_no_record_is_nothing_and_a_damaged_one_is_one_line(tmp_path):
    assert ground_truth.for_claim("C9", tmp_path / "none.json") == ("", [])
    (tmp_path / "host.json").write_text(json.dumps({"cpu": {}}))
    with pytest.raises(HotlineError, match="host.json: not a ground-truth record"):
        ground_truth.for_claim("C9", tmp_path / "host.json")


def test_the_claims_page_shows_the_hosts_c9_figures_beside_c9():
    (c9,) = [c for c in claims.claims() if c.id == "C9"]
    section = claims_page.section(c9, {}, [])
    assert "On the host&#x27;s own cores" in section or "On the host's own cores" in section
    assert "lock_andb_load - lock_andq_load" in section and "movb_load - movq_load" in section
    (c5,) = [c for c in claims.claims() if c.id == "C5"]
    assert "own cores" not in claims_page.section(c5, {}, [])
