"""Container images of jupyter-cluster.

``kernel/Dockerfile`` is the default kernel image (``jupyter-cluster/kernel:latest``):
Debian with Python, ipykernel, OpenSSH and the user ``work``. :mod:`.build` builds
it with aiodocker, making a Debian base with debootstrap when no registry answers.
The CLI (``jupyter-cluster image build``) and ``scripts/setup.sh`` call it.
"""
