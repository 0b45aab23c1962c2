"""What counts as a successful guest run, from the console log alone."""

import json

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


def test_the_clocksource_is_the_kernels_last_choice():
    switches = ("[    0.5] clocksource: Switched to clocksource tsc-early\n"
                "[    1.6] clocksource: Switched to clocksource tsc\n")
    text = switches + GOOD
    assert guest_log.parse(text).clocksource == "tsc"
    assert guest_log.failure_reason(guest_log.parse(text), 4, BOTH, "tsc") is None
    early = switches.splitlines()[0] + "\n" + GOOD
    assert guest_log.failure_reason(guest_log.parse(early), 4, BOTH, "tsc") is None
    hpet = "[    0.5] clocksource: Switched to clocksource hpet\n" + GOOD
    assert guest_log.failure_reason(guest_log.parse(hpet), 4, BOTH, "tsc") == (
        "the guest kept time with the hpet clocksource, not the tsc its command line asks for")
    # Asked for nothing, the kernel's choice stands.
    assert reason(hpet) is None


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


def counters_line(workload="forkstorm", *, adds=(10, 5), removes=(8,), mapped=7, miss=0,
                  chain_entries=None):
    since = {"rmap_add_fork": adds[0], "rmap_add_fault": adds[1],
             "rmap_remove_zap": removes[0], "chain_miss": miss}
    check = {"mapped_ptes": mapped}
    if chain_entries is not None:
        check["chain_entries"] = chain_entries
    body = json.dumps({"counters": {"rmap_add_fork": 3, "chain_lock": 9},
                       "since_boot": since, "check": check}, separators=(",", ":"))
    return f'hotline-counters: {{"workload":"{workload}",{body[1:]}\n'


def with_counters(line):
    return GOOD.replace("hotline: workload forkstorm end status=0\n",
                        "hotline: workload forkstorm end status=0\n" + line)


def test_counters_are_parsed_per_workload():
    report = guest_log.parse(with_counters(counters_line()))
    assert report.counters["forkstorm"]["counters"] == {"rmap_add_fork": 3, "chain_lock": 9}
    assert report.counters["forkstorm"]["check"] == {"mapped_ptes": 7}
    assert reason(with_counters(counters_line())) is None


def test_counters_self_checks_fail_the_run():
    assert reason(with_counters(counters_line(miss=2))) == \
        "kernel self-check after forkstorm: 2 rmap removes found no pte_chain entry"
    assert reason(with_counters(counters_line(mapped=6))) == (
        "kernel self-check after forkstorm: rmap counters unbalanced: adds - removes = 7 "
        "since boot, but 6 PTE mappings of order-0 pages exist")
    assert reason(with_counters(counters_line(chain_entries=5))) == \
        "kernel self-check after forkstorm: 5 pte_chain entries for 7 PTE mappings"


def test_unparseable_counters_line():
    assert reason(with_counters("hotline-counters: {nope}\n")).startswith(
        "the guest reported: unparseable counters line")
