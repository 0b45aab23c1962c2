"""hotline probed as a hostile user would: every input that cannot
work ends in one line naming the file or key, what is wrong and how to fix
it, a non-zero exit, and nothing recorded as a valid result.  Nothing here
boots: the simulator is a stand-in where a run is needed."""

import errno
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from hotline import cli, experiment, paths, sealed, specs
from hotline.analysis.results import Results
from hotline.errors import HotlineError
from hotline.records import layout, manifest as run_record
from hotline.results import schema
from hotline.simulate import guest_log
from hotline.simulate.qemu import simulator as qemu
from hotline.sweep import engine, gather, workflow
from hotline.workloads import load_workload
from tests.made_runs import planned_inputs, write_run
from tests.conftest import GOOD, TABLES, Stand_in, fails, journal, out_dir, rejected, started

# 3. [[also]] groups are validated like the experiment's own lists.

@pytest.mark.parametrize("group, key, what", [
    ('variants = ["baseline", "no-such-variant"]', "also.0.variants.1",
     "unknown variant 'no-such-variant'"),
    ('systems = ["vax"]', "also.0.systems.0", "unknown system 'vax'"),
    ('workloads = [{ name = "nope" }]', "also.0.workloads.0", "unknown workload 'nope'"),
    ('workloads = [{ name = "forkstorm", scale = "huge" }]', "also.0.workloads.0",
     "unknown scale 'huge'"),
    ('workloads = [{ name = "forkstorm", params = { forks = 2 } }]', "also.0.workloads.0",
     "unknown parameter 'forks'"),
])
def test_also_groups_are_checked_and_errors_name_the_key(tmp_path, capsys, group, key, what):
    text = GOOD + "[[also]]\n" + group + "\n"
    message = rejected(tmp_path, text)
    assert f"key '{key}'" in message and what in message
    assert what in fails(capsys, "check", str(tmp_path / "exp.toml"))


def test_a_second_also_group_is_named_by_its_index(tmp_path):
    text = GOOD + '[[also]]\nsystems = ["pentium3-4way"]\n[[also]]\nvariants = ["nope"]\n'
    assert "key 'also.1.variants.0'" in rejected(tmp_path, text)


# 4. Tracebacks become one line.

def test_a_spec_that_is_a_directory(tmp_path, capsys):
    err = fails(capsys, "check", str(tmp_path))
    assert f"{tmp_path}: a directory, not a TOML file" in err


def test_a_spec_that_is_not_utf8(tmp_path, capsys):
    path = tmp_path / "exp.toml"
    path.write_bytes(GOOD.encode() + b'# caf\xe9\n')
    err = fails(capsys, "check", str(path))
    assert f"{path}: not UTF-8 text (byte 0xe9" in err


@pytest.mark.parametrize("variable", ["HOTLINE_RESULTS", "HOTLINE_CACHE"])
def test_a_tree_variable_naming_a_file(tmp_path, monkeypatch, variable):
    file = tmp_path / "f"
    file.write_text("")
    for value, what in ((file, "is a file"), (file / "below", f"cannot be created: {file} is a file")):
        monkeypatch.setenv(variable, str(value))
        with pytest.raises(HotlineError) as e:
            paths.results_dir() if variable == "HOTLINE_RESULTS" else paths.cache_dir()
        assert str(e.value) == (f"{variable}={value}: {what}, not a directory; point "
                                f"{variable} at a directory")


def test_results_variable_naming_a_file_via_the_cli(tmp_path, monkeypatch, capsys):
    (tmp_path / "f").write_text("")
    monkeypatch.setenv("HOTLINE_RESULTS", str(tmp_path / "f"))
    assert f"HOTLINE_RESULTS={tmp_path / 'f'}: is a file" in fails(capsys, "report", "some-run")


def test_a_read_only_results_tree(tmp_path, monkeypatch):
    tree = tmp_path / "ro"
    tree.mkdir()
    tree.chmod(0o555)
    monkeypatch.setenv("HOTLINE_RESULTS", str(tree / "results"))
    if os.geteuid() == 0:
        # root writes anywhere but on read-only mounts: say what a user hears.
        real = os.access
        monkeypatch.setattr(paths.os, "access", lambda p, mode: real(p, mode) and
                            Path(p) != tree)
    with pytest.raises(HotlineError, match=f"HOTLINE_RESULTS={tree / 'results'}: cannot be "
                                           f"created: {tree} is not writable"):
        paths.results_dir()


