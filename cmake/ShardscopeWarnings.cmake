# Warnings every shardscope target gets. -Werror is opt-in so a newer compiler never breaks a user's build.
option(SHARDSCOPE_WERROR "Treat warnings as errors" OFF)
function(shardscope_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  # GCC 12 flags designated initializers that leave members to their defaults (`{.path = p}`), the
  # idiomatic way to fill Options; GCC 14 no longer does (GCC bug 96868).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 14)
    target_compile_options(${target} PRIVATE -Wno-missing-field-initializers)
  endif()
  if(SHARDSCOPE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
