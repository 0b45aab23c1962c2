"""The one exception hotline reports to the user as a one-line error."""


class HotlineError(Exception):
    """A problem the user can fix; the message says what is wrong and how."""
