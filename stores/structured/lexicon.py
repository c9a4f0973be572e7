"""The words the rule-based extractor reads: outcome phrases, action verbs, canonical steps, facts.

Everything here is data plus small matchers over it; the state machine that turns a
conversation into memories is `stores.structured.extract`. Texts are matched lower-cased
with contractions spelled out (`normalize`), so "didn't help" and "did not help" are one rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from stores.text import STOPWORDS


@lru_cache(maxsize=1 << 16)
def normalize(text: str) -> str:
    """Lower-case, straight quotes, contractions spelled out (`didn't` -> `did not`, `won't` -> `will not`)."""
    t = text.replace("’", "'").replace("‘", "'").lower()
    t = re.sub(r"\bwon't\b", "will not", t)
    t = re.sub(r"\bcan't\b", "cannot", t)
    t = re.sub(r"n't\b", " not", t)
    return t


# ---- outcomes (seed rules 1-3) -----------------------------------------------------------------
FAILURE = re.compile(
    r"\b(?:did not help|does not help|has not helped|did not work|does not work|is not working|not working"
    r"|did not fix|has not fixed|not fixed|(?:has|have) not been fixed|no luck|no change|no difference"
    r"|made no difference|nothing changed|same (?:error|problem|issue|thing|crash|message)"
    r"|still (?!works?\b|working\b|fine\b|arrives?\b|there is\b|have\b|has\b)\w+"
    r"|(?:crash|fail|break|die|drop|freez|hang|(?<!on )time|clos|bounc|reject)\w* (?:again|right after|straight away)"
    r"|failed|did (?:absolutely |literally |precisely |exactly )?nothing|(?:zero|no) (?:difference|change) at all"
    r"|zero (?:difference|change)|(?:booted|kicked|logged|threw|thrown|signed) (?:me|us) out again)\b"
)
"""Rule 2: the step did not help (`did not help`, `still crashing`, `didn't work`, `failed` ...)."""

ALL_FAILED = re.compile(
    r"\b(?:neither(?: of (?:them|those|these))? (?:helped|worked|fixed it|did anything)|neither helped"
    r"|none of (?:it|that|them|those|these|this) (?:helped|worked)|nothing (?:helped|worked)"
    r"|both (?:failed|did not help|did not work))\b"
)
"""Rule 3: every step tried so far in the message failed (`neither helped`)."""

SUCCESS = re.compile(
    r"\b(?:fixed it|fixed the (?:issue|problem|crash)|(?:that|this|it|which|and it|update|restart) fixed"
    r"|(?:that|this|it|the workaround) (?:worked|works)|worked(?: for (?:me|us))?|works (?:now|again|fine)"
    r"|working (?:now|again|fine)|solved (?:it|the (?:issue|problem))|resolved (?:it|the (?:issue|problem))"
    r"|did the trick|that did it|sorted it|(?:opens|loads|launches|runs|syncs|arrives?) (?:now|again|fine)"
    r"|works for (?:everyone|everybody|all of us|me|us)|back to normal|all good(?: now)?|problem is gone|succeeded|fixed"
    r"|(?:syncing|loading|opening|printing|connecting|uploading|exporting|sending|launching) (?:again|fine|properly|normally)"
    r"|(?:go|goes|went|going|come|comes|came) through (?:now|again|fine)|no more [\w-]+-outs?)\b"
)
"""Rule 1: the step worked (`fixed it`, `worked`, `solved it`, `resolved the issue` ...)."""

FIXED_BY = re.compile(r"\b(?:fixed|resolved|solved|sorted)(?: it)? by\b")
"""`fixed by <step>`: the success names the step after it (resolution summaries)."""


@dataclass(frozen=True)
class OutcomeMark:
    """An outcome phrase found in a clause."""

    outcome: str
    """`worked` or `failed`."""
    all_prior: bool
    """True for `neither helped`: every step of the message so far, not the nearest one."""
    start: int
    """Position in the normalized text."""


def outcome_marks(clause: str) -> list[OutcomeMark]:
    """Outcome phrases of a normalized clause, failures masked before successes are looked for
    (so `not fixed` never reads as `fixed`)."""
    marks: list[OutcomeMark] = []
    masked = clause
    for m in ALL_FAILED.finditer(clause):
        marks.append(OutcomeMark("failed", True, m.start()))
        masked = masked[: m.start()] + " " * (m.end() - m.start()) + masked[m.end():]
    for m in FAILURE.finditer(masked):
        marks.append(OutcomeMark("failed", False, m.start()))
        masked = masked[: m.start()] + " " * (m.end() - m.start()) + masked[m.end():]
    for m in SUCCESS.finditer(masked):
        if not FIXED_BY.match(masked, m.start()):
            marks.append(OutcomeMark("worked", False, m.start()))
            masked = masked[: m.start()] + " " * (m.end() - m.start()) + masked[m.end():]
    for m in _DOING_NOW.finditer(masked):
        if _does_its_job(masked, m):
            marks.append(OutcomeMark("worked", False, m.start()))
    return sorted(marks, key=lambda x: x.start)


_DOING_NOW = re.compile(r"\b(?=([a-z]{3,}ing) (?:\w+ ){0,3}?(?:now|again|fine|properly|normally|perfectly|on time)\b)")
"""`everything is reading now`, `the reminders are arriving on time again`: an outcome said by what happens now."""
_NOT_DOING = frozenset(
    "doing happening going acting playing getting coming saying trying thinking wondering waiting asking hoping looking "
    "checking seeing starting stopping nothing something anything everything thing morning evening being having "
    "telling writing calling contacting messaging emailing".split()
)


_DETERMINERS = frozenset("the a an my his her your their our its this that these those".split())


def _does_its_job(clause: str, m: re.Match) -> bool:
    """Whether `<verb>ing now` (`_DOING_NOW`) says the thing does its job again: not a symptom (`freezing again`), not
    a word that says nothing of the job (`doing it again`, `happening again`), not after `still`, `keeps`, `stopped`
    or a negation (`still loading again`, `not syncing now`), not a noun's modifier after a determiner (`the hearing
    aids again`), not a step named as the clause's subject (`pairing the hearing aids again was suggested`)."""
    verb = m.group(1)
    if verb in _NOT_DOING or verb in _ING_NOUNS or SYMPTOM.match(verb) or FAILURE.match(verb):
        return False
    before = clause[: m.start()].split()[-2:]
    if before and before[-1] in _DETERMINERS:  # `the hearing aids again`: a noun's modifier, not a verb
        return False
    after = clause[m.end(1):].split()[:1]
    if not before and after and after[0] in _DETERMINERS:  # `pairing the hearing aids again was suggested`: a step named
        return False
    return not any(w in ("still", "keeps", "keep", "kept", "stopped", "stops", "not", "no", "never", "started", "starts", "is not",
                         "anymore", "without", "i", "i'm", "im", "we", "we're", "she", "she's", "he", "he's", "they", "they're",
                         "you", "you're", "someone", "somebody", "am") for w in before)  # `she's creating a token now`: a person at work