def test_a_full_disk_while_writing_the_manifest(tmp_path, monkeypatch):
    runner = Stand_in(tmp_path, monkeypatch)
    write_bytes = Path.write_bytes

    def full(self, *args, **kwargs):
        if self.name.startswith("manifest.json"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return write_bytes(self, *args, **kwargs)
    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(HotlineError) as e:
        runner.execute()
    assert "\n" not in str(e.value)
    assert f"run {runner.run.run_id}: its manifest could not be written" in str(e.value)
    assert "No space left on device" in str(e.value)
    # Nothing that looks like a result, nor a half-made one.
    assert list(runner.out.iterdir()) == []


def test_a_run_with_a_damaged_manifest_is_made_again(tmp_path, monkeypatch):
    runner = Stand_in(tmp_path, monkeypatch)
    first = runner.execute()
    assert first.failure is None and runner.simulated == 1
    assert runner.execute().reused and runner.simulated == 1
    (first.directory / "manifest.json").write_text('{"run_id": "trunc')
    again = runner.execute()
    assert not again.reused and runner.simulated == 2
    assert run_record.read(again.directory).status == "ok"


def corrupt_run(tmp_path) -> Path:
    run = tmp_path / "results" / "exp" / "r1"
    run.mkdir(parents=True)
    (run / "manifest.json").write_text('{"run_id": "r1", "status": "ok", "tab')
    return run


def test_report_of_a_damaged_manifest(tmp_path, capsys):
    run = corrupt_run(tmp_path)
    err = fails(capsys, "report", str(run))
    assert f"{run / 'manifest.json'}: unreadable (" in err
    assert f"the run is damaged: delete {run} and run its experiment again" in err


def report_ready_run(tmp_path) -> Path:
    """A run directory whose manifest says it has tables, and has them
    (empty, with the columns hotline-cache's tables have)."""
    return write_run(tmp_path / "results" / "exp" / "r1",
                     {"status": "ok", "failure": None,
                      "tables": {n: f"{n}.parquet" for n in TABLES}},
                     {name: pd.DataFrame({c: [] for c in columns})
                      for name, columns in TABLES.items()})


def test_report_of_a_corrupt_table(tmp_path, capsys):
    run = report_ready_run(tmp_path)
    (run / "coherence.parquet").write_bytes(b"PAR1 not really")
    err = fails(capsys, "report", str(run))
    assert f"{run / 'coherence.parquet'}: 15 bytes where " in err
    assert f"the run is damaged: delete {run} and run its experiment again" in err


def test_report_of_a_table_of_another_schema(tmp_path, capsys):
    run = report_ready_run(tmp_path)
    manifest = json.loads((run / "manifest.json").read_text())
    write_run(run, manifest, {"misses": pd.DataFrame({"run": ["r1"], "pc": [1]})})
    err = fails(capsys, "report", str(run))
    assert f"{run / 'misses.parquet'}: lacks the column(s) cpu, space, kind" in err


def test_corrupt_index_in_analysis(tmp_path):
    (tmp_path / "runs.parquet").write_bytes(b"PAR1\x00\x00garbage")
    with pytest.raises(HotlineError) as e:
        Results(tmp_path)
    assert str(e.value).startswith(f"{tmp_path / sealed.INDEX_SEAL}: missing, so nothing says")
    # Sealed as it is, it is read, and refused for what it is.
    sealed.seal_index(tmp_path, "runs.parquet")
    with pytest.raises(HotlineError) as e:
        Results(tmp_path)
    assert str(e.value).startswith(f"{tmp_path / 'runs.parquet'}: not a readable Parquet")
    assert "\n" not in str(e.value)
    pd.DataFrame({"run_id": ["r1"]}).to_parquet(tmp_path / "runs.parquet")
    sealed.seal_index(tmp_path, "runs.parquet")
    with pytest.raises(HotlineError, match="runs.parquet: lacks the column"):
        Results(tmp_path)


def test_gather_sets_aside_a_run_whose_table_is_corrupt(sandbox):  # noqa: F811
    out = out_dir(sandbox)
    sweep = workflow.load_sweep(sandbox)
    good, bad = sweep.runs[0].run_id, sweep.runs[1].run_id
    for run_id in (good, bad):
        write_run(out / run_id, {"inputs": planned_inputs(sweep.spec_path, run_id)},
                  {"misses": pd.DataFrame({"run": [run_id], "pc": [1]})})
        (out / layout.RECORDS).mkdir(parents=True, exist_ok=True)
        (out / layout.record_path(run_id)).write_text(json.dumps(
            {"status": "ok", "failure": None, "directory": run_id, "guest_log": None,
             "step_log": layout.log_path(run_id)}))
    (out / bad / "misses.parquet").write_bytes(b"PAR1 truncated")
    frame = gather.gather(sweep.spec_path, out).set_index("run_id")
    assert frame.loc[good, "status"] == "ok" and frame.loc[bad, "status"] == "failed"
    assert frame.loc[bad, "failure"].startswith(
        f"{out / bad / 'misses.parquet'}: 14 bytes where ")
    assert list(pd.read_parquet(out / "misses.parquet")["run"]) == [good]
    # No directory named as a valid result is left, and the record says failed.
    assert not (out / bad).exists() and (out / f"{bad}.failed").is_dir()
    assert json.loads((out / layout.record_path(bad)).read_text())["status"] == "failed"


def test_a_sweep_heals_a_run_whose_manifest_was_damaged(sandbox, capfd):  # noqa: F811
    assert engine.run_sweep(sandbox, jobs=2) == 0
    out = out_dir(sandbox)
    damaged = workflow.load_sweep(sandbox).runs[0].run_id
    (out / damaged / "manifest.json").write_text("{")
    capfd.readouterr()
    # The next sweep says which run is damaged and why, makes it again, and
    # nothing else.
    before = time.time()
    assert engine.run_sweep(sandbox, jobs=2) == 0
    err = capfd.readouterr().err
    assert f"run {damaged}: FAILED: {out / damaged / 'manifest.json'}: unreadable (" in err
    assert started(sandbox, before) == [damaged]
    assert (pd.read_parquet(out / layout.INDEX).status == "ok").all()
    # The attempt set aside keeps its record, beside the new attempt's.
    assert json.loads((out / layout.record_path(damaged)).read_text())["status"] == "failed"
    assert json.loads((out / layout.record_path(damaged, 2)).read_text())["status"] == "ok"


def test_a_sweep_with_an_unreadable_record(sandbox, capfd):  # noqa: F811
    assert engine.run_sweep(sandbox, jobs=2) == 0
    out = out_dir(sandbox)
    unreadable = workflow.load_sweep(sandbox).runs[1].run_id
    (out / layout.record_path(unreadable)).write_text("{")
    capfd.readouterr()
    # No traceback: the record is removed, said so, and its step run again,
    # which finds the run's result unchanged.
    before = time.time()
    assert engine.run_sweep(sandbox, jobs=2) == 0
    err = capfd.readouterr().err
    assert f"run {unreadable}: {out / layout.record_path(unreadable)}: unreadable" in err
    assert [w[1:3] for w in journal(sandbox) if float(w[0]) >= before] == [["reuse", unreadable]]
    assert json.loads((out / layout.record_path(unreadable)).read_text())["status"] == "ok"


# 5. Specs accepted that cannot run.

SYSTEM = (paths.CONFIGS / "systems" / "skylake-4core.toml").read_text()


def system(tmp_path, monkeypatch, **values):
    text = SYSTEM
    for key, value in values.items():
        text = "\n".join(f"{key} = {value}" if line.startswith(f"{key} =") else line
                         for line in text.splitlines())
    configs = tmp_path / "configs"
    (configs / "systems").mkdir(parents=True, exist_ok=True)
    (configs / "systems" / "t.toml").write_text(text)
    monkeypatch.setattr(paths, "CONFIGS", configs)
    return configs / "systems" / "t.toml"


def test_memory_beyond_what_qemu_can_give(tmp_path, monkeypatch):
    path = system(tmp_path, monkeypatch, memory_mib=100000000)
    with pytest.raises(HotlineError) as e:
        specs.load_system("t")
    assert str(e.value).startswith(f"{path}: key 'memory_mib': ")
    assert f"at most {specs.QEMU_MAX_MEMORY_MIB} MiB" in str(e.value)


def test_memory_beyond_the_hosts_fails_the_run_before_it_starts(tmp_path, monkeypatch):
    runner = Stand_in(tmp_path, monkeypatch)
    monkeypatch.setattr(specs, "host_memory_mib", lambda: 1000, raising=False)
    with pytest.raises(HotlineError) as e:
        runner.execute()
    assert "key 'memory_mib': 1024 MiB is more than this host's memory (1000 MiB" in str(e.value)
    assert runner.simulated == 0 and not runner.out.exists()


def test_a_dump_that_does_not_fit_the_guests_memory(tmp_path):
    seed = load_workload("dumpcopy").scales["seed"]["file_mib"]
    text = GOOD.replace('{ name = "forkstorm", scale = "smoke" }',
                        '{ name = "dumpcopy", scale = "seed" }')
    message = rejected(tmp_path, text)
    assert f"key 'workloads.0': workload dumpcopy: file_mib = {seed} does not fit" in message
    assert "system 'skylake-4core' (systems.0)" in message
    # In a group, on the experiment's systems.
    text = GOOD + '[[also]]\nworkloads = [{ name = "dumpcopy", params = { file_mib = 600 } }]\n'
    assert "key 'also.0.workloads.0'" in rejected(tmp_path, text)
    # The bound: the largest file that fits is accepted, and the memory the
    # error asks for is enough.  (A boot on 512 MiB: a file of the bound,
    # 203 MiB, was copied; one of 246 MiB failed with "No space left on
    # device", tmpfs holding 245 MiB.)
    from hotline.workloads import guest_tmpfs_mib, memory_for_tmpfs_mib
    (tmp_path / "exp.toml").write_text(text.replace("600", str(guest_tmpfs_mib(1024))))
    specs.load_experiment(tmp_path / "exp.toml")
    assert f"memory_mib >= {memory_for_tmpfs_mib(seed)} or a smaller file_mib" in message
    assert guest_tmpfs_mib(memory_for_tmpfs_mib(seed)) >= seed
    assert guest_tmpfs_mib(memory_for_tmpfs_mib(seed) - 1) < seed
    assert guest_tmpfs_mib(512) == 203


@pytest.mark.parametrize("line", ["repeats = true", 'timeout_s = "60"', "repeats = 1.0"])
def test_integers_are_integers(tmp_path, line):
    key = line.split()[0]
    assert f"key '{key}': Input should be a valid integer, not " in rejected(tmp_path,
                                                                             GOOD + line + "\n")


def test_workload_parameters_are_integers(tmp_path):
    text = GOOD.replace('scale = "smoke"', 'scale = "smoke", params = { instances = true }')
    assert "key 'workloads.0.params.instances': Input should be a valid integer, not true" \
        in rejected(tmp_path, text)


def test_system_integers_are_integers(tmp_path, monkeypatch):
    system(tmp_path, monkeypatch, cpus="true")
    with pytest.raises(HotlineError, match="key 'cpus': Input should be a valid integer, not true"):
        specs.load_system("t")


def test_workload_names_are_names_not_paths(tmp_path):
    # disk-images/workloads/../workloads/forkstorm/workload.toml exists.
    text = GOOD.replace('"forkstorm"', '"../workloads/forkstorm"')
    assert "unknown workload '../workloads/forkstorm'" in rejected(tmp_path, text)


def test_a_workload_definition_with_a_boolean_bound(tmp_path, monkeypatch):
    from hotline import workloads
    definition = tmp_path / "w" / "workload.toml"
    definition.parent.mkdir()
    definition.write_text('description = "w"\n[params.n]\ndescription = "n"\nmin = true\n'
                          'max = 4\n[scales]\nsmoke = { n = 1 }\n')
    monkeypatch.setattr(workloads, "WORKLOADS", tmp_path)
    with pytest.raises(HotlineError, match=f"{definition}: key 'params.n.min': Input should "
                                           "be a valid integer, not true"):
        workloads.load_workload("w")


# 6. Reasons that show the cause.

def test_a_simulator_killed_by_someone_else(tmp_path):
    outcome = qemu.run(["sh", "-c", "kill -KILL $$"], tmp_path, cpus=1, workloads=["w"],
                       timeout_s=60, label="t")
    assert outcome.failure.startswith("QEMU was killed by SIGKILL, not by hotline")


def test_a_failed_workload_says_what_the_guest_said():
    log = ("hotline: cpus-online=0 count=1\nhotline: workload dumpcopy begin\n"
           "[    4.000001] random: crng init done\n"
           "dumpcopy: write: No space left on device\n"
           "hotline: workload dumpcopy end status=1\nhotline: done\n")
    assert guest_log.failure_reason(guest_log.parse(log), 1, ["dumpcopy"]) == \
        "workload dumpcopy exited with status 1: dumpcopy: write: No space left on device"


def test_report_of_a_failed_run(tmp_path, capsys):
    run = tmp_path / "results" / "exp" / "r1.failed"
    run.mkdir(parents=True)
    reason = "workload dumpcopy exited with status 1: dumpcopy: write: No space left on device"
    (run / "manifest.json").write_text(json.dumps(
        {"run_id": "r1", "status": "failed", "failure": reason, "tables": {}}))
    err = fails(capsys, "report", str(run))
    assert f"{run}: the run failed: {reason}; a failed run has no tables to report" in err


# ---- Input that must not escape: paths, names, the shell ---------------------

def clean_tree(path: Path) -> Path:
    """A kernel source tree the workflow accepts: a clean git tree (its key
    is all the stand-in steps need of it)."""
    (path / "mm").mkdir(parents=True)
    (path / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 0\nEXTRAVERSION =\n")
    (path / "mm" / "memory.c").write_text("")
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "tree"], check=True)
    return path


