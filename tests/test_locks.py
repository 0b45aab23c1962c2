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

from hotline.simulate.supervise import supervise


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
        wait_for(lambda: children(step.pid), "the simulator to start")
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
