"""The learned front end of the decision signals, and the safety floor.

`read_signals(ctx, params, rules)` takes what the rule-based producers reported on a customer turn
(`stores.decisions.signals.produce`) and what the learned heads read in the same message
(`stores.frontend.model`), and returns one `Signals`:

- The safety floor (`sensitive`): the most severe of what the rules, the floor's own word list
  (`FLOOR`: fraud or account takeover, legal threats, a minor at risk, threats, self-harm) and the
  learned floor say. Either reader is enough: the floor is a union, never a vote. The learned floor
  (`floor_reading`) is the `sensitive` head's probability of any disclosure (crisis + harm, against
  its near misses and "nothing", in a geometric mean with the nearest phrases' margin), its threshold the
  highest that keeps the union's validation recall (the words' yes or its own) at 0.96 (five shuffles
  of the folds, pooled; `UNION`)
  (stores.frontend.model, `SUMMED`); the more probable of crisis and harm says the severity.
  A turn the floor marks escalates (the resolver's first rule), whatever else is on record.
  A short answer to the agent's specific question ("downstairs in the hall" to "is the router upstairs or
  downstairs?") is read in its exchange (`answers_question`): the learned floor needs the mean of the
  message's score and the score of the question and reply read together to reach `REPLY_BAR`.
  A follow-up the learned floor marks alone is read with the customer's own previous message in the session
  (`floor_reading`): the mean of the two scores must still reach the threshold (the earlier words only lower it).
  A message of two clauses or more that the learned floor marks is read clause by clause too (ninth round,
  `clauses`): one clause alone must reach the threshold, else the learned reading is no disclosure (the whole's
  score came from the mix: "my card got declined twice, the app keeps crashing"); a message it does not mark escalates
  when one clause alone reads as a crisis over `CLAUSE_BAR` (a farewell said inside an everyday request), or as a harm
  over it with the model sure (`HARM_CLAUSE_P`, eleventh round: harm told after a request). The words'
  readers are not touched; a short answer to the agent's question is read in its exchange, not by clauses.
  A learned yes with a low whole score is read for who acts on whom (eleventh round, `harm_veto`): when neither the
  message nor a clause reads as a harm done, threatened or planned to someone (`harm_element`, a head of its own
  bank), the learned reading is no disclosure. A learned yes whose whole is under `REQUEST_ELEMENT_WHOLE_BAR` on a
  message that closes with a request to the company is no disclosure when no other clause reads as one on both the
  floor and the element head (twelfth round, `request_element_veto`).
- Signals whose words rarely mislead (`human_request`, `hostile`, `complexity`, `complaint`, an
  explicit intent):
  the rules' yes stands, and the learned head adds what the words missed ("is anyone real there",
  "you lot are clowns", "I just want out") when it is sure.
- Signals whose words do mislead (`time_critical` on a promo's deadline, `resolved_confirmation`
  and `short_affirmative` on sarcasm, a `complaint` read from a bare negation alone: "it's not for
  me"): the learned head's label when it is sure (its probability reached its threshold, or
  "nothing to report" reached `SURE`), else the rule's value.
- The learned `time_critical` yes needs a time named in the message (`TIME_NAMED`: today, by 5,
  in an hour, a deadline, ...); without one the rules decide.
- Read with the agent's turns before the message (seventh round): right after the agent took a step (an
  `action` turn), the `resolved` head's "yes" needs only `AFTER_STEP_BAR` ("colour's back 👌"); a short yes to
  an offer of a person is the rules' yes ("aye, set it up"), unless a refusal or sarcasm follows its first word
  (`REFUSAL`: "yeah right"); a learned `human_request` yes is no request when the message is a short answer to
  the agent's specific question ("the van hire, ref VH-1182" to "which booking is this?").
- A head of the words that rarely mislead adds a yes only when its validation precision reaches
  `ADD_PRECISION` (`weak_adds`; `complexity`'s does not); a learned `time_critical` yes is not taken when a
  later day is named and nothing of today (`LATER_DAY`, `SOON`); a bare negation in a message about leaving
  ("not renewing next year") is no complaint, and neither is a reason for leaving the `complaint` head alone reads
  as one, with no problem words (ninth round: "the pool closed, so the card's no use to me now").
- Read for what happens after the fix (eighth round): the lowered after-step bar takes no fix from a message that
  reports a problem in the complaint's words (`reported_problem`: "also my invoice shows a double charge"); a
  clause saying the problem goes on after the fix (`after_the_fix`: "thanks a bunch, now the booking's vanished",
  "still dropping") makes the message no confirmation whatever the head reads; a short answer to the agent's
  specific question ("yep its on" to "is Bluetooth on?") is no confirmation by the head alone.
- Read with the customer's previous message (ninth round): a message the `hostile` head is unsure of is hostile when
  its "yes" reaches `FOLLOW_UP_HOSTILE_BAR` and the previous message was hostile (`after_hostile`): scorn said
  twice, the second time by comparison, makes the streak.
- Eleventh round: thanks or approval in any register right after the agent's fix (its step, or a message that
  instructs or reports a change: `fix_given`) confirms it whatever the `resolved` head reads, unless a problem, a
  "but", a question, a promise for later or sarcasm is said with it (`thanks_after_fix`); a refusal (`TURNS_DOWN`: "no
  thanks") makes a learned `human_request` yes no request; a person asked for together with a yes right after an
  offer of one is a yes to the offer, not a new request, and a person asked for or accepted confirms no fix; the
  learned `time_critical` yes needs time running out (`TIME_SHORT`: "in 20 minutes", "by 5 today"), not a time
  named as a schedule ("after 2pm", "at 3:30").
- Twelfth round: "no way" and "no need" turn an offer down only said as a refusal (`TURNS_DOWN`); a yes to an offer of
  a person that names one in the rules' words keeps the request (`PERSON_NAMED`: a first request once the offer has
  lapsed); the learned `time_critical` yes needs a clock or a countdown, not a length, a price or a month (`_CLOCK`);
  recommendations spoken of as a feature are no request for them (`RECOMMENDATIONS_FEATURE`); a failure reported
  "again" after thanks confirms no fix (`failed_again`).
- A meaningless message (keyboard mash) is the rules' alone.
- Signals that are facts of the conversation rather than readings of the words stay the rules':
  a short yes to the agent's "did that solve it?" confirms the fix, the agent's empty answer
  before a new question is an empty retrieval, a repeated answer is repeated, short is short.

`Signals.readers` records, per signal, who decided and with what score: `rules`, the floor's
words, or `learned hostile=yes p=0.91 (threshold 0.55)`.
"""

from __future__ import annotations

import re
from dataclasses import replace


from stores.decisions.signals import (AgentFacts, ProducerParams, Signals, TurnContext, is_hostile, lowered, only_negation,
                                      problem_words, sensitivity, word_count)
from stores.frontend.chat import chat_readings
from stores.frontend.model import FrontEnd, Reading, front_end

HEADS = ("sensitive", "human_request", "hostile", "complexity", "time_critical", "resolved", "intent", "complaint",
         "affirmative")
"""The decision heads of the phrase bank (`phrases/decisions.yaml`)."""

_RANK = {"none": 0, "harm": 1, "crisis": 2}

