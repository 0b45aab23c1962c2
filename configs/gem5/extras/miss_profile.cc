/*
 * hotline's miss profile of gem5's classic caches; what it counts and how
 * it names a miss's cause is in miss_profile.hh, the table's format in
 * docs/gem5.md.
 */

#include "miss_profile.hh"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "base/logging.hh"
#include "listener.hh"
#include "mem/cache/base.hh"
#include "params/HotlineMissProfile.hh"
#include "sim/core.hh"
#include "sim/cur_tick.hh"
#include "table_file.hh"

namespace gem5
{
namespace hotline
{

namespace
{

const char *const levelNames[] = {"L1D", "L2"};
const char *const kindNames[] = {"read", "write", "rmw", "fetch"};
const char *const causeNames[] = {"compulsory", "capacity", "conflict",
                                  "coherence", "upgrade"};

auto
fields(int16_t cpu, uint8_t level, uint8_t kind, uint8_t cause, Addr pc,
       Addr vaddr, int16_t thiefCpu, Addr thiefPc)
{
    return std::make_tuple(cpu, level, pc, kind, vaddr, cause, thiefCpu,
                           thiefPc);
}

/* Whether the access wants its line writable.  The cache may have turned
 * the packet into its response by the time it notifies a miss (whose
 * command then no longer says it), so a response says it by writing. */
bool
wantsWritable(const PacketPtr pkt)
{
    return pkt->isRequest() ? pkt->needsWritable() : pkt->isWrite();
}

} // anonymous namespace

bool
MissProfile::Key::operator==(const Key &o) const
{
    return fields(cpu, level, kind, cause, pc, vaddr, thiefCpu, thiefPc) ==
           fields(o.cpu, o.level, o.kind, o.cause, o.pc, o.vaddr, o.thiefCpu,
                  o.thiefPc);
}

size_t
MissProfile::KeyHash::operator()(const Key &k) const
{
    // The pc and the address tell most rows apart; the rest is a few bits.
    uint64_t h = k.pc * 0x9E3779B97F4A7C15ULL ^ k.vaddr;
    h ^= (uint64_t(uint16_t(k.cpu)) << 48) ^ (uint64_t(k.level) << 40) ^
         (uint64_t(k.kind) << 36) ^ (uint64_t(k.cause) << 32) ^
         k.thiefPc * 31 ^ uint64_t(uint16_t(k.thiefCpu));
    return h * 0xBF58476D1CE4E5B9ULL >> 7;
}

void
MissProfile::LruShadow::touch(Addr line)
{
    auto it = where.find(line);
    if (it != where.end()) {
        order.splice(order.begin(), order, it->second);
        return;
    }
    order.push_front(line);
    where.emplace(line, order.begin());
    if (order.size() > capacity) {
        where.erase(order.back());
        order.pop_back();
    }
}

MissProfile::MissProfile(const HotlineMissProfileParams &params)
    : ProbeListenerObject(params),
      lineMask(params.l1ds.empty() ? 0
                                   : params.l1ds[0]->getBlockSize() - 1),
      userSpaceEnd(params.user_space_end)
{
    fatal_if(params.l1ds.empty() || params.l1ds.size() != params.l2s.size(),
             "%s: one L1D and one L2 per core, in core order", name());
    fatal_if(params.l1d_lines == 0 || params.l2_lines == 0,
             "%s: l1d_lines and l2_lines must be at least 1", name());
    const int cores = params.l1ds.size();
    tracked.reserve(2 * cores);
    for (int i = 0; i < cores; i++)
        tracked.emplace_back(params.l1ds[i], i, L1D, params.l1d_lines);
    for (int i = 0; i < cores; i++)
        tracked.emplace_back(params.l2s[i], i, L2, params.l2_lines);
}

void
MissProfile::regProbeListeners()
{
    using CacheListener = Listener<CacheAccessProbeArg>;
    for (Tracked &t : tracked) {
        ProbeManager *cache = t.cache->getProbeManager();
        Tracked *at = &t;   // tracked never grows after construction
        listeners.push_back(new CacheListener(cache, "Hit",
            [this, at](const CacheAccessProbeArg &a) { access(*at, a, true); }));
        listeners.push_back(new CacheListener(cache, "Miss",
            [this, at](const CacheAccessProbeArg &a) { access(*at, a, false); }));
        listeners.push_back(new CacheListener(cache, "Fill",
            [this, at](const CacheAccessProbeArg &a) { fill(*at, a); }));
        listeners.push_back(new Listener<CacheDataUpdateProbeArg>(
            cache, "Data Update",
            [this, at](const CacheDataUpdateProbeArg &a) { dataUpdate(*at, a); }));
    }
}

void
MissProfile::startRegion()
{
    rows.clear();
    mshrHits = withoutPc = uncacheable = unexplained = 0;
    ownL2Upgrades = deferredWrites = 0;
    region++;
    regionStart = curTick();
    counting = true;
}

bool
MissProfile::thiefOf(const Tracked &victim, Addr line, Thief &thief) const
{
    bool found = false;
    Tick first = MaxTick;
    for (const Tracked &t : tracked) {
        if (t.level != L1D || t.cpu == victim.cpu)
            continue;
        auto it = t.inFlight.find(line);
        if (it != t.inFlight.end() && it->second.needsWritable &&
            it->second.tick < first) {
            first = it->second.tick;
            thief = {int16_t(t.cpu), it->second.pc};
            found = true;
        }
    }
    return found;
}

void
MissProfile::settleInvalidation(Tracked &t)
{
    if (!t.invalidated)
        return;
    t.invalidated = false;
    if (t.invalidatedBy.cpu >= 0)
        t.stolen[t.invalidatedLine] = t.invalidatedBy;
    else if (counting)
        unexplained++;
}

MissProfile::Cause
MissProfile::classify(const Tracked &t, bool holdsBlock, Addr line,
                      Thief &thief) const
{
    // The cache's miss handling leaves a block it holds in place until the
    // response: a miss on a block it holds wants write permission.
    if (holdsBlock)
        return Upgrade;
    if (!t.seen.count(line))
        return Compulsory;
    // A line the shadow lost would have left whatever the thief did.
    if (!t.shadow.holds(line))
        return Capacity;
    auto s = t.stolen.find(line);
    if (s == t.stolen.end())
        return Conflict;
    thief = s->second;
    return Coherence;
}

MissProfile::Key
MissProfile::keyOf(const Tracked &t, const PacketPtr pkt, Cause cause,
                   const Thief &thief) const
{
    const RequestPtr &req = pkt->req;
    const Kind kind = req->isInstFetch() ? Fetch
                    : req->isLockedRMW() ? Rmw
                    : wantsWritable(pkt) || pkt->isWrite() ? Write
                    : Read;
    const Addr pc = req->getPC();
    const Addr vaddr = kind == Fetch || pc < userSpaceEnd ||
                       !req->hasVaddr() ? 0 : req->getVaddr();
    return Key{int16_t(t.cpu), t.level, kind, cause, pc, vaddr, thief.cpu,
               thief.pc};
}

void
MissProfile::access(Tracked &t, const CacheAccessProbeArg &arg, bool hit)
{
    const PacketPtr pkt = arg.pkt;
    // Write-backs and clean evictions from above are not accesses of an
    // instruction, and move no line into the shadow's recent use.
    if (pkt->isEviction())
        return;
    settleInvalidation(t);
    const RequestPtr &req = pkt->req;
    const Addr line = lineOf(pkt->getAddr());
    if (!hit && req->isUncacheable()) {
        uncacheable += counting;
        return;
    }
    // An L2 access with an instruction that needs the line writable comes
    // from the core's L1D (fetches never need it; page-table walks have no
    // instruction).
    if (t.level == L2 && req->hasPC() && !req->isInstFetch() &&
        wantsWritable(pkt))
        writableFromL1D(tracked[t.cpu], pkt, line, hit);
    if (!hit) {
        auto in = t.inFlight.find(line);
        if (in != t.inFlight.end()) {
            mshrHits += counting;
        } else {
            InFlight f{curTick(), wantsWritable(pkt),
                       req->hasPC() ? req->getPC() : 0, false, region, {}};
            if (!req->hasPC()) {
                withoutPc += counting;
            } else if (counting) {
                Thief thief{-1, 0};
                const Cause cause = classify(
                    t, arg.cache.inCache(pkt->getAddr(), pkt->isSecure()),
                    line, thief);
                f.key = keyOf(t, pkt, cause, thief);
                f.counted = true;
                rows[f.key].count++;
            }
            t.inFlight.emplace(line, f);
        }
    } else {
        // A hit on a line with a miss still recorded: its fill came without
        // a Fill notification (a forwarded response); the miss is over.
        t.inFlight.erase(line);
    }
    t.shadow.touch(line);
    t.seen.insert(line);
}

void
MissProfile::writableFromL1D(Tracked &l1d, const PacketPtr pkt, Addr line,
                             bool l2Hit)
{
    settleInvalidation(l1d);
    auto in = l1d.inFlight.find(line);
    if (in != l1d.inFlight.end()) {
        // The L1D's own miss.  An upgrade its L2 grants is not an L1D miss:
        // its row is taken back, if it is in the region under way.
        InFlight &f = in->second;
        if (l2Hit && f.counted && f.key.cause == Upgrade && counting &&
            f.region == region) {
            auto row = rows.find(f.key);
            if (--row->second.count == 0)
                rows.erase(row);
            f.counted = false;
            ownL2Upgrades++;
        }
        return;
    }
    // No miss in flight: the L1D's MSHR sends a deferred write again, as
    // it does once the read the write joined has filled the line without
    // write permission.  It is a miss of the L1D from now (the time it
    // spent from the L1D to the L2 is not counted), and, needing the line
    // writable, may take it from another core.
    deferredWrites += counting;
    const RequestPtr &req = pkt->req;
    InFlight f{curTick(), true, req->getPC(), false, region, {}};
    Thief thief{-1, 0};
    const Cause cause = classify(
        l1d, l1d.cache->inCache(pkt->getAddr(), pkt->isSecure()), line,
        thief);
    if (cause == Upgrade && l2Hit) {
        ownL2Upgrades += counting;
    } else if (counting) {
        f.key = keyOf(l1d, pkt, cause, thief);
        f.counted = true;
        rows[f.key].count++;
    }
    l1d.inFlight.emplace(line, f);
}

void
MissProfile::fill(Tracked &t, const CacheAccessProbeArg &arg)
{
    settleInvalidation(t);
    const Addr line = lineOf(arg.pkt->getAddr());
    t.stolen.erase(line);
    auto in = t.inFlight.find(line);
    if (in == t.inFlight.end())
        return;
    const InFlight &f = in->second;
    if (f.counted && counting && f.region == region)
        rows[f.key].ticks += curTick() - f.tick;
    t.inFlight.erase(in);
}

void
MissProfile::dataUpdate(Tracked &t, const CacheDataUpdateProbeArg &arg)
{
    if (arg.newData.empty()) {
        // An invalidation: a victim if a new block is written at once,
        // else taken by the write whose miss is in flight now.
        settleInvalidation(t);
        t.invalidated = true;
        t.invalidatedLine = lineOf(arg.addr);
        t.invalidatedBy = {-1, 0};
        thiefOf(t, t.invalidatedLine, t.invalidatedBy);
    } else if (arg.oldData.empty()) {
        // A new block's first data: the invalidation just before, if any,
        // was its victim's.
        t.invalidated = false;
    } else {
        settleInvalidation(t);
    }
}

std::string
MissProfile::dumpRegion(const std::string &path)
{
    for (Tracked &t : tracked)
        settleInvalidation(t);
    uint64_t unfilled = 0;
    for (const Tracked &t : tracked)
        for (const auto &[line, f] : t.inFlight)
            unfilled += f.counted && f.region == region;
    counting = false;

    std::vector<std::pair<const Key *, const Row *>> sorted;
    sorted.reserve(rows.size());
    for (const auto &[key, row] : rows)
        sorted.emplace_back(&key, &row);
    std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) {
        const Key &x = *a.first, &y = *b.first;
        return fields(x.cpu, x.level, x.kind, x.cause, x.pc, x.vaddr,
                      x.thiefCpu, x.thiefPc) <
               fields(y.cpu, y.level, y.kind, y.cause, y.pc, y.vaddr,
                      y.thiefCpu, y.thiefPc);
    });