# ---- actions --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """A troubleshooting step mentioned in a clause, with its canonical form."""

    key: str
    """Canonical key: the same step phrased twice has the same key (`restart-application`)."""
    text: str
    """Canonical text (`Restart application`, `Cleared application cache`, `Raise connect_timeout ...`)."""
    group: str
    """Verb group (`restart`, `update`, `adjust` ...), for matching a pronoun (`did that`) to a pending step."""
    words: frozenset[str]
    """Stemmed object words, for fuzzy matching of the same step phrased differently."""
    start: int
    """Position in the normalized clause."""
    pronoun: bool = False
    """`did that`, `tried it`: refers to a step already suggested, not a new one."""


APP_WORDS = frozenset({"it", "app", "application", "software", "program", "client", "the app", "suite", "tool"})

_END = (r"(?=\s*(?:[,;!?]|\.(?:\s|$)|$)|\s+(?:and|but|then|so|because|again|twice|already|too|a few times|yesterday"
        r"|today|this morning|last night|first|as well|itself|that|which|it|fixed|worked|helped|did|does|solved|resolved|made"
        r"|still|was|is|seems|seemed|but)\b)")
"""A canonical restart/update ends where its clause ends: `restarted it, ...`, `updated the app and ...`."""

# canonical steps first: the seed's own texts, matched anywhere in a clause
_CATALOG: tuple[tuple[re.Pattern, str, str, str], ...] = (
    (re.compile(r"\b(?:delet\w*|uninstall\w*|remov\w*) and re-?install\w*|\bre-?install\w*"), "reinstall-application",
     "Reinstall application", "reinstall"),
    (re.compile(r"\b(?:clear\w*|purg\w*|flush\w*|empt\w*|delet\w*|wip\w*)\b(?:\W+\w+){0,4}?\W+cache\b"
                r"|\bcache\W+(?:\w+\W+){0,2}(?:clear\w*|purg\w*|flush\w*)"), "clear-cache", "Cleared application cache", "clear"),
    (re.compile(r"\b(?:restart\w*|reboot\w*|relaunch\w*|power[- ]cycl\w*|turn\w* it off and (?:back )?on)"
                r"(?:\s+(?:it|the app|the application|the software|my app|our app|the program|(?:the |my |our )?[a-z]+ suite))?"
                + _END), "restart-application", "Restart application", "restart"),
    (re.compile(r"\b(?:updat\w*|upgrad\w*)(?:\s+(?:it|the app|the application|the software|my app|our app|the client))?"
                r"(?:\s+to (?:the latest(?: version)?|(?:version )?\d[\w.]*))?" + _END), "update-application", "Update application",
     "update"),
    (re.compile(r"\b(?:log\w*|sign\w*) out(?: of [^,;.!?]{1,40}?)? and (?:(?:log|sign)\w* )?(?:back )?in\b"), "sign-out-and-in",
     "Sign out and back in", "sign-out"),
    (re.compile(r"\bclear\w* (?:the |my |your |browser )*cookies\b"), "clear-cookies", "Clear browser cookies", "clear"),
)
"""(pattern, key, canonical text, verb group). Restart/update count as the application's only when their
object is the app (or nothing): restarting a connector worker is a different step, read generically."""

_CATALOG_NEEDS: tuple[tuple[str, ...], ...] = (
    ("install",), ("cache",), ("restart", "reboot", "relaunch", "power", "turn"), ("updat", "upgrad"), ("out",),
    ("cookies",),
)
"""Per `_CATALOG` pattern, words of which every match holds one: a clause holding none is not searched
(most clauses name no canonical step; `tests/stores/test_extract.py` holds the two in step)."""

