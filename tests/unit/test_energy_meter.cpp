// The energy counter where NVML is missing (this suite's CPU machines): unavailable, with the reason, and every
// read empty, so a timed evaluation stores no energy rather than a made-up one.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include "gpu/energy_meter.hpp"

TEST(EnergyMeter, WithoutNvmlIsUnavailableAndSaysWhy) {
  if (void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(lib);
    GTEST_SKIP() << "NVML is installed here (a GPU machine): its counter is checked by the GPU tests";
  }
  const kf::gpu::EnergyMeter meter;
  EXPECT_FALSE(meter.available());
  EXPECT_NE(meter.why_not().find("libnvidia-ml"), std::string::npos) << meter.why_not();
  EXPECT_FALSE(meter.read_mj());
}