@pytest.mark.parametrize("name", ["$(touch {pwned})", "with space", "a: b", "#1"])
def test_a_kernel_source_path_reaches_the_steps_as_one_word(sandbox, tmp_path, name):  # noqa: F811
    pwned = tmp_path / "pwned"
    source = clean_tree(tmp_path / "k" / name.format(pwned=pwned))
    assert engine.run_sweep(sandbox, jobs=2, kernel_source=str(source)) == 0
    assert not pwned.exists()
    # The steps built the kernel of that source, each run ok.
    assert set(pd.read_parquet(out_dir(sandbox) / layout.INDEX)["status"]) == {"ok"}


@pytest.mark.parametrize("stem", ["..", ".", "my #1", "a: b", "{x}", ".hidden", "-rf"])
def test_an_experiment_named_as_no_folder_can_be_is_refused_before_anything_is_made(
        sandbox, capsys, stem):  # noqa: F811
    spec = sandbox.with_name(f"{stem}.toml")
    spec.write_text(sandbox.read_text())
    results = Path(os.environ["HOTLINE_RESULTS"])
    for argv in (["check", str(spec)], ["run", str(spec), "--dry-run"], ["run", str(spec)]):
        err = fails(capsys, *argv)
        assert f"{spec}: the experiment's name" in err and "letters, digits" in err
    # Nothing in the results tree, nor beside it.
    assert not results.exists() or not any(results.iterdir())
    assert not (results.parent / ".snakemake").exists()
    assert not (results.parent / ".sweep").exists()


