"""Producers: rule-based readers that report what they saw on one turn, and never act.

Each producer writes one field of `Signals` from the customer's message and the agent turns
just before it (no model, no locker, no clock). A scenario may script any customer signal on a
turn (`signals:`), standing in for a classifier: a scripted key overrides that producer only,
so a policy is judged apart from the quality of its classifiers.

Two producers read the agent's side of the conversation, because that is where their fact is:

- `retrieval_empty`: the agent's answer to the customer's previous message came back empty
  ("I couldn't find anything on that") and the customer is asking again. Reported on the
  customer's next turn, so three in a row means the question came back empty three times.
- `same_answer_repeated`: the agent's latest answer restates the answer before it (the same
  promo terms, turn after turn), though each answer on its own looked fine.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, Mapping

from stores.bounds import PositiveInt, Share
from stores.protocol import TurnKind
from stores.text import keywords

from stores.decisions.vocabulary import INTENTS, SEVERITIES, Intent, Severity


@dataclass(frozen=True)
class SignalKey:
    """One key a scenario may script under a turn's `signals:`."""

    name: str
    """The key."""
    doc: str
    """What it says, as the scenario format documents it (the JSON Schema's description)."""
    values: tuple[str, ...] = ()
    """The words it takes (`SEVERITIES`, `INTENTS`); empty: true or false."""
    role: Literal["customer", "agent"] = "customer"
    """The role of the turns that may carry it."""


TURN_SIGNALS: tuple[SignalKey, ...] = (
    SignalKey("sensitive", "A sensitive message, and how severe.", SEVERITIES),
    SignalKey("human_request", "The customer asks for a human."),
    SignalKey("short_affirmative", 'A bare "yes", "ok", "the first one".'),
    SignalKey("hostile", "An abusive or hostile message."),
    SignalKey("meaningless", 'Noise such as "asdfgh".'),
    SignalKey("complexity", "Too complex for the bot to handle."),
    SignalKey("time_critical", "It cannot wait."),
    SignalKey("retrieval_empty", "Retrieval for this turn found nothing."),
    SignalKey("same_answer_repeated", "The answer to this turn repeats an earlier one."),
    SignalKey("resolved_confirmation", "The customer confirms the issue is resolved."),
    SignalKey("explicit_intent", "An intent the customer states for another agent's job: `recommendation`, `retention`\n"
              "(`none`: no such intent).", INTENTS),
    SignalKey("offer_live", "The scripted agent offered live support on this turn (agent turns only).", role="agent"),
    SignalKey("asked_question", "The scripted agent asked the customer something (agent turns only).", role="agent"),
)
"""The one declaration of the turn-signal keys: the scenario format's `signals:` model
(`harness.format.schema.TurnSignalsModel`) is built from it, and the producers below check scripted
keys against it. A key here is an input for decision policies, never gold. A new key's `Signals`
field and rule-based producer go in this module too, so a signal is one file (and the regenerated
JSON Schema)."""

CUSTOMER_SIGNALS: tuple[str, ...] = tuple(k.name for k in TURN_SIGNALS if k.role == "customer")
"""Signals a scenario may script on a customer turn."""

AGENT_SIGNALS: tuple[str, ...] = tuple(k.name for k in TURN_SIGNALS if k.role == "agent")
"""Signals a scenario may script on an agent turn: the agent offered live support / asked the
customer something."""


def signals_table() -> str:
    """`TURN_SIGNALS` as a markdown table (signal, value, turns, meaning): the docs show it
    (docs/results/signals.md, by `make results`; `python -m stores.decisions.signals` prints it)."""
    rows = [f"| `{k.name}` | {', '.join(f'`{v}`' for v in k.values) or 'bool'} | {k.role} | {' '.join(k.doc.split())} |"
            for k in TURN_SIGNALS]
    return "\n".join(["| signal | value | turns | meaning |", "| --- | --- | --- | --- |", *rows])


class SignalError(ValueError):
    """A scripted signal with an unknown key or a value of the wrong kind."""


@dataclass(frozen=True)
class ProducerParams:
    """Knobs of the rule-based producers (classifier stand-ins, not business policy)."""

    short_max_words: PositiveInt = 4
    """A reply of at most this many words is short (it continues the thread; "yes" is affirmative)."""
    same_answer_similarity: Share = 0.8
    """Two agent answers are the same when the Jaccard similarity of their keywords reaches this."""
    same_answer_min_keywords: PositiveInt = 4
    """Answers with fewer keywords are too short to call repeated ("ok", "sure")."""
    front: Literal["rules", "learned", "chat"] = "learned"
    """Who reads the customer's words: `learned` (the default: MiniLM embeddings and a classifier per
    signal trained on the phrase bank, the rules as fallback when it is unsure, and the safety floor
    on top: stores/decisions/learned.py), `rules` (the regular expressions here alone, a named
    variant: `producers.front=rules`), or `chat` (the reply engine's OpenAI-compatible endpoint, the
    learned front end as fallback: stores/frontend/chat.py)."""

    def __post_init__(self) -> None:
        if self.short_max_words < 1:
            raise ValueError("short_max_words must be at least 1")
        if not 0.0 < self.same_answer_similarity <= 1.0:
            raise ValueError("same_answer_similarity must be in (0, 1]")


