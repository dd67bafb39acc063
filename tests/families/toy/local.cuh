// Found next to the including file, before include_dirs are searched.
#pragma once
#include "common/types.cuh"

__device__ inline elem_t scale(elem_t v, float alpha) { return from_float(to_float(v) * alpha); }
