"""The CLI's fast path gives up: :class:`Fallback`, raised by :mod:`.quick`,
:mod:`.quick_agents` and :mod:`.quick_logs` when the engine must answer."""


class Fallback(Exception):
    """The fast path cannot answer: the engine must (the message says why)."""
