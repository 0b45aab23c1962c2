"""The run record (records/manifest.py): the one home of manifest.json's
name and of how its facts are read, the system's line size among them
(read from the system spec's [caches], where every spec has it)."""

import re

import pytest

from hotline import paths, specs
from hotline.errors import HotlineError
from hotline.records import manifest as run_record


def record_of(system: str, **spec_changes) -> run_record.Manifest:
    spec = specs.load_system(system).model_dump()
    spec.update(spec_changes)
    return run_record.of({"run_id": "r", "inputs": {"system": {"name": system, "spec": spec}}},
                         "r/manifest.json")


def test_the_file_name_has_one_home_in_the_source():
    spelled = [(p, line) for p in (paths.REPO / "src").rglob("*.py")
               for line in p.read_text(encoding="utf-8").splitlines()
               if re.search(r"""["']manifest\.json["']""", line)]
    assert [p.name for p, _ in spelled] == ["manifest.py"], spelled


@pytest.mark.parametrize("system, line_bytes", [("pentium3-4way-32b", 32),
                                                ("pentium3-4way", 64), ("skylake-4core", 64)])
def test_the_line_size_is_the_system_specs(system, line_bytes):
    assert record_of(system).line_bytes == line_bytes
    assert record_of(system).cpus == specs.load_system(system).cpus


@pytest.mark.parametrize("line_bytes, says", [(0, "line_bytes = 0"), (48, "not a power of two"),
                                              ("64", "line_bytes = '64'")])
def test_a_line_size_no_system_has_is_one_line(line_bytes, says):
    record = record_of("skylake-4core")
    record.raw["inputs"]["system"]["spec"]["caches"]["line_bytes"] = line_bytes
    with pytest.raises(HotlineError) as e:
        record.line_bytes
    assert str(e.value).startswith("r/manifest.json: ") and says in str(e.value)


def test_a_missing_fact_names_its_key():
    with pytest.raises(HotlineError, match=r"r/manifest.json: has no inputs\.kernel\.variant"):
        record_of("skylake-4core").variant


def test_the_backends_account_under_its_name_and_its_older_one():
    assert run_record.of({"account": {"regions": 2}}, "m").account == {"regions": 2}
    assert run_record.of({"gem5": {"regions": 3}}, "m").account == {"regions": 3}
    assert run_record.of({}, "m").account is None


@pytest.mark.parametrize("created, nanos", [("2026-11-29T06:00:00+00:00", 1795932000 * 10**9),
                                            (None, 0)])
def test_created_in_nanoseconds(created, nanos):
    assert run_record.of({"created": created}, "m").created_ns == nanos


def test_a_created_that_is_no_date_is_one_line():
    with pytest.raises(HotlineError, match="m: 'created' is 'yesterday', not the date"):
        run_record.of({"created": "yesterday"}, "m").created_ns


def test_read_and_write_round_trip(tmp_path):
    run_record.write(tmp_path, {"run_id": tmp_path.name, "status": "ok"})
    assert run_record.exists(tmp_path)
    assert run_record.read(tmp_path).raw == {"run_id": tmp_path.name, "status": "ok"}
    (tmp_path / run_record.FILE).write_text("[1]")
    with pytest.raises(HotlineError, match="a JSON list, not an object"):
        run_record.read(tmp_path)
