"""What the instruments cost: the same fork storm under plain TCG, TCG with
an empty plugin, with roi-count, with inline-count (QEMU's inline counters,
no callbacks; parallel mode only), with callbacks (hotline-cache's callbacks,
doing nothing: the floor under it) and with hotline-cache (the full 4-core
model), all in one mode, one run each after another on this machine, as many
rounds as asked (the configurations alternate within each round, since this
machine's speed drifts by 10-15% within an hour).

    .venv/bin/python bench/plugin_overhead.py [--mode deterministic|parallel]
                                              [--scale smoke|default]
                                              [--contrib-cache LIBCACHE.so]
                                              [--hotline-cache-from LABEL=PLUGIN.so ...]
                                              [--quanta N ...] [--interleave I ...]
                                              [--model-thread on|off ...]
                                              [--repeats R] [--only CONFIG ...]

Writes bench/results/plugin_overhead-MODE-SCALE[-SUFFIX].json and prints a
table: the median and range of the wall time of the whole boot + workload +
shutdown, the median slowdown against plain TCG, and the region of
interest's instructions, loads and stores (counted by roi-count's run).
Wall time includes booting, which the plugins slow down too; run it on an
otherwise idle machine.

--quanta times hotline-cache at each quantum too (deterministic mode:
instructions per vCPU turn, docs/interleaving.md; 0 is QEMU's own turns);
without it hotline-cache runs at the default.  --interleave times it with
each way of seeing the turns (turn, block: docs/specs.md) at each quantum
above 0; a label says one other than the default (hotline-cache@N/turn).
--model-thread times the woven configurations with the model on its own
host thread (on, the default) or on the vCPU thread (off; labelled
/thread-off), each value given (docs/interleaving.md).
--only keeps the named configurations (none, empty, roi-count,
inline-count, callbacks, callbacks-insn, hotline-cache, hotline-cache@N[/I],
qemu-contrib-cache).

--hotline-cache-from times a hotline-cache built elsewhere (another
revision's, to weigh a change against it: bench/README.md) with the same
options as this one, as configuration LABEL.

--contrib-cache times the closest peer too: QEMU's own cache plugin
(contrib/plugins/cache.c: per-core L1I, L1D and L2, LRU, no coherence, no
attribution beyond its top-miss lists), built outside hotline (bench/README.md
says how), with the system's L1 and L2 geometry and 4 cores; and the floor
under it, callbacks-insn (callbacks with insn=on: the peer's callbacks, one
per instruction and one per access, doing nothing).
"""

import argparse
import dataclasses
import hashlib
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from hotline import outputs, specs
from hotline.disk_image import build_image
from hotline.experiment import hotline_revision
from hotline.kernel.build import build_kernel
from hotline.simulate import guest_log
from hotline.simulate.command_line import kernel_command_line
from hotline.simulate.qemu import DEFAULT_INTERLEAVE, DEFAULT_QUANTUM, simulator as qemu
from hotline.simulate.qemu.plugins import build_plugin, plugin_options
from hotline.workloads import load_workload

RESULTS = Path(__file__).parent / "results"
CONFIGS = [None, "empty", "roi-count", "callbacks", "hotline-cache"]
CONTRIB_CACHE = "qemu-contrib-cache"
PEER_FLOOR = "callbacks-insn"          # callbacks registered as CONTRIB_CACHE registers them


def contrib_cache_options(system: specs.SystemSpec) -> list[str]:
    """contrib/plugins/cache.c's options (QEMU 10.0) for the system's caches."""
    c = system.caches
    return [f"dcachesize={c.l1d.size_kib * 1024}", f"dassoc={c.l1d.assoc}",
            f"dblksize={c.line_bytes}", f"icachesize={c.l1i.size_kib * 1024}",
            f"iassoc={c.l1i.assoc}", f"iblksize={c.line_bytes}", "l2=on",
            f"l2cachesize={c.l2.size_kib * 1024}", f"l2assoc={c.l2.assoc}",
            f"l2blksize={c.line_bytes}", f"cores={system.cpus}", "evict=lru"]


