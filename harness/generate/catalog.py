"""The words the generator writes with: product areas, issues, paraphrases, people, preferences.

Every issue comes with several ways of reporting it, so a repeat can be told in other words
than the original (a lexical strategy has to work for it), and every area has a second issue
that shares the surface words of the first but is a different problem (a look-alike: the
words match, the fix does not). Slots in braces (`{wh}`, `{idp}` ...) are filled per customer
and stay the same for that customer across sessions.

Texts avoid urgency markers (docs/reference.md lists them) except where a turn is meant to
be urgent; the generator checks that with its own marker list before computing health.

Every list of interchangeable variants is split in two (`half`): the development half (even
positions) that generated development suites use, and lexicons, phrase banks and rules may be
tuned on; and the held-back half (odd positions) that only generated test suites use, so a
leaderboard on a test suite is out of sample for anything tuned on text. A list with one variant
is shared by both halves; a preference topic holds two chains of changes interleaved, one per
half. `tests/harness/test_generate.py` proves no lexicon alternative was written from the
held-back half.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from types import SimpleNamespace


@dataclass(frozen=True)
class Issue:
    """One kind of problem a customer can have, with every way the story can be told."""

    key: str
    """Stable name, e.g. `conn-timeout`."""
    area: str
    """Product area."""
    reports: tuple[str, ...]
    """Ways the customer first describes it (paraphrases: few shared words between them)."""
    details: tuple[str, ...]
    """A customer's follow-up detail."""
    diagnosis: tuple[str, ...]
    """The agent's first answer or question."""
    fail1: tuple[str, ...]
    """A first step the agent tries that does not work (kind: action)."""
    fail2: tuple[str, ...]
    """A second step that does not work (kind: action)."""
    fix: tuple[str, ...]
    """The step that works (kind: action)."""
    summary: tuple[str, ...]
    """Resolution summaries."""
    lookalike: str
    """The issue of the same area that shares its words but not its cause."""
    own_fix: tuple[str, ...] = ()
    """The working step as the customer tells it, having taken it on their side (kind: action)."""
    topic: str = ""
    """How a customer names the problem when asking about it later (a noun phrase)."""


AREAS = ("connectors", "billing", "mobile app", "SSO", "exports", "API")

ISSUES: dict[str, Issue] = {}


def _add(issue: Issue) -> None:
    ISSUES[issue.key] = issue


