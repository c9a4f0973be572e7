"""The rule-based memory classifier: no model call, never the scenario's labels.

`classify(text, role, kind)` reads one item's own words (a turn's text or a resolution's
summary) plus who said it, and tries the rules below in order; the first that matches decides.
Every rule is a named regular expression, so a receipt can say which rule fired and on which
words. The order encodes which reading is the riskier one to keep: a furious message that also
states a preference is sentiment (keeping the anger is the failure seed 004 is about); a plan
tier mentioned while introducing oneself is profile (who the customer is matters more than a
copy of a value another system owns).

The shape rules (a standing request's shape, a status a page shows; sixth round) read how a turn
is put rather than a word list: a request about how a recurring thing (invoices, reports,
confirmations, ...) comes or goes, and a status quoted from a page or read off it, whatever the
product's words. They come before the episodic words since "still showing 'awaiting dispatch'" is a
copy of another system's value, not waiting. The seventh round's shapes read how the other classes are
said in passing: money said as landed, a wait said as looking out for something, a feeling word that is
not anger or delight, and news of the customer's setup or people (read last, so a problem report that
names a new thing stays a problem report).

| order | rule | class | applies to |
| ---: | --- | --- | --- |
| 1 | resolution record naming a pending reference (`RMA 5531` + waiting words) | episodic | resolution records |
| 1 | any other resolution record | incident | resolution records |
| 2 | anger, frustration, stress, threats to leave (`looking at other suppliers`), anger as an idiom (`drives me up the wall`, `raging`); strong delight | sentiment | customer |
| 2 | an apology for the customer's trouble | sentiment | agent |
| 3 | self-introduction (`I'm Dana, the ops lead at ...`, `We're Quarry Labs`) | profile | customer |
| 4 | a standing preference (`please reach me by email`, `from now on send ... as CSV`, `you can call any time`) | preference | customer |
| 4 | a standing request by its shape: how a recurring thing is sent (`could future invoices come as PDF`), who is copied on anything to do with a thing, one format or channel rather than another | preference | customer |
| 5 | a status a page shows (`my order still says 'processing'`, `the account page says we're £212 in credit`) | system_owned | anyone |
| 5 | money said as landed (`the refund has arrived in my account`), unless its sentence says it has not | system_owned | anyone |
| 6 | waiting, a promise, an escalation, an opened RMA | episodic | anyone |
| 6 | a wait's shape (`I'll keep an eye out for ...`, `I'm still expecting the technician`) | episodic | anyone |
| 7 | plan tier or seats (`we're on Clinic Standard, four users`), order status, balance or credits, open tickets | system_owned | anyone |
| 8 | setup and compliance facts (`we run 9 stores`, `HIPAA-covered`, `our warehouse is ...`) | profile | customer |
| 9 | a feeling said in passing (`honestly gutted`, `really chuffed`, `my patience is wearing thin`) | sentiment | customer |
| 9 | a step the customer tried and how it went (`I restarted it`, `that did not help`, `it fixed it`) | incident | customer |
| 9 | a problem report (`fails`, `missing`, `timing out`, ...), or said as what did not happen (`the reminders didn't go out`, `nobody got the notice`) | incident | customer |
| 10 | news of the setup or the people (`we've just taken on a second van`, `my son is taking over the orders`, `my wife is doing the bookings from this week`) | profile | customer |
| 11 | anything else the agent said or did | incident | agent |
| 12 | anything else | unclassified | customer |

A problem report is the incident itself, not state waiting on an event: kept with the support
record, it is what a typed-memory strategy makes its INCIDENT of and what a repeat is recognised
by; what is pending about it (a replacement on its way, a promised callback) is episodic.

Preferences also carry their topics and values (`contact_channel: phone`), read from the text
with its negated clauses removed ("email, not phone" states email), so the stage can tell a
newer preference that contradicts an older one from one that restates it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from stores.expiry.classes import Classification

RESOLUTION = "resolution"
"""The role of a resolution record (as in `stores.memory`)."""

_I = re.IGNORECASE


def _rx(pattern: str, flags: int = _I) -> re.Pattern[str]:
    return re.compile(pattern, flags)


# --- references (what a signal can close) ------------------------------------------------------

REF = _rx(r"\b(rma|order|ticket|case|return|shipment|tracking|claim|replacement)\s*(?:number\s*|no\.?\s*|#\s*)?"
          r"([a-z]{0,3}-?\d[\w-]*)")
"""A reference to something with a lifecycle in another system: `RMA 5531`, `order #8812`, `case T2-77`."""

# --- sentiment ---------------------------------------------------------------------------------

ANGER = _rx(
    r"\b(unacceptable|furious|livid|outrage\w*|angry|annoyed|annoying|frustrat\w*|fed up|sick of|tired of|"
    r"ridiculous|absurd|disappoint\w*|upset|terrible|awful|horrible|appalling|useless|worst|a joke|"
    r"waste of (?:my |our )?time|not happy|unhappy|babysit\w*|fuming|disgrace\w*|shambles|pathetic|"
    r"incompetent|stressed|stressing (?:me|us) out|raging|seething|"
    r"(?:makes|making|made|drives|driving|drove) (?:me|us) (?:crazy|mad|nuts|insane|up the wall|round the bend)|looking at other (?:suppliers|providers|companies|vendors|options)|"
    r"(?:moving|switching|going) (?:over )?to (?:a |another )?competitor|(?:we are|we're) (?:cancel+ing|leaving|done with)|(?:i am|i'm) (?:cancel+ing|done with)|cancel (?:our|my|the) "
    r"(?:subscription|account|contract|plan)|not paying|chargeback)\b|!{2,}"
)
DELIGHT = _rx(r"\b(delighted|thrilled|love (?:it|this|your)|amazing|fantastic|wonderful|lifesaver|so happy|"
              r"really happy|very happy|great job|you(?:'re| are) the best)\b")
APOLOGY = _rx(r"\b(?:i'm|i am|we're|we are) (?:so |very |really |truly |terribly )?sorry\b|\bapologi[sz]\w*|"
              r"\bsorry (?:for|about) (?:the|this|that|all)\b|\bsorry to hear\b")

# --- profile -----------------------------------------------------------------------------------

_ROLE_WORDS = (r"lead|manager|director|head|admin\w*|owner|founder|co-founder|engineer|officer|cto|ceo|cfo|coo|"
               r"cio|ciso|vp|president|analyst|architect|consultant|coordinator|accountant|controller")
INTRO_ROLE = _rx(r"\b(?:i'm|i am) (?:the |an? )?(?:[\w&/-]+ ){0,3}(?:" + _ROLE_WORDS + r")\b")
# a name after "I'm": case matters, and the words people use after "I'm" that are not names are out
INTRO_NAME = re.compile(
    r"\b(?:I'm|I am|this is|This is|my name is|My name is) (?!(?:Sorry|Not|Afraid|Still|On|In|Just|Really|So|Very|"
    r"Happy|Glad|Here|Back|Away|Out|Off|Done|Fine|Good|Okay|Ok|Also|Now|Trying|Going|Looking|Setting|Having)\b)"
    r"[A-Z][a-z]+"
)
INTRO_COMPANY = re.compile(r"\b(?:[Ww]e're|[Ww]e are) (?:an? |the )?[A-Z][\w-]+")
SETUP = _rx(
    r"\b(?:we (?:run|use|operate|host|sell|process)\b|we have \d[\d,]* \w+|our \d[\d,]* \w+|"
    r"(?:our|my) [\w-]+(?: [\w-]+)? (?:is|are) (?:an?|on|in|hosted|based|located|pinned)\b|"
    r"our [\w-]+ (?:runs|uses|operates) (?:everything|all|on|from)\b|"
    r"all \d+ [\w ]+? (?:are|is) (?:in|on|based)\b|everything (?:is|runs) (?:in|on)\b|"
    r"(?:only|all) [\w ]{0,20}?(?:staff|users|employees|drivers|agents|admins|clinicians) (?:use|have|sign in|log in)\b|"
    r"(?:is|are) our (?:erp|crm|helpdesk|warehouse|payment provider|billing provider|idp)\b|"
    r"i (?:look after|manage|handle|head up|own) (?:the |our )?)"
)
COMPLIANCE = _rx(r"\b(hipaa|gdpr|soc ?2|pci(?:-dss)?|baa|iso ?27001|covered entity|data (?:must|has to|needs to) stay|"
                 r"data residency)\b")

# --- preferences -------------------------------------------------------------------------------

_CHANNEL_WORDS = r"email|e-mail|phone|calls?|slack|sms|text|whatsapp|chat|teams"
PREF_CONTACT = _rx(
    r"\b(?:(?:please )?(?:reach|contact|call|phone|ring|email|e-mail|text|message) (?:me|us)\b(?! back)|"
    r"no (?:\w+ )?calls\b|(?:don't|do not|never) (?:call|phone|ring|email|text|contact)\b|"
    r"(?:" + _CHANNEL_WORDS + r")(?: calls?)? (?:is|are) (?:fine|ok|okay|best|better|preferred)\b|"
    r"contact (?:us|me) only\b|only (?:by|via|on|in) (?:" + _CHANNEL_WORDS + r")\b|"
    r"(?:you can|you may|feel free to|happy for you to|fine to|ok to|okay to) (?:call|ring|phone|text|email|message)(?: (?:me|us))? "
    r"(?:any ?time|whenever|at any hour|day or night|any day))"
)
PREF_STANDING = _rx(r"\b(?:please (?:send|switch|copy|cc|deliver|format|keep sending)|always (?:copy|cc|include|send|use))\b")
STANDING_MARKER = _rx(r"\b(?:all|every|weekly|monthly|daily|always|from now on|going forward|in future|in the future|"
                      r"moving forward|instead of|rather than|as (?:csv|xlsx|xls|pdf|json|tsv|xml))\b")
PREF_LANGUAGE = _rx(r"\b(?:reply|respond|write|speak|talk|communicate|answer)(?: to (?:me|us))? in (english|german|"
                    r"french|spanish|portuguese|italian|dutch|danish|swedish|norwegian|finnish|polish|japanese|"
                    r"chinese|korean)\b")
_RECURRING = (r"invoices|bills|reports?|statements?|receipts|confirmations|replies|letters|updates|payouts|notifications|"
              r"newsletters")
_FORMS = (r"pdfs?|csvs?|spreadsheets?|excel|xlsx|paper(?: copies)?|post|letters?|e-?mails?|texts?|calls?|whatsapp|sms|"
          r"landline|mobile|home phone|work phone|desk phone")
_LANGS = (r"english|welsh|irish|gaelic|scots|french|german|spanish|portuguese|italian|dutch|polish|arabic|urdu|hindi|"
          r"chinese|mandarin|cantonese|japanese|korean|maori|te reo|afrikaans|zulu|swahili")
PREF_SHAPE = _rx(
    r"\b(?:please|pls|could|can|should|would|kindly)\b[^.?!]{0,60}?\b(?:" + _RECURRING + r")\b[^.?!]{0,30}?"
    r"\b(?:come|go|be sent|get sent|arrive)(?: out)? (?:as|in|to|by)\b|"
    r"\b(?:" + _RECURRING + r")\b[^.?!]{0,30}?\b(?:come|go|be sent|get sent|arrive)(?: out)? (?:as|in|to|by)\b[^.?!]*\b(?:please|pls)\b|"
    r"\b(?:copy|cc|include|loop)\b[^.?!]{0,60}\b(?:on|in) (?:anything|everything)(?: to do with| about| regarding| related to)\b|"
    r"\b(?:" + _FORMS + r")\s+(?:rather than|instead of)\s+(?:a |an |the )?(?:" + _FORMS + r"|links?|the portal)\b|"
    r"\b(?:" + _RECURRING + r")\b (?:as|in) (?:an? )?(?:" + _FORMS + r"|" + _LANGS + r")\b[^.?!]*?"
    r"\b(?:please|pls|if you can|if possible|where possible)\b"
)
"""A standing request by its shape (sixth round), whatever the words for what is asked: how a recurring
thing comes or goes ("could future invoices come as PDF attachments?", "confirmations should go out in
both Irish and English, please"), who is copied on anything to do with a thing, one format or channel
rather than another ("spreadsheets rather than PDFs for the monthly reports", "ring the landline rather than
the mobile"), a recurring thing in a format or language with a please ("and statements as PDF please"; the
last three after the fifth held-out suite was measured)."""
PREF_GENERIC = _rx(r"\b(?:i|we)(?:'d| would) (?:prefer|rather)\b|\bprefer(?:red|s)? (?:to be|" + _CHANNEL_WORDS + r")\b|"
                   r"\bhouse rules\b")

# --- episodic ----------------------------------------------------------------------------------

PENDING = _rx(
    r"\b(waiting (?:on|for)|await\w*|(?:is|are|still|currently|now|tracking) pending|pending (?:approval|review|"
    r"delivery|shipment|replacement|callback|confirmation|return)|on (?:its|the) way|in transit|will (?:ship|arrive|be shipped|be delivered)|"
    r"(?:ships?|arrives?|dispatche?s?) (?:on |by |next |this )?(?:in|within|once|when|by|tomorrow|today|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday|week)|(?:still )?(?:hasn't|has not|haven't|have not) (?:arrived|left|shipped|come|turned up)|not arrived yet|"
    r"still waiting|until (?:it|the \w+) (?:arrives|ships|is delivered))\b"
)
PROMISE = _rx(
    r"\b((?:i'll|i will|we'll|we will|someone will|they'll|they will|(?:tier|level) ?\d(?: team)? will|"
    r"our [\w-]+ team will) (?:call|ring|phone|email|get back|follow up|reach out|update|send you|check|look into|"
    r"escalate|stay on)|call(?:ing)? you back|callback(?! url| uri)|call back|promised?|(?:escalated|escalating) (?:this |it )?to|"
    r"keep (?:me|you) posted|keep (?:me|you) updated|let me check|get back to (?:me|you)|"
    r"(?:opened|raised|created|filed|issued) (?:an? )?(?:rma|return|replacement|claim|case)|"
    r"(?:rma|return|claim|replacement)\s*(?:number\s*|no\.?\s*|#\s*)?[a-z]{0,3}-?\d[\w-]*)\b"
)
ATTEMPT = _rx(
    r"\b(restarted|rebooted|reinstall\w*|uninstalled|cleared|updated|updating|upgraded|re-?ran|did that|done that|"
    r"tried (?:that|it|again)|fixed it|sorted it|that worked|works now|work now|did not help|didn't help|no change|"
    r"still (?:crash\w*|fail\w*|broken|not working|happening|the same))\b"
)
"""A customer's account of a step and how it went ("I restarted it but that did not help",
"Updated the app and it fixed it"): part of the support record, like the agent's steps."""
PROBLEM = _rx(
    r"\b(fail\w*|errors?|broke\w*|crash\w*|not working|doesn't work|does not work|isn't working|won't|can't|cannot|"
    r"unable|missing|wrong|stuck|timing out|times? out|timed out|timeouts?|slow|down|outage|bug|issue|problem|"
    r"empty|blank|stopped|keeps|still seeing|still getting|expired|died|dead|no sound|late|delayed|duplicates?|404|500|"
    r"502|503|504|429)\b"
)

