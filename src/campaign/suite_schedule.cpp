#include "campaign/suite_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace kf {

namespace {
// Past-floor weights are small fractions (relative gains); a shape under the floor outranks them all.
constexpr double kUnderFloor = 1e6;
}  // namespace

SuiteSchedule::SuiteSchedule(std::vector<SuiteShapeStart> shapes, size_t slots, SuiteScheduleOptions options)
    : slots_(slots), options_(options) {
  if (slots == 0) throw std::invalid_argument("suite schedule: no slots");
  for (auto& s : shapes) {
    ShapeState st;
    st.start = s;
    st.evaluated = s.evaluated;
    shapes_.push_back(std::move(st));
  }
  reallocate();
}

double SuiteSchedule::weight(const ShapeState& s, size_t all_evaluated) const {
  if (s.evaluated < options_.floor) return kUnderFloor + static_cast<double>(options_.floor - s.evaluated);
  const auto& h = s.best_after;
  const std::optional<double> now = h.empty() ? s.start.best_us : h.back();
  double gain = 0;
  if (now && !h.empty()) {
    // The best `window` evaluations ago; a shape whose first time came within the window counts from it.
    const size_t back = std::min(options_.window, h.size());
    std::optional<double> then = h.size() > back ? h[h.size() - back - 1] : s.start.best_us;
    for (size_t k = h.size() - back; !then && k < h.size(); ++k) then = h[k];
    gain = (*then - *now) / *now;
  }
  const double explore = options_.explore * std::sqrt(std::log1p(static_cast<double>(all_evaluated)) /
                                                      (1.0 + static_cast<double>(s.evaluated)));
  double gap = 0;
  if (now && s.start.baseline_us && *s.start.baseline_us > 0)
    gap = options_.gap_weight * std::clamp(*now / *s.start.baseline_us - 1.0, 0.0, 1.0);
  return gain + explore + gap;
}

void SuiteSchedule::reallocate() {
  size_t all = 0;
  for (const auto& s : shapes_) all += s.evaluated;
  std::vector<double> w(shapes_.size());
  std::vector<size_t> q(shapes_.size(), 0);
  for (size_t i = 0; i < shapes_.size(); ++i) w[i] = shapes_[i].finished ? 0 : weight(shapes_[i], all);
  for (size_t slot = 0; slot < slots_; ++slot) {
    std::optional<size_t> pick;
    for (size_t i = 0; i < shapes_.size(); ++i) {
      if (shapes_[i].finished || (options_.max_per_shape && q[i] >= options_.max_per_shape)) continue;
      if (!pick) {
        pick = i;
        continue;
      }
      const double a = w[i] / static_cast<double>(q[i] + 1), b = w[*pick] / static_cast<double>(q[*pick] + 1);
      // Ties (every shape under the floor holding as many slots) go to the shape with fewer evaluations.
      if (a > b || (a == b && shapes_[i].evaluated < shapes_[*pick].evaluated)) pick = i;
    }
    if (!pick) break;  // every shape finished or at its cap
    ++q[*pick];
  }
  for (size_t i = 0; i < shapes_.size(); ++i) {
    // Under the lock: on_grow(i, {}) then guarantees the old wake is never called again.
    if (q[i] > shapes_[i].quota && shapes_[i].wake) shapes_[i].wake();
    shapes_[i].quota = q[i];
  }
}

size_t SuiteSchedule::quota(size_t shape) const {
  std::lock_guard lock(mu_);
  return shapes_.at(shape).quota;
}

void SuiteSchedule::record(size_t shape, std::optional<double> time_us) {
  std::lock_guard lock(mu_);
  ShapeState& s = shapes_.at(shape);
  std::optional<double> best = s.best_after.empty() ? s.start.best_us : s.best_after.back();
  if (time_us && (!best || *time_us < *best)) best = time_us;
  s.best_after.push_back(best);
  ++s.evaluated;
  reallocate();
}

void SuiteSchedule::finished(size_t shape) {
  std::lock_guard lock(mu_);
  shapes_.at(shape).finished = true;
  reallocate();
}

void SuiteSchedule::on_grow(size_t shape, std::function<void()> wake) {
  std::lock_guard lock(mu_);
  shapes_.at(shape).wake = std::move(wake);
}

std::vector<SuiteSchedule::ShapeView> SuiteSchedule::view() const {
  std::lock_guard lock(mu_);
  size_t all = 0;
  for (const auto& s : shapes_) all += s.evaluated;
  std::vector<ShapeView> out;
  for (const auto& s : shapes_) {
    ShapeView v;
    v.evaluated = s.evaluated;
    v.best_us = s.best_after.empty() ? s.start.best_us : s.best_after.back();
    v.quota = s.quota;
    v.finished = s.finished;
    v.weight = s.finished ? 0 : weight(s, all);
    out.push_back(v);
  }
  return out;
}

std::string SuiteSchedule::line() const {
  std::string out;
  const auto v = view();
  for (size_t i = 0; i < v.size(); ++i) {
    char buf[96];
    if (v[i].best_us)
      std::snprintf(buf, sizeof buf, "#%zu %s%zu ev %.4g us", i + 1, v[i].finished ? "done " : "", v[i].evaluated,
                    *v[i].best_us);
    else
      std::snprintf(buf, sizeof buf, "#%zu %s%zu ev", i + 1, v[i].finished ? "done " : "", v[i].evaluated);
    out += (i ? " | " : "") + std::string(buf);
    if (!v[i].finished && v[i].quota != 1) out += " x" + std::to_string(v[i].quota);
  }
  return out;
}

size_t SuiteQuota::dispatches_left(const LoopState& s) const {
  const size_t in_flight = s.dispatched - s.evaluated;
  const size_t q = schedule_.quota(shape_);
  return q > in_flight ? q - in_flight : 0;
}

}  // namespace kf
