"""Build the compiled kernels (Cython in C++ mode).

Every ``*.pyx`` under ``src/treelearn`` becomes an extension module of the same dotted name.
Flags: -O3 and a portable baseline; on x86-64 we target x86-64-v2 (it has popcnt), never
-march=native, so a built wheel runs on any machine of that baseline.

Where the C++ lives (docs/architecture.md): the headers every learner shares are in ``core/``
(included as ``"core/<name>.h"``); a learner's own headers sit in its room beside its binding
(``learn/topk/``, ``learn/continuous/``, ...) and are included by plain name. An extension is
rebuilt when its own folder or ``core/`` changes, never for another room's edit, and the
extensions compile in parallel (one job per CPU; ``TREELEARN_BUILD_JOBS`` overrides).

``TREELEARN_WERROR=1`` compiles with ``-Wall -Wextra -Werror`` (``make werror``, CI);
``TREELEARN_SANITIZE=1`` with AddressSanitizer and UndefinedBehaviorSanitizer (``make sanitize``).
``TREELEARN_SIMD_BUILD`` says when the AVX-512 second build of the Top-k search is compiled:
``auto`` (default) when the building CPU can run it, ``1`` always (a wheel for other machines),
``0`` never.
"""
import glob
import os
import platform
import re

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

PKG = os.path.join("src", "treelearn")
CORE = os.path.join(PKG, "core")

# -g0: Python's own CFLAGS ask for debug information, which costs compile time and binary size
# and nothing at run time (the sanitizer build below asks for it again)
compile_args = ["-O3", "-g0", "-std=c++17", "-Wno-unused-function", "-Wno-unreachable-code"]
link_args = []
is_x86 = platform.machine().lower() in ("x86_64", "amd64")
if is_x86:
    compile_args.append("-march=x86-64-v2")
werror = bool(os.environ.get("TREELEARN_WERROR"))
if werror:
    compile_args += ["-Wall", "-Wextra", "-Werror"]
if os.environ.get("TREELEARN_SANITIZE"):
    san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]
    compile_args = [a for a in compile_args if a not in ("-O3", "-g0")] + ["-O1", "-g"] + san
    link_args += san


def generated_code_warnings(pyx):
    """Warnings of Cython's generated code (not of our headers) switched off for ``pyx`` only, and
    only under -Werror: a def function over a fused type with const memoryviews tests each type's
    signedness as ``(T const)-1 > 0``, a cast -Wignored-qualifiers flags."""
    with open(pyx, encoding="utf-8") as f:
        fused = re.search(r"^ctypedef fused ", f.read(), re.M)
    return ["-Wno-ignored-qualifiers"] if werror and fused else []


def build_avx512():
    """Whether to compile the AVX-512 build of the Top-k search (``TREELEARN_SIMD_BUILD``): by
    default only when this CPU can run it (a build elsewhere would never be imported here)."""
    mode = os.environ.get("TREELEARN_SIMD_BUILD", "auto").strip().lower()
    if mode in ("1", "yes", "always"):
        return True
    if mode in ("0", "no", "never"):
        return False
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as cpu
    except ImportError:  # NumPy 1.x
        from numpy.core._multiarray_umath import __cpu_features__ as cpu
    return bool(cpu.get("AVX512_SKX") and cpu.get("AVX512VPOPCNTDQ"))

# A module named *_avx512 is a second build of a kernel for x86-64-v4 with AVX-512 VPOPCNTDQ
# (vectorised popcounts); the package imports it only on a CPU that has them (runtime dispatch),
# and it is optional: a compiler without these flags just leaves it out.
avx512_args = ["-march=x86-64-v4", "-mavx512vpopcntdq"]

core_headers = sorted(glob.glob(os.path.join(CORE, "*.h")))
shared_pxd = sorted(glob.glob(os.path.join(PKG, "*.pxd")))


def room_dependencies(pyx):
    """The files whose edit rebuilds the extension of ``pyx``: the shared ``core/`` headers and
    ``.pxd`` contracts, and the headers, ``.pxi`` and ``.pxd`` files of its own folder (its room).
    setuptools compares their times with the built module's."""
    room = os.path.dirname(pyx)
    own = [p for ext in ("*.h", "*.pxi", "*.pxd") for p in glob.glob(os.path.join(room, ext))]
    return core_headers + shared_pxd + sorted(own)


class ParallelBuildExt(build_ext):
    """build_ext compiling the extensions in parallel (setuptools' ``--parallel``), by default
    one job per CPU, also under ``pip install`` (which passes no option).

    An editable install (``pip install -e``, ``make setup``) builds in the same ``build/``
    directories as ``setup.py build_ext --inplace`` (``make build``) instead of a temporary one,
    so the build that follows it finds the modules up to date rather than compiling them again."""

    def finalize_options(self):
        if self.editable_mode:
            from setuptools.command.build import build

            default = build(self.distribution)
            default.initialize_options()
            default.finalize_options()
            self.build_lib, self.build_temp = default.build_platlib, default.build_temp
        super().finalize_options()
        if not self.parallel:
            self.parallel = int(os.environ.get("TREELEARN_BUILD_JOBS", "0")) or os.cpu_count() or 1


extensions = []
for path in sorted(glob.glob(os.path.join(PKG, "**", "*.pyx"), recursive=True)):
    module = os.path.splitext(os.path.relpath(path, "src"))[0].replace(os.sep, ".")
    simd = module.endswith("_avx512")
    if simd and not (is_x86 and build_avx512()):
        continue
    args = [a for a in compile_args if not a.startswith("-march=")] + avx512_args if simd else compile_args
    args = args + generated_code_warnings(path)
    extensions.append(
        Extension(
            module,
            [path],
            language="c++",
            include_dirs=[np.get_include(), PKG],
            depends=room_dependencies(path),
            extra_compile_args=args,
            extra_link_args=link_args,
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            optional=simd,
        )
    )

setup(
    cmdclass={"build_ext": ParallelBuildExt},
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
        nthreads=int(os.environ.get("TREELEARN_BUILD_JOBS", "0")) or os.cpu_count() or 1,
    ),
)