@dataclass(frozen=True)
class AgentFacts:
    """What one agent turn did, as the producers read it."""

    turn_id: str
    """The agent turn."""
    text: str
    """What the agent said (or the step it took)."""
    kind: TurnKind
    """`message`, or `action` for a step tried."""
    offer_live: bool
    """It offered live support ("want me to connect you with a person?")."""
    asked_question: bool
    """It asked the customer something (an offer is a question too)."""
    resolution_check: bool
    """It asked whether the issue is fixed ("did that solve it?"): a "yes" next is a goodbye."""
    no_answer: bool
    """It said its lookup found nothing ("I couldn't find anything about that")."""
    asks_after_offer: bool = False
    """It offered live support and then asked something else ("... connect you with live support? First, is it
    the order ending 771?"): a short yes next answers that last question, not the offer."""
    scripted: tuple[str, ...] = ()
    """Which of the fields above the scenario scripted (`signals:` on the agent turn)."""


@dataclass(frozen=True)
class TurnContext:
    """What the producers may read for one customer turn: the message and the agent turns before it."""

    text: str
    """The customer's message."""
    answer: AgentFacts | None = None
    """The agent's latest message since the customer's previous turn (None when it said nothing)."""
    previous_answer: AgentFacts | None = None
    """The agent message before `answer`, earlier in the session (for repeated answers)."""
    step: AgentFacts | None = None
    """The agent's latest step (an `action` turn: "Reset the router from our side.") since the customer's
    previous turn, if it took one (the learned front end reads a fix confirmed after it)."""
    earlier: str | None = None
    """The customer's own previous message in this session (None on their first): the safety floor reads a
    follow-up with it (`stores.decisions.learned.floor_reading`)."""