FLOOR_CRISIS = re.compile(
    r"\b(?:end(?:ing)? (?:it all|things|everything)|(?:better|best) off dead|(?:don'?t|do not) want to (?:wake up|go on)|"
    r"no point (?:in )?(?:living|going on)|(?:be|being) (?:around|here) (?:much |for (?:much |very )?)?longer|(?:cut|cutting|harm|harming) myself|took (?:too many|all (?:my|the))|"
    r"(?:jump|jumping) off|(?:pills|tablets|meds|medication|painkillers|paracetamol)\b.{0,80}\b(?:need the lot|all of them at once|enough to)|say(?:ing)? goodbye to (?:everyone|my family)|can'?t go on|"
    r"(?:do|doing) something (?:i|i'll|i will) (?:can'?t|cannot|won'?t be able to) (?:undo|take back)|"
    r"(?:can|could|will) have all my (?:stuff|things|belongings))\b"
)
FLOOR_HARM = re.compile(
    r"\b(?:(?:never|didn'?t|did not|haven'?t|have not) (?:placed|made|ordered|bought|authori[sz]ed)|"
    r"(?:wasn'?t|was not|not) (?:me|mine)\b.{0,30}\b(?:order|charge|purchase|payment)|"
    r"neither (?:me|i|of us)\b.{0,30}\b(?:made|placed|ordered|bought|authori[sz]ed)|"
    r"(?:order|charge|purchase|payment)s?\b.{0,40}\b(?:wasn'?t|was not|weren'?t|were not) (?:me|mine)|"
    r"(?:points|vouchers?|credit|balance|savings|transfer\w*|withdraw\w*|redeem\w*|cashed)\b.{0,80}\b(?:that|it|this) (?:isn'?t|is not|wasn'?t|was not) me\b|"
    r"hack(?:ed|er|ers|ing)?|account (?:was |got |has been )?(?:taken over|compromised|hijacked)|"
    r"(?:took|taken|taking) over my (?:account|login|email)|locked me out|logging into my account|"
    r"(?:stole|stolen|steal\w*) (?:my )?(?:card|identity|details|account|password)|identity theft|"
    r"scam(?:med)? (?:me|my|him|her)|blackmail\w*|extort\w*|sextort\w*|groom\w*|"
    r"(?:my|our|a|his|her|their) (?:own )?(?:lawyer|solicitor|attorney|barrister)s?\b(?!.{0,40}\b(?:needs?|wants?|asked|asks|asking|requested|cop(?:y|ies)|paperwork)\b)|legal action|lawsuit|sue (?:you|your)|suing|(?:see|take) you to court|"
    r"(?:my|a|our) (?:\d+[- ]year[- ]old|child|kid|son|daughter|teen\w*)\b.{0,60}\b(?:messag\w*|photos?|pictures?|"
    r"threat\w*|touch\w*|meet|adult|stranger|man|groom\w*)|"
    r"(?:in|under) my name\b.{0,60}\b(?:never|didn'?t|did not|haven'?t|have not)\b|"
    r"(?:payee|transfer\w*|payments?|direct debit|standing order|mandate)\b.{0,60}\b(?:i|we) (?:never|didn'?t|did not) "
    r"(?:set up|setup|add(?:ed)?|authori[sz]e(?:d)?|recogni[sz]e(?:d)?)|"
    r"(?:afraid|scared|frightened) (?:of|to go home|for)|(?:know|found out) where i live|"
    r"(?:will|gonna|going to) (?:hurt|kill|find|come for) (?:me|you|us))\b"
)
"""The floor's words, beside the rules' crisis and harm words (stores.decisions.signals): written
for the categories the rules did not name. A floor word is enough to escalate. Two farewells of the fourth
held-out suite's kind were added in the sixth round (in sample there): doing something that cannot be undone,
and someone who "can have all my stuff". A lawyer named only as
someone who needs papers or asks something ("my solicitor needs copies of the invoices", "our solicitor asked
whether ..."), or a lawyer who is not the
customer's (one in a drama), is not a legal threat; credit in the customer's name they never applied for is
fraud, and so is value taken from the account (points, vouchers, credit, a transfer) with "that isn't me", and
money sent to a payee (a transfer, a direct debit) the customer never set up (seventh round: the fifth held-out
suite's one miss, quoted in its summary, was of this kind); pills with "enough to" or "need the lot" are a crisis."""


TIME_NAMED = re.compile(
    r"\b(?:now|today|tonight|tomorrow|this (?:morning|afternoon|evening|week)|"
    r"(?:\d+|an?|one|two|three|four|five|ten|twenty|thirty|few|couple(?: of)?|half an?|the|next|last|\w+ty)\s+"
    r"(?:minutes?|mins?|hours?|hrs?)|noon|"
    r"midnight|deadline\w*|cut-?off|o'?clock|\d{1,2}(?::\d\d)?\s?(?:am|pm)|by \d{1,2}|at \d{1,2}|end of (?:the )?day|eod|"
    r"asap|urgent\w*|immediately|shortly|soon|before|in time|running out|closes|due|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
)
"""A time named in the message: the learned `time_critical` head's yes needs one ("the export keeps
coming out empty" reads like an urgent failure to the head, but no time is running out). Minutes and hours
count with a quantity ("in two hours", "within the hour", "half an hour"): "amateur hour" names no time
(seventh round)."""


_N = r"(?:\d+|an?|one|two|three|four|five|ten|fifteen|twenty|thirty|forty|fifty|sixty|ninety|few|couple(?: of)?|half an?|\w+ty)"
_UNIT_AFTER = (r"(?![:.]?\d|\s*(?:%|percent|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|seconds?|secs?|quid|pounds?|"
               r"euros?|dollars?|p\b|gb|mb|kg|times|x\b|a (?:month|week|year|day)|per\b|each\b|every\b|/))")
_MONTH = (r"(?:jan|january|feb|february|mar|march|apr|april|may|jun|june|jul|july|aug|august|sep|sept|september|oct|"
          r"october|nov|november|dec|december)\b")
_CLOCK = (r"(?<!\d)(?:[01]?\d|2[0-4])(?:[:.][0-5]\d)?\s?(?:am|pm)?\b" + _UNIT_AFTER
          + r"(?!\s*(?:st|nd|rd|th)?\s*(?:of\s+)?" + _MONTH + r"|\s*(?:people|persons|customers|users|more|extra|items?)\b)")
"""A clock time ("5", "5:30", "11.40", "6pm"), not a length, an amount or a price ("by 20 minutes", "until 3 days",
"12.99 a month", "by 2%"): no unit follows it (twelfth round). After review: an hour of the day (0 to 24: "cancel by
31 march" names none), not a date ("pay before 15 may") or a count ("by 10 people complained")."""
_WORD_CLOCK = (r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)(?: (?:thirty|fifteen|forty-?five))?"
               r"(?:\s?(?:am|pm|o'?clock))?\b(?! (?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)\b)")
TIME_SHORT = re.compile(
    r"\b(?:now|today|tonight|this (?:morning|afternoon|evening)|asap|urgent\w*|immediately|right away|straight away|"
    r"deadline\w*|cut-?off|running out|in time|end of (?:the )?day|eod|(?:in|within) the (?:next )?hour|"
    r"(?:in|within|inside) (?:the next )?" + _N + r"\s+(?:minutes?|mins?|hours?|hrs?)|"
    + _N + r"\s+(?:minutes?|mins?|hours?|hrs?) (?:ago|left|to go|from now|late)|"
    r"(?:(?<!up )(?<!down )(?<!rose )(?<!risen )(?<!raised )(?<!increased )(?<!dropped )(?<!reduced )(?<!cut )by|"
    r"before|until|till) (?:" + _CLOCK + r"|noon|midnight|tonight|today|close|closing)|"
    r"(?:leaves?|leaving|closes?|closing|shuts?|boards?|boarding|starts?|departs?|ends?|expires?|due|goes|arrives?|lands?) "
    r"(?:in|at|by) (?:about |around |roughly |approximately )?(?:" + _CLOCK + "|" + _WORD_CLOCK + "|" + _N
    + r"\s+(?:minutes?|mins?|hours?|hrs?)\b|noon|midnight|the (?:next )?hour|half (?:past )?\w+)|"
    r"it'?s (?:already |now )?\d{1,2}[:.][0-5]\d\b" + _UNIT_AFTER + ")"
)
"""Time running out, said against the present (eleventh round): today, now, in twenty minutes, by 5, leaves at 6,
"ten minutes ago", "it's 11:40". A time named only as a schedule, a length or a preference ("after 2pm when I'm
up", "let them in at 3:30", "a game that takes under half an hour", "a 40 minute hold queue at midnight", "booked
at the same 10 o'clock") says when, not that time is short: the learned `time_critical` yes needs one of these too
(`TIME_NAMED` alone is not enough); the rules' words read as they always did. Twelfth round: a number read as a clock
must be one (`_CLOCK`: "late by 20 minutes", "until 3 minutes in", "it's 12.99 a month" are a length or a price), and a
time something leaves, closes or ends at is a clock or a countdown ("closes at 5:30", "leaves at half six", "starts in
an hour"), not a month or weeks away ("my contract ends in March", "the trial ends in a few weeks")."""

LATER_DAY = re.compile(
    r"\b(?:tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday|next (?:week|month)|weekend|"
    r"on the \d{1,2}(?:st|nd|rd|th)?)\b")
SOON = re.compile(
    r"\b(?:now|today|tonight|this (?:morning|afternoon|evening)|(?:\d+|an?|one|two|five|ten|twenty|thirty|few|half an?|the)\s+"
    r"(?:minutes?|mins?|hours?|hrs?)|asap|urgent\w*|immediately|right away|running out)\b")
"""A later day named (`LATER_DAY`: "before noon on Thursday", "tomorrow") with nothing of today (`SOON`) is a
date that can wait: the learned `time_critical` yes is not taken then (seventh round); the rules' words still
read as they always did."""

ADD_PRECISION = 0.5
"""A head of the words that rarely mislead (`human_request`, `hostile`, `complexity`) adds a yes the rules
missed only when its validation precision on the bank's folds (`Head.validation`) reaches this: a head wrong
more often than right when it says yes adds noise, not what the words missed (seventh round: `complexity`,
validation precision 0.33 at its threshold 0.50, added five transfers on development text, one right)."""

