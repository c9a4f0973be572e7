"""`casing` is memoized, so what it returns is shared: it must be read-only, and still give each word its form."""

import pytest

from stores.structured.lexicon import casing, device_of, find_steps, normalize


def test_casing_is_shared_read_only_and_gives_words_their_form():
    text = "Reinstalled the SSO plugin on my iPad. It's v2.3-beta."
    cases = casing(text)
    assert casing(text) is cases
    assert cases["sso"] == "SSO" and cases["ipad"] == "iPad" and cases["v2.3-beta"] == "v2.3-beta"
    with pytest.raises(TypeError):
        cases["sso"] = "sso"  # type: ignore[index]
    # its readers take it as it is
    assert device_of(normalize(text), cases) == device_of(normalize(text), dict(cases))
    steps = find_steps(normalize(text), cases, subject_free=True)
    assert [s.text for s in steps] == [s.text for s in find_steps(normalize(text), dict(cases), subject_free=True)]
