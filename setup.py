"""Builds the Python module `saltus` for `pip install .` (pyproject.toml).

The module is the CMake target saltus_python (python/CMakeLists.txt): this script configures a
CMake build (Release, without tests) in setuptools' temporary folder, builds that one target
for the interpreter running pip, and copies the module and its stubs (saltus.pyi) into the
wheel. Set SALTUS_CMAKE_BUILD_DIR to an existing, configured build tree to build there instead
(tests/package does, so that the test does not compile Saltus twice). The version is the
project version of CMakeLists.txt. Needs the Debian packages of scripts/install-deps.sh; nothing
is downloaded.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(saltus VERSION ([0-9.]+)", text).group(1)


class CMakeModule(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        target = Path(self.get_ext_fullpath(ext.name)).resolve()
        build_dir = os.environ.get("SALTUS_CMAKE_BUILD_DIR")
        if build_dir:
            build_dir = Path(build_dir).resolve()
        else:
            build_dir = Path(self.build_temp).resolve() / "cmake"
            build_dir.mkdir(parents=True, exist_ok=True)
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir),
                            "-DCMAKE_BUILD_TYPE=Release", "-DSALTUS_BUILD_TESTS=OFF",
                            "-DSALTUS_BUILD_PYTHON=ON",
                            "-DPython3_EXECUTABLE=" + sys.executable], check=True)
        jobs = str(os.cpu_count() or 2)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "saltus_python",
                        "-j", jobs], check=True)
        built = sorted((build_dir / "python").glob("saltus*.so"))
        if not built:
            sys.exit("setup.py: CMake built no Python module in %s/python (is pybind11-dev "
                     "installed? see scripts/install-deps.sh)" % build_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], target)
        stubs = build_dir / "python" / "saltus.pyi"
        if stubs.exists():
            shutil.copyfile(stubs, target.parent / "saltus.pyi")


setup(
    version=project_version(),
    # The module is the extension alone: no Python packages. Without this, setuptools' automatic
    # discovery sees the source tree's top-level folders (engine, events, saltus, ...) as
    # packages of a flat layout and refuses to build.
    packages=[],
    ext_modules=[CMakeModule("saltus")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build/pip"}},
    zip_safe=False,
)