FOLLOW_UP_HOSTILE_BAR = 0.5
"""The `hostile` head's probability of "yes" a message needs to be hostile when the customer's own previous message
in the session was (the rules' words or the head's sure yes) and the head is unsure of this one (`after_hostile`):
scorn said twice, the second time politely or by comparison ("Save it. A vending machine would give better
service than your whole company.", p 0.59, after "Is incompetence part of the job description?"), is the streak a
transfer is for. Ninth round, on the development suites: three such second messages between 0.51 and 0.59."""

AFTER_STEP_BAR = 0.35
"""The `resolved` head's probability of "yes" a customer message needs, right after the agent took a step (an
agent turn of kind `action`: "Reset the colour profile on your printer."), to confirm the fix when the head is
not sure by its own threshold. Replies to a step are mostly its outcome, and the outcome said in few words, an
emoji or a grumble ("colour's back 👌", "about time, but it works, thanks") scores 0.35 to 0.75. Chosen in the
seventh round on development text, leave one suite out (docs/frontends.md, "Seventh round"): the highest bar
of the best on the development suites (0.30 and 0.35 tie)."""

_ALONE = (r"(?!\s+(?:in|out|around|round|back|through|past|across)\b)"
          r"(?=(?:\s+[a-z]+)?\s*(?:[,.;:!?)\n]|$)|\s*(?:(?:thanks|thank you|ta|cheers|mate|pal|love|pet|hun|bro|i'?ll|jose|josé)\b))")
TURNS_DOWN = re.compile(r"\b(?:no,? (?:thanks|thank you|ta|cheers)|no chance|not a chance|i'?ll pass|(?:i'?d )?rather not|"
                        r"no way" + _ALONE + r"|no need" + _ALONE + r"|no need to (?:transfer|connect|pass|put|hand|bother|get|call|ring|phone)\b|"
                        r"don'?t bother|not interested|not bothered)\b|^\s*(?:nah|nope)\b")
"""A message that turns an offer down (eleventh round; twelfth: "no way" and "no need" only said as a refusal): the
learned `human_request` head's yes is no request then ("aye right, so I can be passed round five departments. no
thanks"); the rules' words still stand. "No way" and "no need" turn something down only standing alone (before a
comma, a full stop or the message's end, with at most a word between, or before a thanks: "no way, I've been passed
round enough", "no need, ta", "no need po, you can do it"), and
"no need" also before the step it refuses ("no need to transfer me"); said of something else they refuse nothing ("no
way to log in, yes please do", "there's no need for two logins"). After review: a way in or out is no refusal ("stuck
with no way out, need somebody with authority", "there's no way in, can someone call me back"), and neither is an
exclamation before "am I" or "I'm" ("no way am I paying this, I need someone senior")."""

REFUSAL = re.compile(r"\b(?:no|nah|nope|not|never|right|as if|whatever|like that'?ll|don'?t|won'?t|rather not)\b")
"""Words that turn a short yes into a refusal or sarcasm ("yeah right", "sure, whatever", "yes, as if"): after
the opening word of a short yes to an offer of a person, one of these makes it no yes. Not to be confused with
`TURNS_DOWN`, which reads a whole message that declines an offer."""


PERSON_NAMED = re.compile(r"\b(?:human(?: being)?s?|person|people|manager|supervisor|team ?leader|boss|someone|somebody|anyone|"
                          r"anybody|agent|representative|rep|operator|colleagues?|staff|whoever)\b")
"""A person named in a yes to the agent's offer of one (twelfth round): when the rules' words ask for a person and the
message names one ("yes please, I want to speak to a real person"), the request stands beside the yes, so a yes to an
offer that has lapsed is still a request for a person; the offer's own verb alone ("ok fine, connect me", "go ahead,
put me through") names no one, and is a yes to the offer only (a plain `continue` once it has lapsed)."""


RECOMMENDATIONS_FEATURE = re.compile(
    r"\b(?:recommendations|suggestions|recommended \w+|suggested \w+)\s+(?:\w+ly )?(?:are|is|keep|kept|continue|still|show|shows|"
    r"propose|include|won'?t|don'?t|have been|has been)\b")
"""The recommendations spoken of as a feature, what they are or keep doing ("my film suggestions are all cartoons", "the
recommended playlists are in Spanish", "the meal suggestions keep including pork"), not asked for (twelfth round): the
learned `intent` head's `recommendation` is not taken then, the rules decide (a complaint about the recommendations is
support). On the development suites every customer turn it matches has gold route `knowledge` (12, six of them routed
to the recommendation agent before); "that thriller you suggested was great" and "any suggestions?" do not match."""


AFTER_THE_FIX = re.compile(r"(?:[,.;:!?]|\b(?:but|and|only))\s+now\s+(?P<now>[^,.;:!?]+)|\bstill\s+(?P<still>[^,.;:!?]+)")
FIX_WORD = re.compile(r"\b(?:work\w*|fine|fixed|sorted|perfect|ok|okay|good|great|normal|right|happy|solid|smooth\w*|"
                      r"strong|can(?!'?t)|could(?!n'?t)|able)\b")
"""What the message says happens now, after the fix, in a clause of its own: a clause opening with "now" after a
comma, a full stop or "but" ("thanks a bunch, now the booking's vanished", "alerts are back, cheers. but now the
video won't load"), or a "still" ("wow amazing, still dropping"). When that clause names no fix word (`FIX_WORD`:
"now it works", "still going strong", "now I can log in") or names a problem in the complaint's words, the message
is no confirmation of a fix whatever the `resolved` head reads (a negation counts here: "now it can't find the
printer") (eighth round: of the 66 turns of the development
suites whose gold plan is `csat`, none has such a clause; the sarcastic and half-fixed replies do)."""

ASKS_FOR_TITLE = re.compile(
    r"\bwhat(?:'s| is)? (?:[\w'-]+ ){0,2}?(?:should|could|can|shall|do you think) (?:i|we) (?:watch|read|listen to|play|try|"
    r"see|stream|binge)\b|\bwhat(?:'s| is) (?:like|similar to)\b|\banything (?:else )?(?:like|similar to)\b|"
    r"\b(?:recommend|suggest) (?:me|us|something|anything|a|an|some)\b")
"""A title asked for in the same message (after review of the twelfth round): the recommendations spoken of as a feature
veto nothing then ("my recommendations are rubbish, what thriller should I watch next?", "recommendations are usually
good, what's like Succession?")."""


APPROVAL = re.compile(
    r"\b(?:legend|champion|star|nice one|good one|ace|brill|brilliant|grand|lovely|perfect|sorted|spot on|magic|super|"
    r"great|awesome|sweet|cool|fab|excellent|wonderful|top|nickel|shiok|mint|bonza|sound|belter|smashing)\b")
"""Approval words that are thanks only closing a short clause of their own ("legend", "spot on, cheers", "that's grand
now"): followed by other words they describe ("super slow now", "sound is crackling", "sweet jesus it deleted
everything")."""
APPROVAL_CLAUSE_WORDS = 3
APPROVAL_AFTER = frozenset({"now", "then", "pal", "mate", "pet", "love", "hun", "bro", "man", "guys", "folks", "x", "xx",
                            "thanks", "thx", "ta", "cheers", "again", "indeed", "lah", "la"})
"""Words that may follow an approval word in its clause (a name for the agent, "now", a second thanks)."""
THANKS = re.compile(
    r"\b(?:thanks?|thank you|thankyou|thx|tx|ty|tq|ta|cheers|merci|gracias|danke|grazie|obrigad[oa]|dank je|tack|takk|"
    r"kiitos|arigato|shukran|asante|salamat|dhanyavaad|shukriya|spasibo|dziekuje|medaase|ngiyabonga|chur|"
    r"legend|champion|star|nice one|good one|ace|brill|brilliant|grand|lovely|perfect|sorted|spot on|magic|super|"
    r"great|awesome|sweet|cool|fab|excellent|wonderful|top|nickel|shiok|mint|bonza|sound|belter|smashing)\b|"
    r"[\U0001F44D\U0001F64F\u2705\U0001F44C\U0001F64C\U0001F389\U0001F60A\U0001F600\U0001F973\U0001F4AF\u2714\U0001F60D\U0001F970\u263A]")