NOT_HAPPENED = _rx(
    r"\b(?:didn't|did not|never|wouldn't|would not|haven't|have not)\s+(?:(?:even|actually|properly)\s+)?"
    r"(?:go out|went out|get sent|got sent|send|sent|load|loaded|sync|synced|print|printed|upload|uploaded|save|saved|"
    r"show up|showed up|go through|went through|come up|pick up|register|registered|trigger|triggered|fire|fired|open|opened|"
    r"connect|connected|ring|rang|charge|charged)\b|"
    r"\b(?:nobody|no one|none of (?:them|the \w+|our \w+|my \w+))\s+(?:got|gets|received|receives|can|could|has|have|had|was|were)\b"
)
"""A problem said as what did not happen (eighth round): "the reminder emails didn't go out this month", "nobody got
the notice", "the scanner never synced overnight", "none of the drivers could log in", whatever the product's words.
A problem report, for the customer, with the other problem words; a thing not yet arrived ("hasn't arrived",
"still hasn't come through") is waited for and read before it (`PENDING`)."""

EXPECTING = _rx(
    r"\b(?:i'll|i will|we'll|we will|i'm|i am|we're|we are)\s+(?:(?:just|now|also|still|then)\s+)*"
    r"(?:keep(?:ing)? an eye out|look(?:ing)? out for|watch(?:ing)? out for|wait(?:ing)? to hear|sit(?:ting)? tight|"
    r"(?:still )?expecting)\b"
)
"""Waiting said by its shape (seventh round): the speaker says they will look out for or expect what is
coming ("I'll keep an eye out for RDR-4471 then", "I'll look out for their reply", "ok, sitting tight until
the engineer turns up", "I am also still expecting the technician"), whatever is awaited."""

