# Read by cpack for each generator (CPACK_PROJECT_CONFIG_FILE): the .debs take the tools and dev components
# under /usr; the tarball takes the portable component, relative to where it is unpacked.
if(CPACK_GENERATOR STREQUAL "TGZ")
  set(CPACK_COMPONENTS_ALL portable)
  set(CPACK_ARCHIVE_COMPONENT_INSTALL ON)
  set(CPACK_COMPONENT_INCLUDE_TOPLEVEL_DIRECTORY ON)
  set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
  set(CPACK_PACKAGING_INSTALL_PREFIX "/")
  set(CPACK_PACKAGE_FILE_NAME "shardscope-${CPACK_PACKAGE_VERSION}-Linux")
  set(CPACK_STRIP_FILES ON)
endif()
