"""The QEMU backend: QEMU 10.0's full-system TCG emulation (simulator), the
TCG plugins that instrument it (plugins; the C sources are in plugins/),
the hotline-cache plugin's output (plugin_output) turned into the results
tables (cache_tables), and the plugins' cache model driven from Python
(cachemodel)."""
