"""hotline probed as a hostile user would, the second round: every
write that fails (a full disk, a read-only mount, a folder where a file
goes, a folder that is missing) ends in one line naming the path and what to
do, with nothing partial left under the final name; every reuse checks what
it reuses (sizes and content hashes, the run's own name); every spec and
text file too big or odd for its checks gets one line.  The full disk is a
real tmpfs and the read-only place a real read-only bind mount, where the
test runs as root; elsewhere those tests skip and say why."""

import errno
import json
import shutil
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pyarrow.parquet as pq
import pytest

from hotline import outputs, sealed, specs
from hotline.analysis import notebooks
from hotline.analysis.results import Results
from hotline.errors import HotlineError
from hotline.kernel import variants
from hotline.records import layout
from hotline.report import diff, pprof, render, run as report_run
from hotline.figures import Picture
from hotline.sweep import engine, gather, workflow
from tests.conftest import (GOOD, TABLES, Stand_in, copy_gathered, fails, out_dir, rejected,
                            started)
from tests.made_runs import planned_inputs, write_run


def _mount(*argv) -> None:
    done = subprocess.run(["mount", *argv], capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"cannot mount here ({done.stderr.strip() or done.returncode}): a real "
                    "full disk and read-only place need root")


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs, to be filled by the test (fill())."""
    disk = tmp_path / "disk"
    disk.mkdir()
    _mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk))
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=True)


def fill(disk: Path) -> None:
    """Write until the disk is full."""
    with open(disk / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as e:
            assert e.errno == errno.ENOSPC


@pytest.fixture
def read_only(tmp_path):
    """(source, mount): what is put in source is seen, read-only, in mount."""
    source, mount = tmp_path / "rw", tmp_path / "ro"
    source.mkdir()
    mount.mkdir()
    with read_only_mount(source, mount):
        yield source, mount


@contextmanager
def read_only_mount(source: Path, mount: Path):
    _mount("--bind", str(source), str(mount))
    try:
        _mount("-o", "remount,bind,ro", str(mount))
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def one_line(e: pytest.ExceptionInfo, path: Path, why: str) -> str:
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"{path}: cannot be written ({why}); "), \
        message
    return message


# ---- the one way to write (outputs.py) ------------------------------------------

def test_a_write_that_fills_the_disk_leaves_nothing(small_disk):
    target = small_disk / "table.parquet"
    target.write_bytes(b"the old one")
    with pytest.raises(HotlineError) as e:
        outputs.write_bytes(target, b"x" * (4 << 20))
    assert "free some space there" in one_line(e, target, "No space left on device")
    # The old file whole, and no partial one beside it.
    assert target.read_bytes() == b"the old one"
    assert sorted(p.name for p in small_disk.iterdir()) == ["table.parquet"]


def test_writes_into_a_read_only_place(read_only):
    _, mount = read_only
    with pytest.raises(HotlineError) as e:
        outputs.write_text(mount / "report.txt", "x")
    assert "read-only file system" in one_line(e, mount / "report.txt",
                                               "Read-only file system")
    with pytest.raises(HotlineError) as e:
        outputs.make_dir(mount / "analysis")
    one_line(e, mount / "analysis", "Read-only file system")


def test_a_folder_where_the_file_goes(tmp_path):
    (tmp_path / "report.txt").mkdir()
    with pytest.raises(HotlineError) as e:
        outputs.write_text(tmp_path / "report.txt", "x")
    assert "a folder stands where the file goes" in one_line(e, tmp_path / "report.txt",
                                                             "Is a directory")


def test_a_file_where_a_folder_goes(tmp_path):
    (tmp_path / "analysis").write_text("")
    with pytest.raises(HotlineError) as e:
        outputs.make_dir(tmp_path / "analysis")
    assert "a file stands where a folder goes" in one_line(e, tmp_path / "analysis",
                                                           "a file, not a folder")
    with pytest.raises(HotlineError) as e:
        outputs.write_text(tmp_path / "analysis" / "claims.html", "x")
    one_line(e, tmp_path / "analysis" / "claims.html", "Not a directory")


def test_a_device_is_written_in_place_not_replaced():
    """/dev/full: written to (and full), never renamed over."""
    with pytest.raises(HotlineError) as e:
        outputs.write_bytes(Path("/dev/full"), b"x")
    one_line(e, Path("/dev/full"), "No space left on device")
    assert Path("/dev/full").is_char_device() and not Path("/dev/full.partial").exists()


# ---- commands that write ----------------------------------------------------------

def test_run_with_results_on_a_full_disk(sandbox, small_disk, monkeypatch, capsys):  # noqa: F811
    monkeypatch.setenv("HOTLINE_RESULTS", str(small_disk / "results"))
    fill(small_disk)
    err = fails(capsys, "run", str(sandbox))
    assert f"{small_disk / 'results'}" in err and "No space left on device" in err


def test_run_in_a_read_only_experiment_folder(sandbox, capsys):  # noqa: F811
    """The results tree writable, the experiment's own folder not."""
    assert engine.run_sweep(sandbox, jobs=2) == 0
    out = out_dir(sandbox)
    capsys.readouterr()
    with read_only_mount(out, out):
        err = fails(capsys, "run", str(sandbox))
    lock = out / ".sweep" / "lock"
    assert err.startswith(f"hotline: error: {lock}: cannot be written (Read-only file system)")