@dataclass(frozen=True)
class Signals:
    """What the producers reported on one customer turn (facts about this turn only)."""

    sensitive: Severity = "none"
    """`crisis`, `harm` or `none`."""
    human_request: bool = False
    """The customer asks for a person."""
    short_affirmative: bool = False
    """A short yes ("yes", "yep", "sure, please")."""
    hostile: bool = False
    """Insults, profanity or shouting."""
    meaningless: bool = False
    """Nothing to read: keyboard mash, punctuation only ("asdfgh", "???")."""
    complexity: bool = False
    """The latest message raises a case a bot should not handle (legal threat, chargeback, fraud)."""
    time_critical: bool = False
    """The latest message says time is short ("my flight leaves in an hour")."""
    retrieval_empty: bool = False
    """The answer to the customer's previous message came back empty and they ask again."""
    same_answer_repeated: bool = False
    """The agent's latest answer restates the one before it."""
    resolved_confirmation: bool = False
    """The customer confirms the issue is fixed ("thanks, that fixed it"; "yes" to "did that solve it?")."""
    explicit_intent: Intent = "none"
    """An explicit request for another agent's job."""
    complaint: bool = False
    """The message reports a problem (a complaint is live until the agent acts on it). Also the
    routing's support context: a support problem is the knowledge agent's, whatever words it uses."""
    short_reply: bool = False
    """At most `short_max_words` words: a reply that continues the current thread."""
    answers_question: bool = False
    """The agent's latest message asked the customer something other than an offer of live
    support (or asked it after the offer: `AgentFacts.asks_after_offer`), so a short "yes" now answers
    that question, not an offer."""
    scripted: tuple[str, ...] = ()
    """Keys the scenario scripted for this turn (their producers were overridden)."""
    readers: tuple[tuple[str, str], ...] = ()
    """Per signal, who decided it and with what score (a front end other than the rules fills it)."""

    def reported(self) -> dict[str, Any]:
        """Every reported field by name (without `scripted`), for the run tables; `readers` when a
        front end other than the rules filled it."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("scripted", "readers")}
        if self.readers:
            out["readers"] = dict(self.readers)
        return out


# "n't" contractions, with or without the apostrophe ("didn't", "didnt"), but not words that merely
# end in -nt ("want", "account", "payment")
_NT = r"(?:\w+n't|(?:do|does|did|is|was|are|were|has|have|had|ca|wo|could|would|should)nt)"
_NEGATION = re.compile(r"\b(?:not|never|no longer|still|" + _NT + r")\b")

_CRISIS = re.compile(
    r"\b(?:kill(?:ing)? myself|suicid\w*|end(?:ing)? (?:my life|it all)|take my (?:own )?life|"
    r"(?:want|going) to die(?! of (?:embarrassment|shame|laughter|boredom|cringe))|don'?t want to (?:live|be alive|be here)|self[- ]harm\w*|"
    r"hurt(?:ing)? myself|overdos\w*|no reason to (?:live|go on))\b"
)
_HARM = re.compile(
    r"\b(?:threaten\w*|stalk\w*|harass\w*|abus(?:ed|es|ing) me|domestic (?:violence|abuse)|"
    r"(?:hits?|beats?|hurts?|attack(?:s|ed)?|assault\w*) me|scared for my (?:life|safety)|"
    r"(?:i'?m|i am|we are|we'?re) (?:not )?safe|being followed|weapon\w*|hurt (?:him|her|them|someone|you))\b"
)
# ninth round: a person asked for by role ("put me through to a manager", "let me speak to your team leader",
# development text's repeat requests the words and the head both missed), and "put me through to" whatever follows
# it ("put me thru to billing"): being put through is being handed to someone; the one who deals with something,
# asked for ("is there anyone who deals with the kids' profiles", "could whoever handles refunds pick this up",
# "can you flick me through"); not "who do I talk to about a quote?", a question the challenge suite's gold answers
# without a person
_HUMAN = re.compile(
    r"\b(?:human(?: being)?s?(?! resources\b)|real (?:person|people|agent|human)|live (?:agent|person|support|chat|operator)|"
    r"(?:talk|speak|chat) (?:to|with) (?:a |an |some |your |the |one of your )?(?:person|agent|representative|rep|manager|"
    r"supervisor|operator|someone|somebody|people|team ?leader|boss|colleagues?)|representative|operator|supervisor|"
    r"(?:connect|transfer|put) me (?:to|with) (?:a |an |your |the |one of your )?(?:person|agent|human|someone|somebody|team|staff|"
    r"manager|team ?leader|boss|colleagues?)|(?:put|get|transfer|connect|patch|flick) me (?:through|thru|over)\b|"
    r"is there (?:a \w+ or )?(?:anyone|anybody|someone|somebody)(?: about| around| there| on your (?:end|side))? (?:who|that) "
    r"(?:deals|handles|looks after|sorts|is in charge|does|runs|manages|takes care of|is responsible)|"
    r"whoever (?:deals|handles|looks after|sorts|is in charge|does|runs|manages|takes care of|is responsible)|"
    r"(?:get|give|find) me (?:a |an |some |your )?(?:person|agent|representative|someone|somebody|manager|supervisor))\b"
)
# eleventh round: a person asked for by who they are or what they do, in a request's shape rather than by a title
# ("can someone from accounts ring me", "who's in charge of the rota? I'd like a word with them", "is there a
# bookkeeper or somebody I can run this past", "would a colleague of yours be able to explain", "can you hand me
# over"). Each alternative pairs a person said vaguely (someone, whoever, a colleague, one of them, the person who)
# with a request's shape (can / could / would / any chance, I want / I'd like) or a contact the customer asks for
# (ring me, a word with, hand me over): a person only named ("someone from your team came and broke it") is a
# report, not a request.
_SOMEONE = r"(?:someone|somebody|anyone|anybody|a person|a colleague(?: of yours)?|one of your (?:colleagues|team|staff|people)|one of them)"
_CONTACT = (r"(?:call|ring|phone|buzz|text|email|contact) (?:me|us)\b|give (?:me|us) a (?:bell|call|ring|buzz|shout)|get back to (?:me|us)|"
            r"(?:have |had )?a (?:word|chat|quick word) with|(?:talk|speak|chat) (?:to|with)|run (?:\w+ ){1,5}(?:past|by)|"
            r"(?:hand|pass|put|send|transfer|forward|patch|flick) (?:me|us) (?:over|on|along|across|through|thru)\b|"
            r"(?:connect|transfer) (?:me|us)\b(?! to (?:the|my|your) (?:wifi|wi-fi|network|internet|router|hotspot|printer|tv))")
_ASKING = r"(?:can|could|would|will|might|may|any chance|is there|i'?d like|i want|i need|get|have|let|ask)(?: you(?: get| ask| have)?)?"
_TEAM = r" (?:from|in|at|on) (?:your |the |that )?[\w' -]{2,30}?"
_HUMAN_BY_ROLE = re.compile(
    r"\b(?:" + _ASKING + " " + _SOMEONE + "(?:" + _TEAM + r")?(?: who| that| to| i (?:can|could))?(?: \w+){0,2} (?:" + _CONTACT + ")|"
    + _ASKING + " " + _SOMEONE + _TEAM + r"(?: \w+){0,2} (?:explain|sort|look at|deal with|help|pick (?:this|it) up|take (?:this|it) on|"
    r"go through|correct|amend|change|update)|"
    # twelfth round: the person said by what they know or handle, then what they should do ("could somebody who knows the
    # family settings help me"); the one who handles something asked for at the message's start ("anyone there who deals
    # with the points?"); asked for as someone alive, not a script ("is there anyone with a pulse on this line?")
    + _ASKING + " " + _SOMEONE + r" (?:who|that) (?:knows|understands|handles|deals with|looks after|does|runs|manages) "
    r"(?:[\w'-]+ ){0,4}?(?:help|explain|sort|look at|deal with|go through|correct|amend|change|update|fix)\b|"
    r"^\W*(?:anyone|anybody|someone|somebody)(?: about| around| there| over there| on your (?:end|side))? (?:who|that) "
    r"(?:deals|handles|looks after|sorts|is in charge|does|runs|manages|takes care of|is responsible)|"
    r"is there (?:anyone|anybody|someone|somebody|a person) (?:[\w'-]+ ){0,2}?(?:with (?:an? )?(?:actual |real )?(?:pulse|heartbeat|brain)|"
    r"alive|awake|who isn'?t (?:a |an )?(?:bot|robot|machine|reading|script\w*|automated))|"
    + _ASKING + r" (?:a colleague(?: of yours)?|one of your (?:colleagues|team|staff|people))(?: \w+){0,3} (?:explain|sort|look at|deal with|"
    r"help|pick (?:this|it) up|take (?:this|it) on|go through)|"
    r"(?:hand|pass|put) me (?:over|on|along|across)\b|"
    r"(?:can|could) (?:one of (?:them|you)|they|he|she) (?:ring|call|phone|contact|email) me|"
    r"(?:i'?d|i would)(?: much)? (?:rather|sooner|prefer to) (?:hear it from|talk (?:it )?(?:through )?(?:to|with)|speak (?:to|with)|"
    r"deal with) (?:someone|somebody|whoever|a person|one of|the person|a human|your)|"
    r"(?:i'?d like|i want|i would like|can i|could i|may i|let me) (?:to )?(?:have )?(?:a word|a chat|speak|talk) (?:with|to) "
    r"(?:them|that person|whoever|the person|the one)\b|"
    r"(?:a word|a chat|speak|talk) (?:with|to) (?:that person|whoever|the person|the one)\b|"
    r"(?:i want|i'?d like|give me|get me|put (?:me|us) on to) (?:to (?:talk|speak) (?:to|with) )?(?:the|that) "
    r"(?:person|one|people|lady|man|guy|fella|fellow|bloke|chap|woman|girl|lad) "
    r"(?:who|that|in charge|responsible)|"
    r"is there (?:a|an) [\w-]+ or (?:anyone|anybody|someone|somebody)|"
    r"(?:anyone|anybody|someone|somebody) (?:i|we) (?:can|could) (?:talk|speak|run|ask|chat|go)\b|"
    r"(?:connect|transfer) (?:me|us)(?: (?:now|then|please|through|already))?[ .!]*$|"
    r"(?:i'?d|i would|i want|i need|can i|could i)(?: still| rather| sooner| much| like| prefer| really){0,3}(?: to)? "
    r"(?:go through|run through|talk|speak|chat|have a (?:proper |quick )?(?:chat|word|talk)|a (?:proper |quick )?(?:chat|word|talk)) "
    r"(?:[\w'-]+ ){0,5}?(?:with|to) (?:one of your|someone|somebody|a person|a human|one of the)\b|"
    r"(?:is there|are there) (?:a|an|anyone|anybody|someone|somebody|any) (?:[\w'-]+ ){0,5}?(?:i|we) (?:can|could) (?:speak|talk|chat) (?:to|with)\b)"
)
_NO_ONE_BEFORE = re.compile(
    r"\b(?:(?:don'?t|do not|didn'?t|did not|haven'?t|have not|hasn'?t|has not|"
    r"(?<!is there )(?<!are there )(?:never|not)|no longer|hardly)(?: (?:have|had|has|got|get|know)"
    r"(?: got)?)?|isn'?t|is not|aren'?t|are not|wasn'?t|was not|without|not even) $")
"""Words just before a person the rules read as asked for that say the customer has no such person (twelfth round):
"I don't have anyone I can talk to since he left", "there isn't anyone I can ask" name a person not there, and "please
don't transfer me to someone" asks for no one. After review: "not" and "never" in a question why there is no one ("is
there not someone I can talk to?", "why is there never anyone I can speak to") ask for a person all the same."""
_NO_ONE_WINDOW = 40
"""How many characters before a person `_NO_ONE_BEFORE` reads (its longest shape, "hasn't got " or "not even ", is far
shorter)."""
_AFFIRMATIVE_HEADS = (
    "yes", "yeah", "yep", "yup", "ya", "yea", "y", "sure", "ok", "okay", "k", "please", "correct",
    "right", "exactly", "absolutely", "definitely", "alright", "affirmative", "aye",
    # yes in the languages customers switch to (seventh round): "ja", "si", "sim", "oui", "yebo", ...
    "ja", "si", "sim", "oui", "yebo", "da", "tak", "evet",
    # more of them (eighth round), read with their accents dropped ("sí" is "si"): Hindi and Urdu "haan",
    # Swahili "ndiyo", Hungarian "igen", Finnish "joo" and "kylla", Estonian "jah", Arabic "naam", Vietnamese
    # "vang", Japanese "hai", Spanish "claro", "vale" and "dale", Italian and Portuguese "certo", French "ouais"
    "haan", "haa", "ndiyo", "igen", "joo", "kylla", "jah", "naam", "vang", "hai", "claro", "vale", "dale",
    "certo", "ouais",
    # Tagalog "sige" (go ahead) and "opo" (yes, politely): "opo, sige" to an offer on the seventh held-out suite,
    # "sige po" on the ninth (eleventh round)
    "sige", "opo", "oo",
)
_AFFIRMATIVE_PHRASES = ("of course", "go ahead", "do it", "sounds good", "please do", "all right", "that's right")
_HOSTILE = re.compile(
    r"\b(?:idiots?|idiotic|stupid|useless|garbage|trash|pathetic|incompetent|morons?|moronic|dumb|crap\w*|"
    r"shit\w*|f+u+c+k\w*|damn\w*|wtf|screw you|shut up|hate you|ridiculous|scam(?:mers?)?|bloody|"
    r"what the hell|go to hell|worst (?:service|company|support|bot|app)|you(?:'re| are) (?:a )?joke)\b"
)
_COMPLEX = re.compile(
    r"\b(?:lawyers?|attorneys?|legal action|lawsuit|sue|suing|court|chargebacks?|dispute (?:the|a|this) "
    r"(?:charge|payment|transaction)|fraud\w*|gdpr|data (?:breach|protection)|regulators?|ombudsman|"
    r"small claims|identity theft|police report)\b"
)
_TIME = re.compile(
    r"\b(?:urgent\w*|asap|right now|immediately|right away|time[- ]sensitive|deadline\w*|"
    r"within (?:the|an|the next) (?:hour|\d+ (?:minutes|mins|hours))|in (?:\d+|one|two|five|ten|twenty|thirty) "
    r"(?:minutes?|mins?|hours?|hrs?)|(?:leaves|closes|shuts|ends|expires|starts) (?:tonight|today|"
    r"in (?:an?|half an|a few|a couple of|\d+|one|two|three|four|five|ten|fifteen|twenty|thirty|forty|fifty) "
    r"(?:minutes?|mins?|hours?|hrs?)|at (?:noon|midnight|half \w+|(?:[01]?\d|2[0-4])(?:[:.][0-5]\d)?\s?(?:am|pm)?\b"
    r"(?![.:]?\d|\s*(?:a |per |each |every |/|%|p\b|quid|pounds?|euros?|dollars?))))|"
    r"by (?:today|tonight|tomorrow morning)|before (?:my|the) (?:flight|meeting|event|deadline))\b"
)
"""The rules' words of time running out. After review of the twelfth round: what leaves, closes, ends or starts does
so tonight, today, in minutes or hours, or at a clock ("shuts at 5:30", "closes in 25 minutes"), not in a month or
weeks away or at a price ("my contract ends in March", "the trial ends in a few weeks", "the offer starts at 9.99 a
month")."""
_NO_ANSWER = re.compile(
    r"(?:couldn'?t|could not|can'?t|cannot|wasn'?t able to|was unable to|unable to|didn'?t) find|"
    r"\bno (?:results|articles?|matches|information|answer)\b|"
    r"(?:don'?t|do not) have (?:any )?(?:information|an answer|details|anything)|"
    r"nothing (?:in|on|about) (?:our|the|that|this)|i'?m not finding|not able to find"
)
_OFFER = re.compile(
    r"\b(?:connect|transfer|put) you (?:to|with|through to) (?:a |an |our |one of our )?(?:person|agent|human|"
    r"colleague|specialist|live support|team|representative)|\blive (?:support|agent|chat)\b|"
    r"\b(?:speak|talk) (?:to|with) (?:a |an |one of our )?(?:person|human|colleague|specialist|agent)"
)
_RESOLUTION_CHECK = re.compile(
    r"\b(?:did|does|has|have|would|will) (?:that|this|it|the \w+) (?:fix|solve|sort|resolve|help|work|do the trick)|"
    r"\b(?:is|are) (?:it|everything|things|that|the \w+) (?:working|ok|okay|sorted|fixed|resolved)(?: now)?\?|"
    r"\b(?:all|is it) sorted\?"
)
_RESOLVED = re.compile(
    r"\b(?:that|this|it|you) (?:fixed|solved|sorted|resolved|did) it\b|"
    r"\b(?:fixed|solved|sorted|resolved) (?:it|now|the (?:issue|problem))\b|"
    r"\b(?:it'?s|it is|everything'?s|everything is|all|that'?s) (?:working|fixed|sorted|resolved|good) now\b|"
    r"\b(?:works|working) (?:now|again|fine now)\b|\bproblem solved\b|\ball sorted\b|\bthat worked\b|"
    r"\b(?:did|does) the trick\b|\b(?:issue|problem) (?:is |has been )?(?:resolved|fixed|gone)\b"
)
_RECOMMEND = re.compile(
    r"\b(?:recommend|suggest)\w* (?:me )?(?:a |an |some |any )?(?:new |good |fun )?(?:games?|slots?|titles?|"
    r"something to play)|\bwhat (?:games?|slots?) should i (?:play|try)|\b(?:games?|slots?) "
    r"(?:recommendations?|suggestions?)|\b(?:new|good|fun) games? to play"
)
_RETENTION = re.compile(
    r"\b(?:cancel|close|delete|terminate|end) (?:my |the |our |this )?(?:account|subscription|membership|plan)\b|"
    r"\bunsubscribe\b|\bi (?:want|wanna|need) to (?:leave|quit)\b"
)
# eleventh round: leaving said without "cancel my account". A leaving verb with what is left as its object, however
# it is named ("cancel the dog food subscription", "stop her landline", "wind the account up"); what is left said to
# go ("the card terminal rental can go", "his TV package can be cancelled"); leaving said formally or by where the
# custom goes ("time we parted company", "they bank elsewhere", "moving our savings to another bank", "we use
# someone else now"); not renewing; what is left no longer needed ("don't need the family bundle"). A bare "close
# it" / "let it go" is leaving when the message names what is left, or in a conversation about leaving
# (`leaves_in_context`).
_SERVICE = (r"(?:account|subscription|sub|membership|plan|package|bundle|add-?on|policy|contract|service|landline|"
            r"line|rental|insurance|cover|box|deal|tariff|pass|licence|broadband|package)s?")
