"""./hotline report RUN: what a run's results tables say, as text and HTML."""