_VERBS: dict[str, str] = {
    # lemma: verb group (synonyms share a group, so "did that" and rephrasings find the same step)
    "restart": "restart", "reboot": "restart", "relaunch": "restart", "update": "update", "upgrade": "update",
    "downgrade": "downgrade", "reinstall": "reinstall", "install": "install", "uninstall": "uninstall",
    "clear": "clear", "purge": "clear", "flush": "clear", "reset": "reset", "rotate": "rotate", "re-enter": "rotate",
    "re-save": "resave", "resave": "resave", "replace": "replace", "upload": "upload", "regenerate": "regenerate",
    "renew": "renew", "raise": "adjust", "increase": "adjust", "lower": "adjust", "reduce": "adjust", "bump": "adjust",
    "extend": "adjust", "change": "adjust", "set": "adjust", "adjust": "adjust", "switch": "switch", "disable": "disable",
    "enable": "enable", "toggle": "toggle", "drain": "drain", "resync": "resync", "re-sync": "resync",
    "reconnect": "reconnect", "reauthorize": "reauthorize", "re-authorize": "reauthorize", "reauthenticate": "reauthorize",
    "re-authenticate": "reauthorize", "whitelist": "allowlist", "allowlist": "allowlist", "roll": "rollback",
    "revert": "rollback", "refresh": "refresh", "restore": "restore", "repair": "repair", "reconfigure": "configure",
    "configure": "configure", "apply": "apply", "resend": "resend", "re-send": "resend", "reissue": "reissue",
    "re-issue": "reissue", "unlock": "unlock", "unblock": "unlock", "remove": "remove", "delete": "remove",
    "re-add": "readd", "relink": "relink", "re-link": "relink", "migrate": "migrate", "move": "move", "turn": "turn",
    "add": "add", "edit": "adjust", "patch": "patch", "void": "void", "refund": "refund", "cancel": "cancel",
    "verify": "verify", "re-run": "rerun", "rerun": "rerun", "retry": "rerun",
}
KNOWN_GROUPS = frozenset(_VERBS.values()) | frozenset(g for *_, g in _CATALOG) | frozenset({"named"})
"""Verb groups of the steps the lexicon lists (an open step's group is its verb's root)."""
_IRREGULAR = {"reset": "reset", "set": "set", "rerun": "rerun", "re-run": "re-run", "reran": "rerun", "re-ran": "re-run"}
_VERIFY = frozenset({"rerun", "verify"})
"""Groups that check a step rather than being one ("re-ran the load"): never a step of their own."""

_PARTICLE = {"turn": ("off", "on"), "switch": ("off", "on"), "roll": ("back",)}
_NEEDS_PARTICLE = frozenset({"turn", "roll"})
"""`turned it around`, `rolled out` are not steps; `turn off ...`, `roll back ...` are."""
_KEEPS_TARGET = frozenset({"switch", "move", "change", "set", "migrate"})
"""Verbs whose target is the point (`switched the report to a scheduled S3 export`): their `to ...` stays."""


@lru_cache(maxsize=1 << 15)
def _lemma(word: str) -> tuple[str, str] | None:
    """(lemma, form) of a step verb, form one of `base`, `past`, `ing`, `s`; None if not a step verb
    (pure, so memoized: `find_steps` asks it for every word of every clause it reads)."""
    w = word.lower()
    if w in _IRREGULAR:
        return (_IRREGULAR[w], "past") if _IRREGULAR[w] in _VERBS else None
    if w in _VERBS:
        return w, "base"
    for suffix, add, form in (("ing", "", "ing"), ("ing", "e", "ing"), ("ied", "y", "past"), ("ed", "", "past"),
                              ("ed", "e", "past"), ("d", "", "past"), ("es", "", "s"), ("s", "", "s")):
        if w.endswith(suffix):
            base = w[: -len(suffix)] + add
            if base in _VERBS:
                return base, form
            if len(base) > 2 and base[-1] == base[-2] and base[:-1] in _VERBS:  # dropped -> drop
                return base[:-1], form
    return None


_IMPERATIVE_LEAD = re.compile(r"(?:^|\s)(?:please|try|to|let's|let us|could you|can you|would you|go ahead and|you could|you can)\s*$")
"""Before a bare verb, these make it a step to take (`please restart`); `I upload ...` is a habit, not a step."""


WORD = re.compile(r"[a-z0-9][a-z0-9_'.-]*[a-z0-9]|[a-z0-9]")
"""A word of normalized text (`connect_timeout`, `5.2`, `re-ran` are one word each)."""
_BOUNDARY = re.compile(
    r"\s*(?:[,;:()]|[.!?](?=\s|$)|\s(?:and|but|then|so|which|because|while|until|if|when|as|to|for|in|on|from|via|at"
    r"|with|without|after|before|so that|fixed|worked|helped|did|does|solved|resolved|made|still|is|was|seems|seemed)\s)"
)
_PRONOUN_ACTION = re.compile(r"\b(?:did|done|tried|do|try) (?:that|it|this|those|these|both|them|so)\b|\b(?:tried|done) that\b")
_DETERMINERS = frozenset({"the", "my", "our", "your", "her", "his", "their", "a", "an", "its", "this", "that", "all"})


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A crude stem for matching (`crashing`, `crashes`, `crashed` -> `crash`)."""
    w = word.lower().strip("'.-")
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


@lru_cache(maxsize=1 << 16)
def content_words(text: str) -> frozenset[str]:
    """Stemmed words of `text` minus stopwords and one-letter tokens."""
    return frozenset(stem(w) for w in WORD.findall(normalize(text)) if w not in STOPWORDS and len(w) > 1)


@lru_cache(maxsize=1 << 16)
def casing(original: str) -> Mapping[str, str]:
    """Lower-cased word -> its form in `original`, to give extracted phrases back their capitals
    (read-only and memoized: the reply engine reads the same sentences again at many probes)."""
    return MappingProxyType({w.lower(): w for w in (x.rstrip(".'") for x in re.findall(r"[\w'.+-]+", original)) if w})


def _object_phrase(clause: str, start: int, cases: Mapping[str, str]) -> str:
    """The words after a verb up to the next clause boundary (at most eight), in their original casing."""
    rest = clause[start:]
    cut = _BOUNDARY.search(rest)
    phrase = rest[: cut.start()] if cut else rest
    words = phrase.split()
    while words and words[0] in _DETERMINERS:
        words = words[1:]
    return " ".join(cases.get(w, w) for w in words[:8]).strip(" '\"")


_NAMED_FIX = re.compile(r"(?:fixed|solved|resolved|sorted|cured) (?:it|this|that|the)\b|did the trick|did it\b")
"""The success phrases after which a summary's noun phrase is the fix (`an ethernet cable fixed it`), unlike
`the nightly load succeeded`, the job itself working again."""
_NAMED_FAILURE = re.compile(r"(?:did not|has not|have not) (?:help|fix|change)|made no (?:difference|odds)|did nothing|no (?:luck|change|difference)")
"""The failure phrases after which a summary's noun phrase is a step tried (`a new SD card did not help`), unlike
`SSO sign-in failed with ...`, the problem itself."""


def object_named(original: str, clause: str, end: int) -> str | None:
    """A step a resolution summary names by what it used, with no verb (`an ethernet cable fixed it`, `a new
    battery did the trick`): the words that open the normalized `clause` before its outcome phrase at `end`, in
    `original`'s casing, when they are a short noun phrase (one to six words, a content word, no verb form the
    lexicon reads as a step, no pronoun), and the outcome a fix (`fixed it`, not `the nightly load succeeded`) or a
    step's failure (`did not help`, not `failed with ...`); None otherwise."""
    if not (_NAMED_FIX.match(clause, end) or _NAMED_FAILURE.match(clause, end)):
        return None
    head = re.split(r"[,;:.!?()]|\b(?:and|but|then|so|because)\b", clause[:end])[-1].strip()
    words = head.split()
    while words and words[0] in _DETERMINERS:
        words = words[1:]
    if not 1 <= len(words) <= 6 or _PRONOUN_OBJECT.fullmatch(words[0]) or words[0] in _STOPWORDS_SET:
        return None
    if not content_words(" ".join(words)) or words[0].endswith("ing") or _lemma(words[0]):
        return None
    cases = casing(original)
    text = " ".join(cases.get(w, w) for w in words)
    return text[:1].upper() + text[1:]


