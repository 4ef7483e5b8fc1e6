"""A refusal of the shared service with its reason (e.g. only admins may read other
users' limits) reaches the CLI and a user's server as that reason, with status 403,
never as a complaint about the caller's token (which was fine)."""

from __future__ import annotations

import httpx
import pytest

from jupyter_cluster.client.http import raise_for
from jupyter_cluster.errors import ClusterError, Forbidden
from jupyter_cluster.server.handlers.base import status_for


def test_a_refusal_with_a_reason_is_forbidden_and_says_why() -> None:
    why = "only admins read or change other users' limits"
    reply = httpx.Response(403, json={"message": why, "reason": None})
    with pytest.raises(Forbidden) as caught:
        raise_for(reply, "http+unix://%2Frun%2Fx.sock/services/cluster/")
    assert str(caught.value) == f"the cluster service refused: {why}"
    assert "token" not in str(caught.value)
    # a user's server passing it on answers 403 as well (not 502)
    assert status_for(caught.value) == 403


@pytest.mark.parametrize("body", [{"message": "Forbidden", "reason": None}, {}])
def test_a_bare_403_is_still_about_the_token(body: dict[str, object]) -> None:
    with pytest.raises(ClusterError) as caught:
        raise_for(httpx.Response(403, json=body), "http://svc/")
    assert not isinstance(caught.value, Forbidden)
    assert "refused this server's token" in str(caught.value)
