"""Tests with a real JupyterHub: the team example (``examples/team``) as root, users'
servers as the Unix users ``alice`` and ``bob``, the cluster service run by the Hub."""