    return writeTable(path, [&](std::FILE *out) {
        std::fprintf(out, "# hotline miss profile 2: region_ticks=%llu "
                     "tick_frequency=%llu line_bytes=%llu mshr_hits=%llu "
                     "without_pc=%llu uncacheable=%llu "
                     "unexplained_invalidations=%llu own_l2_upgrades=%llu "
                     "deferred_writes=%llu unfilled=%llu\n",
                     (unsigned long long)(curTick() - regionStart),
                     (unsigned long long)sim_clock::Frequency,
                     (unsigned long long)(lineMask + 1),
                     (unsigned long long)mshrHits,
                     (unsigned long long)withoutPc,
                     (unsigned long long)uncacheable,
                     (unsigned long long)unexplained,
                     (unsigned long long)ownL2Upgrades,
                     (unsigned long long)deferredWrites,
                     (unsigned long long)unfilled);
        std::fprintf(out, "cpu,level,pc,kind,vaddr,cause,thief_cpu,thief_pc,"
                     "count,ticks\n");
        for (const auto &[key, row] : sorted) {
            std::fprintf(out, "%d,%s,%llu,%s,%llu,%s,%d,%llu,%llu,%llu\n",
                         key->cpu, levelNames[key->level],
                         (unsigned long long)key->pc, kindNames[key->kind],
                         (unsigned long long)key->vaddr,
                         causeNames[key->cause], key->thiefCpu,
                         (unsigned long long)key->thiefPc,
                         (unsigned long long)row->count,
                         (unsigned long long)row->ticks);
        }
    });
}

} // namespace hotline
} // namespace gem5
