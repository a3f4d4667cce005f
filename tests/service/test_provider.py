"""Unit tests of the provider API's service layer with a fake engine: how each query maps to a
search, the options, the rate limiter (an injected clock), the threshold guard and the error
mapping (docs/faces.md#provider-api)."""

from __future__ import annotations

from typing import Any

import pytest

from sleuth.errors import InvalidPath, InvalidQuery, NotFound, SleuthError, Unsupported
from sleuth.service.provider import ProviderService, answer, run_verb, semantic_missing
from sleuth.service.provider_query import OptsRequest, parse_opts, parse_query
from sleuth.service.requests import ProviderRequest
from sleuth.service.token_bucket import Rate, RateLimiter, TokenBucket, rate_of

MODES = ("exact", "regex", "semantic")


class _Page:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def to_json(self) -> dict[str, Any]:
        return self.data


def _found(n: int, score: float | None = None, text: str = "hit") -> dict[str, Any]:
    return {
        "n": n,
        "path": f"f{n}.py",
        "line": n,
        "column": 1,
        "end_line": n,
        "end_column": 4,
        "start_byte": 0,
        "end_byte": 3,
        "text": text,
        "context": {"before": ["b"], "after": []},
        "ref": {"line": f"SEARCH#ab:{n}:line", "match": f"SEARCH#ab:{n}:match"},
        "captures": None,
        "score": score,
    }


class FakeEngine:
    """Records each search call and answers a fixed page (or raises ``error``)."""

    def __init__(self, matches: list[dict[str, Any]], cursor: str | None = None) -> None:
        self.matches = matches
        self.cursor = cursor
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.error: BaseException | None = None

    def search(self, query: str, **kwargs: Any) -> _Page:
        self.calls.append((query, kwargs))
        if self.error is not None:
            raise self.error
        return _Page({"matches": self.matches, "next_cursor": self.cursor})


def _service(engine: FakeEngine, **kwargs: Any) -> ProviderService:
    kwargs.setdefault("semantic", lambda: None)
    return ProviderService(engine, **kwargs)


# -- query mapping ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "search_query", "case_sensitive"),
    [
        ("get_user", '"get_user"', True),
        ("a.b(", '"a.b("', True),
        ('say "hi"', r'regex:say "hi"', True),
        ('x.("y")', r'regex:x\.\("y"\)', True),
        ({"regex": "a+"}, "regex:a+", True),
        ({"regex": "a+", "flags": "i"}, "regex:a+", False),
        ({"regex": "a.b", "flags": "s"}, "regex:(?s)a.b", True),
        ({"regex": "^a", "flags": "mu"}, "regex:^a", True),
        ({"regex": "a", "flags": "usmi"}, "regex:(?s)a", False),
        ({"semantic": "where users load"}, "semantic:where users load", True),
    ],
)
def test_each_query_maps_to_one_search(
    query: object, search_query: str, case_sensitive: bool
) -> None:
    parsed = parse_query(query, MODES)
    assert parsed.search_query == search_query
    assert parsed.case_sensitive is case_sensitive


def test_a_query_object_names_one_known_mode() -> None:
    with pytest.raises(Unsupported) as info:
        parse_query({"fuzzy": "x"}, MODES)
    assert info.value.details["mode"] == "fuzzy"
    with pytest.raises(Unsupported, match="pip install"):
        parse_query({"semantic": "x"}, ("exact", "regex"), "needs: pip install it")
    with pytest.raises(InvalidQuery):
        parse_query({"regex": "x", "semantic": "y"}, MODES)
    with pytest.raises(InvalidQuery) as unknown:
        parse_query({"regex": "x", "flagz": "i"}, MODES)
    assert unknown.value.details == {"unknown": ["flagz"], "valid": ["regex", "flags"]}
    with pytest.raises(Unsupported) as flags:
        parse_query({"regex": "x", "flags": "gix"}, MODES)
    assert flags.value.details["unknown"] == ["g", "x"]


