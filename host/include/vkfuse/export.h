/* VKFUSE_API marks what the shared library exports: the public C++ and C API and nothing else (every
   other symbol is built hidden). VKFUSE_STATIC (set by the static library's targets) drops the
   Windows import marker. Valid C and C++. */
#ifndef VKFUSE_EXPORT_H
#define VKFUSE_EXPORT_H

#if defined(_WIN32)
#if defined(VKFUSE_STATIC)
#define VKFUSE_API
#elif defined(VKFUSE_BUILDING)
#define VKFUSE_API __declspec(dllexport)
#else
#define VKFUSE_API __declspec(dllimport)
#endif
#elif defined(__cplusplus)
#define VKFUSE_API [[gnu::visibility("default")]]
#else
#define VKFUSE_API __attribute__((visibility("default")))
#endif

#endif
