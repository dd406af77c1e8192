# vkfuse_warnings(target): the project's warning set, applied to our own targets only.
function(vkfuse_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wno-missing-field-initializers)
  if(VKFUSE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
