"""One registry of secrets, one scrubber: every spelling of a secret is caught."""

from __future__ import annotations

import pytest

from stores import redaction
from stores.redaction import SECRET, redact_url, register, register_environment, scrub, scrub_data, spellings


@pytest.mark.parametrize("text,shown", [
    ("http://u:PW@127.0.0.1:1/", "http://<secret>@127.0.0.1:1/"),
    ("see redis://:hunter22@127.0.0.1:6390/0 now", "see redis://<secret>@127.0.0.1:6390/0 now"),
    ("https://a%40b:p%3Ass@host/x", "https://<secret>@host/x"),
    ("http://127.0.0.1:8000/v1?api_key=abcd1234&x=1", "http://127.0.0.1:8000/v1?api_key=<secret>&x=1"),
    ("http://h/p?x=1&token=t0k3n", "http://h/p?x=1&token=<secret>"),
    ("mailto:someone@example.com and https://example.com/u/a@b", "mailto:someone@example.com and https://example.com/u/a@b"),
])
def test_url_credentials_are_redacted_without_registration(text, shown):
    assert redact_url(text) == shown


def test_every_spelling_of_a_registered_secret_is_scrubbed():
    register("http://svc:Secr3t-Mark%2F1@127.0.0.1:9/")
    register("KEY-MARKER-77\r")
    for text in ("http://svc:Secr3t-Mark%2F1@127.0.0.1:9", "password Secr3t-Mark/1 in prose", "Secr3t-Mark%2F1",
                 "Bearer KEY-MARKER-77", "'KEY-MARKER-77\\r'", "KEY-MARKER-77\r"):
        out = scrub(text)
        assert "Secr3t-Mark" not in out and "KEY-MARKER-77" not in out and SECRET in out, (text, out)


def test_short_values_are_left_to_the_url_rule():
    assert "ab" not in spellings("ab") and scrub("http://x:ab@h/") == "http://<secret>@h/"


def test_the_environment_registers_declared_and_secret_looking_variables_and_url_credentials():
    register_environment({"HINDSIGHT_API_KEY": " hk-ENV-MARK-1 ", "MY_SERVICE_TOKEN": "tok-ENV-MARK-2",
                          "DATABASE_URL": "postgres://db:pg-ENV-MARK-3@127.0.0.1/x", "PLAIN": "nothing-here",
                          "PWD": "/home/someone"})
    text = scrub("hk-ENV-MARK-1 tok-ENV-MARK-2 pg-ENV-MARK-3 nothing-here /home/someone")
    assert text == f"{SECRET} {SECRET} {SECRET} nothing-here /home/someone"


def test_a_declared_secret_field_registers_its_variable():
    from stores.params import secret

    secret(env="SOME_DECLARED_THING")
    assert redaction.secret_name("SOME_DECLARED_THING")


def test_scrub_data_reaches_keys_and_nested_values():
    register("nested-MARK-9")
    assert scrub_data({"a nested-MARK-9": ["x", ("nested-MARK-9",)], "n": 1}) == {f"a {SECRET}": ["x", (SECRET,)], "n": 1}


def test_the_log_filter_scrubs_messages_and_tracebacks():
    import logging

    from stores.redaction import ScrubFilter

    register("LogSecret-MARK-77ab")
    record = None
    try:
        raise RuntimeError("call to http://u:pw@h/ with LogSecret-MARK-77ab failed")
    except RuntimeError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed: %s", ("LogSecret-MARK-77ab",), sys.exc_info())
    assert ScrubFilter().filter(record)
    text = logging.Formatter().format(record)
    assert "LogSecret-MARK-77ab" not in text and "pw@" not in text and text.count(SECRET) >= 3
