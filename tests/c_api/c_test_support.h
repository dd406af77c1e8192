/* What the C tests share: CHECK macros that count failures, and reading a float32 .npy file. */
#ifndef VKFUSE_C_TEST_SUPPORT_H
#define VKFUSE_C_TEST_SUPPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond, ...)                                      \
  do {                                                        \
    if (!(cond)) {                                            \
      fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                           \
      fprintf(stderr, "\n");                                  \
      ++failures;                                             \
    }                                                         \
  } while (0)
#define CHECK_OK(call) CHECK((call) == VKF_OK, "%s", vkf_last_error())

/* A little-endian float32 C-order .npy file: its element count and data (malloc'd). */
static float* read_npy_f32(const char* path, size_t* count) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char head[10];
  float* data = NULL;
  if (fread(head, 1, 10, f) == 10 && memcmp(head, "\x93NUMPY", 6) == 0) {
    size_t header_len = (size_t)head[8] | ((size_t)head[9] << 8);
    char* header = calloc(header_len + 1, 1);
    if (header && fread(header, 1, header_len, f) == header_len && strstr(header, "'<f4'")) {
      long start = ftell(f);
      fseek(f, 0, SEEK_END);
      *count = (size_t)(ftell(f) - start) / sizeof(float);
      fseek(f, start, SEEK_SET);
      data = malloc(*count * sizeof(float));
      if (data && fread(data, sizeof(float), *count, f) != *count) {
        free(data);
        data = NULL;
      }
    }
    free(header);
  }
  fclose(f);
  return data;
}

#endif