_add(Issue(
    key="conn-timeout", area="connectors", lookalike="conn-auth",
    reports=(
        "Our {wh} connector keeps failing on the nightly load with 'sync failed: connection timeout after 30s'.",
        "The overnight {wh} import died again; the log says the warehouse never answered within thirty seconds.",
        "Every night the pipeline into {wh} aborts because it cannot reach the data warehouse before the time limit runs out.",
        "Scheduled loads to {wh} error out around 2am, something about the link to the warehouse taking too long to open.",
    ),
    details=(
        "Our warehouse is a small one that auto-suspends after a few minutes of inactivity.",
        "It only happens on the first run of the night; a manual re-run an hour later usually works.",
        "The warehouse sits idle most of the evening before the load kicks off.",
        "Nobody touches the warehouse overnight, so it is usually asleep when the job starts.",
    ),
    diagnosis=(
        "A suspended warehouse can take 60-90 seconds to wake up, longer than the default connect timeout. Let me check the connection settings.",
        "That pattern usually means the warehouse is still resuming when we open the connection. I'll look at your connector settings.",
    ),
    fail1=(
        "Restarted the {wh} connector worker and re-ran the nightly load.",
        "Restarted the sync worker for the {wh} connection and triggered the job again.",
    ),
    fail2=(
        "Rotated the {wh} service credentials on the connection and retried the load.",
        "Re-entered the {wh} service account password and ran the sync once more.",
    ),
    fix=(
        "Raised connect_timeout on the {wh} connection from 30s to 120s and re-ran the nightly load.",
        "Changed the {wh} connection's connect_timeout to 120 seconds so the warehouse has time to resume, then re-ran the load.",
    ),
    summary=(
        "{wh} nightly load timed out because the warehouse takes 60-90s to resume from auto-suspend, longer than the 30s connect timeout. Fixed by raising connect_timeout to 120s.",
        "Connection timeout on the {wh} connector: slow warehouse resume after auto-suspend. connect_timeout raised from 30s to 120s; load succeeded.",
    ),
    own_fix=(
        "Update from our side: we raised connect_timeout on the {wh} connection from 30s to 120s ourselves and the nightly load went through.",
    ),
    topic="the nightly {wh} load timing out",
))
_add(Issue(
    key="conn-auth", area="connectors", lookalike="conn-timeout",
    reports=(
        "Our {wh} connector keeps failing on the nightly load with 'sync failed: authentication error'.",
        "The nightly {wh} connector load failed again, sync failed with a login error on the connection.",
        "The {wh} connector sync failed overnight, the nightly load says the credentials were rejected.",
    ),
    details=(
        "Our IT team rotated a bunch of service account passwords on Monday, if that matters.",
        "The error started right after our admin changed the warehouse role for the integration user.",
        "Our security team enforces a password change on service accounts every ninety days.",
        "We recently moved the integration user into a new role as part of an access review.",
    ),
    diagnosis=(
        "An authentication error means the warehouse refused the integration user. Let me check the connection's credentials and role.",
        "That message comes from the warehouse login, not from the network. I'll look at the integration user.",
    ),
    fail1=(
        "Raised connect_timeout on the {wh} connection to 120s and retried the nightly load.",
        "Restarted the {wh} connector worker and retried the sync.",
    ),
    fail2=(
        "Cleared the connector's cached schema and ran the {wh} sync again.",
        "Re-ran the {wh} load with a smaller batch size.",
    ),
    fix=(
        "Re-authorized the {wh} connector with the integration user's new password and granted the LOADER role back; the nightly load ran clean.",
        "Updated the stored {wh} credentials to the rotated service account password and restored the integration role; sync succeeded.",
    ),
    summary=(
        "{wh} connector authentication failure after the customer rotated the integration user's password. Fixed by updating the stored credentials and restoring the LOADER role.",
        "Sync failed on {wh} because the integration credentials were rotated. Re-authorized the connector; not a timeout problem.",
    ),
    own_fix=(
        "Our admin typed the rotated integration password into the {wh} connector and gave the user its LOADER role back; the nightly load ran clean.",
    ),
    topic="the authentication error on the {wh} connector",
))
_add(Issue(
    key="bill-double", area="billing", lookalike="bill-tax",
    reports=(
        "We were charged twice for this month's invoice on our {card} card.",
        "Our finance team sees two identical subscription payments for {month} on the company card.",
        "There's a duplicate debit for the plan this cycle, the same amount went out two times.",
        "My card statement shows you took the {month} payment twice.",
    ),
    details=(
        "We updated the card on file a day before the renewal, in case that matters.",
        "Both payments are for exactly the same amount and a minute apart.",
        "The first payment went through before we swapped the card, the second one after.",
        "Our bank statement lists both debits with the same reference number.",
    ),
    diagnosis=(
        "I'm sorry about that. A card change right before renewal can retry a payment that had already gone through. Let me look at the payment log.",
        "Let me check the payment attempts on your account for this renewal.",
    ),
    fail1=(
        "Re-synced the invoice with the payment processor to see if the second charge was only an authorization hold.",
        "Checked whether the second payment was a pending authorization that would drop off by itself.",
    ),
    fail2=(
        "Asked the billing system to merge the two invoices for the renewal.",
        "Regenerated the renewal invoice from the subscription.",
    ),
    fix=(
        "Refunded the duplicate {month} payment to the {card} card and voided the second invoice; the refund shows as pending at the bank.",
        "Issued a full refund of the second {month} charge and voided the duplicate invoice.",
    ),
    summary=(
        "Duplicate {month} subscription charge after a card update retried a payment that had succeeded. Second payment refunded and duplicate invoice voided.",
        "Charged twice for the {month} renewal; refunded the duplicate and voided the extra invoice.",
    ),
    own_fix=(
        "Our finance team used the refund button on the billing page for the second {month} payment and voided the duplicate invoice; the bank shows the refund pending.",
    ),
    topic="the double charge on our card",
))
_add(Issue(
    key="bill-tax", area="billing", lookalike="bill-double",
    reports=(
        "This month's invoice on our {card} card charged the wrong amount, VAT was added although we gave you our VAT number.",
        "We were charged more than our plan price on this month's invoice, there's tax on it that shouldn't be there.",
        "The invoice amount charged this month is off: you added sales tax we are exempt from.",
    ),
    details=(
        "We moved our billing address to another country last quarter.",
        "Our accountant needs a corrected invoice before the books close.",
        "Our company address changed when we opened the new office abroad.",
        "Before the move the invoices never had any tax line on them.",
    ),
    diagnosis=(
        "Tax is added when the account has no valid tax ID for its billing country. Let me check the billing profile.",
        "Let me look at the tax settings on your billing profile.",
    ),
    fail1=(
        "Refunded the tax portion of the invoice manually and re-sent it.",
        "Regenerated the invoice from the subscription without changing the billing profile.",
    ),
    fail2=(
        "Asked the customer to re-enter the card so the invoice would be recalculated.",
        "Switched the invoice currency to see if the tax line would drop.",
    ),
    fix=(
        "Added the customer's VAT ID to the billing profile for the new country and re-issued the invoice as a reverse-charge invoice with a credit note for the tax.",
        "Validated and saved the VAT number against the new billing country, then issued a credit note and a corrected reverse-charge invoice.",
    ),
    summary=(
        "Tax charged because the billing profile had no VAT ID for the new billing country. VAT ID added, credit note and corrected invoice issued.",
        "Wrong invoice amount due to missing tax exemption after a billing address change; fixed by adding the VAT number and re-issuing.",
    ),
    own_fix=(
        "We entered our VAT ID for the new country in the billing profile ourselves and downloaded the re-issued reverse-charge invoice; the tax line is gone.",
    ),
    topic="the tax added to our invoice",
))
_add(Issue(
    key="mobile-crash", area="mobile app", lookalike="mobile-push",
    reports=(
        "The mobile app crashes right after login on my {os} phone since the last update.",
        "Since yesterday's update the app on my {os} device closes itself as soon as I sign in.",
        "On {os} the application quits right after I enter my password, every single time.",
        "I can't get into the app on my phone anymore, it just shuts down at the sign-in screen.",
    ),
    details=(
        "I'm on version 5.4.0, updated from the store yesterday.",
        "It happens on my phone and on my colleague's phone too.",
        "The old version ran without trouble until the store pushed the new one.",
        "Reinstalling did not change anything, it closes at the same moment.",
    ),
    diagnosis=(
        "Thanks. We've seen reports of a crash after sign-in in 5.4.0. Let me walk you through a few steps.",
        "Let me check which build you're on and try a couple of things.",
    ),
    fail1=(
        "Asked the customer to force-close the app and restart the phone.",
        "Had the customer restart the app and the device.",
    ),
    fail2=(
        "Asked the customer to clear the app's cache and sign in again.",
        "Had the customer delete and reinstall the app from the store.",
    ),
    fix=(
        "Had the customer install build 5.4.2 from the store, which contains the sign-in crash fix; login works.",
        "Pointed the customer to the 5.4.2 hotfix release in the store; after updating the app signs in normally.",
    ),
    summary=(
        "Mobile app crash after sign-in on 5.4.0 ({os}). Fixed by updating to the 5.4.2 hotfix build.",
        "App closed at sign-in after the 5.4.0 update; resolved with the 5.4.2 hotfix from the store.",
    ),
    own_fix=(
        "I installed build 5.4.2 from the store myself and the app signs in normally now.",
    ),
    topic="the app crashing at sign-in",
))
_add(Issue(
    key="mobile-push", area="mobile app", lookalike="mobile-crash",
    reports=(
        "Since the last update the mobile app on my {os} phone doesn't show any notifications after login.",
        "After updating the app on my {os} phone I no longer get push alerts for new tickets.",
        "The app stopped notifying me on my phone since the update, I only see new messages when I open it.",
    ),
    details=(
        "The notification switch inside the app is still on.",
        "Email notifications still arrive fine, only the phone is silent.",
        "The phone's own settings page shows the app with alerts switched off.",
        "Colleagues who have not updated their phones still get every alert.",
    ),
    diagnosis=(
        "Some phone updates reset the app's notification permission. Let me check a few settings with you.",
        "Let me check the notification setup for your device.",
    ),
    fail1=(
        "Asked the customer to force-close the app and restart the phone.",
        "Had the customer reinstall the app from the store.",
    ),
    fail2=(
        "Asked the customer to sign out and back in to re-register the device.",
        "Cleared the customer's device list on our side so the phone would register again.",
    ),
    fix=(
        "Walked the customer through re-enabling notifications for the app in the phone's system settings, which the OS update had turned off; test alert received.",
        "Had the customer allow notifications for the app again in {os} settings; the test push arrived.",
    ),
    summary=(
        "No push notifications after an {os} update reset the app's notification permission. Re-enabled in system settings.",
        "Missing phone alerts: OS-level notification permission was off after the update; turned back on.",
    ),
    own_fix=(
        "I switched the app's notifications back on in the phone's {os} settings, the update had turned them off; the test alert came through.",
    ),
    topic="the missing push notifications on our phones",
))
_add(Issue(
    key="sso-cert", area="SSO", lookalike="sso-provision",
    reports=(
        "SSO login through {idp} fails for everyone with 'SAML response signature invalid'.",
        "Nobody on our team can sign in with {idp} this morning, the page complains the assertion isn't trusted.",
        "Single sign-on broke overnight: our identity provider login bounces back with a signature error.",
        "Since this morning the {idp} sign-in loop rejects all of us with a certificate complaint.",
    ),
    details=(
        "Our IT team rotated the {idp} signing certificate yesterday evening.",
        "Password login still works for the two admins who have it.",
        "Our identity team replaced the signing key as part of their yearly rotation.",
        "The failures began right after our side published new federation metadata.",
    ),
    diagnosis=(
        "A signature error usually means the identity provider signs with a certificate we don't have yet. Let me check your SAML settings.",
        "Let me compare the certificate we have on file with the one your identity provider uses.",
    ),
    fail1=(
        "Cleared the SSO session cache for the workspace and asked the team to retry.",
        "Asked the customer to clear cookies and sign in with {idp} again.",
    ),
    fail2=(
        "Re-saved the SAML configuration without changes to refresh the metadata.",
        "Toggled SSO enforcement off and on for the workspace.",
    ),
    fix=(
        "Uploaded the new {idp} signing certificate to the workspace's SAML settings; sign-in works for everyone.",
        "Replaced the expired IdP certificate in our SAML configuration with the rotated {idp} one; logins succeed.",
    ),
    summary=(
        "SSO via {idp} failed with an invalid signature after the customer rotated the IdP signing certificate. Fixed by uploading the new certificate.",
        "SAML signature error after a {idp} certificate rotation; new certificate uploaded to the SAML settings.",
    ),
    own_fix=(
        "Our IT admin uploaded the new {idp} signing certificate to the SAML settings and sign-in works for everyone again.",
    ),
    topic="the {idp} signature error at sign-in",
))
_add(Issue(
    key="sso-provision", area="SSO", lookalike="sso-cert",
    reports=(
        "SSO login through {idp} fails for our new hires with an error, the others sign in fine.",
        "Our new people can't use {idp} single sign-on, the login fails with 'user not found'.",
        "{idp} SSO login fails for three people who joined this week.",
    ),
    details=(
        "They show up in {idp} and have the app assigned, as far as I can tell.",
        "Everyone who joined before last month can still log in.",
        "Everyone who started before this month can still sign in normally.",
        "The new people were added to a fresh group in our directory.",
    ),
    diagnosis=(
        "'User not found' means the account was never created on our side. Let me check your provisioning setup.",
        "Let me look at SCIM provisioning for your workspace.",
    ),
    fail1=(
        "Cleared the SSO session cache for the workspace and asked the new hires to retry.",
        "Re-uploaded the {idp} signing certificate to the SAML settings.",
    ),
    fail2=(
        "Asked the new hires to clear cookies and sign in again.",
        "Re-saved the SAML configuration to refresh the metadata.",
    ),
    fix=(
        "Added the new hires' {idp} group to the SCIM provisioning assignment; their accounts were created and they can sign in.",
        "Assigned the onboarding group to the provisioning app in {idp}, which created the missing accounts; SSO works for them.",
    ),
    summary=(
        "New hires could not sign in through {idp}: their group was not assigned to SCIM provisioning, so no accounts existed. Group assigned.",
        "SSO 'user not found' for new employees; fixed by adding their {idp} group to provisioning. Not a certificate issue.",
    ),
    own_fix=(
        "Our IT admin added the new hires' group to the SCIM provisioning assignment in {idp}; their accounts got created and they can sign in.",
    ),
    topic="new hires unable to sign in through {idp}",
))
_add(Issue(
    key="export-truncated", area="exports", lookalike="export-encoding",
    reports=(
        "The CSV export of our tickets stops at exactly 10,000 rows, we have far more.",
        "When I download all conversations as a spreadsheet, I only get the first ten thousand lines.",
        "Our data dump is cut off: the file always ends after 10k records.",
        "The report download is incomplete, half of last year is missing from the file.",
    ),
    details=(
        "We need the full history for our quarterly audit.",
        "I tried it on two browsers, same cut-off.",
        "We have roughly forty thousand tickets for the period we need.",
        "Smaller date ranges come out complete, only the full year gets cut.",
    ),
    diagnosis=(
        "Direct downloads are capped; large exports need to run as a background job. Let me check your export settings.",
        "Let me see which export method you're using.",
    ),
    fail1=(
        "Asked the customer to retry the CSV export from another browser.",
        "Had the customer split the date range in two and export again.",
    ),
    fail2=(
        "Asked the customer to switch the export format to XLSX.",
        "Cleared the cached export file on our side and re-ran the download.",
    ),
    fix=(
        "Enabled background exports for the workspace and ran the full CSV export as a job; the emailed file has all rows.",
        "Switched the customer to the asynchronous full export, which has no row cap; complete file delivered by email.",
    ),
    summary=(
        "CSV export capped at 10,000 rows because direct downloads are limited. Enabled background exports; full file delivered.",
        "Truncated export at 10k rows; resolved by running the export as an asynchronous job.",
    ),
    own_fix=(
        "I turned on background exports in the workspace settings and ran the full CSV export as a job; the emailed file has every row.",
    ),
    topic="the CSV export stopping at 10,000 rows",
))
_add(Issue(
    key="export-encoding", area="exports", lookalike="export-truncated",
    reports=(
        "The CSV export of our tickets looks broken, names with accents come out as strange symbols.",
        "Our tickets CSV export is garbled: characters like é and ü show as 'Ã©'.",
        "The export file of our tickets has broken characters in every name with an accent.",
    ),
    details=(
        "We open the file in Excel on Windows.",
        "It looks fine when I open it in a text editor.",
        "The file looks right in a text editor but not when our team opens it in Excel.",
        "Plain English names come out fine, only the accented letters are off.",
    ),
    diagnosis=(
        "That looks like an encoding mismatch between the file and the program opening it. Let me check the export options.",
        "Let me check which encoding your export uses.",
    ),
    fail1=(
        "Had the customer split the date range and export again.",
        "Enabled background exports and re-ran the CSV export as a job.",
    ),
    fail2=(
        "Asked the customer to retry the export from another browser.",
        "Switched the export format to XLSX for a test.",
    ),
    fix=(
        "Set the export encoding to 'UTF-8 with BOM' so Excel reads the accents; re-exported file shows names correctly.",
        "Changed the CSV export to UTF-8 with a byte order mark; Excel now displays é and ü properly.",
    ),
    summary=(
        "Accented characters garbled in CSV exports opened in Excel: encoding mismatch. Export set to UTF-8 with BOM.",
        "Broken characters in the tickets export; fixed by exporting UTF-8 with BOM. Not a row-limit problem.",
    ),
    own_fix=(
        "I set the export encoding to UTF-8 with BOM in the export settings; the accents show correctly in Excel now.",
    ),
    topic="the garbled accents in the CSV export",
))
_add(Issue(
    key="webhook-signature", area="API", lookalike="api-rate",
    reports=(
        "Our webhook endpoint rejects every event from you with 401, the signature check fails.",
        "Since Tuesday all your callbacks to our server are refused because the HMAC doesn't match.",
        "The events you push to us no longer pass verification on our side, nothing gets processed.",
        "Our receiver drops your notifications: the signing hash never matches what we compute.",
    ),
    details=(
        "We regenerated the webhook secret in your dashboard last week.",
        "Nothing changed in our verification code.",
        "We store the secret in our vault and the receiver reads it at start-up.",
        "Our receiver has not been redeployed since before the change.",
    ),
    diagnosis=(
        "When the signature stops matching, it's almost always a secret mismatch. Let me check the webhook configuration.",
        "Let me look at the webhook settings and the delivery log.",
    ),
    fail1=(
        "Re-sent the failed webhook deliveries from the delivery log.",
        "Asked the customer to retry the API calls with exponential backoff.",
    ),
    fail2=(
        "Disabled and re-enabled the webhook endpoint.",
        "Asked the customer to whitelist our new IP range.",
    ),
    fix=(
        "Had the customer update their receiver with the regenerated webhook signing secret; events verify and process again.",
        "Walked the customer through putting the new signing secret into their verification code; deliveries succeed.",
    ),
    summary=(
        "Webhook signature mismatch (401) after the customer regenerated the signing secret but kept the old one on their receiver. Receiver updated.",
        "Webhooks refused because the receiver still used the old secret; new signing secret configured.",
    ),
    own_fix=(
        "We put the regenerated signing secret into our receiver's verification code and the events verify and process again.",
    ),
    topic="your webhooks failing our signature check",
))
_add(Issue(
    key="api-rate", area="API", lookalike="webhook-signature",
    reports=(
        "Our API calls to your endpoint keep failing, every event we send gets rejected with 429.",
        "The API rejects every call from our server since Tuesday, we get 429 on the events endpoint.",
        "Our integration's API requests fail with 429 errors, events are not getting through.",
    ),
    details=(
        "We increased our polling to every 10 seconds last week.",
        "We run about 40 workers calling the API in parallel.",
        "Our traffic roughly tripled when we onboarded a big client last week.",
        "Each worker sends its own request for every single event.",
    ),
    diagnosis=(
        "429 means the rate limit is being hit. Let me look at your request volume.",
        "Let me check the rate limit counters for your API key.",
    ),
    fail1=(
        "Had the customer regenerate the webhook signing secret.",
        "Re-sent the failed deliveries from the log.",
    ),
    fail2=(
        "Disabled and re-enabled the customer's API key.",
        "Asked the customer to whitelist our new IP range.",
    ),
    fix=(
        "Moved the customer to the batch events endpoint and set their client to back off on Retry-After; no more 429s.",
        "Switched their integration from per-event polling to the bulk endpoint with Retry-After backoff; calls succeed.",
    ),
    summary=(
        "429 rate limiting after the customer raised polling to every 10s across 40 workers. Moved to the batch endpoint with backoff.",
        "API calls rejected with 429: request volume over the rate limit. Fixed with bulk endpoint and Retry-After handling.",
    ),
    own_fix=(
        "We moved our client to your batch events endpoint and made it back off on Retry-After; no more 429s.",
    ),
    topic="the 429 errors on our API calls",
))