@pytest.mark.parametrize("include", ["/etc/passwd", "../../x.toml", "sub/x.toml", "x.json",
                                     "/dev/zero"])
def test_an_include_is_a_spec_beside_it(tmp_path, include):
    message = rejected(tmp_path, f'include = "{include}"\n' + GOOD)
    assert "key 'include'" in message and "beside it" in message


def test_a_spec_that_is_a_device_or_huge_is_refused_without_reading_it_all(capsys):
    err = fails(capsys, "check", "/dev/zero")
    assert "/dev/zero: larger than 64 MiB" in err


def test_a_spec_of_too_many_runs_is_refused_before_its_names_are_looked_up(tmp_path,
                                                                           monkeypatch):
    looked_up = []
    monkeypatch.setattr(specs, "load_workload",
                        lambda name: looked_up.append(name) or load_workload(name))
    text = GOOD.replace('systems = ["skylake-4core"]',
                        "systems = [" + ", ".join(['"skylake-4core"'] * 200) + "]")
    message = rejected(tmp_path, text + "repeats = 100\n")
    assert "asks for 20,000 runs" in message and not looked_up


def gathered_with_run_id(tmp_path, run_id: str) -> Path:
    from tests.made_runs import write_gathered
    runs = pd.DataFrame({"run_id": [run_id], "variant": ["baseline"], "workload": ["forkstorm"],
                         "system": ["skylake-4core"], "repeat": [0], "params": ["{}"],
                         "status": ["ok"], "summary": [None], "manifest": [None]})
    return write_gathered(tmp_path / "received", runs,
                          {"misses": pd.DataFrame({"run": [run_id], "pc": [1]})})