def _cache_step(matched: str, cases: Mapping[str, str]) -> tuple[str, str]:
    """`clear the app cache` is the seed's `Cleared application cache`; `clear the SSO session cache` is its own step."""
    words = matched.split()
    inner = [w for w in words[1:] if w != "cache" and w not in _DETERMINERS and w.removesuffix("'s") not in APP_WORDS
             and not w.startswith(("clear", "purg", "flush"))]
    if not inner or "cache" not in words:
        return "clear-cache", "Cleared application cache"
    qual = " ".join(cases.get(w, w) for w in inner)
    return f"clear-cache:{'-'.join(sorted(stem(w) for w in inner))}", f"Cleared {qual} cache"


def find_steps(clause: str, cases: Mapping[str, str], *, subject_free: bool, past_only: bool = False,
               open_verbs: bool = True) -> list[Step]:
    """Troubleshooting steps named in a normalized clause (`cases`: `casing()` of the original text).

    With `subject_free`, a generic verb counts only at the start of the clause (optionally after
    `I`/`we`/`also`/`then`/`tried`): "Our IT team rotated the certificate" is a detail, not a step
    the customer tried, and a bare verb only after `please`/`try`/`to`. With `past_only` (resolution summaries),
    a generic verb counts only as `-ed` or `-ing` (`fixed by raising ...`). Canonical steps of the catalog
    count anywhere. With `open_verbs` (the default), a verb the lexicon does not list is a step where the
    sentence's shape puts one (`_open_step`).
    """
    steps: list[Step] = []
    # a setting's value in quotes is no step of its own (`set the date to 'Set Automatically'`)
    taken: list[tuple[int, int]] = [(q.start() + 1, q.end()) for q in _QUOTED.finditer(clause)]
    for (pattern, key, text, group), needs in zip(_CATALOG, _CATALOG_NEEDS):
        if not any(w in clause for w in needs):
            continue
        for m in pattern.finditer(clause):
            if any(a <= m.start() < b for a, b in taken) or _after_since(clause, m.start()):
                continue
            if key == "clear-cache":
                key, text = _cache_step(m.group(), cases)
            elif key == "sign-out-and-in" and m.group().startswith("log"):
                text = "Log out and back in"  # the customer's verb, so a reply quotes the step as it was said
            steps.append(Step(key, text, group, frozenset({key}), m.start()))
            taken.append((m.start(), m.end()))
    for m in _PRONOUN_ACTION.finditer(clause):
        if not any(a <= m.start() < b for a, b in taken):
            steps.append(Step("", "", "", frozenset(), m.start(), pronoun=True))
            taken.append((m.start(), m.end()))
    for m in WORD.finditer(clause):
        found = _lemma(m.group())  # most words are no step verb: that is known before the spans are looked at
        if found is None:
            if not open_verbs or any(a <= m.start() < b for a, b in taken):
                continue
            step = _open_step(clause, m, cases, subject_free=subject_free, past_only=past_only)
            if step is not None:
                steps.append(step)
                taken.append((m.start(), m.start() + len(step.text) + 8))
            continue
        if _VERBS[found[0]] in _VERIFY:
            continue
        if any(a <= m.start() < b for a, b in taken):
            continue
        lemma, form = found
        if form == "s" or (past_only and form == "base"):
            continue  # "uploads work now", "PDF upload crash": nouns, not steps
        if subject_free and not _at_clause_start(clause, m.start()):
            continue
        if subject_free and form == "base" and not _IMPERATIVE_LEAD.search(clause[: m.start()]):
            continue
        if _after_since(clause, m.start()):
            continue
        obj_start = m.end()
        particle = ""
        for p in _PARTICLE.get(lemma, ()):
            if clause[obj_start:].startswith(f" {p} "):
                particle, obj_start = p, obj_start + len(p) + 1
        cycled = _off_and_on(clause, obj_start, lemma) if lemma in _PARTICLE and not particle else None
        if cycled is not None:  # `turn Bluetooth off and on again`, `switch it off, wait, then switch it on`
            thing = " ".join(cases.get(w, w) for w in cycled.group(1).split() if w not in _DETERMINERS)
            words = content_words(thing)
            if words:
                steps.append(Step(f"{lemma}-off-on:{'-'.join(sorted(words))}", f"{lemma[0].upper()}{lemma[1:]} {thing} off and on",
                                  f"{lemma}-off-on", words, m.start()))
                taken.append((m.start(), cycled.end()))
                continue
        late = _LATE_PARTICLE.match(clause, obj_start) if lemma in _PARTICLE and not particle else None
        if late and not _PRONOUN_OBJECT.match(late.group(1)) and late.group(2) in _PARTICLE[lemma]:
            thing = " ".join(cases.get(w, w) for w in late.group(1).split() if w not in _DETERMINERS)
            words = content_words(thing)  # `turned the parking mode off`: `turn off parking mode`
            if words:
                verb = f"{lemma} {late.group(2)}"
                steps.append(Step(f"{_VERBS[lemma]}-{late.group(2)}:{'-'.join(sorted(words))[:80]}", f"{verb[0].upper()}{verb[1:]} {thing}",
                                  f"{_VERBS[lemma]}-{late.group(2)}", words, m.start()))
                taken.append((m.start(), late.end()))
                continue
        if lemma in _NEEDS_PARTICLE and not particle:
            continue  # "turn" alone is not a step; "turn off ..." is
        if _BARE_PRONOUN.match(clause, obj_start):
            continue  # `switch it back on`, `upload that instead`: the object is a step or thing already named
        obj = _object_phrase(clause, obj_start, cases)
        target = clause[obj_start:].find(" to ")
        between = clause[obj_start:obj_start + target + 1].strip() if target >= 0 else ""
        between = re.sub(r"\s+from\s+\S+(?:\s+\S+)?$", "", between)  # `switch the format from XLSX to CSV`
        if lemma in _KEEPS_TARGET and target >= 0 and obj and between.endswith(obj.lower().split()[-1]):
            tail = _object_phrase(clause, obj_start + target + 4, cases)
            if tail:
                obj = f"{obj} to {tail}"
        words = content_words(obj)
        if not words:
            continue
        verb = f"{lemma} {particle}".strip()
        group = _VERBS[lemma] + (f"-{particle}" if particle else "")
        key = f"{group}:{'-'.join(sorted(words))[:80]}"
        steps.append(Step(key, f"{verb[0].upper()}{verb[1:]} {obj}", group, words, m.start()))
        taken.append((m.start(), obj_start + len(obj)))
    return sorted(steps, key=lambda s: s.start)