OUTAGES: dict[str, dict[str, tuple[str, ...]]] = {
    "connectors": {
        "report": ("URGENT: all our connectors stopped syncing in the last half hour, {wh} says connection timeout and dashboards are empty. This is a production outage for us.",
                   "Every sync into {wh} is failing right now and our dashboards went blank, production down on our side, please help immediately."),
        "ack": ("We have an active incident, {inc}: our ingestion workers cannot reach customer warehouses since {hhmm} UTC. No change is needed on your side; the connectors retry by themselves.",),
        "follow": ("Should we raise the timeout again or just wait for your incident to clear?",
                   "Is there anything we should change on our {wh} connection while this is going on?"),
        "summary": ("Platform incident {inc}: ingestion workers could not reach warehouses. No customer-side change; connectors recovered automatically.",),
    },
    "billing": {
        "report": ("Our card was declined at checkout and now the whole workspace is locked. Urgent, the team is blocked.",
                   "Critical: we can't pay and the account is suspended, nobody can log in to answer customers."),
        "ack": ("We have an active incident, {inc}: our payment processor is declining valid cards since {hhmm} UTC. Your workspace will not be suspended for it; we've lifted the lock.",),
        "follow": ("Do we need to try the card again or wait for you?",
                   "Will we be charged twice once the processor is back?"),
        "summary": ("Payment processor incident {inc} declined valid cards; workspace locks were lifted and no retry was needed.",),
    },
    "mobile app": {
        "report": ("Urgent: the mobile app shows a blank screen for our whole team right now, we can't answer chats from our phones.",
                   "The app is down for all our agents at once, critical for us since the weekend shift only has phones."),
        "ack": ("We have an active incident, {inc}: the mobile API is returning errors since {hhmm} UTC. No reinstall or update is needed; it will recover by itself.",),
        "follow": ("Should we reinstall the app or update it?",
                   "Do our agents need to do anything on their phones?"),
        "summary": ("Mobile API incident {inc}: app showed blank screens for all customers. Recovered without any action on devices.",),
    },
    "SSO": {
        "report": ("URGENT: nobody can sign in through {idp} right now, the login page just spins. Our whole support team is locked out.",
                   "Critical outage for us: SSO is down for everyone, the {idp} redirect never comes back."),
        "ack": ("We have an active incident, {inc}: our SAML service is failing since {hhmm} UTC. Your SSO configuration is fine; please don't change certificates.",),
        "follow": ("Should we upload our certificate again?",
                   "Do we need to change anything in {idp} while you fix it?"),
        "summary": ("SAML service incident {inc}: SSO logins failed for all workspaces. No change to customer certificates was needed.",),
    },
    "exports": {
        "report": ("Urgent: every export we start fails right now and we have a compliance deadline today.",
                   "Exports are completely broken at the moment, critical because our auditor is waiting."),
        "ack": ("We have an active incident, {inc}: the export workers are stalled since {hhmm} UTC. Queued exports will finish once it's fixed; no settings change is needed.",),
        "follow": ("Should we switch to a different export format in the meantime?",
                   "Will the exports we already queued still arrive?"),
        "summary": ("Export worker incident {inc} stalled all exports; queued exports completed after recovery, no customer action.",),
    },
    "API": {
        "report": ("URGENT: your API is returning 500 errors on every call, our production integration is down.",
                   "Critical: all API requests fail with server errors right now, our order sync is blocked."),
        "ack": ("We have an active incident, {inc}: the API gateway is failing since {hhmm} UTC. No change to keys or secrets is needed; please retry once it recovers.",),
        "follow": ("Should we rotate our API key or the webhook secret?",
                   "Do we need to replay the events we missed?"),
        "summary": ("API gateway incident {inc}: server errors for all API calls. No key or secret change needed; deliveries replayed automatically.",),
    },
}