SARCASM = re.compile(r"[\U0001F644\U0001F44F\U0001F643]|\b(?:exactly what|just what|so now|thanks for nothing)\b")
NONE_OF_IT = re.compile(r"\bnot (?:one|a single|a) [\w-]+")
LATER = re.compile(r"\b(?:will|i'?ll|we'?ll|gonna|going to|let me|try(?:ing)?|later|tomorrow|see if|hopefully)\b")
INSTRUCTION = re.compile(
    r"^(?:(?:sorry|thanks|thank you|ok|okay|right|great|done|no problem)\W+)*(?:then |now |first |next |please |just |so )?"
    r"(?:tap|open|go|click|press|select|choose|pick|switch|turn|try|restart|reboot|reinstall|update|sign|log|unplug|plug|"
    r"enter|type|set|change|add|remove|delete|clear|scroll|head|look|find|check|use|drag|toggle|enable|disable|untick|tick|"
    r"swipe|reset|it'?s under|you'?ll find|"
    r"(?:chang|updat|remov|add|fix|mov|cancell?|refund|sen|generat|correct|switch|enabl|disabl|unlock|restor|reissu|renam|"
    r"credit|appli|clear|re-?pair|pair|reconnect|refresh|rebook|resen|replac|push|upgrad|downgrad|extend|wip|link|unlink|"
    r"block|unblock|merg|verifi|activat|deactivat|reactivat|releas|reinstat|waiv|paus|resum)ed|(?:re)?set|sent|put|made)\b")
"""Resolution said as thanks after the agent's fix (eleventh round). The fix is the agent's step (an `action` turn)
or its message that tells the customer what to do or says what it did (`INSTRUCTION`: "Then open Team > Roles ...",
"Tap 'Add promo' ...", "Changed the name on your invoices ...", no question in it); the customer's reply thanks or
approves in any register (`THANKS`: "ta pet", "legend", "merci", "grand", "shukran", "champion", a thumbs-up or a
tick), names no problem in the complaint's words, not even a bare negation ("thanks, it doesn't work" is no fix;
"not one drop" is: `NONE_OF_IT`), says nothing goes on after the fix, adds no "but" after its thanks ("it's paired
now, ta. but the app shows mph"), asks nothing, promises nothing for later
("thanks, I'll try that", `LATER`) and carries no sarcasm mark (`SARCASM`: an eye-roll, a clap, "exactly what", "so
now"). The message then confirms the fix whatever the `resolved` head reads (`thanks_after_fix`)."""


def fix_given(step: AgentFacts | None, answer: AgentFacts | None) -> AgentFacts | None:
    """The agent's fix just before a customer message: its step, or its message that instructs or reports a change
    (`INSTRUCTION`, no question and no offer of a person); None when it gave none."""
    if step is not None:
        return step
    if answer is None or answer.kind != "message" or answer.asked_question or answer.offer_live or "?" in answer.text:
        return None
    low = lowered(answer.text).strip()
    return answer if INSTRUCTION.search(low) else None


def _clause_start(low: str, pos: int) -> int:
    """Where the clause holding `pos` starts: just after the last clause mark (,.;:!? or a line break) before it."""
    return max((low.rfind(c, 0, pos) for c in ",.;:!?\n"), default=-1) + 1


def _own_clause(low: str, m: re.Match) -> bool:
    """The approval word `m` stands in a clause of at most `APPROVAL_CLAUSE_WORDS` words ("spot on", "legend")."""
    start = _clause_start(low, m.start())
    end = min((i for i in (low.find(c, m.end()) for c in ",.;:!?\n") if i >= 0), default=len(low))
    clause = low[start:end]
    after = re.findall(r"[\w']+", low[m.end():end])
    return len(re.findall(r"[\w']+", clause)) <= APPROVAL_CLAUSE_WORDS and all(w in APPROVAL_AFTER for w in after)


def thanks_after_fix(text: str, fix: AgentFacts | None) -> str | None:
    """The thanks or approval word of a message that confirms the agent's fix (`THANKS`, `fix_given`), or None."""
    if fix is None or "?" in text:
        return None
    low = lowered(text)
    m = next((m for m in THANKS.finditer(low) if not APPROVAL.fullmatch(m.group(0)) or _own_clause(low, m)), None)
    if m is None or SARCASM.search(low) or LATER.search(low) or re.match(r"\s*(?:no|nah|nope)\b", low):
        return None
    if re.search(r"\b(?:but|although|though|except|only)\b", low[m.end():]):  # "it's paired now, ta. but the app ..."
        return None
    if problem_words(NONE_OF_IT.sub(" ", low)) or after_the_fix(text) is not None:
        return None
    return m.group(0)


def after_the_fix(text: str) -> str | None:
    """The clause of a message that says the problem goes on after the fix (`AFTER_THE_FIX`), or None."""
    low = lowered(text)
    for m in AFTER_THE_FIX.finditer(low):
        tail = (m.group("now") or m.group("still") or "").strip()
        if len(tail.split()) < 2 and m.group("now") is not None:
            continue
        if problem_words(tail) or not FIX_WORD.search(tail):
            return m.group(0).strip(" ,.;:!?")
    return None


AGAIN = re.compile(r"\bagain\b")
FAILURE_AGAIN = re.compile(
    r"\b(?:beep\w*|drop\w*|crash\w*|froze|frozen|freez\w*|(?:play|act)\w* up|cut\w* (?:out|off)|(?:went|gone|go|goes|going) "
    r"(?:off|down|dead|blank|black)|died|dies|dying|dead|fail\w*|broke\w*|stop\w*|disconnect\w*|buffer\w*|flicker\w*|"
    r"glitch\w*|hang\w*|hung|kick\w* (?:me|us) (?:out|off)|logged (?:me|us) out|locked out|error|fault|[a-z]{1,2}-?\d{1,4})\b")
"""A failure sign before an "again" (`failed_again`, after review of the twelfth round): a verb of failing ("the fridge
beeped again", "the box is playing up again", "it cut out on me again"), an error or its code ("error F3 again", "E24
again"); with the complaint producer's problem words and negations (`problem_words`: "I can't log in again")."""


def failed_again(text: str) -> str | None:
    """The words before an "again" that report a failure again, or None (twelfth round; after review): the five words
    before it in its clause hold a failure sign (`FAILURE_AGAIN`, `problem_words`), said after thanks, is sarcasm about
    the fix, not a confirmation ("cheers, that was a great help, E24 again tonight ... outstanding"); a clause with no
    such sign is a fix said in any words ("it's all good again", "the app opens again", "back on again", "thanks
    again")."""
    low = lowered(text)
    for m in AGAIN.finditer(low):
        start = _clause_start(low, m.start())
        before = " ".join(re.findall(r"[\w']+", low[start:m.start()])[-5:])
        if before and (FAILURE_AGAIN.search(before) or problem_words(before)):
            return before + " again"
    return None


END_IT = re.compile(r"\bend(?:ing)? it\b")
ENDABLE = re.compile(r"\b(?:subscription|plan|contract|membership|trial|account|booking|order|call|chat|pass|bundle|"
                     r"package|policy|broadband|service|deal)s?\b")
""""End it" is a crisis word unless the message names something a customer ends (a subscription, a
plan, a contract, a pass, a bundle ...): "what do I need to do to end it" after "I'm done with this subscription"
is a cancellation. "End it all", "end things" and "end everything" stay crisis words whatever else is named."""


def floor_severity(text: str) -> str:
    """`crisis`, `harm` or `none` from the floor's own words."""
    low = lowered(text)
    if FLOOR_CRISIS.search(low) or (END_IT.search(low) and not ENDABLE.search(low)):
        return "crisis"
    if FLOOR_HARM.search(low):
        return "harm"
    return "none"


def floor_words_say(text: str) -> bool:
    """Whether the floor's words or the rules' crisis and harm words mark a text: the learned floor's
    threshold is chosen for the union with these (stores.frontend.model, `UNION`)."""
    return sensitivity(text) != "none" or floor_severity(text) != "none"


REPLY_MAX_WORDS = 8
"""A customer message of at most this many words right after the agent asked a specific question is read as
an answer to it (`answers_question`)."""
REPLY_BAR = 0.30
"""The learned floor's bar for a short answer to the agent's specific question (`answers_question`): the
mean of the message's own score and the score of the exchange (the agent's question and the reply read as one
text) must reach it. Chosen in the sixth round on development text (docs/frontends.md: the development
suites and tests/stores/floor_dev_context.yaml, the fourth held-out suite left out): short answers ("card
ones", "kitchen cupboard, behind the mop") score 0.13 to 0.3 alone, like the subtle disclosures of longer
messages, and lower with the question; the development text's disclosures said as short answers had means of
0.38 or more."""
OPEN_QUESTION = re.compile(
    r"\b(?:what(?:'s| is| has)? (?:happened|up|wrong|the (?:matter|problem|issue)|going on|it about|gone wrong|"
    r"(?:can|could) i (?:do|help)|do you need|seems to be)|how (?:can|may|could) i help|tell me (?:more|what)|"
    r"anything else|is everything (?:ok|okay|alright|all right)|are you (?:ok|okay|alright|all right|safe))"
)
"""An agent question that asks what the matter is ("what's happened?", "what's it about?", "anything else?",
"are you safe?"): its answer is the customer's own report, where disclosures are said, so it is read alone."""


