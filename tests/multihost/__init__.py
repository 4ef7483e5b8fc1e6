"""Multi-host tests: several Docker-in-Docker "agents" on this machine.

:mod:`.agents` starts them (the ``agents`` fixture of :mod:`.conftest` uses it);
:mod:`.host`, :mod:`.swarm`, :mod:`.dockercli` and :mod:`.certs` are its parts;
``dind/`` holds the agent image.
"""
