"""Agents: the Docker hosts containers run on. ``base`` defines the protocol."""
