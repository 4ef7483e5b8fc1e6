"""``GET sessions`` with a long history (issue 27, item 5): ``?limit=`` pages.

A server that has run for months keeps many ended sessions (``history_max_count``
is 10,000 by default). The default listing (active sessions) and ``?all=1``
(everything, oldest first) stay as the CLI and older clients know them; with
``limit`` the listing comes in pages, newest first, each pointing at the next
with a ``Link: <…>; rel="next"`` header, so the Lab's "Recent sessions" asks for
the last few only. The history is real store rows in the server's own store.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from jupyter_cluster.config import local_owner
from tests.support.history import fill_history

from .support import call, jp_async, ok_http

pytestmark = pytest.mark.docker

NEXT = re.compile(r'^<([^>]+)>; rel="next"$')


def next_page(response: Any) -> dict[str, str] | None:
    """The query of the ``Link`` header's next page (None on the last page)."""
    link = response.headers.get("Link")
    if link is None:
        return None
    found = NEXT.match(link)
    assert found, link
    url = urlsplit(found.group(1))
    assert url.path.endswith("/cluster/api/sessions"), link
    return dict(parse_qsl(url.query))


@jp_async
async def test_a_long_history_comes_in_pages_newest_first(jp_fetch: Any, cluster: Any) -> None:
    made = fill_history(cluster.engine.store, 120, local_owner())
    newest_first = [s.id for s in reversed(made)]

    assert await ok_http(jp_fetch, "sessions") == []  # the default: active ones only
    everything = await ok_http(jp_fetch, "sessions", params={"all": "1"})
    assert [s["id"] for s in everything] == [s.id for s in made]  # unchanged: oldest first

    seen: list[str] = []
    params: dict[str, str] | None = {"state": "ended", "limit": "50"}
    sizes = []
    while params is not None:
        code, page, response = await call(jp_fetch, "sessions", params=params)
        assert code == 200, page
        assert all(s["status"] == "TERMINATED" and s["ended_at"] for s in page)
        sizes.append(len(page))
        seen += [s["id"] for s in page]
        params = next_page(response)
        if params is not None:
            assert params == {"state": "ended", "limit": "50", "before": seen[-1]}
    assert sizes == [50, 50, 20]
    assert seen == newest_first

    code, page, response = await call(jp_fetch, "sessions", params={"all": "1", "limit": "3"})
    assert code == 200 and [s["id"] for s in page] == newest_first[:3]
    assert next_page(response) == {"state": "all", "limit": "3", "before": newest_first[2]}
    active = await ok_http(jp_fetch, "sessions", params={"state": "active", "limit": "10"})
    assert active == []
    ended = await ok_http(jp_fetch, "sessions", params={"state": "ended"})
    assert [s["id"] for s in ended] == [s.id for s in made]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": "0"}, "limit"),
        ({"limit": "501"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"state": "gone", "limit": "5"}, "state"),
        ({"all": "1", "state": "active"}, "all"),
        ({"before": "6f1c1e52-0000-4000-8000-000000000001"}, "before"),
        ({"limit": "5", "before": "6f1c1e52-0000-4000-8000-000000000001"}, "before"),
    ],
)
@jp_async
async def test_a_bad_page_is_refused_naming_the_argument(
    jp_fetch: Any, cluster: Any, params: dict[str, str], field: str
) -> None:
    code, data, _ = await call(jp_fetch, "sessions", params=params)
    assert code == 400, data
    assert data["field"] == field and field in data["message"], data
