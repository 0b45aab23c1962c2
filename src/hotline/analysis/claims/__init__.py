"""The claims C1-C11 of the design brief, one module each (c01.py ...
c11.py): the seed's figures (typed once in seeds.py, with the line of the
seed file each comes from), the runs the claim needs, its rule and the
rule's history, and its negative control, a design on which the rule must
say "not supported", or why there is none.

A check decides the rule (rules.py) on the experiment's repeats, on the
design under test and again on the control's:

  from hotline.analysis.claims import check_all
  for check in check_all(Results("results/claims-smoke")): print(check.verdict)
"""

from hotline.analysis.claims import c01, c02, c03, c04, c05, c06, c07, c08, c09, c10, c11
from hotline.analysis.claims.claim import Check, Claim, check
from hotline.analysis.claims.rules import INCONCLUSIVE, NOT_SUPPORTED, SUPPORTED, VERDICTS
from hotline.analysis.results import Results

CLAIMS: dict[str, Claim] = {m.CLAIM.id: m.CLAIM
                            for m in (c01, c02, c03, c04, c05, c06, c07, c08, c09, c10, c11)}

__all__ = ["CLAIMS", "Check", "Claim", "INCONCLUSIVE", "NOT_SUPPORTED", "SUPPORTED",
           "VERDICTS", "check", "check_all", "claims"]


def check_all(results: Results) -> list[Check]:
    return [check(claim, results) for claim in CLAIMS.values()]


def claims() -> list[Claim]:
    return list(CLAIMS.values())
