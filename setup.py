"""Build script for the Cython extensions of rankereval.

Everything about how the kernels are compiled lives here, in one place:

* every ``.pyx`` file under ``rankereval/`` (subpackages included) becomes one C++ extension
  module named by its path (``rankereval/metrics/_x.pyx`` -> ``rankereval.metrics._x``);
* Cython compiler directives are set once (``COMPILER_DIRECTIVES``), never in file headers;
* ``RANKEREVAL_DEBUG=1`` turns bounds, wraparound and initialisation checks back on
  (used by CI to run the whole test suite against a checked build);
* ``RANKEREVAL_SANITIZE=1`` builds with AddressSanitizer and UndefinedBehaviorSanitizer
  (``-fsanitize=address,undefined -fno-sanitize-recover=undefined``, GCC or Clang): Python
  itself is not instrumented, so the ASan runtime must be loaded first, e.g.
  ``LD_PRELOAD=$(g++ -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 pytest ...``
  (CONTRIBUTING.md; CI runs the kernels' and the fuzz tests so);
* OpenMP is used when the compiler supports it; otherwise the build continues serially
  with a warning (the kernels then run on one thread), or fails when
  ``RANKEREVAL_REQUIRE_OPENMP=1`` (set for release wheels, which must be parallel).
"""
import glob
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import warnings

from setuptools import Extension, setup


def _flag(name):
    return os.environ.get(name, "0") not in ("", "0", "false", "False")


DEBUG = _flag("RANKEREVAL_DEBUG")
SANITIZE = _flag("RANKEREVAL_SANITIZE")
SANITIZE_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
REQUIRE_OPENMP = _flag("RANKEREVAL_REQUIRE_OPENMP")
PACKAGE = "rankereval"

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
        if REQUIRE_OPENMP:
            raise RuntimeError("RANKEREVAL_NO_OPENMP and RANKEREVAL_REQUIRE_OPENMP are both set")
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
                # the extensions are linked with LDFLAGS (e.g. -L/-rpath of a libomp outside the
                # compiler's search path, as the macOS wheel builds use); so is the probe
                ldflags = shlex.split(os.environ.get("LDFLAGS", ""))
                cc.link_executable(
                    objs, "omp_probe", output_dir=tmp, extra_postargs=ldflags + link_args
                )
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
    if REQUIRE_OPENMP:
        raise RuntimeError(
            "RANKEREVAL_REQUIRE_OPENMP=1 but no OpenMP flags worked with this compiler "
            "(tried: %s)" % "; ".join(" ".join(c + l) for c, l in candidates)
        )
    warnings.warn(
        "OpenMP is not supported by this compiler: rankereval is built without "
        "multi-threading (results are identical, kernels run on one thread).",
        stacklevel=1,
    )
    return [], []


def cython_modules(root="."):
    """``(dotted module name, source path)`` of every ``.pyx`` under ``root/rankereval``,
    subpackages included, with paths relative to ``root``, sorted by name."""
    found = []
    pattern = os.path.join(root, PACKAGE, "**", "*.pyx")
    for path in glob.glob(pattern, recursive=True):
        rel = os.path.relpath(path, root)
        found.append((".".join(os.path.splitext(rel)[0].split(os.sep)), rel))
    return sorted(found)


def extensions():
    import numpy as np
    from Cython.Build import cythonize

    omp_compile, omp_link = openmp_flags()
    opt = ["-O0", "-g"] if DEBUG else ["-O3"]
    link = []
    if SANITIZE:
        if sys.platform == "win32":
            raise RuntimeError("RANKEREVAL_SANITIZE=1 needs GCC or Clang")
        opt = ["-O1", "-g", "-fno-omit-frame-pointer"] + SANITIZE_FLAGS
        link = list(SANITIZE_FLAGS)
    if sys.platform == "win32":
        opt = ["/Od"] if DEBUG else ["/O2"]
    headers = sorted(glob.glob(os.path.join(PACKAGE, "**", "*.h"), recursive=True))
    exts = []
    for name, path in cython_modules():
        exts.append(
            Extension(
                name,
                [path],
                depends=headers,
                language="c++",
                include_dirs=[np.get_include()],
                define_macros=[
                    ("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION"),
                    ("RANKEREVAL_DEBUG_BUILD", "1" if DEBUG else "0"),
                ],
                extra_compile_args=opt + omp_compile,
                extra_link_args=omp_link + link,
            )
        )
    return cythonize(
        exts,
        compiler_directives=COMPILER_DIRECTIVES,
        # a debug build must not reuse C++ files generated without the checks
        force=DEBUG or SANITIZE,
        # translate the .pyx files side by side (a process each), as build_ext then compiles
        # them (setup.cfg's parallel): a build spends about 20 s of CPU in Cython
        nthreads=os.cpu_count() or 1,
    )


# setuptools' build backend runs this file as __main__; tests import it for cython_modules()
if __name__ == "__main__":
    setup(ext_modules=extensions())
