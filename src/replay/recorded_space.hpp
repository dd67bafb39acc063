// A recorded space: every config of a search that was measured exhaustively (by kforge or an
// imported tuner), with its time or its failure. Replaying a strategy against it costs no GPU.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "space/space.hpp"

namespace kf {

struct RecordedPoint {
  Config config;
  std::optional<double> time_us;  // nullopt: the config failed (compile, launch, wrong, ...)
  // A failed point's kind as its file names it ("CompilationFailedConfig", T4's "compile",
  // ...); "" when unknown. Only `import --store` reads it, to keep the kind in the database.
  std::string failure = {};
};

class RecordedSpace {
 public:
  // params: the domains, in order (neighbouring values are "nearby"). Every point must assign
  // exactly these parameters, with values from their domains (std::invalid_argument
  // otherwise). The space's validity is "was recorded": configs never measured (rejected
  // by constraints, say) are not part of it, while recorded failures are, and cost an
  // evaluation like any other. A config recorded twice keeps its fastest time, or stays
  // failed if it never succeeded. info carries provenance (source file, device, kernel).
  RecordedSpace(std::vector<ParamSpec> params, std::vector<RecordedPoint> points,
                std::string name = "", nlohmann::json info = nlohmann::json::object());

  const std::string& name() const { return name_; }
  const nlohmann::json& info() const { return info_; }
  const SearchSpace& space() const { return space_; }
  // One point per distinct config, in first-recorded order.
  const std::vector<RecordedPoint>& points() const { return points_; }
  // The recorded point of c, or nullptr if c was never recorded.
  const RecordedPoint* find(const Config& c) const;

  size_t size() const { return points_.size(); }  // valid configs of the space
  size_t failed() const { return failed_; }
  // The fastest recorded point; nullptr when every recorded config failed.
  const RecordedPoint* optimum() const { return optimum_ ? &points_[*optimum_] : nullptr; }
  // The slowest successful time (what "no success yet" is worth on a best-so-far curve).
  std::optional<double> worst_us() const { return worst_us_; }

 private:
  std::string name_;
  nlohmann::json info_;
  std::vector<RecordedPoint> points_;
  // Shared with the space's validity predicate, so copies of this object stay consistent.
  std::shared_ptr<const std::unordered_map<std::string, size_t>> index_;
  SearchSpace space_;
  size_t failed_ = 0;
  std::optional<size_t> optimum_;
  std::optional<double> worst_us_;
};

}  // namespace kf
