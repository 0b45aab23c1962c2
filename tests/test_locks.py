"""One writer per experiment's results directory, and no process of a run
outliving the one that answers for it: a sweep whose driver, Snakemake or
step is killed, a simulator whose supervisor is killed, two demos at once.
Nothing boots: the sweeps' steps are stand-ins (tests/sweep_stand_in.py)
and the simulator is sleep."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from hotline import cli, experiment, paths
from hotline.experiment import execution
from hotline.errors import HotlineError
from hotline.records import lock as sweep_lock
from hotline.records import layout
from hotline.simulate.supervise import supervise
from tests.conftest import out_dir


def children(pid: int) -> list[int]:
    found = []
    # Each thread's: Snakemake starts its steps from worker threads.
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except FileNotFoundError:
            pass
    return found


def descendants(pid: int) -> list[int]:
    found = []
    for child in children(pid):
        found += [child, *descendants(child)]
    return found


def command_line(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().split("\0")
    except FileNotFoundError:
        return []


def alive(pid: int) -> bool:
    """Running, not a zombie (an orphan's new parent may not reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(condition, what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.1)


def kill(*pids: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def stop(driver: subprocess.Popen) -> None:
    """Whatever is left of a sweep: its processes are in the driver's group."""
    try:
        os.killpg(driver.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    driver.wait()


def start_sweep(spec: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "hotline", "run", str(spec), "--jobs", "1"],
                            cwd=paths.REPO, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run_again(spec: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hotline", "run", str(spec), "--jobs", "1"],
                          cwd=paths.REPO, capture_output=True, text=True, timeout=300)


def snakemake_of(driver: subprocess.Popen) -> int:
    def started():
        return [p for p in children(driver.pid) if "snakemake" in command_line(p)]
    wait_for(started, "Snakemake to start")
    return started()[0]


def running_step(spec: Path, snakemake: int) -> int:
    """The pid of the run step in flight (the stand-in's python)."""
    def steps():
        return [p for p in descendants(snakemake) if command_line(p)[2:3] == ["run"]]
    wait_for(steps, "a run step to start")
    return steps()[0]


def refusal(result: subprocess.CompletedProcess | str) -> str:
    """The one line that refuses a second writer."""
    err = result if isinstance(result, str) else result.stderr
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hotline: error: "), err
    assert str(out_dir_lock()) in lines[0], err
    return lines[0]


def out_dir_lock() -> Path:
    return Path(os.environ["HOTLINE_RESULTS"]).resolve() / "sweeptest" / ".sweep" / "lock"


def test_the_sweep_stays_locked_while_any_of_it_runs(sandbox, monkeypatch):  # noqa: F811
    """SIGKILL the driver: Snakemake goes on, and holds the lock; SIGKILL
    Snakemake: the step in flight goes on, and holds it; once it ends the
    sweep can be run again, and resumes."""
    until = sandbox.with_name("simulations may end")
    monkeypatch.setenv("STAND_IN_UNTIL", str(until))
    driver = start_sweep(sandbox)
    try:
        snakemake = snakemake_of(driver)
        step = running_step(sandbox, snakemake)
        # A step signs the lock a moment after it starts; on a loaded host
        # that moment can come after the second run's look.
        wait_for(lambda: step in [pid for pid, _ in sweep_lock.holders(out_dir_lock().parent.parent)],
                 "the step to sign the lock")
        driver.kill()
        driver.wait()

        line = refusal(run_again(sandbox))
        assert f"snakemake (pid {snakemake})" in line and f"(pid {driver.pid})" not in line
        assert f"kill {snakemake} {step}" in line or f"kill {step} {snakemake}" in line
        # The in-process writer (./hotline demo's) is refused the same way.
        monkeypatch.setattr(execution, "build_image", lambda: pytest.fail("not refused"))
        with pytest.raises(HotlineError, match=f"snakemake \\(pid {snakemake}\\)"):
            experiment.run_experiment(sandbox)

        kill(snakemake)
        wait_for(lambda: not alive(snakemake), "Snakemake to die")
        assert alive(step)
        line = refusal(run_again(sandbox))
        assert f"sweep step run (pid {step})" in line and "snakemake" not in line

        until.touch()
        wait_for(lambda: not alive(step), "the orphaned step to end")
        again = run_again(sandbox)
        assert again.returncode == 0, again.stderr
        assert (pd.read_parquet(out_dir(sandbox) / layout.INDEX).status == "ok").all()
    finally:
        stop(driver)


def test_sigterm_to_the_driver_stops_every_step(sandbox, monkeypatch):  # noqa: F811
    """Snakemake, sent SIGINT alone, lets its steps run on: the driver
    stops them too."""
    monkeypatch.setenv("STAND_IN_SLEEP", "60")
    driver = start_sweep(sandbox)
    try:
        snakemake = snakemake_of(driver)
        step = running_step(sandbox, snakemake)
        driver.terminate()
        # engine._stop: two 30 s waits for Snakemake, then SIGKILL; a loaded
        # host may need all of them.
        assert driver.wait(timeout=90) == 130
        wait_for(lambda: not alive(step) and not alive(snakemake), "the sweep to stop", 10)
    finally:
        stop(driver)


SUPERVISED = """
import sys
from pathlib import Path
from hotline.simulate.supervise import supervise
run_dir = Path(sys.argv[1])
supervise(["sleep", "300"], run_dir, log=run_dir / "log", console=run_dir / "console",
          timeout_s=600, label="stand-in simulator", poll_s=0.1)
"""


def test_a_killed_step_takes_its_simulator_along(tmp_path):
    step = subprocess.Popen([sys.executable, "-c", SUPERVISED, str(tmp_path)])
    simulator = None
    try:
        # Started: forked and exec'd (between the two the child's command
        # line is still its parent's, as CI once caught it).
        wait_for(lambda: any(command_line(c)[:1] == ["sleep"] for c in children(step.pid)),
                 "the simulator to start")
        (simulator,) = children(step.pid)
        assert command_line(simulator)[:2] == ["sleep", "300"]
        step.kill()
        step.wait()
        wait_for(lambda: not alive(simulator), "the simulator to die with its step", 10)
    finally:
        step.kill()
        if simulator:
            kill(simulator)


def test_a_simulator_killed_on_timeout_takes_what_it_started(tmp_path):
    ended = supervise(["sh", "-c", "sleep 300 & echo $! > started; wait"], tmp_path,
                      log=tmp_path / "log", console=tmp_path / "console", timeout_s=1,
                      label="stand-in simulator", poll_s=0.1)
    started = int((tmp_path / "started").read_text())
    try:
        assert ended.killed_for == "timed out after 1 s"
        wait_for(lambda: not alive(started), "the simulator's child to die", 10)
    finally:
        kill(started)


FIRST_DEMO = """
import sys, time
from hotline import cli
from hotline.experiment import execution
def build_image():
    print("building", flush=True)
    time.sleep(300)
execution.build_image = build_image
sys.exit(cli.main(["demo"]))
"""


def test_two_demos_at_once(tmp_path, monkeypatch, capfd):
    """The second is refused before it builds anything, naming the first."""
    monkeypatch.setenv("HOTLINE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("HOTLINE_CACHE", str(tmp_path / "cache"))
    first = subprocess.Popen([sys.executable, "-c", FIRST_DEMO], cwd=paths.REPO,
                             stdout=subprocess.PIPE, text=True)

    class Built(Exception):
        pass

    def build_image():
        raise Built
    monkeypatch.setattr(execution, "build_image", build_image)
    try:
        assert first.stdout.readline() == "building\n"
        capfd.readouterr()
        assert cli.main(["demo"]) == 1
        err = capfd.readouterr().err
        lock = (tmp_path / "results" / "demo" / ".sweep" / "lock").resolve()
        assert err == (f"hotline: error: {lock}: the experiment demo is being written by "
                       f"hotline demo (pid {first.pid}); wait for it to end or stop it "
                       f"(kill {first.pid}), then try again\n")
    finally:
        first.kill()
        first.wait()
    # Once the first is gone, the second goes on to build.
    with pytest.raises(Built):
        cli.main(["demo"])