HOWTO: tuple[tuple[str, str, str], ...] = (
    ("How do I add a teammate to our workspace?", "Go to Settings > Team, click Invite and enter their email; they get a link valid for 7 days.", "Explained how to invite a teammate from Settings > Team."),
    ("Can we change the name shown on outgoing emails?", "Yes: Settings > Channels > Email lets you set the sender name per mailbox.", "Showed where to change the email sender name."),
    ("Is there a way to tag conversations automatically?", "You can create a rule under Automation > Rules that adds a tag when the subject contains a keyword.", "Explained automatic tagging rules."),
    ("Where can I see last month's response times?", "The Reports tab has a Response time chart; set the date range to last month.", "Pointed the customer to the response time report."),
    ("How do we set business hours for our team?", "Under Settings > Schedules you can define business hours and holidays per team.", "Explained business hours setup."),
    ("Can I merge two duplicate contacts?", "Open one of them, choose More > Merge and pick the other contact; notes and tickets move over.", "Explained how to merge duplicate contacts."),
    ("How do I create a saved reply?", "In any conversation, open the saved replies menu and click New; you can use placeholders like the customer's name.", "Showed how to create saved replies."),
    ("Can we restrict who can delete conversations?", "Yes, create a custom role without the delete permission under Settings > Roles.", "Explained custom roles for delete permission."),
    ("Where do I download our invoices?", "Billing > Invoices lists every invoice with a PDF download link.", "Pointed the customer to the invoice list."),
    ("How can I change my password?", "Click your avatar, then Profile > Security > Change password.", "Explained how to change the password."),
)

