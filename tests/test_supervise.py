"""The progress line of a running simulator (hotline.simulate.supervise)."""

from hotline import console
from hotline.simulate import supervise as supervise_module
from hotline.simulate.supervise import supervise


def test_a_restored_guest_is_not_reported_booting(tmp_path, monkeypatch, capsys):
    """A gem5 run restores a checkpoint taken in the region of interest: its
    own console starts empty, and the boot's console says where the guest is."""
    monkeypatch.setattr(supervise_module, "Ticker", lambda label: console.Ticker(label, 0))
    booted = "hotline: cpus-online=0-3 count=4\nhotline: workload forkstorm begin\n"
    for before, stage in (("", "guest booting"), (booted, "workloads running on 4 CPUs")):
        ended = supervise(["sleep", "0.5"], tmp_path, log=tmp_path / "log",
                          console=tmp_path / "console", timeout_s=60, label="stand-in",
                          poll_s=0.1, console_before=before)
        lines = capsys.readouterr().err.splitlines()
        assert ended.returncode == 0 and lines
        assert all(line.endswith(stage) or f"{stage}, " in line for line in lines), lines
