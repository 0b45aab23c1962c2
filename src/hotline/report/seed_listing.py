"""The seed's rmap listings beside a pte_chain function's annotation:
seed 000's oprofile shares of page_add_rmap and page_remove_rmap set by
role (src/hotline/analysis/listing.py, chain_roles) beside the same work
in hotline's pte_chain kernels, with this run's exact, next-committing and
skid shares of each role."""

import pandas as pd

from hotline.analysis.claims.seeds import FIGURES, SEED_FILES
from hotline.analysis.listing import SEED_ROLES, chain_roles, role_shares

# `annotate RUN page_add_rmap` takes the seed's name for the function.
SEED_NAMES = {seed_name: ours for ours, (seed_name, _) in SEED_ROLES.items()}


def seed_beside(function: str, start: int, listing: dict[int, str]) -> \
        tuple[str, dict[int, str]] | None:
    """The seed's instruction table that covers `function` (SEED_ROLES):
    what it is, and its figures by the pc of the instruction in the same
    role; None for other functions."""
    if function not in SEED_ROLES:
        return None
    seed_name, figures = SEED_ROLES[function]
    found = chain_roles(_code(listing), start)
    beside = {start + found[role][0]: f"{FIGURES[key].value:.1f}% {role}"
              for role, key in figures.items() if role in found}
    seed = FIGURES[next(iter(figures.values()))].seed
    return (f"seed {seed} ({SEED_FILES[seed]}): 2.5.27's {seed_name} on a 4-way Pentium III, "
            f"oprofile's share of the function's samples at the rows the seed names, beside "
            f"the instructions in the same role here; each of its lock, unlock and walk rows "
            f"is the instruction after the one whose time it is, where the Pentium III's "
            f"interrupt names it", beside)


def _code(listing: dict[int, str]) -> dict[int, tuple[str, str]]:
    """A listing ({pc: text}, '* ' for an instruction patched at boot) as
    analysis/listing.py reads code."""
    return {pc: ("", text.removeprefix("* ")) for pc, text in listing.items()}


def by_role(function: str, start: int, listing: dict[int, str],
            cycles: pd.DataFrame | None) -> pd.DataFrame | None:
    """The seed's listing and this run's side by side, matched by role
    (analysis/listing.py CHAIN_ROLES): per role, where it is (offsets), the
    seed's share (NaN where the seed names no instruction in the role) and,
    with a cycle profile (the function's rows), the exact, next-committing
    and skid shares.  None for functions no seed table covers."""
    if function not in SEED_ROLES:
        return None
    found = chain_roles(_code(listing), start)
    figures = SEED_ROLES[function][1]
    table = role_shares(cycles.assign(offset=cycles["pc"] - start), found) \
        if cycles is not None else pd.DataFrame({"role": list(found)})
    table.insert(1, "where", [", ".join(f"+{o:#x}" for o in found[r][:1]) +
                              (f"..+{found[r][-1]:#x}" if len(found[r]) > 1 else "")
                              for r in table["role"]])
    table.insert(2, "seed", [FIGURES[figures[r]].value / 100 if r in figures else float("nan")
                             for r in table["role"]])
    return table


ROLES_LEGEND = ("By role, the seed's listing beside this run's: each role's share of the "
                "function's samples in the seed ('-' where the seed has no row in it; its "
                "lock, unlock and walk rows are the instructions after them, where a Pentium "
                "III's interrupt names their time), of its cycles here (exact), and of its "
                "samples in the next-committing and skid views.")
ROLE_VIEWS = ("seed", "exact", "next", "skid")


def share(x: float) -> str:
    return "-" if pd.isna(x) else f"{x:.1%}"


def role_lines(roles: pd.DataFrame) -> list[str]:
    views = [v for v in ROLE_VIEWS if v in roles.columns]
    lines = [f"{'role':<16}{'where':<16}" + "".join(f"{v:>8}" for v in views)]
    for r in roles.itertuples():
        lines.append(f"{r.role:<16}{r.where:<16}"
                     + "".join(f"{share(getattr(r, v)):>8}" for v in views))
    return lines
