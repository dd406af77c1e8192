/* The C API, compiled as C11 and linked to the shared library: devices, a context, introspection
   (symbolic dims included), a run of tests/data/models/tiny_cnn against its reference output in fp32
   and fp16, the plan and timings, and the errors of bad use. Exits non-zero on the first failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vkfuse/vkfuse.h>

#include "c_test_support.h"

static void run_tiny_cnn(vkf_context* ctx, vkf_precision precision, double tolerance) {
  char model_path[1024], input_path[1024], output_path[1024];
  snprintf(model_path, sizeof model_path, "%s/models/tiny_cnn/model.onnx", VKFUSE_TEST_DATA_DIR);
  snprintf(input_path, sizeof input_path, "%s/models/tiny_cnn/input.npy", VKFUSE_TEST_DATA_DIR);
  snprintf(output_path, sizeof output_path, "%s/models/tiny_cnn/output.npy", VKFUSE_TEST_DATA_DIR);

  vkf_load_options load = {precision, 0, NULL, 0};
  vkf_model* model = NULL;
  CHECK_OK(vkf_model_load_onnx(model_path, &load, &model));
  if (!model) return;
  CHECK(vkf_model_input_count(model) == 1 && vkf_model_output_count(model) == 1, "inputs %zu outputs %zu",
        vkf_model_input_count(model), vkf_model_output_count(model));
  vkf_tensor_info in_info, out_info;
  CHECK_OK(vkf_model_input(model, 0, &in_info));
  CHECK_OK(vkf_model_output(model, 0, &out_info));
  CHECK(strcmp(in_info.name, "input") == 0 && in_info.dtype == VKF_F32 && in_info.rank == 4 && in_info.shape[1] == 3 &&
            in_info.shape[3] == 32,
        "input info: %s %s rank %zu", in_info.name, vkf_dtype_name(in_info.dtype), in_info.rank);
  CHECK(out_info.dtype == VKF_F32, "the output leaves as f32 whatever the precision: %s", vkf_dtype_name(out_info.dtype));

  vkf_session* session = NULL;
  CHECK_OK(vkf_session_create(ctx, model, NULL, &session));
  vkf_model_destroy(model); /* the session keeps what it needs */
  if (!session) return;

  size_t n_in = 0, n_ref = 0;
  float* input = read_npy_f32(input_path, &n_in);
  float* reference = read_npy_f32(output_path, &n_ref);
  CHECK(input && reference && n_in == 3 * 32 * 32, "reading %s and %s", input_path, output_path);
  if (input && reference) {
    vkf_tensor feed = {"input", VKF_F32, 4, in_info.shape, input, n_in * sizeof(float)};
    /* in_info.shape belonged to the destroyed model: pass our own copy of the dims instead. */
    const int64_t dims[4] = {1, 3, 32, 32};
    feed.shape = dims;
    CHECK_OK(vkf_session_run(session, &feed, 1));
    vkf_tensor out;
    CHECK_OK(vkf_session_output(session, "output", &out));
    CHECK(out.dtype == VKF_F32 && out.size == n_ref * sizeof(float), "output %s %zu bytes, reference %zu floats",
          vkf_dtype_name(out.dtype), out.size, n_ref);
    if (out.size == n_ref * sizeof(float)) {
      const float* got = (const float*)out.data;
      double worst = 0.0, largest = 0.0;
      for (size_t i = 0; i < n_ref; ++i) {
        worst = fmax(worst, fabs((double)got[i] - reference[i]));
        largest = fmax(largest, fabs((double)reference[i]));
      }
      CHECK(worst <= tolerance * largest, "worst difference %g against the reference's largest %g", worst, largest);
      printf("tiny_cnn %s: worst difference %.3g (largest %.3g), %zu dispatches, %zu groups, %.3f ms GPU, created in %.1f ms\n",
             precision == VKF_PRECISION_FP16 ? "fp16" : "fp32", worst, largest, vkf_session_dispatch_count(session),
             vkf_session_group_count(session), vkf_session_gpu_ms(session), vkf_session_create_ms(session));
    }
    CHECK(vkf_session_group_count(session) > 0 && vkf_session_dispatch_count(session) > 0, "no groups");
    vkf_group_info group;
    CHECK_OK(vkf_session_group(session, 0, &group));
    CHECK(group.label && group.label[0] && group.op_count > 0, "group 0: '%s'", group.label ? group.label : "(null)");

    /* Bad use: each fails with a code and a message naming what is wrong. */
    feed.size -= 4;
    CHECK(vkf_session_run(session, &feed, 1) == VKF_INVALID_ARGUMENT && strstr(vkf_last_error(), "'input'") &&
              strstr(vkf_last_error(), "12284 bytes"),
          "a short input: %s", vkf_last_error());
    feed.size += 4;
    CHECK(vkf_session_run(session, NULL, 0) != VKF_OK && strstr(vkf_last_error(), "input"), "no inputs: %s", vkf_last_error());
    CHECK(vkf_session_output(session, "nope", &out) == VKF_NOT_FOUND && strstr(vkf_last_error(), "'output'"),
          "an unknown output: %s", vkf_last_error());
    CHECK(vkf_session_group(session, 100000, &group) == VKF_INVALID_ARGUMENT, "group past the end");
  }
  free(input);
  free(reference);
  vkf_session_destroy(session);
}

