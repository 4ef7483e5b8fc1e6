"""REST handlers of the server extension, one module per topic.

:mod:`.base` is the base class and the error mapping; :mod:`.sessions` and
:mod:`.folders` and :mod:`.info` each own their ``default_handlers`` list, as jupyter_server's
services do. :data:`default_handlers` is every route, for ``ClusterApp``.
"""

from . import audit, folder_files, folders, info, limits, profiles, sessions, stats, usage

#: (pattern, handler class) relative to the base URL, for ExtensionApp.handlers.
default_handlers = [
    *sessions.default_handlers,
    *stats.default_handlers,
    *folders.default_handlers,
    *folder_files.default_handlers,
    *profiles.default_handlers,
    *usage.default_handlers,
    *audit.default_handlers,
    *limits.default_handlers,
    *info.default_handlers,
]

__all__ = ["default_handlers"]
