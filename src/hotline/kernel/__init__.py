"""Kernels: source, configuration, variants (patch series) and cached builds."""
