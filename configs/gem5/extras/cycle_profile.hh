/*
 * hotline's cycle profile of one gem5 O3 core: every cycle of a region
 * charged to one instruction, by the rule of time-proportional instruction
 * profiling (Gottschall et al., "TIP: Time-Proportional Instruction
 * Profiling", MICRO 2021):
 *
 *   - a cycle in which k instructions commit is split among them, 1/k each;
 *   - a cycle in which nothing commits goes to the instruction at the head
 *     of the reorder buffer, the one the core is waiting for: that is the
 *     next instruction to commit, unless a squash removes it first;
 *   - while the reorder buffer is empty (a front-end stall), to the next
 *     instruction that commits;
 *   - the cycles of a squash, from the head that was squashed (a fault, a
 *     memory-order violation, an interrupt) or from a mispredicted branch or
 *     a squash-after instruction's commit until the next commit, to the
 *     instruction that caused it;
 *   - cycles in which the core is suspended (halted: the guest's idle loop)
 *     are counted apart, as hardware cycle counters of the seeds' era
 *     (CPU_CLK_UNHALTED) leave them out.
 *
 * Cycles are kept in units of 1/840 of a cycle (840 is the least common
 * multiple of 1..8, the commit widths a split can have), so the charges of
 * one core add up to the region's cycles exactly.
 *
 * Each charge of a cycle in which nothing commits also says what the head
 * was waiting for, as far as the core knows it: a load whose L1D miss was
 * served by the L2, by memory or by another core's cache; a memory barrier
 * (x86 locked instructions are fenced micro-op sequences in gem5); a store;
 * its own execution; the front end; a mispredict; another squash.
 *
 * A barrier's cycles are also charged, in a second table (the drain table),
 * to what the barrier waited for.  gem5's O3 commit keeps a fence at the
 * head of the reorder buffer until every older store has written its data
 * (Commit::commitHead, hasStoresToWB), and only then lets it issue; an x86
 * core writes its stores one at a time, in order (TSO), so the store that
 * holds the drain is the oldest store in the store queue not yet written:
 * committed and waiting to be sent, or in flight to the cache.  At the
 * start of each of the core's cycles in which the head is a fence (the only
 * cycles in which the store queue is read) the profile notes that store
 * (its instruction, its data address), or that no older store is left; a
 * note holds until the next one, also over cycles in which the core does
 * not tick (it sleeps until the store's write wakes it).  Each of the
 * barrier's cycles goes to the note in force in it:
 *
 *   - a store, named by what served its write: the L1D (it did not miss
 *     there), or, for an L1D miss, the L2, memory or another core's cache,
 *     learnt as for a load (the L1D's Miss, the L2's Miss and Fill);
 *   - no store: nothing older than the fence left in the store queue, the
 *     fence issuing and executing after the drain;
 *   - not at the head: before the fence reached the head of the reorder
 *     buffer (with it empty), cycles the rule above charges to the fence.
 *
 * So the drain table of an instruction adds up to its Barrier cycles
 * exactly.  A store still in flight at the region's end is named by what
 * is known of its miss then.  One thread per core, as everywhere here.
 *
 * Beside the exact charge, two views of a sampling profiler that takes a
 * sample every samplePeriod unhalted cycles (oprofile on CPU_CLK_UNHALTED,
 * the seeds' profiler), differing in which instruction a sample names:
 *
 *   - next-committing (TIP's name for it): the instruction that commits
 *     first at or after the sample's cycle; during a stall, the stalled
 *     instruction itself;
 *   - skid, as an interrupt-driven profiler on the seeds' Pentium III
 *     reported it: the counter overflows in cycle t, the interrupt is taken
 *     at the first instruction boundary after the instructions that retire
 *     in the first cycle at or after t, and the address reported is the
 *     instruction after that boundary, the next one to begin committing
 *     (Intel's P6 family manual: the performance-monitoring interrupt is
 *     taken on an instruction boundary and saves the address of the next
 *     instruction; oprofile's documentation calls the distance skid).  So a
 *     stalled load's samples name the instruction after the load.
 *
 * The table of a region (one row per instruction address) and its drain
 * table (one row per barrier's instruction and what it waited for, beside
 * it: PATH's name after "drains.") are written by dumpRegion(), called
 * from the run script at the region's end.  The format is docs/gem5.md's
 * "cycle profile".
 *
 * In sampled simulation (SMARTS) a region is one window, counted in the
 * core's committed micro-ops rather than in cycles: startWindow(w, m) lets
 * w micro-ops commit unmeasured (the detailed warm-up), then measures from
 * the next cycle until m have committed, to the end of that cycle.  A
 * window of a fixed number of micro-ops that starts at an even spread of
 * points in the atomic cores' time (one micro-op a cycle) covers every
 * micro-op of the region equally often; a window of a fixed number of
 * cycles does not: it reaches further into fast code than into slow, and
 * a warm-up of fixed cycles ends more often at the start of slow code than
 * it should (docs/gem5.md).  The core tells the run script, by a simulation
 * exit, when its window is measured or when it falls asleep inside one;
 * windowPending() says whether it still has micro-ops to run.
 */

