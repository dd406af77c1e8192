# vkfuse_embed_shaders(OUT_CPP ROOT_DIR FILES...): generates a .cpp that defines
#   std::span<const vkfuse::EmbeddedShader> vkfuse::embedded_shaders()
# with every GLSL file's path (relative to ROOT_DIR) and text. The files are data: editing one
# regenerates the .cpp at build time.
function(vkfuse_embed_shaders out_cpp root_dir)
  set(files ${ARGN})
  add_custom_command(
    OUTPUT ${out_cpp}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_cpp} -DROOT=${root_dir} "-DFILES=${files}"
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedShadersScript.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/EmbedShadersScript.cmake
    COMMENT "Embedding ${CMAKE_CURRENT_LIST_DIR} shaders"
    VERBATIM)
endfunction()
