"""The guest kernel's command line, the same for every backend: which root
the init runs from, the fixed addresses attribution needs, and what the
hotline init is to run (disk-images/init/init reads the hotline.* words)."""

ROOTS = ("initramfs", "disk")


def kernel_command_line(workloads: list[tuple[str, dict[str, int]]], root: str = "initramfs",
                        markers: str = "nop") -> str:
    """The kernel command line that runs `workloads`, (name, parameters) pairs,
    one after the other in one boot.  `markers` says how hotline-roi marks a
    region of interest: "nop" (the multi-byte NOPs a QEMU plugin sees) or
    "m5" (gem5's m5ops)."""
    if root not in ROOTS:
        raise ValueError(f"root {root!r} is not one of {ROOTS}")
    # A disk root is mounted read-only so that no disk write (atime,
    # journal) lands inside a region of interest; workloads write to /tmp.
    words = ["console=ttyS0"]
    words += ["rdinit=/init"] if root == "initramfs" else ["root=/dev/sda", "ro", "init=/init"]
    # Fixed kernel and vmemmap addresses for attribution.
    words += ["nokaslr", "no5lvl"]
    # A panic reboots at once, which -no-reboot turns into an exit.
    words += ["panic=-1"]
    words += [f"hotline.markers={markers}",
              f"hotline.workload={','.join(name for name, _ in workloads)}"]
    words += [f"hotline.arg.{name}.{k}={v}"
              for name, params in workloads for k, v in sorted(params.items())]
    return " ".join(words)
