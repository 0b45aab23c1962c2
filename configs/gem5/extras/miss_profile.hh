/*
 * hotline's miss profile of gem5's classic caches: every demand miss of
 * each core's L1D and L2, counted per (core, level, instruction, kind of
 * access, the access's virtual address, cause), with the ticks from the
 * miss to the fill that served it, measured inside gem5 through the caches'
 * probe points (Hit, Miss, Fill, Data Update): the one way hotline measures
 * gem5's misses.
 *
 * A miss is what gem5's cache counts as one and sends below: a demand
 * access with an instruction address (page-table walks, write-backs and
 * prefetches have none), not uncacheable, that found no block it could use
 * and no miss to the same line already in flight (those are the MSHR's
 * hits, counted apart).  The L1D has two exceptions, both counted in the
 * table's header:
 *
 *   deferred writes  a write that joined a read miss in flight, whose fill
 *       left the line without write permission, is sent below again by the
 *       L1D's MSHR, with no Miss notification.  It shows as an access of
 *       the core's L2 that needs the line writable while the L1D has no
 *       miss in flight for it, and is counted then as the L1D's miss (an
 *       upgrade if the L1D holds the line), with the write's instruction.
 *   own-L2 upgrades  a write the core's own L2 grants (the L2 holds the
 *       line writable while the L1D holds it without permission, a state
 *       gem5's protocol has and MESI does not) is not a miss of the L1D:
 *       an L1D upgrade whose request hits in its L2 is taken out of the
 *       table.
 *
 * Each miss has docs/causes.md's cause, as the QEMU model (plugins/
 * cachemodel/) gives it, in gem5's own cache: the first of these that
 * applies:
 *
 *   upgrade     a write to a line the cache holds without write permission;
 *   compulsory  the cache's first access to the line;
 *   coherence   another core's write invalidated the line in this cache,
 *               which has not filled it since, and the shadow (below) still
 *               holds it: the thief is the other core whose L1D had the
 *               earliest miss in flight needing the line writable when the
 *               invalidation happened, with its instruction;
 *   conflict    the shadow holds the line;
 *   capacity    it does not.
 *
 * The shadow is a fully associative LRU cache of the cache's size, fed the
 * cache's accesses.  An invalidation is an eviction when the cache fills
 * another line at once (gem5 invalidates the victim and then writes the new
 * block, in one call); an invalidation that is neither an eviction nor has
 * a thief (an I/O write, a page-table walk setting an accessed or dirty
 * bit) leaves the line's next miss to capacity or conflict, and is counted
 * in the table's header.
 *
 * Addresses of user-space instructions' accesses are not kept (0), as the
 * QEMU plugin keeps none; hotline reduces the others as it reduces QEMU's.
 * The table of a region is written by dumpRegion(); the format is
 * docs/gem5.md's "miss profile".
 */

#ifndef HOTLINE_MISS_PROFILE_HH
#define HOTLINE_MISS_PROFILE_HH

#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/types.hh"
#include "mem/cache/cache_probe_arg.hh"
#include "sim/probe/probe.hh"

namespace gem5
{

class BaseCache;
struct HotlineMissProfileParams;

namespace hotline
{

class MissProfile : public ProbeListenerObject
{
  public:
    MissProfile(const HotlineMissProfileParams &params);

    void regProbeListeners() override;

    /* Forget the counts; the caches' state (what each holds, has seen,
     * lost to whom) goes on across regions, as the caches' own does. */
    void startRegion();
    /* Write the region's table to path and stop counting until the next
     * startRegion(); returns an empty string, or what went wrong. */
    std::string dumpRegion(const std::string &path);

  private:
    enum Level : uint8_t { L1D, L2 };
    enum Kind : uint8_t { Read, Write, Rmw, Fetch };
    enum Cause : uint8_t { Compulsory, Capacity, Conflict, Coherence,
                           Upgrade };

    struct Thief
    {
        int16_t cpu;   // -1: none
        Addr pc;
    };

    struct Key
    {
        int16_t cpu;
        Level level;
        Kind kind;
        Cause cause;
        Addr pc;
        Addr vaddr;
        int16_t thiefCpu;   // -1 unless a coherence miss
        Addr thiefPc;

        bool operator==(const Key &o) const;
    };
    struct KeyHash { size_t operator()(const Key &k) const; };
    struct Row { uint64_t count = 0; uint64_t ticks = 0; };

    /* A fully associative LRU set of a cache's size in lines. */
    class LruShadow
    {
      public:
        explicit LruShadow(size_t lines) : capacity(lines) {}
        bool holds(Addr line) const { return where.count(line) != 0; }
        void touch(Addr line);
      private:
        size_t capacity;
        std::list<Addr> order;   // most recent first
        std::unordered_map<Addr, std::list<Addr>::iterator> where;
    };

    /* A miss in flight: when it left, and its row if it was counted in
     * the region under way. */
    struct InFlight
    {
        Tick tick;
        bool needsWritable;
        Addr pc;
        bool counted;
        uint64_t region;
        Key key;
    };

    struct Tracked
    {
        Tracked(BaseCache *cache, int cpu, Level level, size_t lines)
            : cache(cache), cpu(cpu), level(level), shadow(lines) {}
        BaseCache *cache;
        int cpu;
        Level level;
        LruShadow shadow;
        std::unordered_set<Addr> seen;
        std::unordered_map<Addr, Thief> stolen;
        std::unordered_map<Addr, InFlight> inFlight;
        /* The line just invalidated, until the next update says whether
         * it was a victim (a fill follows at once) or taken; and the write
         * that took it, looked for at the invalidation, while that write's
         * miss is still in flight (its fill would end it). */
        bool invalidated = false;
        Addr invalidatedLine = 0;
        Thief invalidatedBy{-1, 0};
    };

    void access(Tracked &t, const CacheAccessProbeArg &arg, bool hit);
    void writableFromL1D(Tracked &l1d, const PacketPtr pkt, Addr line,
                         bool l2Hit);
    void fill(Tracked &t, const CacheAccessProbeArg &arg);
    void dataUpdate(Tracked &t, const CacheDataUpdateProbeArg &arg);
    void settleInvalidation(Tracked &t);
    bool thiefOf(const Tracked &victim, Addr line, Thief &thief) const;
    Cause classify(const Tracked &t, bool holdsBlock, Addr line,
                   Thief &thief) const;
    Key keyOf(const Tracked &t, const PacketPtr pkt, Cause cause,
              const Thief &thief) const;
    Addr lineOf(Addr addr) const { return addr & ~lineMask; }

    const Addr lineMask;
    const Addr userSpaceEnd;
    /* Core i's L1D is tracked[i], its L2 tracked[cores + i]. */
    std::vector<Tracked> tracked;

    bool counting = false;
    uint64_t region = 0;     // the region under way, or the last one
    Tick regionStart = 0;
    std::unordered_map<Key, Row, KeyHash> rows;
    uint64_t mshrHits = 0;
    uint64_t withoutPc = 0;
    uint64_t uncacheable = 0;
    uint64_t unexplained = 0;
    uint64_t ownL2Upgrades = 0;
    uint64_t deferredWrites = 0;
};

} // namespace hotline
} // namespace gem5

#endif // HOTLINE_MISS_PROFILE_HH
