"""Memory strategies behind one protocol (`stores.protocol`), and the backend they keep memory in."""

import stores.cpu  # noqa: F401  (first: the OpenMP wait policy must be set before anything loads torch)

from stores.registry import CONTROLS, DEFAULT_STRATEGIES, REGISTRY, SpecError, StrategySpec, parse_spec, parse_specs, strategy_class

__all__ = ["CONTROLS", "DEFAULT_STRATEGIES", "REGISTRY", "SpecError", "StrategySpec", "parse_spec", "parse_specs", "strategy_class"]