GREETINGS: tuple[str, ...] = (
    "Hi, we just started using your platform and I have a couple of questions.",
    "Hello! We're new here and trying to get set up.",
    "Hi there, first time reaching out, hope this is the right place.",
)
ACKS: tuple[str, ...] = (
    "Thanks, that's helpful.", "Great, thank you!", "Perfect, that answers it.", "Got it, thanks a lot.",
)
STILL_FAILING: tuple[str, ...] = (
    "Tried that, same error as before.", "No change, it failed again the same way.",
    "Unfortunately that didn't help, same problem.", "We did that and it still fails.",
)
WORKS_NOW: tuple[str, ...] = (
    "That worked, everything is back to normal. Thank you!", "Confirmed, it works now. Thanks for the help.",
    "Yes, that fixed it. Much appreciated.", "All good now, thank you.",
)
ASK_LATER: tuple[str, ...] = (
    "A question for next time: if {topic} comes back, what should we try first?",
    "Should we ever run into {topic} again, which step do we start with?",
)
"""A later session's question about an earlier problem's fix (`{topic}`: `Issue.topic`)."""
REPEAT_OPENERS: tuple[str, ...] = (
    "Hi again, I think we're seeing something we had before.", "Hello, we have a problem that looks familiar.",
    "Hi, sorry to bother you again.", "Hey, new week, new trouble.",
)
REPEAT_ACKS: tuple[str, ...] = (
    "Thanks for reaching out again. Let me pull up your account history.",
    "Sorry to hear that. Let me check what we did last time.",
)

