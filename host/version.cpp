// vkfuse::version: the project version CMake compiles in.
#include <vkfuse/vkfuse.hpp>

namespace vkfuse {

const char* version() { return VKFUSE_VERSION_STRING; }

}  // namespace vkfuse