_SERVICE_OBJECT = (r"(?:account|subscription|sub|membership|plan|package|bundle|add-?on|policy|contract|service|landline|"
                   r"rental|insurance|cover|deal|tariff|pass|licence|broadband)s?")
"""What a leaving verb leaves when it is its object: `_SERVICE` without "line" and "box", which name a device or a
connection as often as a service ("my phone keeps dropping the line", "stop the box from rebooting")."""
_NOT_A_PROCESS = (r"(?!(?:migration|migrating|delivery|deliveries|upgrade|upgrading|download|update|updating|install\w*|"
                  r"transfer|switch\w*|move|moving|payment|setup|set-up|order|process\w*|renewal|refund|change|port\w*|"
                  r"sync\w*|backup|reset|repair|activation|verification|registration)\b)")
"""Words between a service and "can finish" that make what finishes a task on it, not the service (after review of the
twelfth round: "the account migration can finish overnight", "the package delivery can finish tomorrow")."""
_LEAVE_VERB = (r"(?:cancel\w*|close|closing|end|ending|terminate|terminating|stop|stopping|drop|dropping|quit|quitting|"
               r"discontinue|get rid of|be rid of|be shot of|do away with|give up|pull the plug on|wind up|winding up|wind down)")
_LEAVING_WAYS = (
    # a leaving verb with what is left as its object: "cancel the dog food subscription", "stop her landline"
    _LEAVE_VERB + r" (?:(?:my|the|our|this|his|her|their|that|all|both)\b)?(?:[\w'-]+ ){0,4}?" + _SERVICE_OBJECT + r"\b(?! from)",
    # winding it up or down: "wind the account up"
    r"(?:wind|winding) (?:the|my|our|this) (?:[\w'-]+ ){0,2}?" + _SERVICE + r" (?:up|down)",
    # what is left said to go, or to be ended: "the card terminal rental can go", "his TV package can be cancelled"
    _SERVICE + r" (?:" + _NOT_A_PROCESS + r"[\w'-]+ ){0,4}?(?:(?:can|could|should|may|needs? to|has to|is to) "
    r"(?:go|stop|end|finish|lapse)\b(?! \w+ing)|"
    r"(?:can|could|should|may|will|needs? to|has to|is to) be (?:cancell?ed|closed|ended|stopped|terminated|dropped|wound up)\b)",
    # leaving said formally or by where the custom goes: "time we parted company", "take our business elsewhere"
    r"part(?:ed|ing)? (?:company|ways)",
    r"take (?:my|our) (?:business|money|custom|savings) elsewhere",
    # money or custom moved to another firm: "moving our savings to another bank", "switch it elsewhere"
    r"(?:move|moving|moved|transfer\w*|switch\w*) (?:(?:(?:my|our|the|all) (?:[\w'-]+ )?(?:savings|money|funds|business|custom|"
    r"mortgage|pension|isa|everything|" + _SERVICE_OBJECT + r")|it|them|everything|over) )?(?:elsewhere|"
    r"to (?:another|a different|a new|a rival|an? [\w-]+) (?:bank|provider|supplier|company|firm|building society|insurer|network))",
    # custom that goes to someone else: "they bank elsewhere", "we use someone else now"
    r"(?:bank|banks|banking|insure|shop|go) (?:elsewhere|with (?:someone|somebody) else)",
    r"(?:use|using) (?:someone|somebody) else",
    # twelfth round: going over to another's provider ("I'm going to my sister's provider")
    r"(?:moving|switching|changing) (?:over )?to (?:another|(?:my|our|a|his|her|their) [\w-]+'s) "
    r"(?:provider|supplier|network|bank|insurer|company)\b",
    # after review: going to someone's bank or company is as often an errand ("going to my mum's bank to pay the
    # cash in"): going or heading over to another's provider, network, supplier or insurer only
    r"(?:going|heading) (?:over )?to (?:another|(?:my|our|a|his|her|their) [\w-]+'s) (?:provider|supplier|network|insurer)\b",
    # wanting out: "I'd like out", "want out", "be shot of"
    r"i'?d like out",
    r"(?:want|wanna|would like) out\b",
    r"(?:be|being) shot of",
    # not renewing: "not renewing next year", "won't renew"
    r"(?:not|won'?t be|stop) renewing",
    r"(?:won'?t|will not|(?:not|n'?t) going to) renew\b",
    # twelfth round: deciding not to renew ("the governors have resolved not to renew the lease")
    # after review: with a service as what is not renewed ("decided not to renew my passport", "voted not to renew the
    # chairman" leave nothing)
    r"(?:decided|resolved|chosen|opted|agreed|voted) not to renew (?:(?:my|the|our|this|his|her|their|its|that) )?"
    r"(?:[\w'-]+ ){0,3}?(?:" + _SERVICE_OBJECT + r"|lease|rental|tenancy)\b",
    # what is left no longer needed: "don't need the family bundle", "the home package is wasted on me"
    r"(?:don'?t|do not|no longer) (?:need|use|require) (?:the|my|our|this|his|her|that) (?:[\w'-]+ ){0,3}?" + _SERVICE_OBJECT + r"\b",
    _SERVICE + r" (?:is|'s) (?:wasted on|no use to|no good to) (?:me|us)",
    # ending everything for good: "stop all this for good"
    r"(?:stop|end|cancel) (?:all )?(?:this|it|everything)\b.{0,20}\bfor good",
)
"""The ways of saying one is leaving that `_LEAVING` reads, one alternative each (eleventh round)."""
_LEAVING = re.compile(r"\b(?:" + "|".join(_LEAVING_WAYS) + ")")
_LEAVE_IT = re.compile(r"\b(?:(?:close|end|cancel|stop|terminate|drop|shut) (?:it|that|them|the lot|everything)|let (?:it|them) go|"
                       r"knock (?:it|that|them) on the head)\b")