_QUOTED = re.compile(r"(?<=\b(?:to|as) )(['\"])[^'\"]{2,40}\1(?=[\s,;:.!?)]|$)")
"""A value in quotes that a setting is set to (`to 'Set Automatically'`): its words are a name, not a step."""
_OFF_AND_ON = re.compile(r" ((?:[a-z0-9'-]+ ){0,2}?[a-z0-9'-]+) off and (?:back )?on\b")
"""`turn Bluetooth off and on`: a thing switched off and on again, named between the verb and its particles."""
_OFF_THEN_ON = re.compile(r" ((?:[a-z0-9'-]+ ){0,2}?[a-z0-9'-]+) off\b[^.;!?]{0,60}?(?:,|\bthen|\band) ([a-z]+) (?:it|them) (?:back )?on\b")
"""`switch Bluetooth off on your phone, wait ten seconds, then switch it on again`: the same cycle said in two
steps of one clause, the second on a pronoun (`_OFF_AND_ON` said in one breath)."""


def _off_and_on(clause: str, at: int, lemma: str) -> re.Match | None:
    """The thing a verb of `_PARTICLE` switches off and on from `at`, said in one breath (`_OFF_AND_ON`) or in two
    steps of one clause, the second a verb that switches on, on a pronoun (`_OFF_THEN_ON`); None when the thing is
    a pronoun."""
    m = _OFF_AND_ON.match(clause, at)
    if m is None:
        m = _OFF_THEN_ON.match(clause, at)
        if m is not None and "on" not in _PARTICLE.get((_lemma(m.group(2)) or ("",))[0], ()):
            m = None  # `then switch it on`, `then turn it back on`; not `then restart it`
    return None if m is None or _PRONOUN_OBJECT.match(m.group(1)) else m


_LATE_PARTICLE = re.compile(r" ((?:[a-z0-9'-]+ ){0,3}?[a-z0-9'-]+) (off|on|back)(?= *(?:[,;!?]|\.(?:\s|$)|$)| and (?!on\b)| but | then | so )")
"""`turned the parking mode off`: the particle after the object, at the end of its clause (not `off and on`)."""
_BARE_PRONOUN = re.compile(r"\s+(?:it|them|that|this|those|these)(?:\s+(?:back|on|off|in|out|up|down|instead|again|too|as well|now))*"
                           r"(?=\s*(?:[,;:!?]|\.(?:\s|$)|$)|\s+(?:and|but|then|so|for|when|if|please)\b)")
"""A pronoun with only particles after it (`switch it back on`), not `switch it to the EU endpoint`."""
_PRONOUN_OBJECT = re.compile(r"(?:it|them|that|this|those|these|one|everything|all)\b")
"""An object that names nothing itself (`charged them all night`): the step is the one already put forward."""

_OPEN_NOT_STEPS = frozenset(
    "tell let send confirm share give describe provide explain say answer reply look wait hold keep attach forward "
    "email call ring contact check see note read hang stay remember have get leave make take go come know think "
    "find sync notice ask need want use open start stop happen seem work help fix crash fail try mean feel hope "
    "like love hate thank sort drop freeze hang lose show report receive order pay book mention speak talk write "
    "walk run put sit set bring buy bit lot lots guess wonder worry plan expect wish sign log back last".split()
)
"""Words in a step's place that ask, report or feel rather than name a troubleshooting step (`please tell me`,
`noticed it`, `seemed fine`, `lasted like 20 min`: how long a step held), and nouns often found there: never an open step
(`_open_step`)."""
_ING_NOUNS = frozenset(
    "thing nothing something anything everything morning evening during ring king spring string ceiling building "
    "meeting setting settings booking wedding pudding pending warning heading ending missing".split()
)
_OPEN_LEAD = re.compile(
    r"(?:^|\s)(?:please|try|tried|trying|could you|can you|would you|will you|go ahead and|you could|you can|you might"
    r"|you may|you should|i suggest|i would suggest|i recommend|next step is to)"
    r"(?: (?:just|also|then|first|now|quickly|simply|kindly))?\s*$")
