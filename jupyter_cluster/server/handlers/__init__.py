"""REST handlers of the server extension, one module per topic: :mod:`.base`
(base class, error mapping), :mod:`.sessions` and :mod:`.info`."""
