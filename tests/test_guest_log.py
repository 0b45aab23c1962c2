"""What counts as a successful guest run, from the console log alone."""

from hotline.simulate import guest_log

GOOD = """\
[    0.123456] smp: Brought up 1 node, 4 CPUs
hotline: cpus-online=0-3 count=4
hotline: workload forkstorm begin
hotline-summary: {"workload":"forkstorm","instances":4,"iterations":10,"loops_completed":40}
hotline: workload forkstorm end status=0
hotline: done
"""


def reason(text, cpus=4):
    return guest_log.failure_reason(guest_log.parse(text), cpus)


def test_good_log():
    report = guest_log.parse(GOOD)
    assert report.cpus_brought_up == 4 and report.cpus_online == 4
    assert report.summary["loops_completed"] == 40
    assert reason(GOOD) is None


def test_panic():
    text = GOOD.replace("hotline: done", "[    1.0] Kernel panic - not syncing: VFS: Unable to mount")
    assert reason(text) == "the guest kernel panicked or oopsed"


def test_unknown_workload_error_line():
    text = "hotline: cpus-online=0-3 count=4\nhotline: error: unknown workload 'x'; known: forkstorm\nhotline: done\n"
    assert reason(text) == "the guest reported: unknown workload 'x'; known: forkstorm"


def test_wrong_cpu_count_missing_summary_and_bad_status():
    assert "3 CPUs came online" in reason(GOOD.replace("count=4", "count=3"))
    no_summary = "".join(l + "\n" for l in GOOD.splitlines() if "summary" not in l)
    assert reason(no_summary) == "the workload printed no hotline-summary line"
    assert "status 1" in reason(GOOD.replace("status=0", "status=1"))


def test_never_finished():
    assert reason(GOOD.replace("hotline: done\n", "")) == "the guest never reached the end of its init"