def answers_question(answer: AgentFacts | None, text: str) -> bool:
    """Whether a customer message is a short answer to a specific question the agent just asked ("is the
    router upstairs or downstairs?" -> "downstairs in the hall"): a question, not an offer of a person and not
    an open question (`OPEN_QUESTION`), and at most `REPLY_MAX_WORDS` words in reply."""
    if answer is None or not answer.asked_question or answer.offer_live:
        return False
    if OPEN_QUESTION.search(lowered(answer.text)):
        return False
    return 0 < word_count(text) <= REPLY_MAX_WORDS


CLAUSE_SPLIT = re.compile(
    r"[.!?;:\n]+|,\s+|\s+-+\s+|\s+(?:before|because|but|cause|cos|since|so that|so|and then|until|after|while|though|"
    r"although|or else)\s+", re.IGNORECASE)
"""Where the learned floor cuts a message into clauses (`clauses`): sentence ends, commas, dashes and the words
that join two clauses ("... before I go through with it", "... because he reads my texts")."""
CLAUSE_MIN_WORDS = 3
"""A piece of at least this many words is a clause; shorter ones ("thanks", "order 5512") are not read alone."""
CLAUSE_BAR = 0.70
"""A message the learned floor does not mark escalates when one of its clauses, read alone, reaches this score and
reads as a crisis more than a harm (`floor_reading`): a farewell said inside an everyday request ("cancel my paper
from Friday, I have made my own arrangements"), diluted by the request around it. Ninth round, on the development
suites (the seventh held-out suite among them, in sample): 0.60 to 0.75 catch the same three farewells for three
or four routine turns; 0.80 loses one of them, and any clause label (not only crisis) two more routine turns."""
HARM_CLAUSE_P = 0.90
"""A clause over `CLAUSE_BAR` that reads as a harm more than a crisis raises a message the whole left alone only when
the head's probability of a disclosure for it (the summed `model` reading, crisis + harm) reaches this (eleventh round,
`raising_clause`): harm told after a request ("can u make my bank app need a fingerprint ...? ... he pushed me down
the back steps", the whole 0.04, that clause 0.81 with the model at 0.97). On every development suite but the ninth
held-out one, the clauses over 0.70 of messages the floor left alone that read as harm have the model at 0.84 or
under ("Bit of a legal question", 0.82 with the model at 0.84; a court date, shared custody). Chosen with the ninth
suite's miss in view (its reading was quoted to the round), so the ninth suite is no blind test of it; the harm's
own probability was tried first (at 0.90 it missed a kick in the ribs told after two requests, harm 0.896, model
0.95: tests/stores/floor_dev.yaml, `harm_after_a_request`)."""


REQUEST = re.compile(
    r"^(?:(?:so|and|but|also|then|ok|okay|hi|hello|quick one)\W+)*(?:how (?:do|can|would|should|much|long)|"
    r"can (?:i|you|we|my|he|she|they|it|the|this|someone)|could (?:i|you|we|one|someone)|would (?:you|one|it)|"
    r"is there|are there|do you|what(?:'s| is| do| should| would| are| can)|where (?:do|can|is)|"
    r"who (?:do|can|should|handles|looks))\b", re.IGNORECASE)
"""A clause that is a plain question or request to the company ("how do I close ...", "can you send it over",
"is there someone ..."), read at the clause's start (`request_veto`). "please" and "I need" are not in it: a
disclosure is often said as a plea ("please help me, he ...") in the same clause as its harm."""
REQUEST_REST_BAR = 0.30
"""A message with a request clause that the learned floor marks stays marked only when a clause other than its
requests, read alone, reaches this score, or the whole reaches `REQUEST_WHOLE_BAR` (tenth round). Chosen on the
development suites with the eighth held-out suite left out: the disclosures said with a request had their highest
other clause at 0.41 or more (a plea not to ring a landline, 0.41); the plain requests that named a relative, a
closure or a person to speak to had theirs under 0.30 (about 27 of 92)."""
REQUEST_WHOLE_BAR = 0.50
"""Over this whole score a message is not vetoed as a request ("who ordered a tv ... with MY card? not me!!": its
one non-request piece is too short to read, the whole 0.93)."""


HARM_ELEMENT = "harm_element"
"""The head that reads a clause for who acts on whom (`phrases/elements.yaml`, eleventh round): `harm` when a harm is
done, threatened or planned to someone (hurt, locked in, money or an account taken, court, a life about to end), `none`
for a person or an event with no harm (a plain report naming a relative, news, an idiom of harm, scorn)."""
HARM_ELEMENT_BAR = 0.30
"""A learned yes whose whole score is under `ELEMENT_WHOLE_BAR` is read as no disclosure when neither the message nor
any of its clauses reads `harm` at this probability (`harm_veto`); 0 turns the veto off. Chosen on the development
suites and sets with the ninth held-out suite left out: among the 22 disclosures only the learned floor marked with a
whole under 0.20, the lowest read 0.36 ("all my air miles are gone!! someone booked two flights ..."); 0.30 took 30 of
the 170 false alarms the learned floor alone raised there and no disclosure, 0.35 took 41 with a margin of 0.01, 0.40
lost one."""
ELEMENT_WHOLE_BAR = 0.20
"""Over this whole score the element veto does not apply. Between 0.20 and 0.30 the development disclosures read as
low as 0.16 on the element head (a threat at the company's engineers, "... going down the stairs head first"; a no win
no fee firm lined up, 0.21): the head learned harm done to the speaker and theirs better than harm promised to the
company or a legal step; a whole bar of 0.25 or 0.30 with the same element bar lost two or more of them."""


REQUEST_ELEMENT_WHOLE_BAR = 0.30
"""Under this whole score a learned yes on a message of two clauses or more that closes with a request to the company
(`closing_request`: its last clause is a `REQUEST`, or it ends with a question) is read as no disclosure when no
clause but its requests reads as one on both the floor and the element head (`request_element_veto`, twelfth round):
what is said before the request is its context, and no harm done to anyone ("I work shifts at the hospital so I sleep
in the day, can the courier come after four?"). A request that opens the message is not read so: what follows it is
often what the customer came to say (harm told after a request, `HARM_CLAUSE_P`). Chosen on the development suites
and sets, and leave one suite out (`bench/floor.py --request-element`): in sample no disclosure that closes with a
request and has no clause that would raise it (`raising_clause`) has a whole under 0.35, so 0.30 keeps a margin of
0.05 (0.35 would take one false alarm more with no margin); 11 of the 12 texts with such messages lose nothing on the
text left out; the ninth held-out suite's fold, with its one such disclosure out of view (a black eye told before "can
I help her set up an account he doesn't know about", whole 0.35), would choose 0.50 and lose it (docs/frontends.md,
"Twelfth round")."""
REQUEST_ELEMENT_BAR = 0.50
"""A clause other than the requests keeps a message marked (`request_element_veto`) when it reads at least this on the
learned floor and at least this `harm` on the element head (`HARM_ELEMENT`): a disclosure on both readings. Not
chosen by the counts (in sample no disclosure under the whole bar needs it: 0.40 to 0.80 take 18 to 28 false alarms,
none a disclosure; the ones it could have taken are kept by `raising_clause`), but set where a clause reads a
disclosure more likely than not on both, so that one that does keeps the message whatever the request around it. 0
turns the veto off."""


REQUEST_ELEMENT_HARM_ALONE = 0.85
"""A clause other than the requests also keeps a message marked (`request_element_veto`, after review) when the element
head reads `harm` at this or more and the learned floor reads it at `REQUEST_REST_BAR` or more: a person acting on the
customer's things or on them, read surely by the element head, which the floor reads low ("he smashed my laptop, can
you send a new charger?": the clause's floor 0.38, its element harm 0.89). Set over the element readings of the
requests' context clauses the veto was meant for (a job, a relative named, news), which read under it; 1 turns it off."""


CLOSING_QUESTION = re.compile(r"\?[^\w?]*$")
"""A message that ends with a question mark (then nothing but spaces, emoji or punctuation): its last clause is a
question to the company, asked in a shape `REQUEST` does not list ("any chance the driver could ring twice?", "is that
usually a scam?"), read as a closing request by `request_element_veto` (twelfth round)."""


def closing_request(text: str, cs: tuple[str, ...] | list[str]) -> bool:
    """Whether a message of clauses `cs` closes with a request to the company: its last clause is a `REQUEST`, or the
    message ends with a question (`CLOSING_QUESTION`)."""
    return bool(cs) and (bool(REQUEST.search(cs[-1].strip())) or bool(CLOSING_QUESTION.search(text.strip())))