def test_a_run_id_from_a_received_folder_never_becomes_a_path(tmp_path, capsys,
                                                              monkeypatch):
    monkeypatch.setenv("HOTLINE_RESULTS", str(tmp_path / "results"))
    escape = tmp_path / "escaped"
    received = gathered_with_run_id(tmp_path, f"../../../../../../../..{escape}")
    err = fails(capsys, "diff", str(received), "baseline", "baseline")
    assert f"{received / 'runs.parquet'}: a run id: " in err and "not a name" in err
    assert not escape.exists() and not (tmp_path / "results").exists()


def test_a_kernel_named_in_a_received_manifest_is_a_name(tmp_path):
    from hotline.kernel.build import kernel_dir
    for kernel in ({"variant": "../../../etc", "key": "0" * 64},
                   {"variant": "baseline", "key": "../../x"}):
        with pytest.raises(HotlineError, match="the run's manifest: its kernel"):
            kernel_dir({"inputs": {"kernel": kernel}})


# ---- Damaged or mixed results are not taken as valid -------------------------

def test_no_bit_flip_of_a_committed_index_is_read_as_results(tmp_path):
    """300 single-bit flips of analysis/smoke-results/runs.parquet, spread
    over the whole file (footer and metadata included): each is refused in
    one line naming the index, none read with changed values, none ends in
    a traceback."""
    import random
    copy = tmp_path / "smoke"
    shutil.copytree(paths.REPO / "analysis" / "smoke-results", copy)
    index = copy / "runs.parquet"
    original = index.read_bytes()
    Results(copy)  # as committed: read
    flips = random.Random(56).sample(range(len(original) * 8), 300)
    for bit in flips:
        damaged = bytearray(original)
        damaged[bit // 8] ^= 1 << (bit % 8)
        index.write_bytes(bytes(damaged))
        with pytest.raises(HotlineError) as e:
            Results(copy)
        assert str(e.value).startswith(f"{index}: its content is not what was written"), bit
        assert "\n" not in str(e.value)
    index.write_bytes(original)


def test_a_row_added_to_a_committed_index_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    copy = tmp_path / "smoke"
    shutil.copytree(paths.REPO / "analysis" / "smoke-results", copy)
    table = pq.read_table(copy / "runs.parquet")
    pq.write_table(pa.concat_tables([table, table.slice(0, 1)]), copy / "runs.parquet")
    with pytest.raises(HotlineError, match="runs.parquet: .* bytes where .* were written"):
        Results(copy)


def test_a_run_folder_copied_from_another_experiment_is_not_taken_as_done(
        sandbox, capfd):  # noqa: F811
    """The same run id, made with another quantum: the dry run says it
    would be made again, the run makes it again, and gathering never
    indexes the copy as this experiment's run."""
    sandbox.write_text(GOOD + '[qemu]\nplugin = "hotline-cache"\nquantum = 5000\n')
    other = sandbox.with_name("other.toml")
    other.write_text(GOOD + '[qemu]\nplugin = "hotline-cache"\nquantum = 10000\n')
    assert engine.run_sweep(sandbox, jobs=1) == 0
    (run_id,) = [r.run_id for r in workflow.load_sweep(other).runs]
    shutil.copytree(out_dir(sandbox), out_dir(other))   # the folder, records and all
    capfd.readouterr()
    # Gathered as it is, the copy is not indexed as a result of `other`.
    frame = gather.index(other, out_dir(other)).set_index("run_id")
    assert frame.loc[run_id, "status"] == "failed"
    assert "made with other conditions" in frame.loc[run_id, "failure"]
    shutil.rmtree(out_dir(other))
    shutil.copytree(out_dir(sandbox), out_dir(other))
    assert engine.run_sweep(other, dry_run=True) == 0
    assert f"run {run_id}: " in capfd.readouterr().err
    before = time.time()
    assert engine.run_sweep(other, jobs=1) == 0
    assert started(other, before) == [run_id]
    index = pd.read_parquet(out_dir(other) / layout.INDEX)
    manifest = json.loads(index["manifest"][0])
    assert index["status"][0] == "ok" and manifest["inputs"]["backend"]["quantum"] == 10000


def test_no_two_repeats_run_at_the_same_phase(tmp_path):
    """Quantum 1,000 on 4 CPUs: the 1,000 repeats a spec may ask for have
    distinct phases (a hash modulo the period gave r2 and r57 the same);
    with quantum 100 the period has 400, and a 401st repeat is refused in
    one line."""
    from hotline.simulate.qemu import Qemu
    text = GOOD + '[qemu]\nplugin = "hotline-cache"\n'
    path = tmp_path / "exp.toml"
    path.write_text("repeats = 1000\n" + text + "quantum = 1000\n")
    spec = experiment.load_spec(path)
    system = specs.load_system("skylake-4core")
    phases = [Qemu.phase(spec, system, r) for r in range(spec.repeats)]
    assert phases[0] == 0 and len(set(phases)) == 1000
    assert all(0 < p < 4000 for p in phases[1:])
    path.write_text("repeats = 400\n" + text + "quantum = 100\n")
    spec = experiment.load_spec(path)
    assert len({Qemu.phase(spec, system, r) for r in range(400)}) == 400
    message = rejected(tmp_path, "repeats = 401\n" + text + "quantum = 100\n")
    assert "401 repeats" in message and "only 400 distinct phases" in message


def test_check_says_how_repeats_differ_and_runs_the_backends_checks(tmp_path, capsys):
    path = tmp_path / "exp.toml"
    path.write_text("repeats = 3\n" + GOOD + '[qemu]\nplugin = "hotline-cache"\n')
    assert cli.main(["check", str(path)]) == 0
    assert "3 repeats, differing by the phase of the vCPU turns" in capsys.readouterr().err


# ---- `check` refuses what `run` refuses; settings where they cannot apply --

def test_a_workload_on_fewer_cpus_than_it_runs_on_is_refused(tmp_path, capsys):
    text = GOOD.replace('"skylake-4core"', '"pentium3-1way"').replace(
        '{ name = "forkstorm", scale = "smoke" }', '{ name = "cachebench", scale = "smoke" }')
    message = rejected(tmp_path, text)
    assert "workload cachebench runs on 2 CPUs; system 'pentium3-1way' (systems.0) has 1" \
        in message
    assert "workload cachebench runs on 2 CPUs" in fails(capsys, "check", str(tmp_path / "exp.toml"))


def test_a_memory_too_small_for_any_dump_says_so_without_a_negative_size(tmp_path):
    text = GOOD.replace('"skylake-4core"', '"pentium3-4way-64m"').replace(
        '{ name = "forkstorm", scale = "smoke" }', '{ name = "dumpcopy", scale = "smoke" }')
    message = rejected(tmp_path, text)
    assert "memory_mib = 64 has no room for it" in message and "-" not in message.split(
        "memory_mib = 64")[1].split(";")[0]


GEM5_SPEC = ('description = "d"\nbackend = "gem5"\nroot = "disk"\nvariants = ["baseline"]\n'
             'systems = ["pentium3-4way"]\nworkloads = [{ name = "forkstorm", scale = "smoke" }]\n')


@pytest.mark.parametrize("line", ['mode = "deterministic"', "quantum = 0"])
def test_a_qemu_setting_on_gem5_is_refused_even_at_its_default_value(tmp_path, line):
    (tmp_path / "exp.toml").write_text(GEM5_SPEC + "[qemu]\n" + line + "\n")
    with pytest.raises(HotlineError, match="key 'qemu': the settings of backend \"qemu\", but "
                                           "the experiment runs on backend \"gem5\""):
        experiment.load_spec(tmp_path / "exp.toml")


@pytest.mark.parametrize("extra", ['mode = "parallel"\nquantum = 0', "quantum = 0"])
def test_a_quantum_of_zero_where_no_quantum_applies_is_refused(tmp_path, extra):
    (tmp_path / "exp.toml").write_text(GOOD + "[qemu]\n" + extra + "\n")
    with pytest.raises(HotlineError, match="key 'qemu.quantum': bounds the vCPU turns"):
        experiment.load_spec(tmp_path / "exp.toml")


def test_gem5_pointing_at_a_text_file_is_said_as_such(tmp_path, monkeypatch):
    from hotline.simulate.gem5 import simulator as gem5
    text = tmp_path / "gem5.opt"
    text.write_text("not a program\n")
    text.chmod(0o755)
    monkeypatch.setenv("GEM5", str(text))
    with pytest.raises(HotlineError, match=r"GEM5=.*gem5.opt: not a program \(no ELF header\)"):
        gem5.gem5_binary()


def test_slim_of_a_truncated_table_names_it(tmp_path):
    from hotline.analysis import slim
    copy = tmp_path / "smoke"
    shutil.copytree(paths.REPO / "analysis" / "smoke-results", copy)
    table = copy / "rapw.parquet"
    table.write_bytes(table.read_bytes()[:1000])
    with pytest.raises(HotlineError) as e:
        slim.slim(copy, tmp_path / "slim")
    assert str(e.value).startswith(f"{table}: 1000 bytes where ") and "\n" not in str(e.value)


def test_diff_of_a_run_whose_tables_hold_none_of_it_is_one_line(tmp_path):
    from hotline.report.diff import Side
    side = Side("r1", "baseline", schema.empty(schema.TABLES["misses"]),
                schema.empty(schema.TABLES["instructions"]), schema.empty(schema.TABLES["roi"]))
    with pytest.raises(HotlineError, match="run r1: its tables hold no row of its region"):
        side.cost()


def test_check_refuses_what_gem5_would_refuse_before_building(tmp_path, capsys, monkeypatch):
    """gem5's own checks (check_experiment) run in `check` too: repeats on
    DDR4 memory, which has no latency to jitter, are refused there as
    `run` refuses them."""
    monkeypatch.setenv("GEM5", str(shutil.copy("/bin/true", tmp_path / "gem5.opt")))
    path = tmp_path / "exp.toml"
    path.write_text(GEM5_SPEC.replace('"pentium3-4way"', '"skylake-4core-timing"') +
                    "repeats = 3\n")
    err = fails(capsys, "check", str(path))
    assert f"{path}: system 'skylake-4core-timing': " in err


def test_a_failed_gem5_boot_names_its_logs_where_they_will_be(tmp_path, monkeypatch):
    """The boot runs in the run's .RUN-ID.running/boot/, which is renamed
    RUN-ID.failed/ when the run fails: the reason names the logs by their
    place in the run's directory, not by the folder that is about to go."""
    from types import SimpleNamespace

    from hotline.simulate.gem5 import checkpoints
    monkeypatch.setenv("HOTLINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(checkpoints.gem5_params, "boot_params", lambda machine, cpt: {})
    monkeypatch.setattr(checkpoints.gem5_params.run_params, "to_dict", lambda params: {})
    monkeypatch.setattr(checkpoints, "write_command", lambda *args: None)
    monkeypatch.setattr(checkpoints, "supervise", lambda *args, **kwargs: SimpleNamespace())
    monkeypatch.setattr(checkpoints, "_boot_failure", lambda *args: "gem5 exited with status 1")
    work = tmp_path / "results" / "exp" / layout.running_name("r1")
    checkpoint, failure = checkpoints.ensure_checkpoint(
        {"machine": "m"}, machine=None, gem5=Path("/bin/true"), work=work, timeout_s=1,
        label="run r1", cpus=4, workloads=["forkstorm"])
    assert checkpoint is None
    assert failure == "gem5 boot (logs in the run directory's boot/): gem5 exited with status 1"
    assert ".running" not in failure
