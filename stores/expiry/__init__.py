"""Memory that expires (seed 004): a rule-based classifier, the expiry rules, and the stage.

- `classify(text, role, kind)` (`stores.expiry.classifier`): the class of one memory item.
- `ExpiryParams` (`stores.expiry.params`): every rule a parameter.
- `SubjectLedger`, `is_expiry_reason` (`stores.expiry.ledger`): which items are live, and why not.
- `ExpiryStage` (`stores.expiry.stage`): one wrapper any strategy can take, before ranking.
"""

from stores.expiry.classes import CLASSES, GOLD_LABELS, Classification, MemoryClass
from stores.expiry.classifier import classify
from stores.expiry.ledger import EXPIRY_PREFIXES, SubjectLedger, is_expiry_reason, reason_class
from stores.expiry.params import ExpiryParams
from stores.expiry.stage import ExpiryStage

__all__ = [
    "CLASSES", "GOLD_LABELS", "Classification", "MemoryClass", "classify", "EXPIRY_PREFIXES", "SubjectLedger",
    "is_expiry_reason", "reason_class", "ExpiryParams", "ExpiryStage",
]
