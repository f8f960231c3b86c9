// Your Breaker (breaker.hpp) behind harness.hpp's BreakerHandle: the one file compiled with your
// rules, linked into both the lab and replay. Nothing to change here.
#include "breaker.hpp"

BreakerHandle::BreakerHandle(Settings settings, std::function<double()> clock)
    : breaker_(clock ? std::make_unique<Breaker>(settings, std::move(clock)) : std::make_unique<Breaker>(settings)) {}
BreakerHandle::BreakerHandle(BreakerHandle&&) noexcept = default;
BreakerHandle& BreakerHandle::operator=(BreakerHandle&&) noexcept = default;
BreakerHandle::~BreakerHandle() = default;

std::optional<Permit> BreakerHandle::allow() { return breaker_->allow(); }
void BreakerHandle::record(Outcome outcome, Permit permit) { breaker_->record(outcome, permit); }
const std::string& BreakerHandle::state() const { return breaker_->state; }
int BreakerHandle::failures() const { return breaker_->failures(); }
const Settings& BreakerHandle::settings() const { return breaker_->settings; }
const std::vector<std::string>& BreakerHandle::transitions() const { return breaker_->transitions; }

Outcome classify_answer(std::optional<int> status) { return classify(status); }