def configurations(args) -> list[tuple[str, str | None, int, str, list[str]]]:
    """(label, plugin, quantum, interleave, further plugin options) of each
    configuration to time."""
    configs = [(name or "none", name, 0, "turn", []) for name in CONFIGS[:-1]]
    if args.mode == "parallel":
        # QEMU's inline operations crash round-robin TCG (plugins/inline-count.c).
        configs.insert(CONFIGS.index("callbacks"),
                       ("inline-count", "inline-count", 0, "turn", []))
    quanta = args.quanta or [DEFAULT_QUANTUM if args.mode == "deterministic" else 0]
    for q in quanta:
        # The weave needs a quantum: without one the model sees QEMU's turns.
        for i in (args.interleave if q else ["turn"]):
            label = f"hotline-cache@{q}" if args.quanta else "hotline-cache"
            label += f"/{i}" if q and i != DEFAULT_INTERLEAVE else ""
            # Only the weave can hand its windows to the model's thread.
            for thread in (args.model_thread if q and i == "block" else ["on"]):
                configs.append((label + ("/thread-off" if thread == "off" else ""),
                                "hotline-cache", q, i,
                                ["model_thread=off"] if thread == "off" else []))
    for label, _ in args.hotline_cache_from:
        configs.append((label, "hotline-cache", quanta[0], args.interleave[0], []))
    if args.contrib_cache:
        configs.insert(CONFIGS.index("callbacks") + 1 + (args.mode == "parallel"),
                       (PEER_FLOOR, "callbacks", 0, "turn", ["insn=on"]))
        configs.append((CONTRIB_CACHE, CONTRIB_CACHE, 0, "turn", []))
    if args.only:
        unknown = set(args.only) - {c[0] for c in configs}
        if unknown:
            raise SystemExit(f"bench: --only {sorted(unknown)[0]}: no such configuration; "
                             f"there are {', '.join(c[0] for c in configs)}")
        configs = [c for c in configs if c[0] in args.only]
    return configs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="deterministic", choices=qemu.MODES)
    parser.add_argument("--scale", default="smoke", choices=["smoke", "default"])
    parser.add_argument("--contrib-cache", type=Path, metavar="LIBCACHE.so",
                        help="also time QEMU's contrib cache plugin, built from this QEMU's "
                             "contrib/plugins/cache.c")
    parser.add_argument("--hotline-cache-from", nargs="+", default=[], metavar="LABEL=PLUGIN.so",
                        type=lambda a: tuple(a.split("=", 1)) if "=" in a else
                        parser.error(f"--hotline-cache-from {a}: give LABEL=PLUGIN.so"),
                        help="also time these builds of hotline-cache (another revision's)")
    parser.add_argument("--quanta", type=int, nargs="+", metavar="N",
                        help="time hotline-cache at each of these quanta (deterministic mode)")
    parser.add_argument("--interleave", nargs="+", choices=["turn", "block"],
                        default=[DEFAULT_INTERLEAVE],
                        help="how hotline-cache's model sees the turns (default: %(default)s)")
    parser.add_argument("--model-thread", nargs="+", choices=["on", "off"], default=["on"],
                        help="the woven model on its own host thread, or not, or both")
    parser.add_argument("--repeats", type=int, default=1, metavar="R",
                        help="rounds of alternated runs (default: 1)")
    parser.add_argument("--only", nargs="+", metavar="CONFIG",
                        help="time only these configurations")
    parser.add_argument("--suffix", default="", help="added to the results file's name")
    args = parser.parse_args()
    if args.contrib_cache and not args.contrib_cache.is_file():
        raise SystemExit(f"bench: {args.contrib_cache}: no such file; build QEMU's "
                         "contrib/plugins/cache.c as bench/README.md says")
    for label, so in args.hotline_cache_from:
        if not Path(so).is_file():
            raise SystemExit(f"bench: --hotline-cache-from {label}={so}: no such file")
    if args.quanta and args.mode != "deterministic":
        raise SystemExit("bench: --quanta bounds the turns of deterministic mode only")

    revision = hotline_revision()     # now: the tree may change during a long run
    system = specs.load_system("skylake-4core")
    kernel, image = build_kernel("baseline"), build_image()
    params = load_workload("forkstorm").resolve_params(args.scale, {})
    append = kernel_command_line([("forkstorm", params)])
    configs = configurations(args)
    elsewhere = dict(args.hotline_cache_from)
    walls: dict[str, list[float]] = {c[0]: [] for c in configs}
    rows = {label: {"plugin": label, "quantum": quantum, "interleave": interleave,
                    "options": further, "roi": None}
            for label, _, quantum, interleave, further in configs}
    for round_ in range(args.repeats):
        for label, name, quantum, interleave, further in configs:
            plugin = build_plugin(name) if name and name != CONTRIB_CACHE else None
            if label in elsewhere:
                plugin = dataclasses.replace(plugin, path=Path(elsewhere[label]).resolve(),
                                             key=f"{label}: {elsewhere[label]}")
            with tempfile.TemporaryDirectory() as tmp:
                run_dir = Path(tmp)
                options = plugin_options(name, system, kernel.directory, args.mode, quantum,
                                         0, interleave) + further
                plugin_args = (plugin.qemu_argument(Path("plugin.out"), options),
                               ) if plugin else ()
                if name == CONTRIB_CACHE:
                    plugin_args = (",".join([str(args.contrib_cache.resolve()),
                                             *contrib_cache_options(system)]),)
                cmd = qemu.command(bzimage=kernel.bzimage, image=image, root="initramfs",
                                   cpus=system.cpus, memory_mib=system.memory_mib,
                                   cpu_model=system.qemu.cpu_model, mode=args.mode,
                                   append=append, serial_log=Path(guest_log.FILE),
                                   plugin_args=plugin_args)
                start = time.monotonic()
                outcome = qemu.run(cmd, run_dir, cpus=system.cpus, workloads=["forkstorm"],
                                   timeout_s=3600,
                                   label=f"bench {label} (round {round_ + 1}/{args.repeats})")
                wall = time.monotonic() - start
                if outcome.failure:
                    raise SystemExit(f"bench: {label}: {outcome.failure}")
                if name == "roi-count":
                    line = (run_dir / "plugin.out").read_text().splitlines()[0]
                    rows[label]["roi"] = {k: int(v) for k, v in
                                          (f.split("=") for f in line.split()[2:])}
            walls[label].append(round(wall, 1))
            if plugin:
                rows[label]["build"] = plugin.key
            if label in elsewhere:
                rows[label]["sha256"] = hashlib.sha256(plugin.path.read_bytes()).hexdigest()
            if name == CONTRIB_CACHE:
                rows[label].update(options=contrib_cache_options(system), sha256=hashlib.sha256(
                    args.contrib_cache.read_bytes()).hexdigest())
    plain = statistics.median(walls["none"]) if "none" in walls else None
    for label, row in rows.items():
        median = statistics.median(walls[label])
        row.update(wall_seconds=walls[label], median_seconds=median,
                   slowdown=round(median / plain, 2) if plain else None)
    result = {"benchmark": "plugin_overhead", "mode": args.mode, "workload": "forkstorm",
              "params": params, "system": "skylake-4core", "hotline": revision,
              "host": platform.node(), "repeats": args.repeats, "order": "alternated",
              "host_cpus": os.cpu_count(), "qemu": qemu.qemu_version(),
              "kernel": kernel.key, "date": time.strftime("%Y-%m-%d"),
              "runs": list(rows.values())}
    RESULTS.mkdir(exist_ok=True)
    suffix = f"-{args.suffix}" if args.suffix else ""
    path = RESULTS / f"plugin_overhead-{args.mode}-{args.scale}{suffix}.json"
    outputs.write_text(path, json.dumps(result, indent=2) + "\n")
    print(f"{'configuration':<22}{'median s':>9}{'range s':>16}{'slowdown':>10}")
    for row in rows.values():
        span = f"{min(row['wall_seconds'])}-{max(row['wall_seconds'])}"
        slowdown = "-" if row["slowdown"] is None else row["slowdown"]    # no plain TCG run
        print(f"{row['plugin']:<22}{row['median_seconds']:>9}{span:>16}{slowdown:>10}")
    roi = next((r["roi"] for r in rows.values() if r["roi"]), None)
    if roi:
        print(f"region of interest: {roi['insns']:,} instructions, {roi['loads']:,} loads, "
              f"{roi['stores']:,} stores")
    print(f"written to {path}")


if __name__ == "__main__":
    main()
