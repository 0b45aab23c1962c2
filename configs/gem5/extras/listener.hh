/*
 * A probe listener that calls a function, on any object's probe manager.
 * gem5's ProbeListenerArg takes the manager of the listening object; the
 * caches and cores hotline listens to are not that object.
 */

#ifndef HOTLINE_LISTENER_HH
#define HOTLINE_LISTENER_HH

#include <functional>
#include <string>
#include <utility>

#include "sim/probe/probe.hh"

namespace gem5
{
namespace hotline
{

template <class Arg>
class Listener : public ProbeListenerArgBase<Arg>
{
  public:
    Listener(ProbeManager *manager, const std::string &point,
             std::function<void(const Arg &)> call)
        : ProbeListenerArgBase<Arg>(manager, point), call(std::move(call))
    {}

    void notify(const Arg &value) override { call(value); }

  private:
    std::function<void(const Arg &)> call;
};

} // namespace hotline
} // namespace gem5

#endif // HOTLINE_LISTENER_HH