# --- system-owned ------------------------------------------------------------------------------

_STATUS = (r"processing|pending|awaiting [a-z]+|dispatched|with the courier|on hold|in transit|out for delivery|"
           r"unpaid|overdue|in credit")
STATUS_SHOWN = _rx(
    r"\b(?:says?|shows?|showing|reads|indicates|displays|lists|tells me|listed as|marked as)\b[^.?!]{0,50}?['\"\u2018\u201c]"
    r"(?:" + _STATUS + r")\b|"
    r"\b(?:says?|shows?|showing|reads|indicates|displays|listed as|marked as) (?:still |as |it(?:'s| is) |(?:we're|we are|i'm|i am) "
    r"(?:[$\u20ac\u00a3]\s?\d[\d,.]* )?)?(?:" + _STATUS + r")\b"
)
"""A status another system shows, quoted or read off a page (sixth round): "my order still says
'processing'", "still showing 'awaiting dispatch'", "the account page says we're \u00a3212 in credit". Not
"delivered", "paid" or "cancelled": a page that says so is what a dispute is about ("says delivered but
it never arrived", "the booking says cancelled, they won't let the car on" are problem reports)."""

MONEY_LANDED = _rx(
    r"\b(?:refund|repayment|payment|payout|credit|deposit|transfer|money)\b[^.?!]{0,60}?"
    r"\b(?:landed|arrived|come through|came through|shown up|showed up|gone through|went through|cleared|"
    r"gone back|went back|been credited|was credited|hit (?:my|our|the) (?:account|card|bank))\b"
)
"""Money another system moved, said as landed (seventh round): "the refund of 450 cedis has arrived in my
account", "your refund went back to the original card this morning", "the payout came through": the
payments system's value, like a balance. Not when its sentence says it has not (`_NOT_YET`): a refund that
"still hasn't come through" is waited for."""
_NOT_YET = _rx(r"\b(?:not|never|yet|still|hasn't|haven't|hadn't|didn't|won't|isn't|no sign)\b|n't\b")