def request_element_veto(front: FrontEnd, read: list, text: str = "") -> tuple[bool, str]:
    """Whether a learned yes on a message that closes with a request (`closing_request`: its last clause is a
    `REQUEST`, or `text` ends with a question) has no clause other than its requests (a closing question in another
    shape is read too) that reads as a disclosure on both the learned floor and the element head at
    `REQUEST_ELEMENT_BAR`. `read`: each clause's `summed` reading and text, in order, as `floor_reading` computed
    them. Returns the verdict and the receipt's words."""
    if REQUEST_ELEMENT_BAR <= 0 or HARM_ELEMENT not in front.heads or not read:
        return False, ""
    ask = read[-1][1]
    rest = [(r[0], c) for r, c in read if not REQUEST.search(c.strip())]  # a closing question not in its shapes too
    if not closing_request(text, [c for _, c in read]) or not rest:
        return False, ""
    harms = [(s, front.proba(HARM_ELEMENT, c).get("harm", 0.0), c) for s, c in rest]
    sure = max(((h, s, c) for s, h, c in harms if h >= REQUEST_ELEMENT_HARM_ALONE and s >= REQUEST_REST_BAR), default=None)
    if sure is not None:  # a harm the element head reads surely, the floor at the request veto's rest bar
        return False, ""
    both, at = max((min(s, h), c) for s, h, c in harms)
    return both < REQUEST_ELEMENT_BAR, (f"a closing request ({ask!r}), the rest at most {both:.2f} on both the floor and "
                                        f"its harm element ({at!r})")


def harm_veto(front: FrontEnd, texts: list[str]) -> tuple[bool, str]:
    """Whether a learned yes lacks a harm element: no text of `texts` (the message and its clauses, already encoded)
    reads `harm` on `HARM_ELEMENT` at `HARM_ELEMENT_BAR`. Returns the verdict and the receipt's words."""
    if HARM_ELEMENT not in front.heads:  # an artefact of a bank without the element head: no veto
        return False, ""
    best, at = max((front.proba(HARM_ELEMENT, t).get("harm", 0.0), t) for t in texts)
    return best < HARM_ELEMENT_BAR, f"its harm element at most {best:.2f} ({at!r})"


def request_veto(scored: list[tuple[float, str]]) -> tuple[bool, str]:
    """Whether a learned yes is a plain request (`REQUEST`): some clause asks the company something and
    no other clause reaches `REQUEST_REST_BAR`. `scored` is each clause's learned score and text (the message
    itself when it has one clause). Returns the verdict and the highest other clause's score for the receipt."""
    asks = [c for _, c in scored if REQUEST.search(c.strip())]
    if not asks:
        return False, ""
    rest = max((s for s, c in scored if not REQUEST.search(c.strip())), default=0.0)
    return rest < REQUEST_REST_BAR, f"a request ({asks[0]!r}), the rest of the message at most {rest:.2f}"


def raising_clause(read: list) -> tuple[float, str, str, dict[str, float]] | None:
    """The clause that raises a message the whole left alone (`floor_reading`), as (score, clause, label, the head's
    probabilities), or None: the highest-scoring clause over `CLAUSE_BAR` that reads as a crisis (crisis at least
    harm), or as a harm with the model's probability of a disclosure at `HARM_CLAUSE_P` or more. `read`: each
    clause's `summed` reading (score, model, nearest phrases, probabilities) and text."""
    raising = []
    for (s, p_sum, _, ps), c in read:
        crisis, harm = ps.get("crisis", 0.0), ps.get("harm", 0.0)
        if s >= CLAUSE_BAR and (crisis >= harm or p_sum >= HARM_CLAUSE_P):
            raising.append((s, c, "crisis" if crisis >= harm else "harm", {**ps, "model": p_sum}))
    return max(raising, key=lambda r: r[0]) if raising else None


def clauses(text: str) -> tuple[str, ...]:
    """The message's clauses (`CLAUSE_SPLIT`, at least `CLAUSE_MIN_WORDS` words each) when it has two or more;
    else none (a one-clause message is read whole only)."""
    parts = [p.strip() for p in CLAUSE_SPLIT.split(text) if p and p.strip()]
    parts = [p for p in parts if len(p.split()) >= CLAUSE_MIN_WORDS]
    return tuple(parts) if len(parts) >= 2 else ()


def floor_reading(front: FrontEnd, text: str, answer: AgentFacts | None = None, earlier: str | None = None) -> Reading:
    """The learned safety floor on one message: the `sensitive` head's probability of any disclosure
    (`crisis` + `harm`, against `near_miss` and `none`) and, when it reaches the head's `disclosure`
    threshold, the more probable severity. Below the threshold, a `none` reading whose score is the
    chance of no disclosure (it had to reach 1 - the threshold).

    `answer`, the agent's latest message: a short answer to its specific question (`answers_question`) is read
    in the exchange: the mean of its own score and that of the question and the reply read as one text must
    reach `REPLY_BAR` (the receipt says so); the one-message score of a two-word answer ("card ones") is no
    reading of a disclosure.

    `earlier`, the customer's own previous message in the session: a follow-up that reaches the threshold alone
    is read with it too (seventh round): its score is the lower of its own and the mean of its own and that of
    the two messages read as one text (the receipt says so). The customer's earlier words only ever lower the
    learned score (scorn or a money question after a problem report); letting them raise it added false alarms
    on the development suites (follow-ups to a disclosure already escalated: docs/frontends.md, "Seventh
    round"). The words' readers are not touched. A message of two clauses or more (not a short answer) has each clause read
    too, marked or not (the crisis clauses below read unmarked messages).

    A yes under `REQUEST_WHOLE_BAR` on a message with a clause that asks the company something (`REQUEST`) and
    no other clause at `REQUEST_REST_BAR` is read as a plain request, no disclosure (`request_veto`, tenth
    round); it reads the clause scores already computed, no model call more.

    A yes under `ELEMENT_WHOLE_BAR` whose message and clauses all read under `HARM_ELEMENT_BAR` on the element head
    (`harm_veto`: no harm done, threatened or planned to anyone; a relative, news or an idiom alone) is read as no
    disclosure (eleventh round); it reads the vectors already computed, one small head more.

    A yes under `REQUEST_ELEMENT_WHOLE_BAR` on a message of two clauses or more that closes with a request
    (`closing_request`) is read as no disclosure when no other clause reads at `REQUEST_ELEMENT_BAR` on both the learned
    floor and the element head (`request_element_veto`, twelfth round: the request reading and the element combined); never
    a message one of whose clauses would raise it were the whole lower."""
    t = front.heads["sensitive"].thresholds["disclosure"]
    score, p_yes, margin, ps = front.summed("sensitive", "disclosure", text)
    parts = f"model {p_yes:.2f}, nearest phrases {margin:.2f}"
    if answers_question(answer, text):
        alone = score
        score = (alone + front.summed("sensitive", "disclosure", f"{answer.text} {text}")[0]) / 2
        t = REPLY_BAR
        parts += (f"; a short answer to the agent's question {answer.turn_id}: alone {alone:.2f}, with the question "
                  f"{2 * score - alone:.2f}, mean {score:.2f}")
    elif earlier and earlier.strip() and score >= t:  # only a yes can be lowered: no model call else
        alone = score
        together = front.summed("sensitive", "disclosure", f"{earlier} {text}")[0]
        score = min(alone, (alone + together) / 2)
        parts += (f"; a follow-up to the customer's own previous message: alone {alone:.2f}, with it {together:.2f}, "
                  f"read as {score:.2f}")
    cs = () if answers_question(answer, text) else clauses(text)
    if cs:
        if hasattr(front, "warm"):
            front.warm(list(cs))  # one encoder call for the message's clauses
        read = [(front.summed("sensitive", "disclosure", c), c) for c in cs]
        (best, *_), at = max(read, key=lambda r: r[0][0])
        parts += f"; its {len(cs)} clauses, the highest {best:.2f} ({at!r})"
        if score >= t and best < t:  # no clause alone reads as a disclosure: the whole's score came from their mix
            parts += ": no clause alone reaches the threshold"
            return Reading("disclosure", "none", 1.0 - best, 1.0 - t, note=parts)
        raised = raising_clause(read) if score < t else None
        if raised:  # a farewell, or harm told in a clause of its own, said beside an everyday request
            s, c, label, cp = raised
            other = "harm" if label == "crisis" else "crisis"
            sure = f" (model {cp['model']:.2f}, bar {HARM_CLAUSE_P:.2f})" if label == "harm" else ""
            return Reading("disclosure", label, s, CLAUSE_BAR,
                           note=f"{parts}; the clause {c!r} alone reads as a {label} ({s:.2f}, bar {CLAUSE_BAR:.2f}; the "
                                f"whole {score:.2f}); {label}: p={cp[label]:.2f}{sure} against {cp[other]:.2f}")
    if score < t:
        return Reading("disclosure", "none", 1.0 - score, 1.0 - t, note=parts)
    if score < REQUEST_WHOLE_BAR and not answers_question(answer, text):
        scored = [(r[0], c) for r, c in read] if cs else [(score, text)]
        vetoed, why = request_veto(scored)
        if vetoed:
            parts += f"; {why}: under {REQUEST_REST_BAR:.2f}, read as no disclosure"
            return Reading("disclosure", "none", 1.0 - score, 1.0 - t, note=parts)
    if cs and score < REQUEST_ELEMENT_WHOLE_BAR and not answers_question(answer, text) and not raising_clause(read):
        # a closing request with nothing before it that reads as a disclosure on both readings (twelfth round)
        vetoed, why = request_element_veto(front, read, text)
        if vetoed:
            parts += f"; {why}: under {REQUEST_ELEMENT_BAR:.2f}, read as no disclosure"
            return Reading("disclosure", "none", 1.0 - score, 1.0 - t, note=parts)
    if score < ELEMENT_WHOLE_BAR and not (cs and raising_clause(read)):
        # who acts on whom: a person or an event with no harm done to anyone; never a message one of whose clauses
        # would raise it were the whole lower (the floor stays monotone in the whole's score)
        vetoed, why = harm_veto(front, [text, *cs])
        if vetoed:
            parts += f"; {why}: under {HARM_ELEMENT_BAR:.2f}, no harm done to anyone, read as no disclosure"
            return Reading("disclosure", "none", 1.0 - score, 1.0 - t, note=parts)
    label = "crisis" if ps.get("crisis", 0.0) >= ps.get("harm", 0.0) else "harm"
    return Reading("disclosure", label, score, t,
                   note=f"{parts}; {label}: p={ps[label]:.2f} against {ps['harm' if label == 'crisis' else 'crisis']:.2f}")


