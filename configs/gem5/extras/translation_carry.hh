/*
 * hotline's translation carry, for sampled simulation: the TLB entries of
 * the core that gives up the machine at a switch, copied into the core
 * that takes over.
 *
 * gem5's BaseCPU::switchOut flushes the core's TLBs (a switched-out core
 * does not see the invalidations the running one executes, so its entries
 * would go stale) and X86ISA::TLB::takeOverFrom copies nothing, so every
 * O3 window would start with empty TLBs although its atomic twin walked
 * the same page tables just before: a page walk on the window's first
 * touch of every page, which the exact run does not have (docs/gem5.md,
 * "Sampled simulation").  SMARTS warms such state functionally; here the
 * entries the running core holds just before the switch (hold) are
 * inserted, oldest first, into the core taking over just after (restore),
 * which is what one TLB shared by the two would hold.
 */

#ifndef HOTLINE_TRANSLATION_CARRY_HH
#define HOTLINE_TRANSLATION_CARRY_HH

#include <vector>

#include "arch/x86/pagetable.hh"
#include "sim/sim_object.hh"

namespace gem5
{

class BaseCPU;
struct HotlineTranslationCarryParams;

namespace hotline
{

class TranslationCarry : public SimObject
{
  public:
    TranslationCarry(const HotlineTranslationCarryParams &params);

    /* Copy the running core's TLB entries (before a switch). */
    void hold();
    /* Insert them into the core now running (after the switch). */
    void restore();

  private:
    BaseCPU *running() const;

    BaseCPU *atomic;
    BaseCPU *o3;
    BaseCPU *heldFrom = nullptr;
    std::vector<X86ISA::TlbEntry> itb;     // oldest first
    std::vector<X86ISA::TlbEntry> dtb;
};

} // namespace hotline
} // namespace gem5

#endif // HOTLINE_TRANSLATION_CARRY_HH