_LEAVE_OFFER = re.compile(r"\binstead\b|\b(?:keep|stay|pause|freeze|downgrade|cheaper|discount|free)\b.{0,60}\?")
_PROBLEM = re.compile(
    r"\b(?:not|never|no longer|" + _NT + r"|broken|broke|crash\w*|errors?|fail\w*|missing|lost|wrong|late|"
    r"delay\w*|charged|double|refund\w*|stuck|problem|issue|bug|glitch\w*|won'?t|cannot|declin\w*|"
    r"invalid|disappeared|stolen|damaged)\b"
)
_WORDS = re.compile(r"[a-z0-9']+")
_KEYBOARD_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm", "1234567890")
_SHORT_OK = frozenset({"ok", "k", "y", "np", "ty", "thx", "pls", "plz", "brb", "idk", "hmm", "mm", "hm", "nvm", "gg", "tx"})


def _unaccented(text: str) -> str:
    """The text with its accents dropped ("sí, dale" -> "si, dale"), so a yes in another language is read as one."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def lowered(text: str) -> str:
    """The text as the readers match it: in lower case, with the typographic apostrophe (U+2019) made a plain one
    ("I\u2019m" reads as "i'm"). Every reader of the customer's or the agent's words that takes apostrophes calls this."""
    return text.lower().replace("\u2019", "'")


def _norm(text: str) -> str:
    return " ".join(_WORDS.findall(lowered(text)))


def _gibberish(token: str) -> bool:
    """A token nobody could read: a keyboard run, one key held down, or no vowel at all."""
    if token in _SHORT_OK or token.isdigit():
        return False
    if len(token) >= 4 and len(set(token)) == 1:
        return True
    if len(token) >= 4 and any(token[i : i + 4] in row or token[i : i + 4] in row[::-1]
                               for row in _KEYBOARD_ROWS for i in range(len(token) - 3)):
        return True
    if len(token) >= 2 and not re.search(r"[aeiouy]", token):
        return True
    return bool(re.search(r"[^aeiouy\d']{5,}", token))


def word_count(text: str) -> int:
    """Words in a message as the producers count them (`short_max_words` is compared with this)."""
    return len(_norm(text).split())


def reports_problem(text: str) -> bool:
    """The message names a problem in the words the complaint producer knows (negation, `broken`, `late`, ...)."""
    return bool(_PROBLEM.search(lowered(text)))


def problem_words(text: str) -> list[str]:
    """The complaint producer's words found in the message (`reports_problem` is true when there is one)."""
    return [m.group(0) for m in _PROBLEM.finditer(lowered(text))]


