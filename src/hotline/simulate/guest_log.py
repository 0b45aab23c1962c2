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
    workload_status: int | None = None
    summary: dict | None = None
    errors: list[str] = field(default_factory=list)
    panicked: bool = False
    done: bool = False


def parse(text: str) -> GuestReport:
    report = GuestReport()
    if m := CPUS_BROUGHT_UP.search(text):
        report.cpus_brought_up = int(m.group(1))
    if m := INIT_CPUS.search(text):
        report.cpus_online = int(m.group(2))
    if m := WORKLOAD_END.search(text):
        report.workload_status = int(m.group(2))
    if m := SUMMARY.search(text):
        try:
            report.summary = json.loads(m.group(1))
        except json.JSONDecodeError:
            report.errors.append(f"unparseable summary line: {m.group(0).strip()}")
    report.errors += ERROR.findall(text)
    report.panicked = bool(PANIC.search(text))
    report.done = bool(DONE.search(text))
    return report


def failure_reason(report: GuestReport, cpus_expected: int) -> str | None:
    """Why a finished guest run does not count as a result, or None if it does."""
    if report.panicked:
        return "the guest kernel panicked or oopsed"
    if report.errors:
        return f"the guest reported: {report.errors[0]}"
    if not report.done:
        return "the guest never reached the end of its init"
    if report.cpus_online != cpus_expected:
        return f"{report.cpus_online} CPUs came online, the system spec asks for {cpus_expected}"
    if report.workload_status != 0:
        return f"the workload exited with status {report.workload_status}"
    if report.summary is None:
        return "the workload printed no hotline-summary line"
    return None
