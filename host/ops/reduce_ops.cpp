// Reductions over trailing axes: ReduceSum, ReduceMean, ReduceMax, ReduceMin. Attributes: "axis" (the
// first reduced axis; every axis after it is reduced too; default 0 = all) and "keepdims" (default 1).
// The combine step lives in the reduce root template; chains fuse before (into its loads) and after.
#include <algorithm>
#include <cmath>

#include "host/op_registry.h"

namespace vkfuse {
namespace {

constexpr AttrDef kReduceAttrs[] = {{"axis", 0.0f}, {"keepdims", 1.0f}};

// Scalar references fold one more element into an accumulator: (acc, x) -> acc.
double fold_sum(std::span<const double> in, std::span<const float>) { return in[0] + in[1]; }
double fold_max(std::span<const double> in, std::span<const float>) { return std::max(in[0], in[1]); }
double fold_min(std::span<const double> in, std::span<const float>) { return std::min(in[0], in[1]); }

constexpr TestDomain kDomain{-4.0f, 4.0f, 0.0f, false};

constexpr OpDef kReduceOps[] = {
    {"ReduceSum", OpKind::kReduce, 1, "", "", {InputClass::kFloat}, TypeRule::kSameAsFirst, kReduceAttrs, fold_sum,
     1.0f, Tolerance::kExact, kDomain, ReduceCombine::kSum},
    {"ReduceMean", OpKind::kReduce, 1, "", "", {InputClass::kFloat}, TypeRule::kSameAsFirst, kReduceAttrs, fold_sum,
     1.0f, Tolerance::kExact, kDomain, ReduceCombine::kMean},
    {"ReduceMax", OpKind::kReduce, 1, "", "", {InputClass::kFloat}, TypeRule::kSameAsFirst, kReduceAttrs, fold_max,
     1.0f, Tolerance::kExact, kDomain, ReduceCombine::kMax},
    {"ReduceMin", OpKind::kReduce, 1, "", "", {InputClass::kFloat}, TypeRule::kSameAsFirst, kReduceAttrs, fold_min,
     1.0f, Tolerance::kExact, kDomain, ReduceCombine::kMin},
};

}  // namespace

std::span<const OpDef> reduce_ops() { return kReduceOps; }

}  // namespace vkfuse