def test_gathering_on_a_full_disk(sandbox, small_disk, monkeypatch):  # noqa: F811
    monkeypatch.setenv("HOTLINE_RESULTS", str(small_disk / "results"))
    sweep = workflow.load_sweep(sandbox)
    out = sweep.out_dir
    for step in sweep.runs[:2]:
        write_run(out / step.run_id, {"inputs": planned_inputs(sweep.spec_path, step.run_id)},
                  {"misses": pd.DataFrame({"pc": range(20_000)})})
        (out / layout.RECORDS).mkdir(parents=True, exist_ok=True)
        (out / layout.record_path(step.run_id)).write_text(json.dumps(
            {"status": "ok", "failure": None, "directory": step.run_id, "guest_log": None,
             "step_log": layout.log_path(step.run_id)}))
    fill(small_disk)
    with pytest.raises(HotlineError) as e:
        gather.gather(sweep.spec_path, out)
    one_line(e, out / "misses.parquet", "No space left on device")
    assert not list(out.glob("*.parquet*"))


def report_stand_in(monkeypatch):
    """write_report's sections as a run would give them: one with a picture."""
    section = render.Section("Top", "", pd.DataFrame({"a": [1]}),
                             [Picture("top-l1d", "t", b"\x89PNG" * 2000, b"<svg/>" * 2000)])
    monkeypatch.setattr(render, "sections", lambda run_dir: ({"run_id": "r1"}, [section]))
    monkeypatch.setattr(render, "as_text", lambda manifest, report: "text")
    monkeypatch.setattr(render, "as_html", lambda manifest, report: "<html/>")


def test_report_on_a_full_disk_leaves_no_empty_picture(tmp_path, small_disk, monkeypatch):
    report_stand_in(monkeypatch)
    fill(small_disk)
    with pytest.raises(HotlineError) as e:
        render.write_report(small_disk)
    one_line(e, small_disk / render.PICTURES / "top-l1d.svg", "No space left on device")
    # Nothing under any final name: no empty picture, no report.
    assert sorted(str(p.relative_to(small_disk)) for p in small_disk.rglob("*")) == \
        ["filler", render.PICTURES]


def test_report_on_a_read_only_run(read_only, monkeypatch):
    report_stand_in(monkeypatch)
    _, mount = read_only
    with pytest.raises(HotlineError) as e:
        render.write_report(mount)
    one_line(e, mount / render.PICTURES, "Read-only file system")


def test_report_where_report_txt_is_a_folder(tmp_path, monkeypatch):
    report_stand_in(monkeypatch)
    (tmp_path / "report.txt").mkdir()
    with pytest.raises(HotlineError) as e:
        render.write_report(tmp_path)
    one_line(e, tmp_path / "report.txt", "Is a directory")


@pytest.mark.parametrize("where, why", [
    ("/tmp", "Is a directory"), ("/dev/full", "No space left on device"),
    ("{tmp}/missing/profile.pb.gz", "No such file or directory")])
def test_export_to_a_place_it_cannot_write(tmp_path, where, why):
    profile = pprof.pprof_pb2.Profile()
    path = Path(where.format(tmp=tmp_path))
    with pytest.raises(HotlineError) as e:
        pprof.write(profile, path)
    one_line(e, path, why)
    assert not (tmp_path / "missing").exists()


def test_diff_out_a_file_or_a_read_only_place(tmp_path, read_only, monkeypatch):
    monkeypatch.setattr(diff, "sections", lambda d: [])
    d = SimpleNamespace(names=("a", "b"), a=SimpleNamespace(run_id="r0"),
                        b=SimpleNamespace(run_id="r1"))
    (tmp_path / "file").write_text("")
    with pytest.raises(HotlineError) as e:
        diff.write_diff(d, tmp_path / "file")
    one_line(e, tmp_path / "file", "a file, not a folder")
    _, mount = read_only
    with pytest.raises(HotlineError) as e:
        diff.write_diff(d, mount / "diff")
    one_line(e, mount / "diff", "Read-only file system")


@pytest.fixture
def gathered(tmp_path):
    results = tmp_path / "claims-smoke"
    copy_gathered(results)
    return results