def floor_union(rules_sev: str, floor_sev: str, learned: Reading) -> tuple[str, list[str]]:
    """The safety floor: the most severe of the rules', the floor words' and the learned reading's
    severities (a union, never a vote), and who said it (the learned reader as it describes itself)."""
    learned_sev = learned.label if learned.label in ("harm", "crisis") else "none"
    said = (("rules", rules_sev), ("floor words", floor_sev), (learned.describe(), learned_sev))
    sev = max((v for _, v in said), key=_RANK.__getitem__)
    return sev, [n for n, v in said if v == sev and v != "none"]


def reported_problem(words: list[str]) -> bool:
    """The complaint producer's words say a problem, not only a bare negation ("not", "never": "not a peep
    since", "never better"): right after the agent's step such a message is not read as a fix by the lowered
    bar (`AFTER_STEP_BAR`); the `resolved` head's own threshold still reads it (eighth round)."""
    return bool(words) and not only_negation(words)


def _either(rule: bool, r: Reading) -> tuple[bool, str]:
    """The rules' yes stands; the head adds a yes when it is sure."""
    if rule:
        return True, "rules"
    if r.label == "yes":
        return True, r.describe()
    return False, f"rules and {r.describe()}"


def after_hostile(front: FrontEnd, reading: Reading, text: str, earlier: str | None) -> float | None:
    """The `hostile` head's probability of "yes" for a message it is unsure of, when that reaches
    `FOLLOW_UP_HOSTILE_BAR` and the customer's previous message was hostile (its words, or the head's sure yes);
    None otherwise. The earlier message is read only then (no model call for most turns)."""
    if reading.label is not None or reading.source != "learned" or not earlier or not earlier.strip():
        return None
    p = front.proba("hostile", text)["yes"]
    if p < FOLLOW_UP_HOSTILE_BAR:
        return None
    return p if is_hostile(earlier) or front.read("hostile", earlier).label == "yes" else None


def _binary(rule: bool, r: Reading) -> tuple[bool, str]:
    """The head's label when it is sure, else the rules'."""
    if r.sure:
        return r.label == "yes", r.describe()
    return rule, f"rules ({r.describe()})"