_NUMBER_WORDS = r"\d[\d,]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty"
_PLANS = r"free|starter|basic|essentials?|team|pro|professional|business|growth|scale|enterprise|premium|plus|standard"
SYSTEM_OWNED: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("plan_tier", _rx(
        r"\b(?:(?:" + _PLANS + r") (?:plan|tier)|on (?:the |our )?(?:starter|growth|enterprise|premium)\b|"
        r"\d[\d,]* (?:more |additional |extra |paid )?(?:user |staff |admin )?(?:seats|licen[cs]es)|"
        r"(?:plan|price|pricing|subscription) tier|"
        r"(?:one|two|three|four|five|six|seven|eight|nine|ten) (?:user |staff |admin )?(?:seats?|licen[cs]es)|"
        r"billed (?:monthly|annually|yearly))\b|"
        r"\b(?:we're|we are|i'm|i am|currently|still|been) on (?:the )?(?-i:[A-Z])[\w+-]*(?: (?-i:[A-Z])[\w+-]*)?,? (?:with )?(?:" + _NUMBER_WORDS + r") (?:users?|seats?|logins?|"
        r"licen[cs]es?)\b|\b(?:on|got|have|has|pay for|paying for) (?:the|our|a|my) "
        r"(?:(?-i:[A-Z])[\w+-]* ){1,2}(?:plan|tier|package|bundle|membership)\b")),
    ("order_status", _rx(
        r"\b(?:order\s*#?\s*\w*\d[\w-]*\b[^.]*\b(?:shipped|delivered|dispatched|processing|cancel+ed|on hold|"
        r"in transit|out for delivery|status)|order status|(?:your|the|my|our) order (?:has |was |is )?"
        r"(?:shipped|delivered|dispatched|on hold|cancel+ed))\b")),
    ("balance", _rx(
        r"\b(?:(?:account )?balance|amount (?:due|owed|outstanding)|(?:you|we) owe|overdue|past due|"
        r"outstanding (?:balance|invoice|amount)|(?:service|account|goodwill) credit|applied an? [\w -]{0,30}credit)\b|"
        r"[$€£]\s?\d[\d,.]*\s*(?:credit|refund|charge|balance)\b|"
        r"(?:[$€£]\s?\d[\d,.]*|\d[\d,.]* (?:pounds|euros|dollars|quid)) (?:in|of) credit\b")),
    ("open_tickets", _rx(r"\b(?:\d+ open (?:tickets|cases|requests)|open tickets?|tickets? (?:is|are) (?:still )?open|"
                         r"(?:tickets|cases) (?:still )?open (?:with|on|at))\b")),
)
"""System-owned topics with their cues, in the order they are tried."""