#ifndef HOTLINE_CYCLE_PROFILE_HH
#define HOTLINE_CYCLE_PROFILE_HH

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "base/types.hh"
#include "cpu/inst_seq.hh"
#include "cpu/o3/dyn_inst.hh"  // complete: lsq_unit.hh's inline code needs it
#include "cpu/o3/lsq_unit.hh"
#include "mem/cache/cache_probe_arg.hh"
#include "sim/probe/probe.hh"

namespace gem5
{

class BaseCache;
struct HotlineCycleProfileParams;

namespace o3
{
class CPU;
}

namespace hotline
{

/* What a charged cycle was spent on; the column order of the table. */
enum Cause : unsigned
{
    Commit,       // a cycle in which the instruction committed (its share)
    LoadL2,       // head: a load whose L1D miss the L2 served
    LoadMemory,   // head: a load whose miss went to memory
    LoadPeer,     // head: a load whose miss another core's cache served
    Barrier,      // head: a fence (also the fences of a locked instruction)
    Store,        // head: a store
    Execute,      // head: anything else not yet done (latency, a hit load)
    FrontEnd,     // reorder buffer empty, no squash pending
    Mispredict,   // after a mispredicted branch, until the next commit
    Squash,       // a squashed head or a squash-after instruction
    NumCauses
};

/* What a barrier waited for in a cycle of its drain; the drain table's
 * names, in this order. */
enum Wait : uint8_t
{
    StoreL1dHit,  // a store whose write hit in the L1D
    StoreL2,      // a store whose L1D miss the L2 served
    StoreMemory,  // a store whose miss went to memory
    StorePeer,    // a store whose miss another core's cache served
    NoStore,      // no older store left in the store queue
    NotAtHead,    // the fence not yet at the head of the reorder buffer
    NumWaits
};

class CycleProfile : public ProbeListenerObject
{
  public:
    /* Units of one cycle: the lcm of 1..8. */
    static constexpr uint64_t unitsPerCycle = 840;

    CycleProfile(const HotlineCycleProfileParams &params);

    void regProbeListeners() override;

    /* Forget everything; the region starts at the core's current cycle. */
    void startRegion();
    /* A sampled window: warmup micro-ops unmeasured, then a region that
     * ends with the cycle in which the measure-th micro-op commits. */
    void startWindow(uint64_t warmup, uint64_t measure);
    /* Whether the core is awake inside a window it has not finished. */
    bool windowPending() const;
    /* Charge up to the current cycle and write the region's table to
     * path; returns an empty string, or what went wrong. */
    std::string dumpRegion(const std::string &path);

  private:
    struct Row
    {
        uint64_t instructions = 0;   // macro-instructions committed
        uint64_t microOps = 0;
        uint64_t samples = 0;        // next-committing view
        uint64_t skidSamples = 0;    // skid view
        std::array<uint64_t, NumCauses> units{};
    };

    /* Where a load's or a store's L1D miss was served. */
    enum Served : uint8_t { ServedL2, ServedMemory, ServedPeer };

    /* A note of the drain: from cycle `from` on, the fence at the head
     * waits for the store `store` (0: none older left), and the waiting
     * cycles given to this note so far. */
    struct DrainNote
    {
        Cycles from;
        InstSeqNum store = 0;
        Addr pc = 0;
        Addr vaddr = 0;
        uint64_t cycles = 0;
    };

    /* A row of the drain table. */
    struct DrainKey
    {
        Addr barrierPc;
        Wait wait;
        Addr storePc;   // 0 unless a store
        Addr vaddr;     // the store's data address (its first byte)

        bool operator<(const DrainKey &o) const
        {
            return std::tie(barrierPc, wait, storePc, vaddr) <
                   std::tie(o.barrierPc, o.wait, o.storePc, o.vaddr);
        }
    };

    void commit(const o3::DynInstPtr &inst);
    void commitStall(const o3::DynInstPtr &inst);
    void squash(const o3::DynInstPtr &inst);
    void mispredict(const o3::DynInstPtr &inst);
    void sleeping(const bool &asleep);
    void l1dMiss(const CacheAccessProbeArg &arg);
    void l2Miss(const CacheAccessProbeArg &arg);
    void l2Fill(const CacheAccessProbeArg &arg);
    /* At the start of each of the core's cycles: the drain's note, if the
     * head is a fence. */
    void noteDrain();

