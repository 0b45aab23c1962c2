"""What every simulation backend gives back for a run."""

from dataclasses import dataclass

from hotline.simulate import guest_log


@dataclass
class Outcome:
    failure: str | None       # None: the guest ran to its end and reported success
    report: guest_log.GuestReport
    wall_s: float
