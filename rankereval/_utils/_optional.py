"""Optional dependencies (shared internals): imported on use, or an ImportError naming the extra."""
import importlib

__all__ = ["require"]


def require(module, extra, purpose):
    """Import ``module``, or raise an ImportError that names the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        package = module.split(".")[0]
        raise ImportError(f"{purpose} needs {package}: pip install 'rankereval[{extra}]' (or pip "
                          f"install {package})") from exc
