"""`pip install .`: the package's pybind11 module built by CMake (python/CMakeLists.txt), the analyzer alone.

The build needs what scripts/bootstrap installs (a compiler, CMake, the analyzer's libraries, python3-dev,
pybind11-dev) and no network. CMAKE_ARGS (e.g. "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache") and
CMAKE_BUILD_PARALLEL_LEVEL are passed on.
"""
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        # SHARDSCOPE_CMAKE_BUILD_DIR: a build folder CMake already configured (the test of this path reuses
        # ctest's, whose analyzer is built): only the module's target is brought up to date there.
        given = os.environ.get("SHARDSCOPE_CMAKE_BUILD_DIR")
        build = os.path.abspath(given or os.path.join(self.build_temp, "cmake"))
        if not given:
            self.configure(build)
        subprocess.run(["cmake", "--build", build, "--target", "shardscope_python"], check=True)
        built = os.path.join(build, "python", "shardscope")
        module = next(f for f in os.listdir(built) if f.startswith("_shardscope.") and f.endswith(".so"))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(built, module), target)

    def configure(self, build):
        configure = ["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DSHARDSCOPE_ANALYZER_ONLY=ON",
                     f"-DPython3_EXECUTABLE={sys.executable}", *shlex.split(os.environ.get("CMAKE_ARGS", ""))]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        subprocess.run(configure, check=True)


# setuptools' own build folder inside the CMake one the project's scripts use (build/), not beside its files.
setup(ext_modules=[Extension("shardscope._shardscope", sources=[])], cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": os.path.join("build", "pip")}})