FIRST_NAMES = ("Dana", "Lee", "Priya", "Tomás", "Aiko", "Marcus", "Fatima", "Jonas", "Chloé", "Kwame", "Ingrid", "Rafael",
               "Mei", "Oskar", "Amara", "Luca", "Sofia", "Hamid", "Elena", "Noah", "Yuki", "Zanele", "Pavel", "Grace")
LAST_NAMES = ("Ruiz", "Park", "Raman", "Alves", "Tanaka", "Reed", "Haddad", "Berg", "Martin", "Mensah", "Olsen", "Costa",
              "Chen", "Novak", "Okafor", "Bianchi", "Lindqvist", "Karimi", "Petrova", "Walsh", "Sato", "Dlamini", "Ivanov", "Obi")
COMPANIES = ("Globex", "Initech", "Umbrella Logistics", "Hooli Travel", "Stark Retail", "Wayne Foods", "Acme Health",
             "Vandelay Imports", "Soylent Labs", "Tyrell Energy", "Cyberdyne Media", "Wonka Goods", "Pied Piper", "Massive Dynamic")
JOB_TITLES = ("head of support", "data lead", "IT admin", "finance manager", "operations lead", "support team lead", "CTO")
WAREHOUSES = ("Snowflake", "BigQuery", "Redshift", "Databricks")
IDPS = ("Okta", "Azure AD", "Google Workspace", "OneLogin")
PHONES = ("iOS", "Android")
CARDS = ("Visa", "Mastercard", "Amex")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December")