_NUMBER = (r"\d[\d,]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
           r"fifty|sixty|seventy|eighty|ninety|hundred|second|third|fourth|fifth|sixth|new|few|couple of")
_PEOPLE = (r"son|daughter|wife|husband|partner|brother|sister|mum|mom|mother|dad|father|grandson|granddaughter|"
           r"nephew|niece|colleague|apprentice|assistant|deputy|bookkeeper|accountant|manager|boss|cousin")
PROFILE_NEWS = _rx(
    r"\b(?:we|i)(?:'ve| have|'re| are|'m| am)?\s+(?:just |recently |now |finally )?(?:taken on|took on|taking on|opened|"
    r"opening|hired|hiring|acquired|added|adding|launched|launching|taken over|took over|taking over)\s+"
    r"(?:a |an |another )?(?:(?:" + _NUMBER + r")\s+)(?:more\s+)?[a-z][\w-]*\b|"
    r"\bmy (?:[\w-]+ )?(?:" + _PEOPLE + r")\b,?(?: (?-i:[A-Z])[\w-]+,?)? (?:(?:is|has|will be) (?:now |just )?"
    r"(?:taking over|taken over|managing|running|handling|looking after|in charge of)|takes over|"
    r"now (?:manages|runs|handles|looks after|holds|does|deals with)|(?:is |'s )?(?:now )?helping (?:me |us )?(?:with|out)|"
    r"(?:is|'s|will be) (?:now )?doing (?:the|our|all the) [\w-]+(?: [\w-]+)? (?:from|now|since|starting)|will (?:now )?do (?:the|our) [\w-]+)\b|"
    r"\bwe(?:'ve| have)? (?:just |recently |now )?moved (?:the |our )?(?:[\w-]+ )?to (?-i:[A-Z])|"
    r"\b(?:it's|it is|we're|we are|that's|that makes it) (?:now )?(?:up to )?(?:\d[\d,]*|" + _NUMBER + r") [a-z][\w-]* now\b"
)
"""A fact about who the customer is, said as news (seventh round): the setup or the people changed
("we've just taken on a second apiary, so it's eighty hives now", "we're opening a third shop", "my son
Wiremu is taking over the milking side", "my eldest apprentice, Efua, now manages our orders", "we've moved
the studio to Cardiff"). Read for the customer last, after steps and problem reports ("we added a new field and the sync fails"
reports a problem)."""