"""Before a verb the lexicon does not know, these make it a step to take (`please format the card`); not `let's`,
which plans what agent and customer do together (`let's connect Shopify first`)."""


def verb_root(word: str) -> str:
    """A verb's root, the same for its forms (`formatting`, `formatted`, `format` -> `format`; `charging`,
    `charged`, `charge` -> `charg`): the crude stem, a final `e` dropped, a doubled final consonant undone. A
    verb ending in `ss` keeps it (`press`, `pressing`, `pressed` -> `press`, not `pres` for the bare form)."""
    w = word.lower()
    for suffix in ("ing", "ed", "es", "s"):
        if suffix == "s" and w.endswith("ss"):
            break
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def _open_step(clause: str, m: re.Match, cases: Mapping[str, str], *, subject_free: bool, past_only: bool) -> Step | None:
    """A step named by a verb the lexicon does not list, read from the sentence's shape (the verb's place and
    its form), not from a word list: `please format the SD card` (a bare verb after a suggestion's lead), `formatting
    the SD card did not help` (a gerund opening a clause of a summary), `formatted the SD card, no change` (a
    past tense opening a customer's clause), `unplugging and replugging the scanner` (two verbs, one object).
    Its object must name something (`charged them all night` names the step already put forward, so it is none)."""
    word = m.group()
    if not word.isalpha() or len(word) < 4 or word in _STOPWORDS_SET:
        return None
    if cases.get(word, word)[:1].isupper() and m.start() > 0:
        return None  # a name (`try Lucky Sevens Classic`), not a verb
    form = "ing" if word.endswith("ing") else "past" if word.endswith("ed") else "base"
    root = verb_root(word)
    if form == "ing" and (word in _ING_NOUNS or len(root) < 3):
        return None
    if root in _OPEN_ROOTS_NOT or word in _OPEN_NOT_STEPS or _after_since(clause, m.start()):
        return None
    head = clause[: m.start()]
    led = _OPEN_LEAD.search(head) is not None
    if form == "base":
        if past_only or subject_free:
            return None  # a bare verb is an agent's suggestion; a customer's `please erase my data` asks for service
        if not led and not _OPEN_AND.search(head):
            return None  # a bare word is a step only where a suggestion puts it: after `please`, or `and` in one
    elif form == "ing":
        if not led and not (past_only and _at_clause_start(clause, m.start(), strict=True)):
            return None
    else:  # a customer's past tense (a summary's `-ed` opening a clause is as often an adjective: `compressed air`)
        if not subject_free or not _at_clause_start(clause, m.start()) or led:
            return None
    end = m.end()
    verbs = word
    twin = re.match(r" and ([a-z]+)\b", clause[end:])
    if twin and twin.group(1) not in _STOPWORDS_SET and twin.group(1).endswith({"ing": "ing", "past": "ed"}.get(form, "")) \
            and (form != "base" or twin.group(1) not in _DETERMINERS):
        if form != "base" or not _object_phrase(clause, end, cases):
            verbs, end = f"{word} and {twin.group(1)}", end + len(twin.group(0))  # `unplugging and replugging the scanner`
    rest = clause[end:].lstrip()
    if _PRONOUN_OBJECT.match(rest):
        return None
    obj = _object_phrase(clause, end, cases)
    particle = re.match(r" (in|out|up|back|over|down)\b", clause[end:])
    if not obj and particle:  # `swapped in a new SD card`: the particle, then the object
        verbs, end = f"{verbs} {particle.group(1)}", end + len(particle.group(0))
        if _PRONOUN_OBJECT.match(clause[end:].lstrip()):
            return None
        obj = _object_phrase(clause, end, cases)
    kept = obj.split()
    while len(kept) > 1 and kept[-1].lower() in ("back", "in", "out", "up", "down", "off", "on", "again", "over", "the", "of",
                                                 "a", "an", "to", "and", "its", "their"):
        kept.pop()  # `pushed the cable back in`: the particle is the verb's
    obj = " ".join(kept)
    tool = _INSTRUMENT.search(clause, end + len(obj))
    if obj and tool and not re.search(r"[,;:.!?]", clause[end:tool.start()]):  # `connect the laptop ... with an ethernet cable`
        obj = f"{obj} {tool.group(1)} " + " ".join(cases.get(w, w) for w in tool.group(2).split())
    elif form == "base" and obj:
        more = _RUNS_ON.match(clause, end + clause[end:].lower().find(obj.split()[-1].lower()) + len(obj.split()[-1]))
        if more:  # `disconnect the bank feed and reconnect it`, `charge it fully and hold its power button`: one step
            tail = more.group(1).split()[:8]
            obj = f"{obj} " + " ".join(cases.get(w, w) for w in tail)
    words = content_words(obj)
    if not words or len(obj.split()) > 8:
        return None
    verbs = " ".join(cases.get(v, v) for v in verbs.split())
    return Step(f"{root}:{'-'.join(sorted(words))[:80]}", f"{verbs[0].upper()}{verbs[1:]} {obj}", root, words, m.start())


_INSTRUMENT = re.compile(r"\b(with|using|over|via|as) (?=(?:an? )?(?:png|jpe?g|pdf|csv|xlsx|json|txt|zip|gif|bluetooth|wi-?fi|ethernet|usb)\b|(?!as))(?:an? |the |your |some |my )?((?!(?:it|them|that|this)\b)[a-z0-9-]+(?: [a-z0-9-]+)?(?= (?:cable|lead|adapter|cord)\b)"
                         r"(?: [a-z]+)|bluetooth|wi-?fi|ethernet|usb(?: [a-z]+)?|png|jpe?g|pdf|csv|xlsx|json|txt|zip|gif)")
"""What a step is done with or over (`with an ethernet cable`, `over Bluetooth`): part of the step's name."""
_RUNS_ON = re.compile(r"(?:\s[^,;:.!?]*?)?\s(and (?!(?:tell|let|see|check|confirm|send|wait|keep|then|make sure|share|reply|try again)\b)"
                      r"[a-z-]+ [^,;:.!?]*?)(?=\s(?:then|so|to see|before|after|if|when|while|until|for)\b|[,;:.!?]|$)")
