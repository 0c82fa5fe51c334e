"""Build the compiled kernels; all metadata lives in pyproject.toml.

Set TOKKIT_DEBUG_BUILD=1 to compile with bounds checking and wraparound on
(the tests run once against that build in CI).
"""
import glob
import os

from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("TOKKIT_DEBUG_BUILD") == "1"

DIRECTIVES = {
    "language_level": "3",
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}

extensions = [
    Extension(
        path[:-4].replace(os.sep, "."),
        [path],
        language="c++",
        include_dirs=[os.path.dirname(path)],  # the kernels' own headers (merge.hpp)
        depends=sorted(glob.glob(os.path.join("tokkit", "_native", "*.hpp"))),  # a header edit rebuilds
        extra_compile_args=["-O3", "-std=c++17"] + (["-O0", "-g"] if DEBUG else [])
        # the merge engine's float scores must match tokkit/train/merge_py.py bit for bit: no fused multiply-add
        + (["-ffp-contract=off"] if os.path.basename(path) == "merge.pyx" else []),
    )
    for path in sorted(glob.glob(os.path.join("tokkit", "_native", "*.pyx")))
    # TOKKIT_BUILD_ONLY=merge,text builds just those (handy while another kernel is mid-edit).
    if not os.environ.get("TOKKIT_BUILD_ONLY")
    or os.path.basename(path)[:-4] in os.environ["TOKKIT_BUILD_ONLY"].split(",")
]

# The debug build generates its C++ in a folder of its own, so switching back never reuses it.
setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES,
                            build_dir="build/cython-debug" if DEBUG else None))
