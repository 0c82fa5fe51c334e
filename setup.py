"""Build the compiled kernels; all metadata lives in pyproject.toml.

Set TOKKIT_DEBUG_BUILD=1 to compile with bounds checking and wraparound on
(the tests run once against that build in CI). The flags stay portable: no
-march=native, so a wheel runs on every CPU of its platform (SSE2 is the
x86-64 baseline; anything wider is chosen at run time).
"""
import glob
import os

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("TOKKIT_DEBUG_BUILD") == "1"

DIRECTIVES = {
    "language_level": "3",
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}


def compile_flags(name: str, msvc: bool) -> list:
    """The compiler flags of one kernel, spelled for GCC/Clang or for MSVC."""
    if msvc:
        # /fp:precise contracts no multiply-add, as merge.pyx's bit-exact scores need
        return ["/O2", "/std:c++17", "/fp:precise"] + (["/Od", "/Zi"] if DEBUG else [])
    # -g0: Python's own CFLAGS carry -g, which would triple the size of a wheel's modules
    return (["-O3", "-std=c++17"] + (["-O0", "-g"] if DEBUG else ["-g0"])
            # the merge engine's float scores must match tokkit/train/merge_py.py bit for bit: no fused multiply-add
            + (["-ffp-contract=off"] if name == "merge" else []))


class BuildExt(build_ext):
    """build_ext that picks each kernel's flags once the compiler is known."""

    def build_extensions(self):
        msvc = self.compiler.compiler_type == "msvc"
        for ext in self.extensions:
            ext.extra_compile_args = compile_flags(ext.name.rsplit(".", 1)[-1], msvc)
        super().build_extensions()


extensions = [
    Extension(
        path[:-4].replace(os.sep, "."),
        [path],
        language="c++",
        include_dirs=[os.path.dirname(path)],  # the kernels' own headers (merge.hpp)
        depends=sorted(glob.glob(os.path.join("tokkit", "_native", "*.hpp"))),  # a header edit rebuilds
    )
    for path in sorted(glob.glob(os.path.join("tokkit", "_native", "*.pyx")))
    # TOKKIT_BUILD_ONLY=merge,text builds just those (handy while another kernel is mid-edit).
    if not os.environ.get("TOKKIT_BUILD_ONLY")
    or os.path.basename(path)[:-4] in os.environ["TOKKIT_BUILD_ONLY"].split(",")
]

# The debug build generates its C++ in a folder of its own, so switching back never reuses it.
setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES,
                            build_dir="build/cython-debug" if DEBUG else None),
      cmdclass={"build_ext": BuildExt})
