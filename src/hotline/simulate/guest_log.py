"""Reading the guest's serial console log: what the kernel and the hotline
init said, and whether the run reached its end."""

import json
import re
from dataclasses import dataclass, field

from hotline.errors import PREFIX
from hotline.records.layout import GUEST_LOG

# The guest's console, as every backend leaves it in the run directory.
FILE = GUEST_LOG
PANIC = re.compile(r"Kernel panic|BUG: |Oops|general protection fault")
CPUS_BROUGHT_UP = re.compile(r"smp: Brought up \d+ nodes?, (\d+) CPUs?")
# Every switch the kernel makes; the last is the clocksource the workloads ran with.
CLOCKSOURCE = re.compile(r"clocksource: Switched to clocksource (\S+)")
INIT_CPUS = re.compile(r"^hotline: cpus-online=(\S+) count=(\d+)", re.M)
ERROR = re.compile(rf"^{re.escape(PREFIX)}(.*)$", re.M)
WORKLOAD_END = re.compile(r"^hotline: workload (\S+) end status=(\d+)", re.M)
SUMMARY = re.compile(r"^hotline-summary: (\{.*\})\s*$", re.M)
COUNTERS = re.compile(r"^hotline-counters: (\{.*\})\s*$", re.M)
DONE = re.compile(r"^hotline: done", re.M)
WORKLOAD_OUTPUT = re.compile(r"^hotline: workload (\S+) begin\s*$(.*?)"
                             r"(?=^hotline: workload \1 end|\Z)", re.M | re.S)
KERNEL_LINE = re.compile(r"^\[\s*\d+\.\d+\]")
# What the lines a program prints when it fails say: perror()'s strerror
# texts, the shell's own complaints, the kernel's OOM killer.
LOOKS_LIKE_ERROR = re.compile(
    r"error|fail|cannot|can't|unable|denied|not permitted|no space|not found|no such|"
    r"out of memory|killed|segmentation fault|illegal instruction|aborted|bus error|"
    r"invalid|too many|timed out|read-only", re.I)


@dataclass
class GuestReport:
    cpus_brought_up: int | None = None      # as the kernel says at boot
    cpus_online: int | None = None          # as the init counted in /proc/cpuinfo
    clocksource: str | None = None          # the kernel's last choice ("tsc", "hpet")
    statuses: dict[str, int] = field(default_factory=dict)      # workload: exit status
    summaries: dict[str, dict] = field(default_factory=dict)    # workload: its summary
    # workload: the kernel's counters after it (docs/kernel-counters.md):
    # {"counters": {...}, "since_boot": {...}, "check": {...}}
    counters: dict[str, dict] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    # workload: the last line of its output that looks like an error
    last_errors: dict[str, str] = field(default_factory=dict)
    panicked: bool = False
    done: bool = False


def parse(text: str) -> GuestReport:
    report = GuestReport()
    if m := CPUS_BROUGHT_UP.search(text):
        report.cpus_brought_up = int(m.group(1))
    if m := INIT_CPUS.search(text):
        report.cpus_online = int(m.group(2))
    if switches := CLOCKSOURCE.findall(text):
        report.clocksource = switches[-1]
    report.statuses = {name: int(status) for name, status in WORKLOAD_END.findall(text)}
    for line in SUMMARY.findall(text):
        try:
            summary = json.loads(line)
            report.summaries[summary["workload"]] = summary
        except (json.JSONDecodeError, KeyError, TypeError):
            report.errors.append(f"unparseable summary line: {line}")
    for line in COUNTERS.findall(text):
        try:
            entry = json.loads(line)
            report.counters[entry.pop("workload")] = entry
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
            report.errors.append(f"unparseable counters line: {line[:200]}")
    report.errors += ERROR.findall(text)
    for name, output in WORKLOAD_OUTPUT.findall(text):
        if line := last_error(output):
            report.last_errors[name] = line
    report.panicked = bool(PANIC.search(text))
    report.done = bool(DONE.search(text))
    return report


def last_error(output: str) -> str | None:
    """The last line of a workload's output that looks like an error: its
    own lines first (perror's "dumpcopy: write: No space left on device"),
    else the kernel's while it ran ("Out of memory: Killed process ...")."""
    lines = [line.strip() for line in output.splitlines()]
    lines = [line for line in lines if line and not line.startswith("hotline")]
    own = [line for line in lines if not KERNEL_LINE.match(line)]
    kernel = [KERNEL_LINE.sub("", line).strip() for line in lines if KERNEL_LINE.match(line)]
    for candidates in (own, kernel):
        for line in reversed(candidates):
            if LOOKS_LIKE_ERROR.search(line):
                return line[:300]
    return None


def counter_problem(entry: dict) -> str | None:
    """What is wrong with a kernel's self-checks after a workload, or None.
    Since boot, rmap adds minus removes must equal the PTE mappings of
    order-0 pages that _mapcount says exist, and a pte_chain kernel must
    have found every entry it unlinked and hold one entry per mapping."""
    since, check = entry.get("since_boot", {}), entry.get("check", {})
    if since.get("chain_miss"):
        return f"{since['chain_miss']} rmap removes found no pte_chain entry"
    if "mapped_ptes" in check:
        live = (sum(v for k, v in since.items() if k.startswith("rmap_add_"))
                - sum(v for k, v in since.items() if k.startswith("rmap_remove_")))
        if live != check["mapped_ptes"]:
            return (f"rmap counters unbalanced: adds - removes = {live} since boot, "
                    f"but {check['mapped_ptes']} PTE mappings of order-0 pages exist")
        if "chain_entries" in check and check["chain_entries"] != check["mapped_ptes"]:
            return (f"{check['chain_entries']} pte_chain entries for "
                    f"{check['mapped_ptes']} PTE mappings")
    if check.get("chain_mismatch_pages"):
        return f"{check['chain_mismatch_pages']} pages' pte_chains disagree with their mapcount"
    return None


def failure_reason(report: GuestReport, cpus_expected: int, workloads: list[str],
                   clocksource: str | None = None) -> str | None:
    """Why a finished guest run does not count as a result, or None if it does.
    `clocksource`: the one the command line asks for, if it asks; until the
    kernel has calibrated it, the TSC is "tsc-early", the same counter."""
    if report.panicked:
        return "the guest kernel panicked or oopsed"
    if report.errors:
        return f"the guest reported: {report.errors[0]}"
    if not report.done:
        return "the guest never reached the end of its init"
    if report.cpus_online != cpus_expected:
        return f"{report.cpus_online} CPUs came online, the system spec asks for {cpus_expected}"
    if clocksource and (report.clocksource or "").removesuffix("-early") != clocksource:
        return (f"the guest kept time with the {report.clocksource or 'unnamed'} clocksource, "
                f"not the {clocksource} its command line asks for")
    for name in workloads:
        said = f": {report.last_errors[name]}" if name in report.last_errors else ""
        if report.statuses.get(name) != 0:
            return f"workload {name} exited with status {report.statuses.get(name)}{said}"
        if name not in report.summaries:
            return f"workload {name} printed no hotline-summary line{said}"
        if name in report.counters and (problem := counter_problem(report.counters[name])):
            return f"kernel self-check after {name}: {problem}"
    return None
