"""What counts as a successful guest run, from the console log alone."""

from hotline.simulate import guest_log

GOOD = """\
[    0.123456] smp: Brought up 1 node, 4 CPUs
hotline: cpus-online=0-3 count=4
hotline: workload forkstorm begin
hotline-summary: {"workload":"forkstorm","instances":4,"iterations":10,"loops_completed":40}
hotline: workload forkstorm end status=0
hotline: workload other begin
hotline-summary: {"workload":"other","n":1}
hotline: workload other end status=0
hotline: done
"""
BOTH = ["forkstorm", "other"]


def reason(text, cpus=4, workloads=BOTH):
    return guest_log.failure_reason(guest_log.parse(text), cpus, workloads)


def test_good_log():
    report = guest_log.parse(GOOD)
    assert report.cpus_brought_up == 4 and report.cpus_online == 4
    assert report.summaries["forkstorm"]["loops_completed"] == 40
    assert report.summaries["other"] == {"workload": "other", "n": 1}
    assert report.statuses == {"forkstorm": 0, "other": 0}
    assert reason(GOOD) is None


def test_panic():
    text = GOOD.replace("hotline: done", "[    1.0] Kernel panic - not syncing: VFS: Unable to mount")
    assert reason(text) == "the guest kernel panicked or oopsed"


def test_unknown_workload_error_line():
    text = ("hotline: cpus-online=0-3 count=4\n"
            "hotline: error: unknown workload 'x'; known: forkstorm\nhotline: done\n")
    assert reason(text, workloads=["x"]) == \
        "the guest reported: unknown workload 'x'; known: forkstorm"


def test_wrong_cpu_count():
    assert "3 CPUs came online" in reason(GOOD.replace("count=4", "count=3"))


def test_each_workload_needs_status_zero_and_a_summary():
    no_summary = "".join(l + "\n" for l in GOOD.splitlines() if '"other"' not in l)
    assert reason(no_summary) == "workload other printed no hotline-summary line"
    failed = GOOD.replace("other end status=0", "other end status=1")
    assert reason(failed) == "workload other exited with status 1"
    assert reason(GOOD, workloads=["forkstorm", "third"]) == \
        "workload third exited with status None"


def test_unparseable_summary():
    text = GOOD.replace('{"workload":"other","n":1}', '{"n": 1,}')
    assert reason(text).startswith("the guest reported: unparseable summary line")


def test_never_finished():
    assert reason(GOOD.replace("hotline: done\n", "")) == \
        "the guest never reached the end of its init"
