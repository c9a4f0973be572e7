"""Memory strategies behind one protocol (`stores.protocol`), and the backend they keep memory in."""

from stores.registry import CONTROLS, DEFAULT_STRATEGIES, REGISTRY, SpecError, StrategySpec, parse_spec, parse_specs, strategy_class

__all__ = ["CONTROLS", "DEFAULT_STRATEGIES", "REGISTRY", "SpecError", "StrategySpec", "parse_spec", "parse_specs", "strategy_class"]
