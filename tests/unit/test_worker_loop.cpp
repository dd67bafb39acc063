// The worker's protocol loop with a fake handler: no GPU needed.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "eval/worker/request_loop.hpp"
#include "gpu/check.hpp"

using nlohmann::json;
using namespace kf;

namespace {

// id 666 hits a sticky CUDA error, id 13 a plain exception; everything else is ok.
class FakeHandler : public RequestHandler {
 public:
  EvalResult evaluate(const EvalRequest& req) override {
    seen.push_back(req.id);
    if (req.id == 666) throw gpu::CudaError(cudaErrorIllegalAddress, "kernel execution");
    if (req.id == 13) throw std::runtime_error("unlucky");
    EvalResult r;
    r.id = req.id;
    r.gate_shapes = 2;
    return r;
  }
  TimeManyResult time_many(const TimeManyRequest& req) override {
    TimeManyResult t;
    t.id = req.id;
    for (const EvalRequest& item : req.items) {
      if (item.id == 666) throw gpu::CudaError(cudaErrorLaunchFailure, "kernel execution");
      t.items.push_back(evaluate(item));
    }
    return t;
  }
  std::vector<int64_t> seen;
};

json eval_request(int64_t id) {
  EvalRequest r;
  r.id = id;
  r.spec_path = "x.json";
  r.cubin_path = "c.cubin";
  r.ref_cubin_path = "r.cubin";
  return to_json(r);
}

std::vector<json> replies(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(json::parse(line));
  return out;
}

}  // namespace

TEST(WorkerLoop, AnswersEachRequestAndSurvivesGarbage) {
  FakeHandler h;
  json missing = eval_request(5);
  missing.erase("cubin_path");
  std::istringstream in("{not json\n\n   \n" + json{{"type", "frobnicate"}, {"id", 7}}.dump() + "\n" +
                        missing.dump() + "\n" + eval_request(8).dump() + "\n" + eval_request(13).dump() + "\n" +
                        json::array({1, 2}).dump() + "\n" + eval_request(9).dump() + "\n");
  std::ostringstream out;
  EXPECT_EQ(serve_requests(h, in, out), 0);
  const auto r = replies(out.str());
  ASSERT_EQ(r.size(), 7u) << out.str();
  for (const json& j : r) EXPECT_EQ(j["type"], "result") << j.dump();

  EXPECT_EQ(r[0]["status"], "runtime_fault");
  EXPECT_EQ(r[0]["error"].get<std::string>().rfind("protocol: malformed JSON", 0), 0u);
  EXPECT_EQ(r[1]["id"], 7);
  EXPECT_NE(r[1]["error"].get<std::string>().find("unknown request type 'frobnicate'"), std::string::npos);
  EXPECT_EQ(r[2]["id"], 5);
  EXPECT_NE(r[2]["error"].get<std::string>().find("cubin_path"), std::string::npos) << r[2].dump();
  EXPECT_EQ(r[3]["id"], 8);
  EXPECT_EQ(r[3]["status"], "ok");
  EXPECT_EQ(r[3]["gate_shapes"], 2);
  EXPECT_EQ(r[4]["id"], 13);
  EXPECT_EQ(r[4]["status"], "runtime_fault");
  EXPECT_NE(r[4]["error"].get<std::string>().find("unlucky"), std::string::npos);
  EXPECT_EQ(r[5]["status"], "runtime_fault");  // an array is no request
  EXPECT_EQ(r[6]["id"], 9);
  EXPECT_EQ(r[6]["status"], "ok");
  EXPECT_EQ(h.seen, (std::vector<int64_t>{8, 13, 9}));  // malformed requests never reach the handler
}

TEST(WorkerLoop, StickyErrorIsAnsweredThenEndsTheSession) {
  FakeHandler h;
  std::istringstream in(eval_request(1).dump() + "\n" + eval_request(666).dump() + "\n" + eval_request(2).dump() + "\n");
  std::ostringstream out;
  EXPECT_EQ(serve_requests(h, in, out), kWorkerExitSticky);
  const auto r = replies(out.str());
  ASSERT_EQ(r.size(), 2u) << out.str();
  EXPECT_EQ(r[1]["id"], 666);
  EXPECT_EQ(r[1]["status"], "runtime_fault");
  EXPECT_NE(r[1]["error"].get<std::string>().find("cudaErrorIllegalAddress"), std::string::npos) << r[1].dump();
  EXPECT_EQ(h.seen, (std::vector<int64_t>{1, 666}));  // request 2 is never served
}

TEST(WorkerLoop, TimeManyRepliesWithTimesEvenOnAStickyError) {
  FakeHandler h;
  TimeManyRequest ok;
  ok.id = 40;
  ok.items = {eval_request_from_json(eval_request(1)), eval_request_from_json(eval_request(2))};
  TimeManyRequest bad = ok;
  bad.id = 41;
  bad.items.push_back(eval_request_from_json(eval_request(666)));
  std::istringstream in(to_json(ok).dump() + "\n" + to_json(bad).dump() + "\n");
  std::ostringstream out;
  EXPECT_EQ(serve_requests(h, in, out), kWorkerExitSticky);
  const auto r = replies(out.str());
  ASSERT_EQ(r.size(), 2u) << out.str();
  const TimeManyResult first = time_many_result_from_json(r[0]);
  EXPECT_EQ(first.id, 40);
  ASSERT_EQ(first.items.size(), 2u);
  EXPECT_EQ(first.items[1].status, Status::Ok);
  const TimeManyResult second = time_many_result_from_json(r[1]);
  EXPECT_EQ(second.id, 41);
  ASSERT_EQ(second.items.size(), 3u);
  for (const EvalResult& item : second.items) {
    EXPECT_EQ(item.status, Status::RuntimeFault);
    EXPECT_NE(item.error.find("cudaErrorLaunchFailure"), std::string::npos);
  }
  EXPECT_EQ(second.items[2].id, 666);
}

TEST(CudaErrors, StickyClassification) {
  for (cudaError_t e : {cudaErrorIllegalAddress, cudaErrorMisalignedAddress, cudaErrorLaunchFailure,
                        cudaErrorAssert, cudaErrorECCUncorrectable, cudaErrorIllegalInstruction,
                        cudaErrorHardwareStackError, cudaErrorLaunchTimeout})
    EXPECT_TRUE(gpu::is_sticky(e)) << gpu::error_text(e);
  for (cudaError_t e : {cudaErrorLaunchOutOfResources, cudaErrorInvalidConfiguration, cudaErrorInvalidValue,
                        cudaErrorMemoryAllocation, cudaErrorNoKernelImageForDevice, cudaErrorInvalidKernelImage,
                        cudaErrorNoDevice, cudaErrorInsufficientDriver, cudaErrorCooperativeLaunchTooLarge})
    EXPECT_FALSE(gpu::is_sticky(e)) << gpu::error_text(e);
  const gpu::CudaError err(cudaErrorIllegalAddress, "kernel execution");
  EXPECT_STREQ(err.what(), "kernel execution: cudaErrorIllegalAddress: an illegal memory access was encountered");
  EXPECT_TRUE(err.sticky());
  EXPECT_THROW(gpu::check(cudaErrorInvalidValue, "x"), gpu::CudaError);
  EXPECT_NO_THROW(gpu::check(cudaSuccess, "x"));
}