def test_analyse_where_analysis_is_a_file(gathered, capsys):
    (gathered / "analysis").write_text("")
    err = fails(capsys, "analyse", str(gathered))
    assert f"{gathered / 'analysis'}: cannot be written (a file, not a folder)" in err


def test_analyse_in_a_read_only_place(gathered, read_only, capsys):
    source, mount = read_only
    shutil.copytree(gathered, source / "claims-smoke")
    err = fails(capsys, "analyse", str(mount / "claims-smoke"))
    assert f"{mount / 'claims-smoke' / 'analysis'}: cannot be written (Read-only" in err


def claims_notebook_on(disk: Path, monkeypatch) -> Path:
    """Gathered results that fit a 2 MiB disk (the smoke tables do not:
    these are made up of the index and roi only), analysed by the claims
    notebook alone."""
    results = disk / "exp"
    copy_gathered(results, ignore=lambda d, names: [
        n for n in names if n.endswith(".parquet") and n not in ("runs.parquet", "roi.parquet")])
    sealed.write_index(results, "runs.parquet", pq.read_table(results / "runs.parquet"))
    monkeypatch.setattr(notebooks, "notebooks",
                        lambda: [notebooks.NOTEBOOKS / "claims.ipynb"])
    return results


def test_analyse_on_a_disk_that_fills_leaves_no_truncated_page(small_disk, monkeypatch):
    """The disk fills as the claims page is written."""
    results = claims_notebook_on(small_disk, monkeypatch)
    page = results / "analysis" / "claims.html"
    real = outputs.write_bytes

    def fill_then_write(path, data, **kwargs):
        if path == page:
            fill(small_disk)
        return real(path, data, **kwargs)
    monkeypatch.setattr(outputs, "write_bytes", fill_then_write)
    with pytest.raises(HotlineError) as e:
        notebooks.analyse(results)
    one_line(e, page, "No space left on device")
    assert not page.exists() and not outputs.staging_path(page).exists()


def test_analyse_on_a_full_disk_names_the_notebook_and_leaves_none(small_disk, monkeypatch):
    """The disk fills before the claims notebook is executed: one line
    naming the executed notebook, and no empty notebook left behind."""
    import papermill
    results = claims_notebook_on(small_disk, monkeypatch)
    real = papermill.execute_notebook

    def fill_then_execute(*args, **kwargs):
        fill(small_disk)
        return real(*args, **kwargs)
    monkeypatch.setattr(papermill, "execute_notebook", fill_then_execute)
    executed = results / "analysis" / "claims.ipynb"
    with pytest.raises(HotlineError) as e:
        notebooks.analyse(results)
    one_line(e, executed, "No space left on device")
    assert not executed.exists() and not outputs.staging_path(executed).exists()


# ---- reuse checks what it reuses ---------------------------------------------------

