"""The launch path: wait for room, make keys, bring containers up, tear them down.

Used by the engine's launcher and terminator (:mod:`jupyter_cluster.engine.launching`,
:mod:`jupyter_cluster.engine.ending`), the reconciler and the warm pool; nothing
outside the engine imports it. :mod:`.pending` waits for room, :mod:`.keys` makes
a session's SSH keys, :mod:`.bring_up` creates the network and containers
(:mod:`.creating` each container, safely when cancelled), :mod:`.readiness` waits
for them, :mod:`.egress` applies egress rules,
:mod:`.warm_adoption` hands a warm set to a session and :mod:`.teardown` removes
what a session has. It imports only the store and the agents of the engine.
"""
