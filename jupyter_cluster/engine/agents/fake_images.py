"""The image side of the fake agent: a fake registry, pull, save, load.

:class:`FakeImages` is mixed into :class:`~.fake.FakeAgent` for the pure core's unit
tests: ``images`` holds what the agent has, ``registry`` what a pull can fetch
(shared between fakes when a test passes one set), ``registry_auth`` the
credentials the fake registry wants. Not for production use.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from ...errors import AgentError


class FakeImages:
    """Images of a fake agent (see the module docstring)."""

    config: Any  # the agent's AgentConfig (its id names the agent in errors)
    images: set[str]
    #: What a pull can fetch, and the credentials it needs (None: anonymous is fine).
    registry: set[str]
    registry_auth: Mapping[str, str] | None = None
    #: Every pull asked of this agent: (image, auth given).
    pulls: list[tuple[str, Mapping[str, str] | None]]

    def _enter(self, method: str, target: str, hostname: str | None = None) -> None:
        raise NotImplementedError

    def _has_image(self, image: str) -> bool:
        return image in self.images or f"{image}:latest" in self.images

    async def pull_image(
        self,
        image: str,
        auth: Mapping[str, str] | None = None,
        on_message: Callable[[Mapping[str, Any]], Awaitable[None] | None] | None = None,
    ) -> None:
        """Take ``image`` from :attr:`registry` (two fake layers of progress), or fail
        as Docker does: unauthorized, or manifest unknown."""
        self._enter("pull_image", image)
        self.pulls.append((image, dict(auth) if auth else None))
        wanted = self.registry_auth
        given = auth or {}
        if wanted is not None and any(given.get(k) != v for k, v in wanted.items()):
            raise AgentError(
                f"agent {self.config.id}: pulling {image} failed: unauthorized: "
                "authentication required",
                self.config.id,
            )
        if image not in self.registry and f"{image}:latest" not in self.registry:
            raise AgentError(
                f"agent {self.config.id}: pulling {image} failed: manifest unknown",
                self.config.id,
            )
        for layer in ("layer1", "layer2"):
            progress = {"current": 5, "total": 10}
            messages: list[dict[str, Any]] = [
                {"status": "Downloading", "id": layer, "progressDetail": progress},
                {"status": "Pull complete", "id": layer, "progressDetail": {}},
            ]
            for message in messages:
                if on_message is not None:
                    result = on_message(message)
                    if result is not None:
                        await result
        self.images.add(image)

    async def save_image(self, image: str) -> AsyncIterator[bytes]:
        """The "tar stream" of a fake image: its name, in two pieces."""
        self._enter("save_image", image)
        if not self._has_image(image):
            raise AgentError(
                f"agent {self.config.id}: saving {image} failed: no such image", self.config.id
            )
        yield b"fake-image:"
        yield image.encode()

    async def load_image(self, image: str, pieces: AsyncIterator[bytes]) -> None:
        """Take the image a :meth:`save_image` stream names."""
        self._enter("load_image", image)
        data = b"".join([piece async for piece in pieces])
        if not data.startswith(b"fake-image:"):
            raise AgentError(
                f"agent {self.config.id}: loading {image} failed: not an image", self.config.id
            )
        self.images.add(data[len(b"fake-image:") :].decode())
