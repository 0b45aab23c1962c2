"""Reading the guest's serial console log: what the kernel and the hotline
init said, and whether the run reached its end."""

import json
import re
from dataclasses import dataclass, field

PANIC = re.compile(r"Kernel panic|BUG: |Oops|general protection fault")
CPUS_BROUGHT_UP = re.compile(r"smp: Brought up \d+ nodes?, (\d+) CPUs?")
INIT_CPUS = re.compile(r"^hotline: cpus-online=(\S+) count=(\d+)", re.M)
ERROR = re.compile(r"^hotline: error: (.*)$", re.M)
WORKLOAD_END = re.compile(r"^hotline: workload (\S+) end status=(\d+)", re.M)
SUMMARY = re.compile(r"^hotline-summary: (\{.*\})\s*$", re.M)
DONE = re.compile(r"^hotline: done", re.M)


@dataclass
class GuestReport:
    cpus_brought_up: int | None = None      # as the kernel says at boot
    cpus_online: int | None = None          # as the init counted in /proc/cpuinfo
    statuses: dict[str, int] = field(default_factory=dict)      # workload: exit status
    summaries: dict[str, dict] = field(default_factory=dict)    # workload: its summary
    errors: list[str] = field(default_factory=list)
    panicked: bool = False
    done: bool = False


def parse(text: str) -> GuestReport:
    report = GuestReport()
    if m := CPUS_BROUGHT_UP.search(text):
        report.cpus_brought_up = int(m.group(1))
    if m := INIT_CPUS.search(text):
        report.cpus_online = int(m.group(2))
    report.statuses = {name: int(status) for name, status in WORKLOAD_END.findall(text)}
    for line in SUMMARY.findall(text):
        try:
            summary = json.loads(line)
            report.summaries[summary["workload"]] = summary
        except (json.JSONDecodeError, KeyError, TypeError):
            report.errors.append(f"unparseable summary line: {line}")
    report.errors += ERROR.findall(text)
    report.panicked = bool(PANIC.search(text))
    report.done = bool(DONE.search(text))
    return report


def failure_reason(report: GuestReport, cpus_expected: int,
                   workloads: list[str]) -> str | None:
    """Why a finished guest run does not count as a result, or None if it does."""
    if report.panicked:
        return "the guest kernel panicked or oopsed"
    if report.errors:
        return f"the guest reported: {report.errors[0]}"
    if not report.done:
        return "the guest never reached the end of its init"
    if report.cpus_online != cpus_expected:
        return f"{report.cpus_online} CPUs came online, the system spec asks for {cpus_expected}"
    for name in workloads:
        if report.statuses.get(name) != 0:
            return f"workload {name} exited with status {report.statuses.get(name)}"
        if name not in report.summaries:
            return f"workload {name} printed no hotline-summary line"
    return None