"""A suggestion that runs on over `and` into a second verb on the same thing (not `and let me know`)."""
_STOPWORDS_SET = frozenset(STOPWORDS)


def _family(group: str) -> str:
    """A verb group's family: its root without a `re` prefix (`resave`, `saving` -> `sav`; `reconnect`, `connect`)."""
    root = verb_root(group)
    for prefix in ("re-", "re"):
        if root.startswith(prefix) and len(root) - len(prefix) >= 3:
            return verb_root(root[len(prefix):])
    return root


def same_verb(a: str, b: str) -> bool:
    """Whether two steps' verb groups name the same action: equal, or, when either is a verb the lexicon does not
    list (an open step), of one family (`save ... again` and `re-save`, `reconnect` and `connect`); two listed verbs
    keep their groups (`remove` is not `move`)."""
    if a == b:
        return True
    if a in KNOWN_GROUPS and b in KNOWN_GROUPS or not (a.isalpha() or a.startswith("re-")) or not (b.isalpha() or b.startswith("re-")):
        return False
    return _family(a) == _family(b)
_OPEN_ROOTS_NOT = frozenset(verb_root(w) for w in _OPEN_NOT_STEPS) | frozenset(
    "stopp start happen seem need want notic check look ask tri us open receiv show report drift lagg glitch flicker "
    "load".split())
_OPEN_AND = re.compile(r"(?:^|\s)(?:please|try|could you|can you|would you|go ahead and|you could|you can)\s.*\sand\s+$")
"""A bare verb after `and` in a suggestion (`please unplug the scanner and plug it back in`)."""


_LEAD_WORDS = frozenset(
    "i we also then and just already have had tried to first finally please try could can would you let us let's "
    "will go ahead suggest recommend next step is i've we've i'd we'd actually so ok okay yes".split()
)


def _at_clause_start(clause: str, pos: int, strict: bool = False) -> bool:
    """True when only lead words (`I`, `we`, `also`, `tried`, `please`, `asked Leah to` ...) stand between
    the clause's start and `pos`, or (unless `strict`) the customer's own `I` or `we` in the middle of it
    (`on Tuesday evening I reinstalled it`, not `when I restarted it`)."""
    head = re.split(r"[,;:.!?()]|\b(?:and|but|then|so)\b", clause[:pos])[-1].strip()
    if not head:
        return True
    if not strict and _SUBJECT_BEFORE.search(head) and not _NOT_A_STEP_CLAUSE.search(head):
        lead = _SUBJECT_BEFORE.sub("", head).split()
        return all(w in _LEAD_WORDS or w in _WHEN_WORDS for w in lead)  # `on Tuesday evening I ...`, not `the colours we added`
    if re.fullmatch(r"(?:.*\s)?(?:asked(?:\s+\S+){1,3}\s+to|(?:fixed|resolved|solved|sorted)(?: it)? by)", head):
        return True
    return all(w in _LEAD_WORDS for w in head.split())


_WHEN_WORDS = frozenset(
    "on at in this last yesterday today tonight earlier later morning afternoon evening night weekend week lunch lunchtime "
    "monday tuesday wednesday thursday friday saturday sunday the a few two three couple of hours minutes days ago "
    "anyway well right away finally eventually meanwhile".split()
)
"""Words of a time said before the customer's own `I` (`on Tuesday evening I reinstalled it`)."""
_SUBJECT_BEFORE = re.compile(r"(?:^|\s)(?:i|we)(?: (?:also|already|just|then|even|finally|actually|first|quickly))*$")
_NOT_A_STEP_CLAUSE = re.compile(r"\b(?:when|whenever|if|after|before|since|until|unless|every time|each time|because|as soon as"
                                r"|while|whether|what|how|why|who|where|wish|think|thought|hope|said|says|told)\b")
"""A verb after `I` inside one of these tells when something happens or what someone said, not a step tried."""


def _after_since(clause: str, pos: int) -> bool:
    """`since updating to 5.2 ...`, `since the last update`: the update is when the problem began, not a step tried."""
    return re.search(r"\b(?:since|ever since|after the|before)\s+(?:i\s+|we\s+|(?:the|your|that|this)\s+(?:last\s+|latest\s+|recent\s+|new\s+)?)?$",
                     clause[:pos]) is not None


SUGGESTION = re.compile(
    r"\b(?:please|try|could you|can you|would you|let us|let's|i suggest|i would suggest|i recommend|go ahead and"
    r"|you could|you can|next step is to|asked \w+(?: \w+)? to)\b"
)
"""An agent's message proposes a step the customer is to try (it becomes an in-progress attempt)."""


# ---- incidents and profile facts -----------------------------------------------------------
SYMPTOM = re.compile(
    r"\b(?:crash\w*|freez\w*|hang(?:s|ing)?|error\w*|fail\w*|time[sd]? out|timing out|timeout|not work\w*"
    r"|stopped working|broken|broke|cannot|unable|will not|does not|doesn ?t|keeps? \w+ing|drops?|dropping"
    r"|slow|missing|wrong|declin\w*|locked out|expired|bounc\w*|(?:app|it|application) closes"
    r"|closes (?:itself|as soon as|right after|immediately|on its own)|charged (?:\w+ ){0,4}twice|double[- ]charged"
    r"|empty"
    r"|aborts?|died|dies|blank|looping|404|500|502|503)\b"
)
"""A customer sentence that reports a problem (opens an incident when none is open in the session)."""

REPEAT_HINT = re.compile(r"\b(?:again|same as|same thing|back|before|familiar|like last time)\b")
"""Words that say a report repeats an earlier problem (lowers the bar to reopen a resolved incident)."""

