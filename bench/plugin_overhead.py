"""What the instruments cost: the same fork storm under plain TCG, TCG with
an empty plugin, with roi-count and with hotline-cache (the full 4-core
model), all in one mode, one run each after another on this machine.

    .venv/bin/python bench/plugin_overhead.py [--mode deterministic|parallel]
                                              [--scale smoke|default]

Writes bench/results/plugin_overhead-MODE-SCALE.json and prints a table:
wall time of the whole boot + workload + shutdown, the slowdown against plain
TCG, and the region of interest's instructions, loads and stores (counted by
roi-count's run).  Wall time includes booting, which the plugins slow down
too; run it on an otherwise idle machine.
"""

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from hotline import specs
from hotline.disk_image import build_image
from hotline.kernel.build import build_kernel
from hotline.simulate import guest_log
from hotline.simulate.command_line import kernel_command_line
from hotline.simulate.qemu import simulator as qemu
from hotline.simulate.qemu.plugins import build_plugin, plugin_options
from hotline.workloads import load_workload

RESULTS = Path(__file__).parent / "results"
CONFIGS = [None, "empty", "roi-count", "hotline-cache"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="deterministic", choices=qemu.MODES)
    parser.add_argument("--scale", default="smoke", choices=["smoke", "default"])
    args = parser.parse_args()

    system = specs.load_system("skylake-4core")
    kernel, image = build_kernel("baseline"), build_image()
    params = load_workload("forkstorm").resolve_params(args.scale, {})
    append = kernel_command_line([("forkstorm", params)])
    rows = []
    for name in CONFIGS:
        plugin = build_plugin(name) if name else None
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = Path(tmp)
            plugin_args = (plugin.qemu_argument(
                Path("plugin.out"), plugin_options(name, system, kernel.directory, args.mode)),
            ) if plugin else ()
            cmd = qemu.command(bzimage=kernel.bzimage, image=image, root="initramfs",
                               cpus=system.cpus, memory_mib=system.memory_mib,
                               cpu_model=system.qemu.cpu_model, mode=args.mode, append=append,
                               serial_log=Path(guest_log.FILE), plugin_args=plugin_args)
            start = time.monotonic()
            outcome = qemu.run(cmd, run_dir, cpus=system.cpus, workloads=["forkstorm"],
                               timeout_s=3600, label=f"bench {name or 'plain TCG'}")
            wall = time.monotonic() - start
            if outcome.failure:
                raise SystemExit(f"bench: {name or 'plain TCG'}: {outcome.failure}")
            roi = None
            if name == "roi-count":
                line = (run_dir / "plugin.out").read_text().splitlines()[0]
                roi = {k: int(v) for k, v in (f.split("=") for f in line.split()[2:])}
        rows.append({"plugin": name or "none", "wall_seconds": round(wall, 1), "roi": roi})
    for row in rows:
        row["slowdown"] = round(row["wall_seconds"] / rows[0]["wall_seconds"], 2)
    result = {"benchmark": "plugin_overhead", "mode": args.mode, "workload": "forkstorm",
              "params": params, "system": "skylake-4core", "host": platform.node(),
              "host_cpus": os.cpu_count(), "qemu": qemu.qemu_version(),
              "kernel": kernel.key, "date": time.strftime("%Y-%m-%d"), "runs": rows}
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"plugin_overhead-{args.mode}-{args.scale}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'plugin':<15}{'wall s':>9}{'slowdown':>10}")
    for row in rows:
        print(f"{row['plugin']:<15}{row['wall_seconds']:>9}{row['slowdown']:>10}")
    roi = next(r["roi"] for r in rows if r["roi"])
    print(f"region of interest: {roi['insns']:,} instructions, {roi['loads']:,} loads, "
          f"{roi['stores']:,} stores; written to {path}")


if __name__ == "__main__":
    main()
