/*
 * hotline's retire count of one gem5 core; what it counts is in
 * retire_count.hh, the table's format in docs/gem5.md.
 */

#include "retire_count.hh"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "cpu/o3/cpu.hh"
#include "cpu/o3/dyn_inst.hh"
#include "cpu/simple/atomic.hh"
#include "cpu/simple_thread.hh"
#include "cpu/static_inst.hh"
#include "listener.hh"
#include "params/HotlineRetireCount.hh"
#include "table_file.hh"

namespace gem5
{
namespace hotline
{

RetireCount::RetireCount(const HotlineRetireCountParams &params)
    : ProbeListenerObject(params),
      cpu(dynamic_cast<BaseCPU *>(params.manager))
{
    fatal_if(!dynamic_cast<o3::CPU *>(cpu) &&
             !dynamic_cast<AtomicSimpleCPU *>(cpu),
             "%s: the manager must be an O3 or an atomic core", name());
}

void
RetireCount::regProbeListeners()
{
    // The two kinds of core notify "Commit" with different arguments.
    ProbeManager *core = cpu->getProbeManager();
    if (dynamic_cast<o3::CPU *>(cpu)) {
        listeners.push_back(new Listener<o3::DynInstPtr>(core, "Commit",
            [this](const o3::DynInstPtr &inst) {
                retired(inst->staticInst, inst->pcState().instAddr());
            }));
    } else {
        using Executed = std::pair<SimpleThread *, const StaticInstPtr>;
        // Notified after the micro-op executed and before the core moves
        // its PC on: the thread's PC is still the instruction's.
        listeners.push_back(new Listener<Executed>(core, "Commit",
            [this](const Executed &executed) {
                retired(executed.second,
                        executed.first->pcState().instAddr());
            }));
    }
}

void
RetireCount::retired(const StaticInstPtr &inst, Addr pc)
{
    Row &row = rows[pc];
    ++row.microOps;
    if (!inst->isMicroop() || inst->isLastMicroop())
        ++row.instructions;
}

void
RetireCount::startRegion()
{
    rows.clear();
}

std::string
RetireCount::dumpRegion(const std::string &path)
{
    std::vector<std::pair<Addr, Row>> sorted(rows.begin(), rows.end());
    std::sort(sorted.begin(), sorted.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });
    return writeTable(path, [&](std::FILE *out) {
        std::fprintf(out, "# hotline retire count 1: core=%s\n",
                     cpu->name().c_str());
        std::fprintf(out, "pc,instructions,micro_ops\n");
        for (const auto &[pc, row] : sorted) {
            std::fprintf(out, "%llu,%llu,%llu\n", (unsigned long long)pc,
                         (unsigned long long)row.instructions,
                         (unsigned long long)row.microOps);
        }
    });
}

} // namespace hotline
} // namespace gem5
