// vkfuse devices: every Vulkan device with its driver and the caps vkfuse plans with.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "backend/device.h"
#include "backend/device_plan.h"
#include "commands.h"

namespace vkfuse::cli {
namespace {

struct Field {
  std::string key;
  std::string text;  // for humans
  std::string json;  // JSON value
};

std::vector<Field> fields_of(const DeviceCaps& c) {
  auto num = [](auto v) { return std::to_string(v); };
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  auto join = [](const std::vector<std::string>& items) {
    std::string text;
    for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
    return text.empty() ? std::string("none") : text;
  };
  auto str = [](const std::string& s) { return "\"" + json_escape(s) + "\""; };
  const std::string driver = c.driver_name + (c.driver_info.empty() ? "" : " " + c.driver_info);
  const std::string wg_size = num(c.max_workgroup_size[0]) + "x" + num(c.max_workgroup_size[1]) + "x" + num(c.max_workgroup_size[2]);
  const std::string wg_json = "[" + num(c.max_workgroup_size[0]) + "," + num(c.max_workgroup_size[1]) + "," + num(c.max_workgroup_size[2]) + "]";
  return {
      {"index", num(c.index), num(c.index)},
      {"name", c.name, str(c.name)},
      {"type", device_type_name(c.type), str(device_type_name(c.type))},
      {"api_version", version_to_string(c.api_version), str(version_to_string(c.api_version))},
      {"driver", driver, str(driver)},
      {"vendor_id", num(c.vendor_id), num(c.vendor_id)},
      {"device_uuid", uuid_to_hex(c.device_uuid), str(uuid_to_hex(c.device_uuid))},
      {"shared_memory_bytes", num(c.max_shared_memory_bytes), num(c.max_shared_memory_bytes)},
      {"max_workgroup_invocations", num(c.max_workgroup_invocations), num(c.max_workgroup_invocations)},
      {"max_workgroup_size", wg_size, wg_json},
      {"subgroup_size", num(c.subgroup_size), num(c.subgroup_size)},
      {"compute_units", c.compute_units ? num(c.compute_units) : "not reported (planned as " + num(kDefaultComputeUnits) + ")",
       num(c.compute_units)},
      {"subgroup_operations", num(c.subgroup_operations), num(c.subgroup_operations)},
      {"subgroup_in_compute", flag(c.subgroup_in_compute), flag(c.subgroup_in_compute)},
      {"push_constant_bytes", num(c.max_push_constants_bytes), num(c.max_push_constants_bytes)},
      {"storage_buffers_per_stage", num(c.max_storage_buffers_per_stage), num(c.max_storage_buffers_per_stage)},
      {"max_storage_buffer_range", num(c.max_storage_buffer_range), num(c.max_storage_buffer_range)},
      {"max_memory_allocation_size", num(c.max_memory_allocation_size), num(c.max_memory_allocation_size)},
      {"device_local_bytes", num(c.device_local_bytes), num(c.device_local_bytes)},
      {"storage_16bit", flag(c.storage_buffer_16bit), flag(c.storage_buffer_16bit)},
      {"storage_8bit", flag(c.storage_buffer_8bit), flag(c.storage_buffer_8bit)},
      {"shader_float16", flag(c.shader_float16), flag(c.shader_float16)},
      {"shader_int8", flag(c.shader_int8), flag(c.shader_int8)},
      {"cooperative_matrix", flag(c.cooperative_matrix), flag(c.cooperative_matrix)},
      {"coopmat_f16_gemm", flag(c.coopmat_nv_f16), flag(c.coopmat_nv_f16)},
      {"coopmat_nv_sizes", join(c.coopmat_nv_sizes), "\"" + json_escape(join(c.coopmat_nv_sizes)) + "\""},
      {"timestamps", flag(c.timestamps), flag(c.timestamps)},
      {"timestamp_period_ns", std::to_string(c.timestamp_period_ns), std::to_string(c.timestamp_period_ns)},
      {"driver_quirks", quirks_text(c), "\"" + quirks_text(c) + "\""},
  };
}

int list_devices(bool json) {
  auto instance = Instance::create({});
  if (!instance.ok()) {
    std::fprintf(stderr, "vkfuse devices: %s\n", instance.status().to_string().c_str());
    return 1;
  }
  auto devices = enumerate_devices(*instance);
  if (!devices.ok()) {
    std::fprintf(stderr, "vkfuse devices: %s\n", devices.status().to_string().c_str());
    return 1;
  }
  auto chosen = select_device(*instance, "");
  if (json) std::printf("[\n");
  for (std::size_t i = 0; i < devices->size(); ++i) {
    const DeviceCaps& caps = (*devices)[i];
    const bool selected = chosen.ok() && chosen->index == caps.index;
    const std::vector<Field> fields = fields_of(caps);
    if (json) {
      std::printf("  {");
      for (const Field& f : fields) std::printf("\"%s\": %s, ", f.key.c_str(), f.json.c_str());
      std::printf("\"selected\": %s}%s\n", selected ? "true" : "false", i + 1 < devices->size() ? "," : "");
    } else {
      std::printf("%s[%u] %s\n", selected ? "* " : "  ", caps.index, caps.name.c_str());
      for (std::size_t f = 2; f < fields.size(); ++f)
        std::printf("      %-28s %s\n", fields[f].key.c_str(), fields[f].text.c_str());
    }
  }
  if (json) std::printf("]\n");
  else std::printf("(* = the device vkfuse uses; VKFUSE_DEVICE=<index|name> picks another)\n");
  return 0;
}

}  // namespace

Command add_devices(CLI::App& root) {
  auto json = std::make_shared<bool>(false);
  CLI::App* app = root.add_subcommand("devices", "lists Vulkan devices, drivers and the limits vkfuse plans with");
  app->add_flag("--json", *json, "as JSON");
  return {app, [json] { return list_devices(*json); }};
}

}  // namespace vkfuse::cli