def only_negation(words: list[str]) -> bool:
    """True when every problem word is a bare negation (`not`, `never`, `don't`): words that also say
    "it's not for me", "never mind", "I don't need it"."""
    return bool(words) and all(_NEGATION.fullmatch(w) for w in words)


def is_meaningless(text: str) -> bool:
    """True when there is nothing to read: no letters or digits, or every word is gibberish. Letters of a script the
    rules do not read ("はい、お願いします") are something to read (eleventh round)."""
    tokens = _WORDS.findall(text.lower())
    if not tokens and any(c.isalpha() for c in text):
        return False
    return not tokens or all(_gibberish(t.strip("'")) for t in tokens)


_OTHER_SCRIPT_YES = ("はい", "ええ", "うん", "是", "好", "对", "對", "네", "예", "да", "так", "ναι", "نعم", "هاں", "جی", "हाँ", "हां",
                     "כן", "ใช่")
_OTHER_SCRIPT_POLITE = {"はい": ("はいはい",), "好": ("好的", "好吧", "好啊"), "是": ("是的",), "对": ("对的",), "ใช่": ("ใช่ครับ", "ใช่ค่ะ"),
                        "네": ("네네",)}
"""A yes and its politeness particle written as one piece ("好的", "ใช่ครับ"): the whole piece must be one of these,
so "是不是坏了" ("is it broken?") and "好像不行" ("seems not to work") are no yes. Thai "ครับ" / "ค่ะ" alone are
politeness particles, not a yes."""
"""Yes in scripts the rules' words do not read (eleventh round: "はい、お願いします" to an offer, eighth held-out suite)."""
_NOT_LAST = frozenset({"please", "right", "correct", "exactly", "absolutely", "definitely", "alright", "k", "y", "ya"})
"""Affirmative heads that do not say yes at a message's end ("A PERSON. please.", "looks right")."""
_NO_WORDS = frozenset({"no", "nah", "nope", "not", "never", "don't", "dont", "won't", "wont", "rather"})


