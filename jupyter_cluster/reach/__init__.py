"""How this process reaches main1 of a session: the two :class:`~jupyter_cluster.engine.
route_api.MainRoute` implementations and what they share.

- :mod:`.agent`: through main1's agent (``docker exec``; the kernel's ports
  published, or tunnelled over SSH when the agent says so): the local engine's route;
- :mod:`.ssh`: over SSH to main1's published port with the session's key, as its
  owner: the shared service's client's route (team mode), with no Docker access;
- :mod:`.ports` and :mod:`.tunnel`: pointing a kernel manager at main1's kernel
  ports, directly or through an SSH tunnel; :mod:`.terminal`: terminal command lines.

The engines hand a route out (``Engine.main_route()``); the provisioner and the
server's terminals use it without asking which engine they have.
"""
