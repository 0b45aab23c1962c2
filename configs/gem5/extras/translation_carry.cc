/*
 * hotline's translation carry; why it exists is in translation_carry.hh.
 */

#include "translation_carry.hh"

#include <algorithm>

#include "arch/generic/mmu.hh"
#include "arch/x86/tlb.hh"
#include "base/logging.hh"
#include "cpu/base.hh"
#include "cpu/thread_context.hh"
#include "params/HotlineTranslationCarry.hh"

namespace gem5
{
namespace hotline
{

namespace
{

/* X86ISA::TLB keeps its entries protected and lists them only into a
 * checkpoint; a class derived from it may name the member. */
struct Entries : X86ISA::TLB
{
    static const std::vector<X86ISA::TlbEntry> &
    of(const X86ISA::TLB &t)
    {
        return t.*(&Entries::tlb);
    }
};

X86ISA::TLB *
x86(BaseTLB *tlb, const std::string &name)
{
    auto *t = dynamic_cast<X86ISA::TLB *>(tlb);
    fatal_if(t == nullptr, "%s: the cores' TLBs must be x86 ones", name);
    return t;
}

/* The entries in use (a free one has no trie handle), oldest first. */
std::vector<X86ISA::TlbEntry>
inUse(const X86ISA::TLB &tlb)
{
    std::vector<X86ISA::TlbEntry> held;
    for (const X86ISA::TlbEntry &entry : Entries::of(tlb))
        if (entry.trieHandle != nullptr)
            held.push_back(entry);
    std::sort(held.begin(), held.end(),
              [](const auto &a, const auto &b) { return a.lruSeq < b.lruSeq; });
    return held;
}

void
insert(X86ISA::TLB &tlb, const std::vector<X86ISA::TlbEntry> &held)
{
    // An entry's vaddr has its PCID in it already (TLB::insert puts it
    // there), so it goes back in with PCID 0; each insert takes the TLB's
    // next LRU number, which keeps the order.
    for (const X86ISA::TlbEntry &entry : held)
        tlb.insert(entry.vaddr, entry, 0);
}

} // anonymous namespace

TranslationCarry::TranslationCarry(const HotlineTranslationCarryParams &params)
    : SimObject(params), atomic(params.atomic), o3(params.o3)
{
    fatal_if(atomic == nullptr || o3 == nullptr,
             "%s: needs the atomic core and its O3 twin", name());
}

BaseCPU *
TranslationCarry::running() const
{
    fatal_if(atomic->switchedOut() == o3->switchedOut(),
             "%s: exactly one of the two cores must be running", name());
    return atomic->switchedOut() ? o3 : atomic;
}

void
TranslationCarry::hold()
{
    heldFrom = running();
    // One thread per core: the MMU is the core's.
    BaseMMU *mmu = heldFrom->getContext(0)->getMMUPtr();
    itb = inUse(*x86(mmu->itb, name()));
    dtb = inUse(*x86(mmu->dtb, name()));
}

void
TranslationCarry::restore()
{
    BaseCPU *to = running();
    panic_if(heldFrom == nullptr || heldFrom == to,
             "%s: restore() without a hold() before a switch", name());
    BaseMMU *mmu = to->getContext(0)->getMMUPtr();
    insert(*x86(mmu->itb, name()), itb);
    insert(*x86(mmu->dtb, name()), dtb);
    heldFrom = nullptr;
    itb.clear();
    dtb.clear();
}

} // namespace hotline
} // namespace gem5