def is_short_affirmative(text: str, max_words: int = 4) -> bool:
    """A short yes: at most `max_words` words, opening with an affirmative word or phrase, or ending with an
    affirmative word and saying no refusal ("reckon so, yeah", "pode ser, sim"; eleventh round); or a yes in another
    script (`_OTHER_SCRIPT_YES`) in a message of at most `max_words` pieces."""
    norm = _norm(_unaccented(text))
    words = norm.split()
    if not words:
        pieces = re.split(r"[\s,.!?、。，！？]+", text.strip())
        pieces = [p for p in pieces if p]
        return (0 < len(pieces) <= max_words and "?" not in text and "？" not in text
                and any(pieces[0].lower() == y or pieces[0] in _OTHER_SCRIPT_POLITE.get(y, ()) for y in _OTHER_SCRIPT_YES))
    if len(words) > max_words:
        return False
    if "?" not in text and words[-1] in _AFFIRMATIVE_HEADS and words[-1] not in _NOT_LAST and not _NO_WORDS & set(words):
        return True
    return words[0] in _AFFIRMATIVE_HEADS or any(norm.startswith(p) for p in _AFFIRMATIVE_PHRASES)


def sensitivity(text: str) -> Severity:
    """`crisis` when the customer's own life is at risk, `harm` for harm or threats, else `none`."""
    low = text.lower()
    if _CRISIS.search(low):
        return "crisis"
    if _HARM.search(low):
        return "harm"
    return "none"


def is_hostile(text: str) -> bool:
    """Insults or profanity, or a message of three or more words shouted in capitals."""
    if _HOSTILE.search(text.lower()):
        return True
    letters = [c for c in text if c.isalpha()]
    return len(text.split()) >= 3 and len(letters) >= 10 and sum(c.isupper() for c in letters) / len(letters) >= 0.8


def asks_for_person(text: str) -> bool:
    """The customer asks for a person: by the words (`_HUMAN`: "a real person", "put me through to a manager") or by
    who they are or what they do, in a request's shape (`_HUMAN_BY_ROLE`: "can someone from accounts ring me"); not a
    person one has not got (`_NO_ONE_BEFORE`: "I don't have anyone I can talk to since he left"), read in the
    `_NO_ONE_WINDOW` characters before the person (after review: a long message of many matches was read from its start
    at each)."""
    low = lowered(text)
    return any(not _NO_ONE_BEFORE.search(low, max(0, m.start() - _NO_ONE_WINDOW), m.start())
               for words in (_HUMAN, _HUMAN_BY_ROLE) for m in words.finditer(low))


def leaves_in_context(text: str, earlier: str | None = None, answer: str | None = None) -> bool:
    """A bare "close it", "end it", "let it go" asks to leave when the message names what is left ("let's drop the
    add-on ... drop it"), when the customer's previous message asked to leave (`intent`), or when the agent's
    last message offered something to keep them ("We could move you to a cheaper plan instead. Would that help?")."""
    low = lowered(text)
    if not _LEAVE_IT.search(low) or re.search(r"\bhow (?:do|can|would|should) (?:i|we|you)\b", low):
        return False  # "the box keeps beeping, how do I stop it?" asks how, it leaves nothing
    if re.search(r"\b" + _SERVICE + r"\b", low):
        return True
    if earlier and intent(earlier) == "retention":
        return True
    return bool(answer and _LEAVE_OFFER.search(lowered(answer)))