PREFERENCE = re.compile(
    r"\b(?:prefer\w*|rather than|instead of|from now on|going forward|work(?:s)? best|are better"
    r"|please (?:reach|call|contact|message|email|send|answer|reply|copy|switch|use|write)|never by"
    r"|only in)\b"
)
_PREF_TOPICS: tuple[tuple[str, re.Pattern], ...] = (
    ("hours", re.compile(r"\b(?:mornings?|afternoons?|evenings?|\d+ ?(?:am|pm)|cet|utc|callbacks?|hours)\b")),
    ("format", re.compile(r"\b(?:csv|pdf|excel|xlsx|json|sheets|format)\b")),
    ("language", re.compile(r"\b(?:english|german|french|spanish|dutch|language)\b")),
    ("copy", re.compile(r"\b(?:copy|cc)\b")),
    ("recipient", re.compile(r"\b(?:send|sent)\b.*@|@.*\b(?:instead|rather)\b|\binvoices? to\b|\bdigest\b")),
    ("contact", re.compile(r"\b(?:email|e-mail|phone|call|mobile|slack|sms|text|message|reach|contact)\w*\b")),
)

IDENTITY = re.compile(
    r"^(?:hi,?\s+|hello,?\s+|hey,?\s+|before anything else:?\s+|quick note:?\s+|correct:?\s+|yes,?\s+)?(?:"
    r"(?:i am|i'm) (?:the |a |an )?[\w ,'-]{2,60}? (?:at|for|of|from) |this is \w+(?: \w+)? from |my name is |\w+(?: \w+)? here,"
    r"|(?:we are|we're) (?:a |an )?[a-z0-9-]*[A-Z]|(?:we are|we're) (?:a |an )?(?:\w+[- ])?(?:covered|certified|regulated|based)"
    r"|(?:we are|we're) on (?:the )?\w+|we run |we have \d|we use |we do (?:around|about) |i look after |i work (?:at|for) "
    r"|i handle |i manage |only [\w ]+ use |all \d+ |my number is |our (?:warehouse|workspace|account|plan|instance|setup"
    r"|environment|stack|company|team|data) (?:is|are|has|have|runs) |(?:\w+ )?plan,)"
)
"""A customer sentence that states who they are or what they run (a profile fact). Matched on the
normalized sentence except for the `we're <Name>` form, which needs the capital (`We're Quarry Labs`)."""

_PRODUCT_NOUN = (r"(?:app|application|suite|connector|integration|sync|instance|workspace|plugin|extension|client"
                 r"|software|tool|platform|server|database|warehouse|pipeline|api|dashboard|portal|crm|erp)")
PRODUCT = re.compile(
    r"\b(?i:my|our)\s+((?:[A-Z][\w+-]*\s+){1,3}[A-Z][\w+-]*|[A-Z][\w+-]*(?=\s+" + _PRODUCT_NOUN + r"\b))"
    r"(?=\s+[a-z])"
)
"""`My Acme PDF Suite crashes ...`, `our HubSpot sync ...`: a product the customer owns (one capitalized word needs
a product noun after it, so `our Moab store` or `our May campaign` are not products)."""
USES = re.compile(r"\b(?i:we|i)\s+(?:use|are using|am using|run|are running)\s+((?:[A-Z][\w+-]*\s*){1,4})")


_DEVICES = r"(iphone|ipad|android(?: phone| tablet)?|macbook|mac|windows (?:pc|laptop)|chromebook|pixel \w+|galaxy \w+)"
DEVICE = re.compile(r"\b(?:on|from|with|using) my " + _DEVICES + r"\b|\b(?:got|have|bought|use|using) (?:a|an|my) (?:new )?" + _DEVICES + r"\b")
"""`... on my iPhone`, `got a new iPad`: the device the customer works on (an environment fact)."""


def device_of(norm: str, cases: Mapping[str, str]) -> str | None:
    """The device a normalized customer sentence names as theirs, in its original casing (`iPhone`)."""
    m = DEVICE.search(norm)
    if m is None:
        return None
    name = m.group(1) or m.group(2)
    return " ".join(cases.get(w, w) for w in name.split())


def product_of(original: str) -> str | None:
    """The product a customer sentence names as theirs (`My Acme PDF Suite` -> `Acme PDF Suite`)."""
    for pattern in (PRODUCT, USES):
        m = pattern.search(original)
        if m:
            name = m.group(1).strip()
            if name and name.split()[0].lower() not in {"it", "the", "i"} and not (name.isupper() and len(name) <= 3):
                return name
    return None


def preference_topics(clause: str) -> tuple[str, ...]:
    """The topics a stated preference sets (`contact`, `hours`, `format`, `language`, ...); empty if none.

    One sentence can set two ("from now on phone, ideally afternoons": contact and hours)."""
    if not PREFERENCE.search(clause):
        return ()
    return topic_words(clause) or ("general",)


def topic_words(clause: str) -> tuple[str, ...]:
    """The preference topics whose words a normalized clause holds, whether or not it states a preference
    (the learned preference reading asks once its head has decided that it does)."""
    return tuple(topic for topic, pattern in _PREF_TOPICS if pattern.search(clause))


@lru_cache(maxsize=8192)
@lru_cache(maxsize=1 << 16)
def sentences(text: str) -> tuple[str, ...]:
    """Sentences of a message, in order (a newline also ends one); pure, so cached (the reply engine
    reads the same lines again at every probe whose context holds them)."""
    parts = re.split(r"(?<=[.!?;])\s+|\n+", text.strip())
    return tuple(p.strip().rstrip(";").strip() for p in parts if p and p.strip().rstrip(";").strip())


__all__ = [
    "normalize", "casing", "outcome_marks", "object_named", "verb_root", "same_verb", "KNOWN_GROUPS", "device_of", "OutcomeMark", "find_steps", "Step", "stem", "content_words", "product_of",
    "preference_topics", "topic_words", "sentences", "SYMPTOM", "REPEAT_HINT", "IDENTITY", "SUGGESTION", "FIXED_BY", "APP_WORDS",
]