IDENTITY: tuple[str, ...] = (
    "I'm {name}, {title} at {company}. Our workspace ID is {account}.",
    "This is {name} from {company}, I'm the {title}; workspace {account}.",
    "Hi, {name} here, {title} for {company} (workspace {account}).",
)


@dataclass(frozen=True)
class Fact:
    """A profile fact a customer states once and an agent in a later session of its area needs.

    A customer states it in the middle of some session (or, for `account`, sometimes as the very
    first thing they say), may restate it later with more detail (the restatement is then the
    fact to surface) or correct it (the correction is the fact; the first statement is stale).
    """

    topic: str
    """Stable name, e.g. `warehouse`."""
    areas: tuple[str, ...]
    """The product areas whose sessions need it."""
    says: tuple[str, ...]
    """First statements."""
    restates: tuple[str, ...]
    """Later restatements that add detail."""
    corrects: tuple[str, ...]
    """Later corrections that replace the first statement."""


FACTS: dict[str, Fact] = {f.topic: f for f in (
    Fact("account", ("billing", "API"),
         says=IDENTITY,
         restates=("For your records: we added the analytics add-on this quarter, still on workspace {account} under {company}.",
                   "Same workspace {account} as before, but {company} now has a second team on it, the one I lead as {title}."),
         corrects=("Correction to what I told you before: our live workspace ID is {account2}; {account} was our trial one.",
                   "Please note our workspace changed after the migration: it is {account2} now, not {account}.")),
    Fact("warehouse", ("connectors",),
         says=("For context, we load into {wh} with a small warehouse that auto-suspends after five idle minutes.",
               "Some background: our {wh} warehouse is the smallest size and suspends itself when nobody queries it."),
         restates=("We've since added a second {wh} warehouse for the finance loads, with the same auto-suspend settings.",
                   "Our {wh} setup grew: two warehouses now, both still auto-suspending after five minutes."),
         corrects=("Small correction to our setup: we moved all our loads from {wh} to {wh2} last month.",
                   "Update on our stack: the warehouse is {wh2} now, we migrated away from {wh}.")),
    Fact("idp", ("SSO",),
         says=("We sign in through {idp}, and only our IT admin Sam can change the SAML app.",
               "Our logins go through {idp}; changes to the SAML app have to go through Sam in IT."),
         restates=("Still on {idp} for sign-in, and Sam in IT now also owns the SCIM provisioning app.",),
         corrects=("We switched our identity provider from {idp} to {idp2} over the summer.",
                   "Heads-up: our SSO now runs on {idp2}; {idp} was retired last month.")),
    Fact("devices", ("mobile app",),
         says=("Our field team runs the app on about eighty company {os} phones managed through our MDM.",
               "The app is used by our drivers on managed {os} phones, around eighty of them."),
         restates=("We're up to a hundred and twenty managed {os} phones for the field team now, same MDM.",),
         corrects=("We replaced the field phones this spring: the whole team is on {os2} now.",)),
    Fact("region", ("exports", "API"),
         says=("Our workspace is hosted in your EU region, and exports have to land in our own S3 bucket.",
               "We're on the EU data region, and every export goes to our own S3 bucket, never a shared one."),
         restates=("Still EU-hosted; we now also copy every export from our S3 bucket into our own archive.",),
         corrects=("We moved the workspace to your US region in the spring, the EU region no longer applies.",)),
)}
"""Every profile fact, by topic; `account` is the customer's introduction."""

