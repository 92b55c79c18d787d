"""rankereval: fast, exact ranking metrics for information retrieval and recommendation."""
from rankereval.data import BinaryLabels, InvalidValuesWarning, NumericLabels, Rankings

__version__ = "0.3.0"

__all__ = ["BinaryLabels", "NumericLabels", "Rankings", "InvalidValuesWarning", "__version__"]