@pytest.mark.parametrize("threshold", [-0.1, 1.5, float("nan"), True, "0.5"])
def test_a_threshold_is_a_number_from_0_to_1(threshold: object) -> None:
    with pytest.raises(InvalidQuery):
        parse_query({"semantic": "x", "threshold": threshold}, MODES)
    assert parse_query({"semantic": "x", "threshold": 1}, MODES).threshold == 1.0


def test_opts_are_normalised() -> None:
    assert parse_opts(None) == OptsRequest("/", 100, None)
    assert parse_opts({"path": "/src/", "limit": 900}) == OptsRequest("src/", 500, None)
    assert parse_opts({"path": "//"}).path == "/"
    # a path that looks like a reference stays a path (a subtree, never a reference scope)
    assert parse_opts({"path": "/SEARCH#0000abcd:1:match"}).path == "./SEARCH#0000abcd:1:match"
    with pytest.raises(InvalidPath):
        parse_opts({"path": ["src"]})
    with pytest.raises(InvalidQuery, match="did you mean 'limit'"):
        parse_opts({"limt": 3})
    with pytest.raises(InvalidQuery):
        parse_opts({"cursor": ""})


# -- the search -----------------------------------------------------------------------------


def test_a_search_runs_one_page_without_a_text_budget() -> None:
    engine = FakeEngine([_found(1, text="x" * 400)], cursor="CUR")
    page = _service(engine).search("hit", {"path": "/src", "limit": 7, "cursor": "C0"})
    assert engine.calls == [
        (
            '"hit"',
            {
                "path": "src",
                "limit": 7,
                "cursor": "C0",
                "context": 1,
                "case_sensitive": True,
                "max_bytes": None,
            },
        )
    ]
    (match,) = page["matches"]
    assert len(match["text"]) == 256
    assert match["score"] is None
    assert match["ref"] == {"line": "SEARCH#ab:1:line", "match": "SEARCH#ab:1:match"}
    assert set(match) == {
        "path",
        "line",
        "end_line",
        "column",
        "end_column",
        "text",
        "context",
        "ref",
        "score",
    }
    assert page["next_cursor"] == "CUR"


def test_next_cursor_is_left_out_when_no_more_exist() -> None:
    page = _service(FakeEngine([_found(1)], cursor=None)).search("hit")
    assert "next_cursor" not in page


def test_semantic_passes_its_threshold_and_drops_lower_scores() -> None:
    engine = FakeEngine([_found(1, 0.9), _found(2, 0.6), _found(3, 0.2)], cursor="MORE")
    page = _service(engine).search({"semantic": "x", "threshold": 0.5})
    assert engine.calls[0][1]["threshold"] == 0.5
    assert [m["score"] for m in page["matches"]] == [0.9, 0.6]
    assert "next_cursor" not in page  # scores descend: a dropped match ends the result
    kept = _service(FakeEngine([_found(1, 0.9)], cursor="MORE")).search({"semantic": "x"})
    assert kept["next_cursor"] == "MORE"


def test_the_manifest_follows_semantic_availability() -> None:
    engine = FakeEngine([])
    with_it = _service(engine, semantic=lambda: None).manifest()["search"]
    without = _service(engine, semantic=lambda: "pip install x").manifest()["search"]
    assert with_it["modes"] == ["exact", "regex", "semantic"]
    assert without["modes"] == ["exact", "regex"]
    assert set(without["x-ordering"]) == {"exact", "regex"}
    assert with_it["x-ordering"]["semantic"][0] == "-score"
    assert isinstance(semantic_missing(), str | None)


def test_answer_maps_every_failure_to_the_error_object() -> None:
    engine = FakeEngine([])
    service = _service(engine)
    engine.error = NotFound("path not found: x", details={"path": "x"})
    assert answer(lambda: service.search("hit"))["error"]["code"] == "not_found"
    engine.error = KeyError("boom")
    internal = answer(lambda: service.search("hit"))["error"]
    assert internal["code"] == "internal"
    assert internal["details"] == {"exception": "KeyError"}
    assert answer(lambda: service.search(3.5))["error"]["code"] == "invalid_query"