    Cycles now() const;
    uint64_t unhalted(Cycles c) const;
    /* The samples up to cycle upTo (next-committing view, to pc); returns
     * how many were taken. */
    uint64_t takeSamples(Cycles upTo, Addr pc);
    /* The skid view's samples waiting for the first instruction to begin
     * committing after cycle c's: those armed before c, to pc. */
    void deliverSkid(Cycles c, Addr pc);
    void closeGroup();
    void chargeStall(Addr pc, Cause cause);
    /* Moves accounted up to c; returns the cycles it moved over. */
    uint64_t advanceTo(Cycles c);
    /* Moves accounted up to c, the cycles it moves over waiting for the
     * next commit (pending), each also to the drain's note in force. */
    void addPending(Cycles c);
    /* The pending cycles' drain notes, as the barrier at pc's table rows. */
    void chargeDrain(Addr pc);
    /* The pending cycles were charged or dropped: so are their notes'. */
    void forgetDrainCycles();
    /* What the drain of a store waited for: what served its write. */
    Wait servedWait(InstSeqNum store) const;
    /* Forget the misses of stores that have left the store queue. */
    void pruneStoreMisses();
    /* Write the region's drain table to path (dumpRegion's). */
    std::string writeDrains(const std::string &path) const;
    /* The window's warm-up ends at the first event in a cycle after its
     * last micro-op's (c): the region starts there. */
    void endWarmup(Cycles c);
    /* Drop every charge and sample: the region's table starts again at
     * cycle `from` (a region's start, a warm-up's end). */
    void forgetCharged(Cycles from);
    /* The window's region ends with the cycle of its last micro-op. */
    void closeWindow();
    /* Tell the run script to look at the windows (a simulation exit). */
    void notifyScript() const;
    Addr lineOf(Addr addr) const { return addr & ~lineMask; }

    o3::CPU *cpu;
    BaseCache *l1d;
    BaseCache *l2;
    Addr lineMask;

    std::unordered_map<Addr, Row> rows;
    Cycles regionStart{0};
    /* Every cycle before this one is charged, pending or halted. */
    Cycles accounted{0};
    /* Cycles with no commit that wait for the next commit to be charged. */
    uint64_t pendingCycles = 0;
    uint64_t haltedCycles = 0;
    bool asleep = false;

    /* Sampled simulation's window; NoWindow outside one (exact profiles). */
    enum Window { NoWindow, Warming, Measuring, Closing, Closed };
    Window window = NoWindow;
    uint64_t windowOps = 0;   // micro-ops committed in the current phase
    uint64_t warmupOps = 0;
    uint64_t measureOps = 0;

    /* The sampled view: the next sample, in unhalted cycles of the region. */
    const uint64_t samplePeriod;
    uint64_t nextSample = 0;
    /* Skid view: (cycle of the commits the samples wait behind, samples). */
    std::vector<std::pair<Cycles, uint64_t>> skidding;

    /* The commits of the cycle groupCycle, not yet charged. */
    std::vector<Addr> group;
    Cycles groupCycle{0};

    /* The latest head that could not commit, since the last commit. */
    bool headSeen = false;
    InstSeqNum headSeq = 0;
    Addr headPc = 0;
    Cause headWaits = Execute;

    /* The instruction a pending squash is charged to. */
    bool blamed = false;
    Addr blamePc = 0;
    Cause blameCause = Squash;
    InstSeqNum mispredictSeq = 0;

    /* In-flight L1D misses of this core's loads: sequence number to line,
     * and where each line's latest miss was served. */
    std::unordered_map<InstSeqNum, Addr> missLine;
    std::unordered_map<Addr, Served> lineServed;

    /* The core's store queue, learnt from the first load or store that
     * commits (its sqIt). */
    o3::LSQUnit::StoreQueue *storeQueue = nullptr;
    /* The L1D misses of stores still in the store queue or named by the
     * drain notes: sequence number to line. */
    std::map<InstSeqNum, Addr> storeMissLine;
    /* The drain notes since the last commit, in cycle order; the pending
     * cycles before the first of them. */
    std::vector<DrainNote> drainNotes;
    uint64_t drainUnnoted = 0;
    /* The drain table: units per row. */
    std::map<DrainKey, uint64_t> drains;
};

} // namespace hotline
} // namespace gem5

#endif // HOTLINE_CYCLE_PROFILE_HH