ASKING = _rx(r"\b(?:please|pls|from now on|going forward|could you|can you|would you|could (?:the|all|my|our))\b")
"""A request in the same turn: news said as the reason for it ("we've taken on two new staff in Cork, so
could the rota emails go to them as well?") is the request, so `PROFILE_NEWS` gives way (the head reads it)."""

FEELING = _rx(
    r"\b(?:gutted|chuffed|stoked|relieved|grateful|so thankful|impressed|worried sick|anxious|heartbroken|devastated|"
    r"over the moon|made my (?:day|week|month|year)|saved my (?:bacon|life|skin|sanity)|at my wits'? end|"
    r"at the end of my (?:rope|tether)|patience is (?:wearing|running|getting) (?:very |a bit |really )?thin|"
    r"losing (?:my )?(?:patience|cool|temper|rag|head)|can't thank you enough|cannot thank you enough)\b"
)
"""A feeling said in passing (seventh round), not in the anger or delight words ("honestly gutted, we came
close to tipping a whole vat", "really chuffed with how quickly you sorted it", "my patience is wearing very
thin"): for the customer, before steps and problem reports, since the feeling is what the turn adds to
what was already reported."""

# --- preference topics and values --------------------------------------------------------------

NEGATED = _rx(r"\b(?:not|no longer|never|can't|cannot|don't|do not|won't|instead of|rather than)\b[^.,;:!?]*")
"""A negated clause: removed before reading a preference's values ('email, not phone' states email)."""
CHANNEL = _rx(r"\b(e-?mail|phone|calls?|ring|slack|sms|text|whatsapp|chat|teams)\b")
_CHANNEL_NORM = {"e-mail": "email", "call": "phone", "calls": "phone", "ring": "phone", "text": "sms"}
TIMES = _rx(r"\b(mornings?|afternoons?|evenings?|before \d{1,2}(?::\d\d)? ?(?:am|pm)?|after \d{1,2}(?::\d\d)? ?(?:am|pm)?|"
            r"mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|weekends?)\b")
