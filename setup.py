"""Build script for the Cython extensions of rankereval.

Everything about how the kernels are compiled lives here, in one place:

* every ``rankereval/*.pyx`` becomes one C++ extension module;
* Cython compiler directives are set once (``COMPILER_DIRECTIVES``), never in file headers;
* ``RANKEREVAL_DEBUG=1`` turns bounds, wraparound and initialisation checks back on
  (used by CI to run the whole test suite against a checked build);
* OpenMP is used when the compiler supports it; otherwise the build continues serially
  with a warning (the kernels then run on one thread).
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("RANKEREVAL_DEBUG", "0") not in ("", "0", "false", "False")

COMPILER_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "nonecheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}


def openmp_flags():
    """Return (compile_args, link_args) enabling OpenMP, or empty lists if unsupported."""
    if os.environ.get("RANKEREVAL_NO_OPENMP"):
        return [], []
    if sys.platform == "win32":
        candidates = [(["/openmp"], [])]
    elif sys.platform == "darwin":
        candidates = [(["-Xpreprocessor", "-fopenmp"], ["-lomp"]), (["-fopenmp"], ["-fopenmp"])]
    else:
        candidates = [(["-fopenmp"], ["-fopenmp"])]
    code = "#include <omp.h>\nint main(void){\n#pragma omp parallel\n{}\nreturn omp_get_max_threads() > 0 ? 0 : 1;}\n"
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    for compile_args, link_args in candidates:
        tmp = tempfile.mkdtemp()
        try:
            src = os.path.join(tmp, "omp_probe.c")
            with open(src, "w") as fh:
                fh.write(code)
            cc = new_compiler()
            customize_compiler(cc)
            devnull = open(os.devnull, "w")
            old_out, old_err = os.dup(1), os.dup(2)
            os.dup2(devnull.fileno(), 1)
            os.dup2(devnull.fileno(), 2)
            try:
                objs = cc.compile([src], output_dir=tmp, extra_postargs=compile_args)
                cc.link_executable(objs, "omp_probe", output_dir=tmp, extra_postargs=link_args)
            finally:
                os.dup2(old_out, 1)
                os.dup2(old_err, 2)
                devnull.close()
            if subprocess.call([os.path.join(tmp, "omp_probe")]) == 0:
                return compile_args, link_args
        except Exception:
            pass
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    warnings.warn(
        "OpenMP is not supported by this compiler: rankereval is built without "
        "multi-threading (results are identical, kernels run on one thread).",
        stacklevel=1,
    )
    return [], []


def extensions():
    omp_compile, omp_link = openmp_flags()
    opt = ["-O0", "-g"] if DEBUG else ["-O3"]
    if sys.platform == "win32":
        opt = ["/Od"] if DEBUG else ["/O2"]
    exts = []
    for path in sorted(glob.glob(os.path.join("rankereval", "*.pyx"))):
        name = os.path.splitext(path)[0].replace(os.sep, ".")
        exts.append(
            Extension(
                name,
                [path],
                depends=sorted(glob.glob(os.path.join("rankereval", "*.h"))),
                language="c++",
                include_dirs=[np.get_include()],
                define_macros=[
                    ("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION"),
                    ("RANKEREVAL_DEBUG_BUILD", "1" if DEBUG else "0"),
                ],
                extra_compile_args=opt + omp_compile,
                extra_link_args=omp_link,
            )
        )
    return cythonize(
        exts,
        compiler_directives=COMPILER_DIRECTIVES,
        # a debug build must not reuse C++ files generated without the checks
        force=DEBUG,
    )


setup(ext_modules=extensions())
