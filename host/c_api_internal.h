// What the C API's translation units share: the handles that wrap C++ objects, and turning a Status
// into a code plus this thread's last message. Internal: not installed.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <vkfuse/vkfuse.h>
#include <vkfuse/vkfuse.hpp>

namespace vkfuse::c_api {

std::string& last_error();  // this thread's
vkf_status fail(const Status& status);
vkf_status fail(vkf_status code, std::string message);
vkf_status invalid(const char* function, const char* what);
// VKF_OK for an ok status, else fail(status).
inline vkf_status code_of(const Status& status) { return status.ok() ? VKF_OK : fail(status); }
inline bool valid_dtype(vkf_dtype dtype) { return dtype >= VKF_F32 && dtype <= VKF_U8; }
// A C tensor as a HostTensor (copied), its dtype, shape and size checked; errors name `function`.
vkf_status host_tensor(const vkf_tensor& tensor, const char* function, HostTensor* out);

}  // namespace vkfuse::c_api

struct vkf_context {
  vkfuse::Context context;
  vkfuse::DeviceSummary device;
};

struct vkf_session {
  vkfuse::Session session;
  std::map<std::string, vkfuse::HostTensor> outputs;  // the last run's (vkf_tensor.name points at a key)
  mutable std::mutex outputs_mutex;                   // runs on several threads replace `outputs` in turn
  std::vector<std::string> labels;  // the groups' (vkf_group_info.label points at one)
};