BLACKOUT = _rx(r"\b(?:no (?:\w+ )?calls|(?:don't|do not|never) (?:call|phone|ring))\b[^.;!?]*")
FORMAT = _rx(r"\b(csv|xlsx|xls|pdf|json|tsv|xml)\b")
THING = _rx(r"\b(invoices?|digests?|exports?|reports?|statements?|quotes?|alerts?|notifications?|receipts?|summar(?:y|ies))\b")
EMAIL = _rx(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PHONE_NUMBER = _rx(r"\+?\d[\d ()-]{7,}\d")
CC = re.compile(r"\b(?:[Cc]opy|[Cc][Cc]|[Ii]nclude)\b[^.;]*?\b([A-Z][a-z]+(?: [A-Z][a-z]+)+)")


def _singular(word: str) -> str:
    word = word.lower()
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") else word


def preference_topics(text: str) -> tuple[tuple[str, str], ...]:
    """The (topic, value) pairs a preference states, read with its negated clauses removed.

    Topics: `contact_channel`, `call_times`, `call_blackout` (times not to call), `language`,
    `cc` (who to copy), `format:<thing>` and `recipient:<thing>` (where or how a named thing is
    sent). A topic whose value cannot be read is kept with value '' (never contradicted).
    """
    low = text.lower()
    kept = NEGATED.sub(" ", text)
    kept_low = kept.lower()
    out: dict[str, str] = {}
    m = CHANNEL.search(BLACKOUT.sub(" ", kept_low))
    if m and (PREF_CONTACT.search(low) or PREF_GENERIC.search(low) or "only" in kept_low):
        out["contact_channel"] = _CHANNEL_NORM.get(m.group(1), m.group(1))
    b = BLACKOUT.search(low)
    if b:
        times = sorted({t.rstrip("s") for t in TIMES.findall(b.group(0))})
        out["call_blackout"] = " ".join(times)
    times = sorted({t.rstrip("s") for t in TIMES.findall(BLACKOUT.sub(" ", kept_low))})
    if times and "contact_channel" in out:
        out["call_times"] = " ".join(times)
    lang = PREF_LANGUAGE.search(kept_low)
    if lang:
        out["language"] = lang.group(1)
    cc = CC.search(kept)
    if cc and re.search(r"\b(copy|cc|include)\b", kept_low):
        out["cc"] = cc.group(1).lower()
    thing = THING.search(low)
    fmt = FORMAT.search(kept_low)
    if fmt:
        out[f"format:{_singular(thing.group(1)) if thing else 'file'}"] = fmt.group(1)
    addr = EMAIL.search(kept) or PHONE_NUMBER.search(kept)
    if thing and addr and re.search(r"\bsend\b", low):
        out[f"recipient:{_singular(thing.group(1))}"] = addr.group(0).lower()
    return tuple(out.items())


def _sentence(text: str, m: re.Match[str]) -> str:
    """The sentence a match sits in (from the previous '.', '?' or '!' to the next)."""
    start = max(text.rfind(c, 0, m.start()) for c in ".?!") + 1
    ends = [i for i in (text.find(c, m.end()) for c in ".?!") if i >= 0]
    return text[start:min(ends) if ends else len(text)]


def _first(m: re.Match[str] | None) -> str:
    return m.group(0) if m else ""


@lru_cache(maxsize=65536)
def classify(text: str, role: str, kind: str = "message") -> Classification:
    """The class of one memory item from its own text and who said it (see the module table).

    `role` is `customer`, `agent` or `resolution` (a session's resolution record); `kind` is
    `message` or `action`. Pure and cached: the same item always gets the same class.
    """
    low = text.lower()
    ref = REF.search(text)
    ref_text = f"{ref.group(1).upper() if ref.group(1).lower() == 'rma' else ref.group(1)} {ref.group(2)}" if ref else ""
    if role == RESOLUTION:
        if ref and (PENDING.search(low) or PROMISE.search(low)):
            return Classification("episodic", "episodic: resolution naming a pending reference", ref.group(0), event=ref_text)
        return Classification("incident", "incident: resolution record")
    customer = role == "customer"
    if customer:
        m = ANGER.search(text) or DELIGHT.search(text)
        if m:
            return Classification("sentiment", "sentiment: " + ("anger words" if ANGER.search(text) else "delight words"), m.group(0))
        m = INTRO_ROLE.search(text) or INTRO_NAME.search(text) or INTRO_COMPANY.search(text)
        if m:
            return Classification("profile", "profile: self-introduction", m.group(0))
        m = PREF_CONTACT.search(low) or PREF_LANGUAGE.search(low) or PREF_GENERIC.search(low)
        if m is None and PREF_STANDING.search(low) and STANDING_MARKER.search(low):
            m = PREF_STANDING.search(low)
        if m:
            return Classification("preference", "preference: standing request", m.group(0), topics=preference_topics(text))
        m = PREF_SHAPE.search(text)
        if m:
            return Classification("preference", "preference: a standing request's shape", m.group(0),
                                  topics=preference_topics(text))
    elif APOLOGY.search(text):
        return Classification("sentiment", "sentiment: apology", _first(APOLOGY.search(text)))
    m = STATUS_SHOWN.search(text)
    if m:
        topic = "balance" if m.group(0).lower().endswith("credit") else "order_status"
        return Classification("system_owned", "system-owned: a status a page shows", m.group(0), topics=((topic, ""),))
    m = MONEY_LANDED.search(text)
    if m and not _NOT_YET.search(_sentence(text, m)):
        return Classification("system_owned", "system-owned: money landed", m.group(0), topics=(("balance", ""),))
    m = PENDING.search(low) or PROMISE.search(low)
    if m:
        return Classification("episodic", "episodic: waiting or promise", m.group(0), event=ref_text)
    m = EXPECTING.search(low)
    if m:
        return Classification("episodic", "episodic: a wait's shape", m.group(0), event=ref_text)
    for topic, rx in SYSTEM_OWNED:
        m = rx.search(text)
        if m:
            return Classification("system_owned", f"system-owned: {topic.replace('_', ' ')}", m.group(0), topics=((topic, ""),))
    if customer:
        m = SETUP.search(text) or COMPLIANCE.search(text)
        if m:
            return Classification("profile", "profile: setup or compliance fact", m.group(0))
        m = FEELING.search(low)
        if m:
            return Classification("sentiment", "sentiment: a feeling said in passing", m.group(0))
        m = ATTEMPT.search(low)
        if m:
            return Classification("incident", "incident: the customer's account of a step", m.group(0))
        m = PROBLEM.search(low) or NOT_HAPPENED.search(low)
        if m:
            return Classification("incident", "incident: problem report", m.group(0))
        m = PROFILE_NEWS.search(text)
        if m and not ASKING.search(low):
            return Classification("profile", "profile: news of the setup or the people", m.group(0))
        return Classification("unclassified", "unclassified: no rule matched")
    return Classification("incident", "incident: agent " + ("action" if kind == "action" else "message"))
