#include "core/interrupts.hpp"
#include "mainboard/sampler.hpp"

namespace mainboard {

// In this library's own copy of the interrupt state: the one its long calls read.
struct InterruptScope::Handlers {
  explicit Handlers(std::vector<int> signals) : handlers(std::move(signals)) {}
  core::InterruptHandlers handlers;
};

InterruptScope::InterruptScope(std::vector<int> signals)
    : handlers_(std::make_unique<Handlers>(std::move(signals))) {}

InterruptScope::~InterruptScope() = default;

int InterruptScope::signal() const noexcept {
  return detail::g_interrupts.count.load() > 0 ? detail::g_interrupts.signal.load() : 0;
}

}  // namespace mainboard