def test_the_cli_verb_raises_for_its_face_to_map() -> None:
    engine = FakeEngine([_found(1)])
    request = ProviderRequest.build("search", query_json='{"regex": "h.t"}', opts_json=None)
    assert run_verb(engine, request)["matches"][0]["path"] == "f1.py"
    assert engine.calls[0][0] == "regex:h.t"
    manifest = run_verb(engine, ProviderRequest.build("manifest"))
    assert "search" in manifest
    with pytest.raises(SleuthError) as info:
        run_verb(engine, ProviderRequest.build("search", query_json='{"regex": 1}'))
    assert info.value.code == "invalid_query"
    with pytest.raises(InvalidQuery):
        run_verb(engine, ProviderRequest.build("search", query_json="[1,"))


@pytest.mark.parametrize(
    "kwargs",
    [{"action": "frob"}, {"action": "search"}, {"action": "manifest", "query_json": '"x"'}],
)
def test_the_cli_request_checks_its_action(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidQuery):
        ProviderRequest.build(**kwargs)


# -- the rate limit -------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        return self.now


def test_a_token_bucket_spends_its_burst_then_refills() -> None:
    clock = Clock()
    bucket = TokenBucket(Rate(per_second=4.0, burst=2), clock)
    assert bucket.take() is None and bucket.take() is None
    assert bucket.take() == pytest.approx(0.25)
    clock.now += 0.1
    assert bucket.take() == pytest.approx(0.15)
    clock.now += 0.15
    assert bucket.take() is None
    clock.now += 100  # refills to the burst, never beyond
    assert [bucket.take() for _ in range(3)][:2] == [None, None]
    assert bucket.take() is not None


def test_a_clock_going_back_refills_nothing() -> None:
    clock = Clock()
    bucket = TokenBucket(Rate(per_second=1.0, burst=1), clock)
    assert bucket.take() is None
    clock.now -= 50
    assert bucket.take() == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("table", "rate"),
    [
        (None, None),
        ({"per_second": 5, "burst": 10}, Rate(5.0, 10)),
        ({"per_second": 2.5}, Rate(2.5, 3)),
        ({"per_second": 0.2}, Rate(0.2, 1)),
    ],
)
def test_the_rate_configuration(table: object, rate: Rate | None) -> None:
    config = {} if table is None else {"provider_rate": table}
    assert rate_of(config) == rate


@pytest.mark.parametrize(
    "table",
    [
        5,
        {"burst": 3},
        {"per_second": 0},
        {"per_second": True},
        {"per_second": 1, "burst": 0},
        {"per_second": 1, "burst": 1.5},
        {"per_second": 1, "rate": 2},
    ],
)
def test_a_bad_rate_configuration_is_invalid_path(table: object) -> None:
    with pytest.raises(InvalidPath, match="provider_rate"):
        rate_of({"provider_rate": table})


def test_the_limiter_follows_the_configuration_and_is_checked_first() -> None:
    clock = Clock()
    config: dict[str, Any] = {"provider_rate": {"per_second": 1, "burst": 1}}
    engine = FakeEngine([_found(1)])
    service = _service(engine, config=lambda: config, clock=clock)
    assert "matches" in service.search("hit")
    limited = answer(lambda: service.search(12345))  # bad input still spends a token first
    assert limited["error"]["code"] == "rate_limited"
    assert limited["error"]["retry_after"] == pytest.approx(1.0)
    assert limited["error"]["details"] == {"per_second": 1.0, "burst": 1}
    config["provider_rate"] = {"per_second": 1, "burst": 2}  # a new rate: a new, full bucket
    assert "matches" in service.search("hit")
    del config["provider_rate"]
    assert all("matches" in service.search("hit") for _ in range(5))
    assert len(engine.calls) == 7


def test_the_limiter_is_off_without_configuration() -> None:
    limiter = RateLimiter(dict, Clock())
    for _ in range(100):
        limiter.check()
    assert limiter.rate() is None
