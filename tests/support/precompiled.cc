// Nothing: this program exists to compile tests/CMakeLists.txt's precompiled header for the test programs.