PREFERENCES: dict[str, tuple[str, ...]] = {
    # each topic's changes in order, the two halves interleaved (even positions: the development
    # chain; odd: the held-back chain, written apart from every lexicon), so each half has a whole chain
    "contact": (
        "Please reach me by email rather than phone, I'm in meetings most of the day.",
        "Could you keep everything to email? I'm on the shop floor most days and can't pick up calls.",
        "From now on please call me on my mobile instead of emailing, I rarely check my inbox these days.",
        "Change of plan: I'm travelling for a few weeks, so text me on my mobile rather than writing.",
        "Actually, could you message me on Slack Connect going forward? Neither email nor phone works well now.",
        "We've moved to Microsoft Teams, so message me there from now; email and texts are getting lost.",
    ),
    "hours": (
        "If you need to call back, mornings before 11am CET work best for me.",
        "If someone needs to ring me back, early afternoon is ideal, between 1 and 3pm CET.",
        "Callbacks are better in the afternoon now, after 3pm CET; my mornings are booked.",
        "My schedule changed: I'm only reachable before 10am CET now for calls.",
    ),
    "format": (
        "When you send reports, please send them as CSV, not PDF.",
        "Our finance team would like the reports as PDF attachments.",
        "Please switch to Excel files for anything you send us from now on, not CSV.",
        "Our analysts load everything into scripts now, so JSON exports suit us better than PDF from here on.",
    ),
    "language": (
        "I'd prefer replies in English, my colleague reads the German ones.",
        "Replies in French would help, most of our team reads French more easily than English.",
        "Please answer in German from now on, the new team reads German.",
        "We hired a new lead in Madrid, so Spanish replies from now on, please.",
    ),
}


REPEAT_GENERIC: tuple[str, ...] = (
    "It started again this morning, same as the last time we talked.",
    "We're stuck on this again, could you look at what's going on?",
)
"""Follow-ups of a repeat that name no issue word (used when no detail of the issue keeps the
repeated session off the top of keyword overlap)."""

SPLITS = ("dev", "test")
"""The halves of the catalog: `dev` (development: tune on it) and `test` (held back)."""

def _half(seq: tuple, split: str) -> tuple:
    """Even positions for `dev`, odd for `test`; a list of one variant is shared by both."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r} (known: {', '.join(SPLITS)})")
    return seq if len(seq) < 2 else tuple(seq[split == "test"::2])


def half(split: str) -> SimpleNamespace:
    """The catalog's texts as the generator writes one half: `ISSUES`, `OUTAGES`, `FACTS`,
    `HOWTO`, `GREETINGS`, `ACKS`, `STILL_FAILING`, `WORKS_NOW`, `REPEAT_ACKS`, `ASK_LATER`,
    `REPEAT_GENERIC` and `PREFERENCES` with each variant list halved (a preference topic's half is its
    chain of changes in that half)."""
    texts = [f.name for f in fields(Issue) if f.type in ("tuple[str, ...]", tuple[str, ...])]
    return SimpleNamespace(
        ISSUES={k: replace(i, **{f: _half(getattr(i, f), split) for f in texts}) for k, i in ISSUES.items()},
        OUTAGES={a: {k: _half(v, split) for k, v in o.items()} for a, o in OUTAGES.items()},
        FACTS={t: replace(f, says=_half(f.says, split), restates=_half(f.restates, split), corrects=_half(f.corrects, split))
               for t, f in FACTS.items()},
        HOWTO=_half(HOWTO, split), GREETINGS=_half(GREETINGS, split), ACKS=_half(ACKS, split),
        STILL_FAILING=_half(STILL_FAILING, split), WORKS_NOW=_half(WORKS_NOW, split), REPEAT_ACKS=_half(REPEAT_ACKS, split),
        ASK_LATER=_half(ASK_LATER, split), REPEAT_GENERIC=_half(REPEAT_GENERIC, split),
        PREFERENCES={t: _half(v, split) for t, v in PREFERENCES.items()},
    )


def held_back_texts() -> list[str]:
    """Every template only the held-back half uses (slots unfilled)."""
    dev = half("dev")
    test = half("test")
    out: list[str] = []

    def walk(a, b) -> None:
        if isinstance(a, tuple):
            out.extend(t for t in b if t not in a and isinstance(t, str))
            for x, y in zip(a, b):
                if isinstance(x, tuple):
                    walk(x, y)
            if a and isinstance(a[0], tuple):  # HOWTO: tuples of (question, answer, summary)
                out.extend(t for y in b if y not in a for t in y)
        elif isinstance(a, dict):
            for k in a:
                walk(a[k], b[k])
        elif isinstance(a, (Issue, Fact)):
            for f in fields(a):
                walk(getattr(a, f.name), getattr(b, f.name))

    for name in vars(dev):
        walk(getattr(dev, name), getattr(test, name))
    return list(dict.fromkeys(t for t in out if isinstance(t, str)))