def intent(text: str) -> Intent:
    """An explicit request for the recommendation or the retention agent, else `none`."""
    low = lowered(text)
    if _RETENTION.search(low) or _LEAVING.search(low):
        return "retention"
    if _RECOMMEND.search(low):
        return "recommendation"
    return "none"


def is_resolved_confirmation(text: str, answer: AgentFacts | None, max_words: int = 4) -> bool:
    """"Thanks, that fixed it" (no negation anywhere), or a short yes to the agent's "did that solve it?"."""
    low = lowered(text)
    if _RESOLVED.search(low) and not _NEGATION.search(low):
        return True
    return answer is not None and answer.resolution_check and is_short_affirmative(text, max_words)


def same_answer(a: str, b: str, params: ProducerParams) -> bool:
    """Two agent answers say the same thing (keyword Jaccard at or above the threshold)."""
    ka, kb = keywords(a), keywords(b)
    if min(len(ka), len(kb)) < params.same_answer_min_keywords:
        return False
    return len(ka & kb) / len(ka | kb) >= params.same_answer_similarity


def _asks_after_offer(low: str) -> bool:
    """The message's last question is not the sentence that offers live support (`AgentFacts.asks_after_offer`)."""
    offer = _OFFER.search(low)
    if offer is None or "?" not in low[offer.end():]:
        return False
    offer_ends = low.index("?", offer.end())
    return "?" in low[offer_ends + 1:]


def agent_facts(turn_id: str, text: str, kind: TurnKind, scripted: Mapping[str, Any] | None = None) -> AgentFacts:
    """Read one agent turn; scripted `offer_live` / `asked_question` override their rules."""
    scripted = dict(scripted or {})
    unknown = sorted(set(scripted) - set(AGENT_SIGNALS))
    if unknown:
        raise SignalError(f"unknown agent signal(s) {unknown} on turn {turn_id!r} (known: {', '.join(AGENT_SIGNALS)})")
    for k, v in scripted.items():
        if not isinstance(v, bool):
            raise SignalError(f"agent signal {k!r} on turn {turn_id!r}: expected true or false, got {v!r}")
    low = lowered(text)
    offer = scripted.get("offer_live", kind == "message" and bool(_OFFER.search(low)))
    asked = scripted.get("asked_question", kind == "message" and "?" in text) or offer
    return AgentFacts(
        turn_id=turn_id,
        text=text,
        kind=kind,
        offer_live=offer,
        asked_question=asked,
        resolution_check=kind == "message" and bool(_RESOLUTION_CHECK.search(low)),
        no_answer=kind == "message" and bool(_NO_ANSWER.search(low)),
        asks_after_offer=offer and kind == "message" and _asks_after_offer(low),
        scripted=tuple(sorted(scripted)),
    )


def produce(ctx: TurnContext, params: ProducerParams = ProducerParams()) -> Signals:
    """Every producer on one customer turn (no scripted values), read by `params.front`."""
    signals = produce_rules(ctx, params)
    if params.front in ("learned", "chat"):
        from stores.decisions.learned import read_signals

        return read_signals(ctx, params, signals)
    return signals


def produce_rules(ctx: TurnContext, params: ProducerParams = ProducerParams()) -> Signals:
    """Every rule-based producer on one customer turn (no scripted values)."""
    text = ctx.text
    meaningless = is_meaningless(text)
    affirmative = is_short_affirmative(text, params.short_max_words)
    resolved = is_resolved_confirmation(text, ctx.answer, params.short_max_words)
    asking = not (meaningless or affirmative or resolved)
    answer, before = ctx.answer, ctx.previous_answer
    low = lowered(text)
    return Signals(
        sensitive=sensitivity(text),
        human_request=asks_for_person(low),
        short_affirmative=affirmative,
        hostile=is_hostile(text),
        meaningless=meaningless,
        complexity=bool(_COMPLEX.search(low)),
        time_critical=bool(_TIME.search(low)),
        retrieval_empty=asking and answer is not None and answer.no_answer,
        same_answer_repeated=(
            answer is not None and before is not None and not answer.offer_live
            and same_answer(answer.text, before.text, params)
        ),
        resolved_confirmation=resolved,
        explicit_intent="retention" if leaves_in_context(text, ctx.earlier, answer.text if answer else None) else intent(text),
        complaint=asking and bool(_PROBLEM.search(low)),
        short_reply=0 < len(_norm(text).split()) <= params.short_max_words,
        answers_question=answer is not None and answer.asked_question and (not answer.offer_live or answer.asks_after_offer),
    )


def override(signals: Signals, scripted: Mapping[str, Any] | None, turn_id: str = "") -> Signals:
    """The producers' signals with the scenario's scripted values in place (those keys only)."""
    if not scripted:
        return signals
    where = f" on turn {turn_id!r}" if turn_id else ""
    values: dict[str, Any] = {}
    for key, value in scripted.items():
        if key not in CUSTOMER_SIGNALS:
            raise SignalError(f"unknown signal {key!r}{where} (known: {', '.join(CUSTOMER_SIGNALS)})")
        if key == "sensitive":
            if value not in SEVERITIES:
                raise SignalError(f"signal 'sensitive'{where}: expected one of {', '.join(SEVERITIES)}, got {value!r}")
        elif key == "explicit_intent":
            if value not in INTENTS:
                raise SignalError(f"signal 'explicit_intent'{where}: expected one of {', '.join(INTENTS)}, got {value!r}")
        elif not isinstance(value, bool):
            raise SignalError(f"signal {key!r}{where}: expected true or false, got {value!r}")
        values[key] = value
    return replace(signals, **values, scripted=tuple(sorted(values)))


if __name__ == "__main__":  # the table the docs show (docs/results/signals.md, by `make results`)
    print(signals_table())
