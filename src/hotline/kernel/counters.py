"""The kernel counters of a run (manifest.json guest.counters, see
docs/kernel-counters.md) set beside Andrew Morton's 2.5.27 figures for the
fork storm (DESIGN.md claims C3 and C5).

    .venv/bin/python -m hotline.kernel.counters RUN_DIR [RUN_DIR ...]

prints a Markdown table, one column per run and one for the seed.
"""

import sys
from pathlib import Path

from hotline.errors import HotlineError, guarded
from hotline.records import manifest as run_record

# Seed 000 (linux-mm, 2002-07-24): "Instrumentation of pte_chain_lock()"
# and "p rmap_stats" (the latter from ./doitlots.sh 5).
SEED = {
    "chain_lock": 8_152_300, "chain_lock_contended": 22_436, "chain_lock_spins": 1_946_858,
    "rmap_add": 4_106_673, "rmap_add_fork": 2_774_954, "rmap_add_fault": 1_029_498 + 93_689,
    "rmap_add_cow": 272_151, "rmap_remove": 4_119_825, "rmap_remove_zap": 3_863_194,
    "rmap_remove_cow": 272_880,
    "loops": 5 * 500,   # ./doitlots.sh 5: five concurrent scripts of 500 loops
}
SEED_NOTE = ("seed: add_do_no_page + add_do_anonymous_page as fault, add_do_wp_page and "
             "remove_do_wp_page as COW")


def _ratio(a: float, b: float, fmt: str) -> str:
    return format(a / b, fmt) if b else "-"


def derived(c: dict) -> dict:
    """The table's quantities from one counters dict (run or seed)."""
    adds = c.get("rmap_add", sum(v for k, v in c.items() if k.startswith("rmap_add_")))
    removes = c.get("rmap_remove",
                    sum(v for k, v in c.items() if k.startswith("rmap_remove_")))
    return {**c, "rmap_add": adds, "rmap_remove": removes}


ROWS = [
    ("chain locks (nr_chain_locks)", lambda c: f"{c['chain_lock']:,}"),
    ("contended (nr_chain_lock_contends)", lambda c: f"{c['chain_lock_contended']:,}"),
    ("contended, % of locks",
     lambda c: _ratio(100 * c["chain_lock_contended"], c["chain_lock"], ".2f")),
    ("spins (nr_chain_lock_spins)", lambda c: f"{c['chain_lock_spins']:,}"),
    ("spins per contended lock",
     lambda c: _ratio(c["chain_lock_spins"], c["chain_lock_contended"], ".1f")),
    ("rmap adds (page_add_rmap)", lambda c: f"{c['rmap_add']:,}"),
    ("  from fork (copy_page_range)", lambda c: f"{c['rmap_add_fork']:,}"),
    ("  from faults", lambda c: f"{c['rmap_add_fault']:,}"),
    ("  from COW", lambda c: f"{c['rmap_add_cow']:,}"),
    ("rmap removes (page_remove_rmap)", lambda c: f"{c['rmap_remove']:,}"),
    ("  from zap_pte_range", lambda c: f"{c['rmap_remove_zap']:,}"),
    ("  from COW", lambda c: f"{c['rmap_remove_cow']:,}"),
    ("chain locks per rmap add or remove",
     lambda c: _ratio(c["chain_lock"], c["rmap_add"] + c["rmap_remove"], ".3f")),
    ("fork-storm loops", lambda c: f"{c['loops']:,}" if c.get("loops") else "-"),
    ("chain locks per loop",
     lambda c: _ratio(c["chain_lock"], c["loops"], ",.0f") if c.get("loops") else "-"),
]


def load_run(run_dir: Path) -> tuple[str, dict]:
    if not run_record.exists(run_dir):
        raise HotlineError(f"{run_dir}: no {run_record.FILE} (not a run directory)")
    m = run_record.read(run_dir)
    entry = m.guest.get("counters")
    if not entry:
        raise HotlineError(f"{m.where}: no guest.counters (kernel without hotline counters?)")
    mode = (m.inputs.get("backend") or {}).get("mode")
    name = m.variant
    loops = (m.guest.get("summary") or {}).get("loops_completed")
    return (f"{name} ({mode})" if mode else name), {**entry["counters"], "loops": loops}


def c3_table(runs: list[tuple[str, dict]]) -> str:
    columns = [(name, derived(c)) for name, c in runs] + [("seed 000 (2.5.27)", derived(SEED))]
    lines = ["| | " + " | ".join(name for name, _ in columns) + " |",
             "|---|" + "---:|" * len(columns)]
    for label, cell in ROWS:
        lines.append(f"| {label} | " + " | ".join(cell(c) for _, c in columns) + " |")
    return "\n".join(lines) + f"\n\n({SEED_NOTE}.)"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        return guarded(lambda: print(c3_table([load_run(Path(a)) for a in argv])))
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
