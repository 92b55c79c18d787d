"""Render the conda-forge recipe for every platform conda-forge builds, offline, and check it.

    python .ci/render_recipe.py [recipe/recipe.yaml]

Uses py-rattler-build (rattler-build's Python API) with conda-forge's compiler and C
standard-library variants. Rendering evaluates every selector and Jinja expression without
any channel; building needs conda-forge (``rattler-build build --recipe recipe/ -c conda-forge``).
Fails (exit 1) when a platform does not render, or when the recipe disagrees with the project:
its version with rankereval/_version.py, its run and host requirements with pyproject.toml's
dependencies and build requirements, or its OpenMP runtime with the platform.
"""
import pathlib
import re
import sys
import tomllib

from rattler_build import PlatformConfig, RenderConfig, Stage0Recipe, VariantConfig

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]
# conda-forge's global pinning for these keys (conda-forge-pinning's conda_build_config.yaml)
COMPILERS = {
    "linux": dict(c_compiler=["gcc"], cxx_compiler=["gxx"], c_compiler_version=["14"],
                  cxx_compiler_version=["14"], c_stdlib=["sysroot"], c_stdlib_version=["2.17"]),
    "osx": dict(c_compiler=["clang"], cxx_compiler=["clangxx"], c_compiler_version=["19"],
                cxx_compiler_version=["19"], c_stdlib=["macosx_deployment_target"]),
    "win": dict(c_compiler=["vs2022"], cxx_compiler=["vs2022"], c_stdlib=["vs"],
                c_stdlib_version=["2022"]),
}
PLATFORMS = {
    "linux-64": dict(COMPILERS["linux"]),
    "linux-aarch64": dict(COMPILERS["linux"]),
    "osx-64": dict(COMPILERS["osx"], c_stdlib_version=["10.13"]),
    "osx-arm64": dict(COMPILERS["osx"], c_stdlib_version=["11.0"]),
    "win-64": dict(COMPILERS["win"]),
}
OPENMP = {"linux": "libgomp", "osx": "llvm-openmp", "win": None}


def _spec(requirement):
    """'numpy >=1.24' / 'numpy>=1.24' -> 'numpy>=1.24' (conda and PEP 508 spelled alike)."""
    return re.sub(r"\s+", "", str(requirement)).lower()


def main(recipe_path):
    version = re.search(r'^__version__ = "([^"]+)"$',
                        (ROOT / "rankereval" / "_version.py").read_text(), re.MULTILINE).group(1)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    run_expected = {"python"} | {_spec(d) for d in pyproject["project"]["dependencies"]}
    host_expected = {"python", "pip"} | {_spec(d) for d in pyproject["build-system"]["requires"]}

    recipe = Stage0Recipe.from_file(recipe_path)
    problems = []
    for platform, variants in PLATFORMS.items():
        config = RenderConfig(platform=PlatformConfig(
            target_platform=platform, build_platform=platform, host_platform=platform))
        rendered = recipe.render(VariantConfig({"python": PYTHONS, **variants}), config)
        pythons = sorted(v.variant["python"] for v in rendered)
        if pythons != PYTHONS:
            problems.append(f"{platform}: variants for Python {pythons}, expected {PYTHONS}")
        for variant in rendered:
            r = variant.recipe
            where = f"{platform} python {variant.variant['python']}"
            build = [_spec(x) for x in r.requirements.build]
            host = [_spec(x) for x in r.requirements.host]
            run = {_spec(x) for x in r.requirements.run}
            if str(r.package.version) != version:
                problems.append(f"{where}: version {r.package.version}, _version.py says {version}")
            if run != run_expected:
                problems.append(f"{where}: run {sorted(run)} != pyproject {sorted(run_expected)}")
            openmp = OPENMP[platform.split("-")[0]]
            if set(host) - {openmp} != host_expected:
                problems.append(f"{where}: host {host} != {sorted(host_expected)} (+ OpenMP)")
            for reqs, kind in ((build, "build"), (host, "host")):
                has = [x for x in reqs if x in ("libgomp", "llvm-openmp")]
                if has != ([openmp] if openmp else []):
                    problems.append(f"{where}: OpenMP in {kind} is {has}, expected {openmp}")
            if not any(x.startswith(("gxx", "clangxx", "vs2022")) for x in build):
                problems.append(f"{where}: no C++ compiler in build: {build}")
            print(f"{where}: {r.package.name} {r.package.version}; build: "
                  + ", ".join(str(x) for x in r.requirements.build))
    if problems:
        print("\n".join(["recipe problems:"] + problems), file=sys.stderr)
        return 1
    print(f"{recipe_path}: rendered for {len(PLATFORMS)} platforms x {len(PYTHONS)} Pythons")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "recipe" / "recipe.yaml")))
