"""Decision policies: what a support agent does between turns (seed 001).

A decision policy is the second axis of the workbench, beside memory strategies. On every
customer turn it runs four steps, each in its own module:

1. `signals`  producers report what they saw on this turn (rule-based, or scripted by the
   scenario to stand in for a classifier); they never act.
2. `card`     one function folds the signals and the session locker into a small typed card.
3. `resolver` a pure function maps the card to a plan with a fixed precedence.
4. `executor` acts once, and alone writes the locker, after the act.

The locker (`locker`, `redis_locker`) is deterministic session state on the simulated clock:
consecutive counters, one-shot flags with a TTL, atomic claims. Policies (`session_state`,
`per_message`) are built from specs through their own lazy registry (`registry`).
"""
