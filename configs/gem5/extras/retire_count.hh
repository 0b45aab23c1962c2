/*
 * hotline's retire count of one gem5 core, atomic or O3: the micro-ops and
 * instructions it committed in a region, per instruction address.
 *
 * A sampled run (docs/gem5.md, "Sampled simulation") estimates each
 * instruction's micro-ops from its O3 windows; its atomic cores run the
 * rest of the region.  This count, on both kinds of core, is that same
 * run's own figure, so that the estimate can be checked on the execution
 * it came from (the exact O3 run is a different execution: which of a
 * parent and its child writes a shared page first depends on the cores'
 * speed).
 *
 * The atomic core's "Commit" probe point is notified of every micro-op
 * that executed without a fault; gem5's numOps statistic also counts the
 * faulting ones, which re-execute after the fault is handled.  The O3
 * core's "Commit" is notified of every micro-op it commits, as its numOps
 * counts.  The table's format is docs/gem5.md's "retire count".
 */

#ifndef HOTLINE_RETIRE_COUNT_HH
#define HOTLINE_RETIRE_COUNT_HH

#include <cstdint>
#include <string>
#include <unordered_map>

#include "base/types.hh"
#include "cpu/static_inst_fwd.hh"
#include "sim/probe/probe.hh"

namespace gem5
{

class BaseCPU;
struct HotlineRetireCountParams;

namespace hotline
{

class RetireCount : public ProbeListenerObject
{
  public:
    RetireCount(const HotlineRetireCountParams &params);

    void regProbeListeners() override;

    /* Forget everything counted so far. */
    void startRegion();
    /* Write the region's table to path; returns an empty string, or what
     * went wrong. */
    std::string dumpRegion(const std::string &path);

  private:
    struct Row
    {
        uint64_t instructions = 0;
        uint64_t microOps = 0;
    };

    void retired(const StaticInstPtr &inst, Addr pc);

    BaseCPU *cpu;
    std::unordered_map<Addr, Row> rows;
};

} // namespace hotline
} // namespace gem5

#endif // HOTLINE_RETIRE_COUNT_HH
