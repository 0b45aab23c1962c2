/*
 * hotline's cycle profile of one gem5 O3 core; the rule is in
 * cycle_profile.hh, the table's format in docs/gem5.md.
 */

#include "cycle_profile.hh"

#include <algorithm>
#include <cstdio>

#include "arch/generic/decoder.hh"
#include "cpu/o3/cpu.hh"
#include "cpu/o3/dyn_inst.hh"
#include "cpu/thread_context.hh"
#include "listener.hh"
#include "mem/cache/base.hh"
#include "params/HotlineCycleProfile.hh"
#include "sim/sim_exit.hh"
#include "table_file.hh"

namespace gem5
{
namespace hotline
{

namespace
{

const char *const causeNames[NumCauses] = {
    "commit", "load_l2", "load_memory", "load_peer", "barrier", "store",
    "execute", "front_end", "mispredict", "squash",
};

const char *const waitNames[NumWaits] = {
    "store_l1d_hit", "store_l2", "store_memory", "store_peer", "no_store",
    "not_at_head",
};

/* The drain table's path: the region table's, its name after this (so
 * that no pattern of the region tables' names, region*.csv, takes it). */
const char *const drainPrefix = "drains.";

std::string
drainPath(const std::string &path)
{
    const size_t name = path.rfind('/') + 1;   // 0 without a directory
    return path.substr(0, name) + drainPrefix + path.substr(name);
}

bool
isBarrier(const o3::DynInstPtr &inst)
{
    return inst->isFullMemBarrier() || inst->isReadBarrier() ||
           inst->isWriteBarrier();
}

bool
isLastOfInstruction(const o3::DynInstPtr &inst)
{
    return !inst->isMicroop() || inst->isLastMicroop();
}

bool
isFirstOfInstruction(const o3::DynInstPtr &inst)
{
    return !inst->isMicroop() || inst->isFirstMicroop();
}

} // anonymous namespace

CycleProfile::CycleProfile(const HotlineCycleProfileParams &params)
    : ProbeListenerObject(params),
      cpu(dynamic_cast<o3::CPU *>(params.manager)),
      l1d(params.l1d),
      l2(params.l2),
      lineMask(cpu ? cpu->cacheLineSize() - 1 : 0),
      samplePeriod(params.sample_period)
{
    fatal_if(cpu == nullptr, "%s: the manager must be an O3 core", name());
    fatal_if(samplePeriod == 0, "%s: sample_period must be at least 1", name());
}

void
CycleProfile::regProbeListeners()
{
    using InstListener = Listener<o3::DynInstPtr>;
    using CacheListener = Listener<CacheAccessProbeArg>;
    ProbeManager *core = cpu->getProbeManager();
    auto on_inst = [this](void (CycleProfile::*f)(const o3::DynInstPtr &)) {
        return [this, f](const o3::DynInstPtr &inst) { (this->*f)(inst); };
    };
    auto on_cache = [this](void (CycleProfile::*f)(const CacheAccessProbeArg &)) {
        return [this, f](const CacheAccessProbeArg &arg) { (this->*f)(arg); };
    };

    listeners.push_back(new InstListener(core, "Commit",
                                         on_inst(&CycleProfile::commit)));
    listeners.push_back(new InstListener(core, "CommitStall",
                                         on_inst(&CycleProfile::commitStall)));
    listeners.push_back(new InstListener(core, "Squash",
                                         on_inst(&CycleProfile::squash)));
    listeners.push_back(new InstListener(core, "Mispredict",
                                         on_inst(&CycleProfile::mispredict)));
    listeners.push_back(new Listener<bool>(core, "Sleeping",
        [this](const bool &state) { sleeping(state); }));
    // BaseCPU's Cycles, at the start of each of the core's ticks.
    listeners.push_back(new Listener<uint64_t>(core, "Cycles",
        [this](const uint64_t &) { noteDrain(); }));
    if (l1d) {
        listeners.push_back(new CacheListener(l1d->getProbeManager(), "Miss",
                                              on_cache(&CycleProfile::l1dMiss)));
    }
    if (l2) {
        listeners.push_back(new CacheListener(l2->getProbeManager(), "Miss",
                                              on_cache(&CycleProfile::l2Miss)));
        listeners.push_back(new CacheListener(l2->getProbeManager(), "Fill",
                                              on_cache(&CycleProfile::l2Fill)));
    }
}

Cycles
CycleProfile::now() const
{
    return cpu->curCycle();
}

uint64_t
CycleProfile::unhalted(Cycles c) const
{
    // The halted cycles are counted up to the core's last accounted cycle,
    // which may be past c (a core halted the whole region has every one of
    // them halted): none of c's cycles were unhalted then.
    const uint64_t elapsed = uint64_t(c) - uint64_t(regionStart);
    return elapsed > haltedCycles ? elapsed - haltedCycles : 0;
}

uint64_t
CycleProfile::takeSamples(Cycles upTo, Addr pc)
{
    const uint64_t clock = unhalted(upTo);
    if (clock < nextSample)
        return 0;
    const uint64_t taken = (clock - nextSample) / samplePeriod + 1;
    rows[pc].samples += taken;
    nextSample += taken * samplePeriod;
    return taken;
}

void
CycleProfile::deliverSkid(Cycles c, Addr pc)
{
    auto waiting = skidding.begin();
    while (waiting != skidding.end() && waiting->first < c) {
        rows[pc].skidSamples += waiting->second;
        ++waiting;
    }
    skidding.erase(skidding.begin(), waiting);
}

void
CycleProfile::startRegion()
{
    forgetCharged(now());
    window = NoWindow;
    group.clear();
    headSeen = blamed = false;
    mispredictSeq = 0;
    missLine.clear();
    lineServed.clear();
    // A core switched in while its guest was halted (sampled simulation:
    // an atomic core suspended in the idle loop) gets no Sleeping
    // notification: its threads' status says.
    asleep = true;
    for (ThreadID t = 0; t < cpu->numThreads; ++t)
        asleep = asleep && cpu->getContext(t)->status() != ThreadContext::Active;
}

void
CycleProfile::startWindow(uint64_t warmup, uint64_t measure)
{
    fatal_if(measure == 0, "%s: a window must measure at least one micro-op",
             name());
    // gem5's O3 fetch does not reset its decoder when the core takes over
    // (Fetch::takeOverFrom resets the stage, as a squash does, but not the
    // decoder, as a squash also does): the bytes of an instruction that the
    // last drain left half decoded would be decoded with the new stream's,
    // and the guest runs garbage (a kernel oops on the 32-byte lines, whose
    // fetch buffer a drain more often stops inside an instruction).
    // BaseCPU::setReset resets it "in case it had partially decoded
    // something".  A window starts right after the switch, before the core
    // fetches.
    for (ThreadID t = 0; t < cpu->numThreads; ++t)
        cpu->getContext(t)->getDecoderPtr()->reset();
    startRegion();
    // The core was switched out drained: what its last window noted of a
    // drain is over.
    drainNotes.clear();
    storeMissLine.clear();
    window = warmup > 0 ? Warming : Measuring;
    windowOps = 0;
    warmupOps = warmup;
    measureOps = measure;
}

bool
CycleProfile::windowPending() const
{
    return (window == Warming || window == Measuring) && !asleep;
}

void
CycleProfile::notifyScript() const
{
    // The stdlib's Simulator knows only its own exit strings; this one is
    // the instruction-count stop's, which the run script handles as the
    // windows' (measure_exit_handlers.py, Sampler).
    exitSimLoop("a thread reached the max instruction count");
}

void
CycleProfile::endWarmup(Cycles c)
{
    if (window != Warming || windowOps < warmupOps || c <= groupCycle)
        return;
    // Everything up to the end of the warm-up's last cycle is accounted
    // (its commits close the group of that cycle, and nothing has moved
    // accounted since, or it would have called this first): the region
    // starts there.  What the core knows of its head and of its misses
    // carries over; what it charged does not.
    closeGroup();
    forgetCharged(accounted);
    window = Measuring;
    windowOps = 0;
}

void
CycleProfile::forgetCharged(Cycles from)
{
    rows.clear();
    drains.clear();
    forgetDrainCycles();
    regionStart = accounted = from;
    pendingCycles = haltedCycles = 0;
    nextSample = samplePeriod;
    skidding.clear();
}

void
CycleProfile::closeWindow()
{
    closeGroup();
    window = Closed;
}

void
CycleProfile::closeGroup()
{
    if (group.empty())
        return;
    const uint64_t share = unitsPerCycle / group.size();
    fatal_if(share * group.size() != unitsPerCycle,
             "%s: %d commits in one cycle; the units allow at most 8",
             name(), group.size());
    for (Addr pc : group)
        rows[pc].units[Commit] += share;
    group.clear();
}

uint64_t
CycleProfile::advanceTo(Cycles c)
{
    if (c <= accounted)
        return 0;
    const uint64_t gap = uint64_t(c) - uint64_t(accounted);
    accounted = c;
    return gap;
}

void
CycleProfile::addPending(Cycles c)
{
    const Cycles from = accounted;
    const uint64_t gap = advanceTo(c);
    if (gap == 0)
        return;
    pendingCycles += gap;
    // Each cycle in [from, c) to the last note at or before it.
    uint64_t noted = 0;
    for (size_t i = 0; i < drainNotes.size(); ++i) {
        const Cycles start = std::max(from, drainNotes[i].from);
        const Cycles end = i + 1 < drainNotes.size()
            ? std::min(c, drainNotes[i + 1].from) : c;
        if (end > start) {
            drainNotes[i].cycles += end - start;
            noted += end - start;
        }
    }
    drainUnnoted += gap - noted;
}

void
CycleProfile::forgetDrainCycles()
{
    for (DrainNote &note : drainNotes)
        note.cycles = 0;
    drainUnnoted = 0;
}

Wait
CycleProfile::servedWait(InstSeqNum store) const
{
    auto miss = storeMissLine.find(store);
    if (miss == storeMissLine.end())
        return StoreL1dHit;
    auto served = lineServed.find(miss->second);
    const Served where = served == lineServed.end() ? ServedL2
                                                    : served->second;
    return where == ServedMemory ? StoreMemory
         : where == ServedPeer ? StorePeer : StoreL2;
}

void
CycleProfile::chargeDrain(Addr pc)
{
    if (drainUnnoted > 0)
        drains[{pc, NotAtHead, 0, 0}] += drainUnnoted * unitsPerCycle;
    for (const DrainNote &note : drainNotes) {
        if (note.cycles == 0)
            continue;
        const DrainKey key = note.store == 0
            ? DrainKey{pc, NoStore, 0, 0}
            : DrainKey{pc, servedWait(note.store), note.pc, note.vaddr};
        drains[key] += note.cycles * unitsPerCycle;
    }
}

void
CycleProfile::chargeStall(Addr pc, Cause cause)
{
    rows[pc].units[cause] += pendingCycles * unitsPerCycle;
    if (cause == Barrier)
        chargeDrain(pc);
    pendingCycles = 0;
    forgetDrainCycles();
}

void
CycleProfile::pruneStoreMisses()
{
    if (storeMissLine.empty() || storeQueue == nullptr)
        return;
    // Stores leave the store queue in order, once written; only those
    // still in it can hold a later drain.
    if (storeQueue->empty()) {
        storeMissLine.clear();
        return;
    }
    const InstSeqNum oldest = storeQueue->front().instruction()->seqNum;
    while (!storeMissLine.empty() && storeMissLine.begin()->first < oldest)
        storeMissLine.erase(storeMissLine.begin());
}

void
CycleProfile::noteDrain()
{
    if (asleep || window == Closed || cpu->instList.empty())
        return;
    // The oldest instruction in flight, if in the reorder buffer, is its
    // head (one thread).
    const o3::DynInstPtr &head = cpu->instList.front();
    if (!isBarrier(head) || !head->isInROB() || head->isSquashed())
        return;
    DrainNote note{now()};
    if (storeQueue) {
        // In age order; the written stores at its front have left it.
        for (auto &entry : *storeQueue) {
            if (!entry.valid() || entry.completed())
                continue;
            const o3::DynInstPtr &store = entry.instruction();
            if (store->seqNum < head->seqNum) {
                note.store = store->seqNum;
                note.pc = store->pcState().instAddr();
                note.vaddr = store->effAddr;
            }
            break;
        }
    }
    if (!drainNotes.empty() && drainNotes.back().store == note.store)
        return;
    if (!drainNotes.empty() && drainNotes.back().from == note.from)
        drainNotes.back() = note;
    else
        drainNotes.push_back(note);
}

void
CycleProfile::commit(const o3::DynInstPtr &inst)
{
    const Cycles c = now();
    if (window == Closing && c != groupCycle)
        closeWindow();
    if (window == Closed)
        return;
    endWarmup(c);
    if (storeQueue == nullptr && inst->sqIt._cq != nullptr)
        storeQueue = inst->sqIt._cq;
    const Addr pc = inst->pcState().instAddr();
    // The boundary the skid view's samples wait for is passed when an
    // instruction begins to commit in a later cycle than theirs.
    if (!skidding.empty() && isFirstOfInstruction(inst))
        deliverSkid(c, pc);
    if (!group.empty() && c == groupCycle) {
        group.push_back(pc);
    } else {
        closeGroup();
        addPending(c);
        if (pendingCycles > 0) {
            if (blamed)
                chargeStall(blamePc, blameCause);
            else if (headSeen && headSeq == inst->seqNum)
                chargeStall(pc, headWaits);
            else
                chargeStall(pc, headSeen ? Execute : FrontEnd);
        }
        // The notes were of the head that commits now.
        drainNotes.clear();
        pruneStoreMisses();
        // The samples since the last commit, up to this cycle, go to this
        // instruction, the first to commit after them (next-committing
        // view); in the skid view they wait for the boundary after this
        // cycle's commits.
        if (const uint64_t taken = takeSamples(c, pc))
            skidding.emplace_back(c, taken);
        group.push_back(pc);
        groupCycle = c;
        accounted = c + Cycles(1);
    }
    Row &row = rows[pc];
    ++row.microOps;
    if (isLastOfInstruction(inst))
        ++row.instructions;
    headSeen = false;
    blamed = false;
    missLine.erase(inst->seqNum);
    // The cycles after a mispredicted branch or a squash-after instruction
    // commits, until the next commit, refill the pipeline it emptied.
    if (inst->seqNum == mispredictSeq || inst->isSquashAfter()) {
        blamed = true;
        blamePc = pc;
        blameCause = inst->seqNum == mispredictSeq ? Mispredict : Squash;
    }
    if (window == Warming || window == Measuring)
        ++windowOps;
    if (window == Measuring && windowOps == measureOps) {
        // The rest of this cycle's commits still belong to the window.
        window = Closing;
        notifyScript();
    }
}

void
CycleProfile::commitStall(const o3::DynInstPtr &inst)
{
    headSeen = true;
    headSeq = inst->seqNum;
    headPc = inst->pcState().instAddr();
    if (isBarrier(inst)) {
        headWaits = Barrier;
    } else if (inst->isLoad() || inst->isAtomic()) {
        auto miss = missLine.find(inst->seqNum);
        if (miss == missLine.end()) {
            headWaits = Execute;
        } else {
            auto served = lineServed.find(miss->second);
            Served where = served == lineServed.end() ? ServedL2
                                                      : served->second;
            headWaits = where == ServedMemory ? LoadMemory
                      : where == ServedPeer ? LoadPeer : LoadL2;
        }
    } else if (inst->isStore()) {
        headWaits = Store;
    } else {
        headWaits = Execute;
    }
}

void
CycleProfile::squash(const o3::DynInstPtr &inst)
{
    missLine.erase(inst->seqNum);
    // The first squashed instruction leaving the head since the last
    // commit is the one the squash began at (a fault, an interrupted or
    // re-executed instruction), unless a branch or a squash-after
    // instruction already holds the blame.
    if (!blamed) {
        blamed = true;
        blamePc = inst->pcState().instAddr();
        blameCause = Squash;
    }
}

void
CycleProfile::mispredict(const o3::DynInstPtr &inst)
{
    mispredictSeq = inst->seqNum;
}

void
CycleProfile::sleeping(const bool &now_asleep)
{
    // BaseCPU notifies Sleeping(false) when a suspended core wakes, before
    // the core's next tick: the cycles since it went to sleep were halted.
    // (They were once taken at the Cycles probe point after the wake, which
    // BaseCPU notifies after Sleeping: the core was awake by then, and the
    // halted cycles went to the instruction after the idle loop's mwait.)
    if (window == Closing)
        closeWindow();
    if (window == Closed)
        return;
    endWarmup(now());
    if (now_asleep && !asleep && (window == Warming || window == Measuring))
        notifyScript();
    if (now_asleep && !asleep)
        addPending(now());
    else if (!now_asleep && asleep)
        haltedCycles += advanceTo(now());
    asleep = now_asleep;
}

void
CycleProfile::l1dMiss(const CacheAccessProbeArg &arg)
{
    const RequestPtr &req = arg.pkt->req;
    if (!req->hasInstSeqNum())
        return;
    const Addr line = lineOf(arg.pkt->getAddr());
    // A load (a locked one too) or a store: stores write after they
    // commit, so their misses are kept apart, until they leave the store
    // queue.
    if (arg.pkt->isRead())
        missLine[req->getReqInstSeqNum()] = line;
    else if (arg.pkt->isWrite())
        storeMissLine[req->getReqInstSeqNum()] = line;
    else
        return;
    lineServed[line] = ServedL2;
}

void
CycleProfile::l2Miss(const CacheAccessProbeArg &arg)
{
    lineServed[lineOf(arg.pkt->getAddr())] = ServedMemory;
}

void
CycleProfile::l2Fill(const CacheAccessProbeArg &arg)
{
    lineServed[lineOf(arg.pkt->getAddr())] =
        arg.pkt->cacheResponding() ? ServedPeer : ServedMemory;
}

std::string
CycleProfile::dumpRegion(const std::string &path)
{
    if (window == Closing)
        closeWindow();
    endWarmup(now());
    if (window == Warming) {
        // A window whose warm-up did not end measured nothing.
        forgetCharged(now());
        group.clear();
        headSeen = blamed = false;
    }
    closeGroup();
    if (window != Closed) {
        if (asleep)
            haltedCycles += advanceTo(now());
        else
            addPending(now());
    }
    // The cycles after the last commit have no next instruction inside the
    // region: they go to the head the core was waiting for, or to address
    // 0 (no instruction) if the reorder buffer was empty.
    const Addr tail = blamed ? blamePc : headSeen ? headPc : 0;
    if (pendingCycles > 0) {
        if (blamed)
            chargeStall(blamePc, blameCause);
        else if (headSeen)
            chargeStall(headPc, headWaits);
        else
            chargeStall(0, FrontEnd);
    }
    // Samples after the last commit: to the same instruction as its cycles
    // (next-committing view); in the skid view, like those still waiting
    // for a boundary, to address 0: the instruction they name is not in the
    // region.
    uint64_t unnamed = 0;
    if (accounted > regionStart)
        unnamed = takeSamples(Cycles(uint64_t(accounted) - 1), tail);
    for (const auto &waiting : skidding)
        unnamed += waiting.second;
    skidding.clear();
    if (unnamed > 0)
        rows[0].skidSamples += unnamed;

    std::vector<std::pair<Addr, const Row *>> sorted;
    sorted.reserve(rows.size());
    for (const auto &[pc, row] : rows)
        sorted.emplace_back(pc, &row);
    std::sort(sorted.begin(), sorted.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });

    // A window's table is final: the commits of the core's drain, when the
    // atomic cores take over, are not the window's.
    if (window != NoWindow)
        window = Closed;

    // The drain table first: a region's table is there only with its own.
    const std::string problem = writeDrains(drainPath(path));
    if (!problem.empty())
        return problem;
    return writeTable(path, [&](std::FILE *out) {
        std::fprintf(out, "# hotline cycle profile 3: units_per_cycle=%llu "
                     "region_cycles=%llu halted_cycles=%llu sample_period=%llu "
                     "core=%s\n",
                     (unsigned long long)unitsPerCycle,
                     (unsigned long long)(accounted - regionStart),
                     (unsigned long long)haltedCycles,
                     (unsigned long long)samplePeriod, cpu->name().c_str());
        std::fprintf(out, "pc,instructions,micro_ops,samples,skid_samples");
        for (const char *cause : causeNames)
            std::fprintf(out, ",%s", cause);
        std::fprintf(out, "\n");
        for (const auto &[pc, row] : sorted) {
            std::fprintf(out, "%llu,%llu,%llu,%llu,%llu", (unsigned long long)pc,
                         (unsigned long long)row->instructions,
                         (unsigned long long)row->microOps,
                         (unsigned long long)row->samples,
                         (unsigned long long)row->skidSamples);
            for (uint64_t units : row->units)
                std::fprintf(out, ",%llu", (unsigned long long)units);
            std::fprintf(out, "\n");
        }
    });
}

std::string
CycleProfile::writeDrains(const std::string &path) const
{
    return writeTable(path, [&](std::FILE *out) {
        std::fprintf(out, "# hotline drain profile 1: units_per_cycle=%llu "
                     "core=%s\n", (unsigned long long)unitsPerCycle,
                     cpu->name().c_str());
        std::fprintf(out, "barrier_pc,waited_for,store_pc,vaddr,units\n");
        for (const auto &[key, units] : drains) {
            std::fprintf(out, "%llu,%s,%llu,%llu,%llu\n",
                         (unsigned long long)key.barrierPc,
                         waitNames[key.wait],
                         (unsigned long long)key.storePc,
                         (unsigned long long)key.vaddr,
                         (unsigned long long)units);
        }
    });
}

} // namespace hotline
} // namespace gem5
