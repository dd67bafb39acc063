// The worker's evaluations on one device: gate a candidate against the reference on every
// gate shape its constraints admit, then time it on the campaign shape and check the timed
// launches' output again. Families, reference cubins and gate data are cached across requests.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "eval/worker/dataset.hpp"
#include "eval/worker/dataset_cache.hpp"
#include "eval/protocol.hpp"
#include "eval/worker/request_loop.hpp"
#include "gpu/buffer.hpp"
#include "gpu/library.hpp"
#include "gpu/stream.hpp"

namespace kf {

class Evaluator : public RequestHandler {
 public:
  explicit Evaluator(DeviceLimits dev);
  ~Evaluator() override;

  // Never throws for the candidate's faults, except a sticky CUDA error (gpu::CudaError with
  // sticky()), after which the process must answer runtime_fault and exit.
  EvalResult evaluate(const EvalRequest& req) override;
  TimeManyResult time_many(const TimeManyRequest& req) override;

 private:
  struct Candidate;

  const Family& family(const std::string& spec_path);
  cudaKernel_t reference_kernel(const Family& f, const std::string& ref_cubin_path);
  // The gate data for one shape, built (and its reference run) on first use.
  std::shared_ptr<DataSet> dataset(const Family& f, const std::string& ref_cubin_path, const Shape& s,
                                   double input_scale, uint64_t seed);
  gpu::DeviceBuffer* l2_flush();

  // Loads the candidate and gates it on every admissible gate shape; fills r.
  std::unique_ptr<Candidate> gate(const EvalRequest& req, EvalResult& r);
  // Times a gated candidate on its campaign shape; on failure sets r's status and error.
  std::optional<TimingStats> time(Candidate& c, EvalResult& r, const TimingOptions& o);

  DeviceLimits dev_;
  gpu::Stream stream_;
  std::map<std::string, Family> families_;
  std::map<std::string, std::unique_ptr<gpu::Library>> references_;
  DatasetCache<DataSet> datasets_;
  std::unique_ptr<gpu::DeviceBuffer> flush_;
};

}  // namespace kf