int main(void) {
  printf("vkfuse %s\n", vkf_version());
  CHECK(strlen(vkf_version()) > 0, "no version");
  CHECK(strcmp(vkf_status_name(VKF_NOT_FOUND), "NotFound") == 0, "%s", vkf_status_name(VKF_NOT_FOUND));
  CHECK(vkf_dtype_size(VKF_F16) == 2 && strcmp(vkf_dtype_name(VKF_U8), "u8") == 0, "dtype helpers");

  const vkf_device_info* devices = NULL;
  size_t device_count = 0;
  CHECK_OK(vkf_devices(&devices, &device_count));
  int defaults = 0;
  for (size_t i = 0; i < device_count; ++i) {
    printf("device %u: %s (%s, %s)%s\n", devices[i].index, devices[i].name, devices[i].type, devices[i].api_version,
           devices[i].default_choice ? " default" : "");
    defaults += devices[i].default_choice;
  }
  CHECK(device_count > 0 && defaults == 1, "%zu devices, %d marked default", device_count, defaults);

  /* Introspection of a model with a symbolic batch dimension, then loading it with the batch fixed. */
  char path[1024];
  snprintf(path, sizeof path, "%s/onnx/bad/symbolic_dim.onnx", VKFUSE_TEST_DATA_DIR);
  vkf_model* declared = NULL;
  CHECK_OK(vkf_onnx_inspect(path, &declared));
  vkf_tensor_info info;
  if (declared) {
    CHECK_OK(vkf_model_input(declared, 0, &info));
    CHECK(info.rank == 2 && info.shape[0] == -1 && strcmp(info.dim_names[0], "batch") == 0 && info.shape[1] == 3 &&
              strcmp(info.dim_names[1], "") == 0,
          "inspected x: rank %zu, dim 0 %lld '%s'", info.rank, (long long)info.shape[0], info.dim_names[0]);
    CHECK(vkf_model_input(declared, 1, &info) == VKF_INVALID_ARGUMENT, "index past the inputs");
  }
  vkf_model* fixed = NULL;
  CHECK(vkf_model_load_onnx(path, NULL, &fixed) == VKF_INVALID_ARGUMENT && strstr(vkf_last_error(), "'batch'"),
        "a symbolic dim not fixed: %s", vkf_last_error());
  vkf_load_options batch2 = {VKF_PRECISION_FP32, 2, NULL, 0};
  CHECK_OK(vkf_model_load_onnx(path, &batch2, &fixed));
  if (fixed) {
    CHECK_OK(vkf_model_input(fixed, 0, &info));
    CHECK(info.shape[0] == 2 && strcmp(info.dim_names[0], "batch") == 0, "loaded x: dim 0 %lld '%s'",
          (long long)info.shape[0], info.dim_names[0]);
  }

  vkf_context_options options = {NULL, 1, ""};
  vkf_context* ctx = NULL;
  CHECK_OK(vkf_context_create(&options, &ctx));
  if (ctx) {
    vkf_device_info device;
    CHECK_OK(vkf_context_device(ctx, &device));
    printf("context on %s\n", device.name);
    vkf_session* refused = NULL;
    CHECK(vkf_session_create(ctx, declared, NULL, &refused) == VKF_INVALID_ARGUMENT && refused == NULL,
          "a session from an inspected model: %s", vkf_last_error());
    run_tiny_cnn(ctx, VKF_PRECISION_FP32, 1e-4);
    run_tiny_cnn(ctx, VKF_PRECISION_FP16, 3e-2);
  }
  vkf_model_destroy(declared);
  vkf_model_destroy(fixed);

  vkf_model* missing = NULL;
  CHECK(vkf_model_load_onnx("/nonexistent/model.onnx", NULL, &missing) == VKF_NOT_FOUND && missing == NULL &&
            strstr(vkf_last_error(), "/nonexistent/model.onnx"),
        "a missing file: %s", vkf_last_error());
  vkf_load_options bad = {(vkf_precision)7, 0, NULL, 0};
  CHECK(vkf_model_load_onnx(path, &bad, &missing) == VKF_INVALID_ARGUMENT && strstr(vkf_last_error(), "precision"),
        "a bad precision: %s", vkf_last_error());
  CHECK(vkf_context_create(NULL, NULL) == VKF_INVALID_ARGUMENT, "a NULL out-pointer");
  vkf_context_destroy(NULL);
  vkf_session_destroy(NULL);
  vkf_model_destroy(NULL);
  vkf_context_destroy(ctx);

  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("C API: all checks pass\n");
  return 0;
}
