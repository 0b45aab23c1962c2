"""The gem5 backend's host side: what a run's configuration script is told
(params), and readers for what gem5 leaves in its output directory: packet
traces from the MemTraceProbes (packet_trace, trace_misses), stats.txt
(stats) and the O3 LSQUnit debug trace (lsq_trace)."""
