#include "util/progress_line.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace kf {

namespace {

// printf into a std::string: the label and the unit may be any length (a device name or a
// dtype read from a file), so the line is never built in a fixed buffer.
template <class... Args>
std::string format(const char* fmt, Args... args) {
  const int n = std::snprintf(nullptr, 0, fmt, args...);
  if (n <= 0) return {};
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), fmt, args...);
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace

std::string format_eta(double seconds) {
  // Past 99 hours the figure says nothing a person would act on, and a rate of almost nothing
  // over an estimated total gives seconds beyond any integer type.
  constexpr double kCap = 99.0 * 3600.0;
  if (!(seconds >= 0)) return "?";
  if (seconds > kCap) return ">99h";
  const int64_t s = static_cast<int64_t>(seconds);
  if (s >= 3600) return format("%lldh%02lldm", static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60));
  return format("%lldm%02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
}

ProgressLine::ProgressLine(std::string label, std::string unit, size_t total, bool approximate, bool quiet)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), approximate_(approximate), quiet_(quiet),
      tty_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()), last_(start_) {}

void ProgressLine::update(size_t done) {
  if (quiet_) return;
  const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_).count();
  if (since >= (tty_ ? 0.5 : kLogInterval)) draw(done);
}

void ProgressLine::finish(size_t done) {
  if (quiet_) return;
  draw(done);
  if (tty_) std::fputc('\n', stderr);
}

std::string ProgressLine::text(size_t done, double elapsed) const {
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  std::string line = label_ + ": " + std::to_string(done);
  if (total_) line += std::string("/") + (approximate_ ? "~" : "") + std::to_string(total_);
  line += " " + unit_ + format(", %.1f/s, %.0f s", rate, elapsed);
  if (total_ && done > 0 && done < total_ && rate > 0)
    line += ", ETA " + format_eta(static_cast<double>(total_ - done) / rate);
  return line;
}

void ProgressLine::draw(size_t done) {
  const auto now = std::chrono::steady_clock::now();
  last_ = now;
  const std::string line = text(done, std::chrono::duration<double>(now - start_).count());
  if (tty_)
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
  else
    std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

}  // namespace kf