def test_a_table_damaged_in_the_middle_is_made_again(sandbox, capfd):  # noqa: F811
    assert engine.run_sweep(sandbox, jobs=2) == 0
    out = out_dir(sandbox)
    damaged = workflow.load_sweep(sandbox).runs[0].run_id
    table = out / damaged / "misses.parquet"
    data = bytearray(table.read_bytes())
    data[len(data) // 2] ^= 0xFF           # the footer and the size intact
    table.write_bytes(bytes(data))
    capfd.readouterr()
    before = time.time()
    assert engine.run_sweep(sandbox, jobs=2) == 0
    err = capfd.readouterr().err
    assert f"run {damaged}: FAILED: {table}: its content is not what was written" in err
    assert started(sandbox, before) == [damaged]
    gathered = pd.read_parquet(out / "misses.parquet")
    assert set(gathered["run"]) == {r.run_id for r in workflow.load_sweep(sandbox).runs}


def test_a_run_folder_copied_over_another(sandbox, capfd):  # noqa: F811
    assert engine.run_sweep(sandbox, jobs=2) == 0
    out = out_dir(sandbox)
    r0, r1 = (s.run_id for s in workflow.load_sweep(sandbox).runs[:2])
    shutil.rmtree(out / r1)
    shutil.copytree(out / r0, out / r1)
    capfd.readouterr()
    before = time.time()
    assert engine.run_sweep(sandbox, jobs=2) == 0
    assert f"the manifest of run '{r0}', not of '{r1}'" in capfd.readouterr().err
    assert started(sandbox, before) == [r1]
    gathered = pd.read_parquet(out / "misses.parquet")
    assert (gathered["run"] == r1).sum() == 2 and (gathered["run"] == r0).sum() == 2


def test_the_dry_run_and_the_run_agree_on_what_is_done(sandbox, capfd):  # noqa: F811
    assert engine.run_sweep(sandbox, jobs=2) == 0
    out = out_dir(sandbox)
    truncated = workflow.load_sweep(sandbox).runs[1].run_id
    table = out / truncated / "misses.parquet"
    table.write_bytes(table.read_bytes()[:-100])
    capfd.readouterr()
    assert engine.run_sweep(sandbox, dry_run=True) == 0
    said = capfd.readouterr()
    assert f"run {truncated}: {table}: " in said.err and "would be made again" in said.err
    # Snakemake's plan: that run's step, and the gathering, nothing else.
    jobs = said.out.split("Job stats:\n", 1)[1].split("total")[0]
    assert dict(line.split() for line in jobs.splitlines()[2:]) == \
        {"all": "1", "gather": "1", "simulate": "1"}
    assert table.exists()                 # a dry run changes nothing
    before = time.time()
    assert engine.run_sweep(sandbox, jobs=2) == 0
    assert started(sandbox, before) == [truncated]


def test_analyse_of_a_folder_with_only_the_index(gathered, capsys):
    for table in gathered.glob("*.parquet"):
        if table.name != "runs.parquet":
            table.unlink()
    err = fails(capsys, "analyse", str(gathered))
    assert f"{gathered / 'coherence.parquet'}: missing (listed as made)" in err
    assert "run the experiment again" in err and not (gathered / "analysis").exists()


def test_analyse_of_a_gathered_table_changed_since(gathered):
    with open(gathered / "roi.parquet", "r+b") as f:
        f.seek(100)
        byte = f.read(1)
        f.seek(100)
        f.write(bytes([byte[0] ^ 1]))
    with pytest.raises(HotlineError, match="roi.parquet: its content is not what was written"):
        Results(gathered)


# ---- input too big or odd for its checks ---------------------------------------------

def test_repeats_beyond_the_bound(tmp_path):
    started_at = time.monotonic()
    message = rejected(tmp_path, GOOD + "repeats = 100000000\n")
    assert "key 'repeats'" in message and str(specs.MAX_REPEATS) in message
    assert time.monotonic() - started_at < 5


def test_runs_beyond_the_bound(tmp_path):
    text = GOOD.replace('systems = ["skylake-4core"]',
                        'systems = ["skylake-4core", "pentium3-4way", "pentium3-1way"]')
    text = text.replace('variants = ["baseline"]',
                        'variants = ["baseline", "baseline-nomemcg", "pte-chain", '
                        '"pte-chain-inpage"]')
    message = rejected(tmp_path, text + "repeats = 1000\n")
    assert "asks for 12,000 runs" in message and "at most 10,000" in message


def test_a_spec_nested_500_deep(tmp_path):
    message = rejected(tmp_path, GOOD + "x = " + "[" * 500 + "]" * 500 + "\n")
    assert "nested too deeply" in message


def test_a_series_that_is_not_utf8(tmp_path, monkeypatch):
    variant = tmp_path / "variants" / "odd"
    variant.mkdir(parents=True)
    (variant / "series").write_bytes(b"0001-caf\xe9.patch\n")
    monkeypatch.setattr(variants, "VARIANTS", tmp_path / "variants")
    with pytest.raises(HotlineError) as e:
        variants.load_variant("odd")
    assert str(e.value) == (f"{variant / 'series'}: not UTF-8 text (byte 0xe9 at offset 8); "
                            "hotline reads its text files as UTF-8")


def test_a_manifest_with_cpus_four(tmp_path, capsys, monkeypatch):
    run = write_run(tmp_path / "r1", {
        "status": "ok", "failure": None, "tables": {n: f"{n}.parquet" for n in TABLES},
        "inputs": {"kernel": {"variant": "baseline", "key": "k", "version": "6.1"},
                   "system": {"name": "s", "spec": {"cpus": "four"}},
                   "workload": {"name": "w", "scale": "smoke", "params": {}},
                   "backend": {"name": "qemu", "version": "10", "mode": "deterministic"}},
        "hotline": {"revision": "x"}},
        {name: pd.DataFrame({c: [] for c in columns}) for name, columns in TABLES.items()})
    monkeypatch.setattr(report_run, "kernel_dir", lambda manifest: tmp_path)  # no build here
    err = fails(capsys, "report", str(run))
    assert f"{run / 'manifest.json'}: cpus = 'four', where every system spec has an " \
        "integer >= 1" in err and f"delete {run}" in err


def test_a_manifest_unchanged_is_reusable_and_one_changed_is_not(tmp_path, monkeypatch):
    """The stand-in runner of test_hostile: its run's tables listed in its
    manifest, so that adding one by hand is noticed."""
    runner = Stand_in(tmp_path, monkeypatch)
    first = runner.execute()
    assert runner.execute().reused
    pd.DataFrame({"run": ["x"]}).to_parquet(first.directory / "extra.parquet")
    again = runner.execute()
    assert not again.reused and runner.simulated == 2
    assert not (again.directory / "extra.parquet").exists()