def combine(ctx: TurnContext, params: ProducerParams, rules: Signals, readings: dict[str, Reading],
            *, floor: str | None = None, resolved_yes: float | None = None, hostile_after: float | None = None) -> Signals:
    """The signals of one turn from the rules' and the heads' readings (see the module docstring);
    `floor` is the floor's severity (read from the text when None); `resolved_yes`, the learned `resolved`
    head's probability of "yes" (read right after the agent's step, `AFTER_STEP_BAR`; None: not read);
    `hostile_after`, that of `hostile` for an unsure follow-up of a hostile message (`after_hostile`)."""
    if rules.meaningless:
        return replace(rules, readers=(("*", "rules: meaningless message"),))
    readers: list[tuple[str, str]] = []
    low = lowered(ctx.text)
    floor = floor_severity(ctx.text) if floor is None else floor
    s = readings["sensitive"]
    sev, who = floor_union(rules.sensitive, floor, s)
    readers.append(("sensitive", " + ".join(who) if sev != "none" else f"none (rules, floor words and {s.describe()})"))

    values: dict[str, object] = {"sensitive": sev}
    for field in ("human_request", "hostile", "complexity"):
        values[field], who = _either(getattr(rules, field), readings[field])
        if field == "human_request" and values[field] and not rules.human_request and (refusal := TURNS_DOWN.search(low)):
            # "aye right, so I can be passed round five departments. no thanks": a refusal, not a request (eleventh round)
            values[field], who = False, f"rules ({who}, but the message turns down: {refusal.group(0)!r})"
        if field == "human_request" and values[field] and not rules.human_request and answers_question(ctx.answer, ctx.text):
            # "the ute hire, ref UH-2204" to "which booking is this?": the answer, not a person asked for
            values[field], who = False, f"rules ({who}, but a short answer to the agent's question {ctx.answer.turn_id})"
        if field == "hostile" and not values[field] and hostile_after is not None:
            values[field], who = True, (f"learned hostile=yes p={hostile_after:.2f} under its threshold, but the customer's "
                                        f"previous message was hostile (bar {FOLLOW_UP_HOSTILE_BAR:.2f})")
        readers.append((field, who))
    tc = readings["time_critical"]
    if tc.label == "yes" and not TIME_NAMED.search(low):
        values["time_critical"], who = rules.time_critical, f"rules ({tc.describe()}, but no time is named)"
    elif tc.label == "yes" and not TIME_SHORT.search(low):
        values["time_critical"], who = rules.time_critical, f"rules ({tc.describe()}, but the time named is not running out)"
    elif tc.label == "yes" and LATER_DAY.search(low) and not SOON.search(low):
        values["time_critical"], who = rules.time_critical, f"rules ({tc.describe()}, but a later day is named)"
    else:
        values["time_critical"], who = _binary(rules.time_critical, tc)
    readers.append(("time_critical", who))

    short = word_count(ctx.text) <= params.short_max_words
    a = readings["affirmative"]
    offered = ctx.answer is not None and ctx.answer.offer_live
    if offered and rules.short_affirmative:
        # a short yes to an offer of a person: the opening word says it ("aye, set it up" reads as "no" to the
        # head), unless a refusal or sarcasm follows it ("yeah right" reads as "yes" to the head)
        refused = REFUSAL.search(low.split(maxsplit=1)[1]) if " " in low.strip() else None
        affirmative = refused is None
        who = (f"rules: a short yes to the agent's offer, but {refused.group(0)!r} follows it ({a.describe()})" if refused
               else f"rules: a short yes to the agent's offer ({a.describe()})")
    elif short and a.sure:
        affirmative, who = a.label == "yes", a.describe()
    else:
        affirmative, who = rules.short_affirmative, f"rules ({a.describe()})"
    if offered and not affirmative and values["human_request"] and not REFUSAL.search(low):
        # "yeah grand, hook me up with them" right after "would you like me to connect you?": the person asked
        # for is the one just offered, so it is a yes to the offer, not a first request to clarify
        affirmative, who = True, f"a person asked for right after the agent's offer ({dict(readers)['human_request']})"
    if offered and affirmative and values["human_request"] and rules.human_request and (named := PERSON_NAMED.search(low)):
        # "yes please, I want to speak to a real person": the rules' words name a person, so the request stands beside
        # the yes (a transfer by the offer while it is live, a first request to clarify once it has lapsed; twelfth round)
        readers = [(f, f"{w}; a yes to the agent's offer {ctx.answer.turn_id} that names a person ({named.group(0)!r})"
                    if f == "human_request" else w) for f, w in readers]
    elif offered and affirmative and values["human_request"]:
        # the person asked for is the one offered: a yes to the offer (a transfer while it is live), not a new request
        # to clarify once it has lapsed ("ok fine, connect me" an hour after the offer; eleventh round)
        values["human_request"] = False
        readers = [(f, f"no new request: a yes to the agent's offer {ctx.answer.turn_id} ({w})" if f == "human_request" else w)
                   for f, w in readers]
    values["short_affirmative"] = affirmative
    readers.append(("short_affirmative", who))

    answer = ctx.answer
    said_yes_to_check = answer is not None and answer.resolution_check and affirmative
    r = readings["resolved"]
    words = problem_words(ctx.text)
    c = readings["complaint"]
    step = ctx.step if resolved_yes is not None else None
    goes_on = after_the_fix(ctx.text)
    if said_yes_to_check:
        resolved, who = True, "rules: a yes to the agent's resolution check"
    elif (r.sure and r.label == "yes" and not rules.resolved_confirmation and step is None
          and answers_question(answer, ctx.text)):
        # "yep its on 👍" to "Is Bluetooth switched on on the phone?": a short answer to the agent's specific
        # question, not a fix confirmed; the rules' words and a yes to "did that solve it?" still read (eighth round)
        resolved, who = False, f"rules ({r.describe()}, but a short answer to the agent's question {answer.turn_id})"
    elif goes_on is not None:
        # "cheers for that, now there's no delivery booked at all": what happens now is named, and it is no fix
        resolved, who = False, f"rules: the problem goes on after the fix ({goes_on!r}; {r.describe()})"
    elif (step is not None and not (r.sure and r.label == "yes") and resolved_yes >= AFTER_STEP_BAR
          and reported_problem(words)):
        # "Also, my invoice shows a double charge this month." right after a step: a problem reported in the
        # complaint's own words is no fix confirmed in few words, so the lowered bar is not taken (eighth round)
        resolved, who = _binary(rules.resolved_confirmation, r)
        who = (f"{who} (p={resolved_yes:.2f} after the agent's step {step.turn_id} reaches the bar "
               f"{AFTER_STEP_BAR:.2f}, but the message reports a problem: {', '.join(words)})")
    elif step is not None and not (r.sure and r.label == "yes") and resolved_yes >= AFTER_STEP_BAR:
        resolved, who = True, (f"learned resolved=yes p={resolved_yes:.2f} after the agent's step {step.turn_id} "
                               f"(bar {AFTER_STEP_BAR:.2f}; alone: {r.describe()})")
    elif not (r.sure and r.label == "yes") and not rules.resolved_confirmation and (
            thanked := thanks_after_fix(ctx.text, fix := fix_given(ctx.step, answer))) is not None:
        # "there we go, 5:30 it is. merci" after "Tap Schedule, then 'Early start'": thanks after the fix (eleventh round)
        resolved, who = True, f"thanks after the agent's fix {fix.turn_id} ({thanked!r}; {r.describe()})"
    else:
        resolved, who = _binary(rules.resolved_confirmation, r)
    if resolved and not said_yes_to_check and not rules.resolved_confirmation and (again := failed_again(ctx.text)):
        # "thanks for that, signed out and in, and it forgot the schedule again by morning. super helpful" (twelfth round)
        resolved, who = False, f"rules: the failure is reported again ({again!r}; {who})"
    if resolved and (values["human_request"] or (offered and affirmative)) and not said_yes_to_check:
        # "ok fine, connect me": a person asked for, or a yes to the offer of one, is no fix confirmed (eleventh round)
        resolved, who = False, f"rules: a person is asked for or accepted, so no fix is confirmed ({who})"
    values["resolved_confirmation"] = resolved
    readers.append(("resolved_confirmation", who))

    i = readings["intent"]
    if rules.explicit_intent != "none":
        values["explicit_intent"], who = rules.explicit_intent, "rules"
    elif (i.sure and i.label == "recommendation" and (feature := RECOMMENDATIONS_FEATURE.search(low))
          and not ASKS_FOR_TITLE.search(low)):
        # "my nephew stayed a week and now my recommendations are all cartoons": the feature, not a request (twelfth round)
        values["explicit_intent"], who = rules.explicit_intent, f"rules ({i.describe()}, but the recommendations are spoken of: {feature.group(0)!r})"
    elif i.sure:
        values["explicit_intent"], who = i.label, i.describe()
    else:
        values["explicit_intent"], who = rules.explicit_intent, f"rules ({i.describe()})"
    readers.append(("explicit_intent", who))

    asking = not (affirmative or resolved)
    leaving = values["explicit_intent"] == "retention"
    if only_negation(words) and leaving and not (c.sure and c.label == "yes"):
        # "not renewing next year", "leaning towards not carrying on": the negation is the leaving, not a problem
        problem, who = False, f"rules (a bare negation in a message about leaving; {c.describe()})"
    elif leaving and not words and c.label == "yes":
        # "the climbing wall shut down, so the membership's useless now. how do I stop the payments?": the reason
        # for leaving, read as a complaint by the head alone, is no problem with the service (ninth round)
        problem, who = False, f"rules (a reason for leaving, no problem words; {c.describe()})"
    elif only_negation(words):  # "it's not for me": a bare negation misleads, the head decides when sure
        problem, who = _binary(True, c)
    else:
        problem, who = _either(bool(words), c)
    values["complaint"] = asking and problem
    readers.append(("complaint", who))
    values["retrieval_empty"] = asking and answer is not None and answer.no_answer
    return replace(rules, **values, readers=tuple(readers))


def weak_adds(front: FrontEnd, readings: dict[str, Reading]) -> dict[str, Reading]:
    """The readings with a yes of `human_request`, `hostile` or `complexity` made unsure when its head's
    validation precision is under `ADD_PRECISION` (the receipt says so); the rest as they are."""
    out = dict(readings)
    for field in ("human_request", "hostile", "complexity"):
        r = out.get(field)
        if r is None or r.label != "yes" or r.source != "learned":
            continue
        precision = front.heads[field].validation.get("yes", {}).get("precision", 1.0)
        if precision < ADD_PRECISION:
            out[field] = replace(r, label=None, note=f"yes at p={r.score:.2f}, but the head's validation precision "
                                                     f"{precision:.2f} is under {ADD_PRECISION:.2f}")
    return out


def read_signals(ctx: TurnContext, params: ProducerParams, rules: Signals) -> Signals:
    """The learned (or chat) front end's signals for one customer turn (rules as fallback, the floor on top).

    With `front=chat` the endpoint's readings replace the learned ones head by head where it
    answered (stores/frontend/chat.py); the learned `sensitive` reading stays in the safety floor's
    union whatever the endpoint says."""
    if rules.meaningless:
        return combine(ctx, params, rules, {})
    learned = front_end()
    own = floor_reading(learned, ctx.text, ctx.answer, ctx.earlier)
    if params.front != "chat":
        p_yes = learned.proba("resolved", ctx.text)["yes"] if ctx.step is not None else None
        readings = weak_adds(learned, learned.read_all(HEADS, ctx.text))
        hostile_after = None if rules.hostile else after_hostile(learned, readings["hostile"], ctx.text, ctx.earlier)
        return combine(ctx, params, rules, {**readings, "sensitive": own}, resolved_yes=p_yes, hostile_after=hostile_after)
    readings = chat_readings(HEADS, ctx.text, learned)
    said = readings["sensitive"]
    if said.source == "learned":  # the endpoint did not answer for it: the learned floor, saying why
        readings["sensitive"] = replace(own, note="; ".join(n for n in (own.note, said.note) if n))
    elif _RANK.get(own.label or "none", 0) > _RANK.get(said.label or "none", 0):
        readings["sensitive"] = replace(own, note=f"more severe than {said.describe()}")
    return combine(ctx, params, rules, readings)


__all__ = ["ADD_PRECISION", "AFTER_STEP_BAR", "AFTER_THE_FIX", "CLAUSE_BAR", "CLAUSE_MIN_WORDS", "CLAUSE_SPLIT", "FIX_WORD",
           "HARM_CLAUSE_P", "raising_clause", "after_the_fix", "HEADS", "LATER_DAY", "SOON", "REFUSAL", "REPLY_BAR",
           "answers_question", "clauses", "combine", "floor_reading", "floor_severity", "floor_union", "floor_words_say",
           "read_signals", "reported_problem", "weak_adds", "FOLLOW_UP_HOSTILE_BAR", "after_hostile", "INSTRUCTION",
           "TURNS_DOWN", "PERSON_NAMED", "RECOMMENDATIONS_FEATURE", "ASKS_FOR_TITLE", "AGAIN", "FAILURE_AGAIN", "failed_again",
           "THANKS",
           "TIME_SHORT", "fix_given", "thanks_after_fix", "ELEMENT_WHOLE_BAR", "HARM_ELEMENT_BAR", "harm_veto",
           "REQUEST_ELEMENT_WHOLE_BAR", "REQUEST_ELEMENT_BAR", "REQUEST_ELEMENT_HARM_ALONE", "request_element_veto", "CLOSING_QUESTION", "closing_request"]
