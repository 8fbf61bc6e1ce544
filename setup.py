"""Build the compiled kernels (Cython in C++ mode).

Every ``*.pyx`` under ``src/treelearn`` becomes an extension module of the same dotted name.
Flags: -O3 and a portable baseline; on x86-64 we target x86-64-v2 (it has popcnt), never
-march=native, so a built wheel runs on any machine of that baseline.
"""
import glob
import os
import platform
import re

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

compile_args = ["-O3", "-std=c++17", "-Wno-unused-function", "-Wno-unreachable-code"]
if platform.machine().lower() in ("x86_64", "amd64"):
    compile_args.append("-march=x86-64-v2")

# A module named *_avx512 is a second build of a kernel for x86-64-v4 with AVX-512 VPOPCNTDQ
# (vectorised popcounts); the package imports it only on a CPU that has them (runtime dispatch),
# and it is optional: a compiler without these flags just leaves it out.
avx512_args = ["-march=x86-64-v4", "-mavx512vpopcntdq"]
is_x86 = platform.machine().lower() in ("x86_64", "amd64")

include_dir = os.path.join("src", "treelearn", "_include")
shared_headers = sorted(glob.glob(os.path.join(include_dir, "**", "*.h"), recursive=True))


def quoted_includes(path, seen):
    """Add to ``seen`` the headers that ``path`` includes with ``#include "..."`` (found beside the
    including file, else under _include/), and theirs in turn."""
    with open(path) as f:
        names = re.findall(r'^\s*#\s*include\s+"([^"]+)"', f.read(), flags=re.M)
    for name in names:
        for base in (os.path.dirname(path), include_dir):
            found = os.path.normpath(os.path.join(base, name))
            if os.path.isfile(found):
                if found not in seen:
                    seen.add(found)
                    quoted_includes(found, seen)
                break


def header_dependencies(pyx):
    """Headers whose edit must rebuild the extension of ``pyx``: the shared ones under _include/,
    those beside it named after it (``learn/_continuous.pyx`` -> ``learn/_continuous_*.h``) and
    the headers these include from elsewhere (``distributed/_level.h`` -> ``learn/_greedy_*.h``).
    setuptools compares their times with the built module's."""
    stem = os.path.splitext(pyx)[0].replace("_avx512", "")
    own = set(glob.glob(stem + "_*.h") + glob.glob(stem + ".h") + glob.glob(stem + "_*.pxi"))
    for path in sorted(own):
        quoted_includes(path, own)
    return shared_headers + sorted(own - set(shared_headers))


extensions = []
for path in sorted(glob.glob(os.path.join("src", "treelearn", "**", "*.pyx"), recursive=True)):
    module = os.path.splitext(os.path.relpath(path, "src"))[0].replace(os.sep, ".")
    simd = module.endswith("_avx512")
    if simd and not is_x86:
        continue
    args = [a for a in compile_args if not a.startswith("-march=")] + avx512_args if simd else compile_args
    extensions.append(
        Extension(
            module,
            [path],
            language="c++",
            include_dirs=[np.get_include(), include_dir],
            depends=header_dependencies(path),
            extra_compile_args=args,
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            optional=simd,
        )
    )

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
        nthreads=int(os.environ.get("TREELEARN_BUILD_JOBS", "0")) or None,
    ),
)
