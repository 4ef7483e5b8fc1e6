"""What the test tiers share: constants, the Docker witness, waiting, kernels, processes.

``tests/unit`` imports only :mod:`.constants` from here and never needs Docker; the
Docker tiers (``server``, ``integration``, ``browser``) use the rest. The root
``tests/conftest.py`` offers the ``docker_engine`` fixture built on
:func:`.docker.require_docker_engine`.
"""
