"""What the instruments cost: the same fork storm under plain TCG, TCG with
an empty plugin, with roi-count and with hotline-cache (the full 4-core
model), all in one mode, one run each after another on this machine.

    .venv/bin/python bench/plugin_overhead.py [--mode deterministic|parallel]
                                              [--scale smoke|default]
                                              [--contrib-cache LIBCACHE.so]

Writes bench/results/plugin_overhead-MODE-SCALE.json and prints a table:
wall time of the whole boot + workload + shutdown, the slowdown against plain
TCG, and the region of interest's instructions, loads and stores (counted by
roi-count's run).  Wall time includes booting, which the plugins slow down
too; run it on an otherwise idle machine.

--contrib-cache times the closest peer too: QEMU's own cache plugin
(contrib/plugins/cache.c: per-core L1I, L1D and L2, LRU, no coherence, no
attribution beyond its top-miss lists), built outside hotline (bench/README.md
says how), with the system's L1 and L2 geometry and 4 cores.
"""

import argparse
import hashlib
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from hotline import specs
from hotline.disk_image import build_image
from hotline.experiment import hotline_revision
from hotline.kernel.build import build_kernel
from hotline.simulate import guest_log
from hotline.simulate.command_line import kernel_command_line
from hotline.simulate.qemu import simulator as qemu
from hotline.simulate.qemu.plugins import build_plugin, plugin_options
from hotline.workloads import load_workload

RESULTS = Path(__file__).parent / "results"
CONFIGS = [None, "empty", "roi-count", "hotline-cache"]
CONTRIB_CACHE = "qemu-contrib-cache"


def contrib_cache_options(system: specs.SystemSpec) -> list[str]:
    """contrib/plugins/cache.c's options (QEMU 10.0) for the system's caches."""
    c = system.caches
    return [f"dcachesize={c.l1d.size_kib * 1024}", f"dassoc={c.l1d.assoc}",
            f"dblksize={c.line_bytes}", f"icachesize={c.l1i.size_kib * 1024}",
            f"iassoc={c.l1i.assoc}", f"iblksize={c.line_bytes}", "l2=on",
            f"l2cachesize={c.l2.size_kib * 1024}", f"l2assoc={c.l2.assoc}",
            f"l2blksize={c.line_bytes}", f"cores={system.cpus}", "evict=lru"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="deterministic", choices=qemu.MODES)
    parser.add_argument("--scale", default="smoke", choices=["smoke", "default"])
    parser.add_argument("--contrib-cache", type=Path, metavar="LIBCACHE.so",
                        help="also time QEMU's contrib cache plugin, built from this QEMU's "
                             "contrib/plugins/cache.c")
    args = parser.parse_args()
    if args.contrib_cache and not args.contrib_cache.is_file():
        raise SystemExit(f"bench: {args.contrib_cache}: no such file; build QEMU's "
                         "contrib/plugins/cache.c as bench/README.md says")

    revision = hotline_revision()     # now: the tree may change during a long run
    system = specs.load_system("skylake-4core")
    kernel, image = build_kernel("baseline"), build_image()
    params = load_workload("forkstorm").resolve_params(args.scale, {})
    append = kernel_command_line([("forkstorm", params)])
    rows = []
    for name in CONFIGS + ([CONTRIB_CACHE] if args.contrib_cache else []):
        plugin = build_plugin(name) if name and name != CONTRIB_CACHE else None
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = Path(tmp)
            plugin_args = (plugin.qemu_argument(
                Path("plugin.out"), plugin_options(name, system, kernel.directory, args.mode)),
            ) if plugin else ()
            if name == CONTRIB_CACHE:
                plugin_args = (",".join([str(args.contrib_cache.resolve()),
                                         *contrib_cache_options(system)]),)
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
        if plugin:
            rows[-1]["build"] = plugin.key
        if name == CONTRIB_CACHE:
            rows[-1].update(options=contrib_cache_options(system), sha256=hashlib.sha256(
                args.contrib_cache.read_bytes()).hexdigest())
    for row in rows:
        row["slowdown"] = round(row["wall_seconds"] / rows[0]["wall_seconds"], 2)
    result = {"benchmark": "plugin_overhead", "mode": args.mode, "workload": "forkstorm",
              "params": params, "system": "skylake-4core", "hotline": revision,
              "host": platform.node(),
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
