"""hotline: a full-system cache study of Linux memory-management hot spots."""

__version__ = "0.1.0"
