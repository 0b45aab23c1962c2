"""The guest kernel's command line: which root the init runs from, the fixed
addresses attribution needs, the clock the guest keeps time with, and what
the hotline init is to run (disk-images/init/init reads the hotline.*
words).  Only the markers and the clock depend on the backend."""

ROOTS = ("initramfs", "disk")

# The words that make the kernel keep time with a clocksource.  The TSC is
# the one a real machine uses; the kernel believes it synchronized across
# CPUs only on an Intel CPU or one that says its TSC is invariant, neither
# of which QEMU's TCG CPU is, so without tsc=reliable it marks the TSC
# unstable and reads the HPET instead, whose driver serialises every read
# with a lock (hpet.c's `hpet`): a line all CPUs write, which then shows in
# the results as a shared line no real machine has.  tsc=reliable also
# skips the boot-time sync test and the watchdog that checks the TSC
# against the HPET.
CLOCKSOURCES = {None: [], "tsc": ["clocksource=tsc", "tsc=reliable"]}


def kernel_command_line(workloads: list[tuple[str, dict[str, int]]], root: str = "initramfs",
                        markers: str = "nop", clocksource: str | None = None) -> str:
    """The kernel command line that runs `workloads`, (name, parameters) pairs,
    one after the other in one boot.  `markers` says how hotline-roi marks a
    region of interest: "nop" (the multi-byte NOPs a QEMU plugin sees) or
    "m5" (gem5's m5ops).  `clocksource` is the one the guest is to use
    (Backend.clocksource); None leaves the choice to the kernel."""
    if root not in ROOTS:
        raise ValueError(f"root {root!r} is not one of {ROOTS}")
    if clocksource not in CLOCKSOURCES:
        raise ValueError(f"clocksource {clocksource!r} is not one of {tuple(CLOCKSOURCES)}")
    # A disk root is mounted read-only so that no disk write (atime,
    # journal) lands inside a region of interest; workloads write to /tmp.
    words = ["console=ttyS0"]
    words += ["rdinit=/init"] if root == "initramfs" else ["root=/dev/sda", "ro", "init=/init"]
    # Fixed kernel and vmemmap addresses for attribution.
    words += ["nokaslr", "no5lvl"]
    words += CLOCKSOURCES[clocksource]
    # A panic reboots at once, which -no-reboot turns into an exit.
    words += ["panic=-1"]
    words += [f"hotline.markers={markers}",
              f"hotline.workload={','.join(name for name, _ in workloads)}"]
    words += [f"hotline.arg.{name}.{k}={v}"
              for name, params in workloads for k, v in sorted(params.items())]
    return " ".join(words)
