"""The jupyter_client kernel provisioner whose kernel runs in main1 of a session.

:class:`ClusterProvisioner` is registered as ``cluster-provisioner`` (entry point
``jupyter_client.kernel_provisioners``, naming this package, as jupyter_client does
for ``LocalProvisioner``); :mod:`.process` runs the kernel process in main1 and
:mod:`.kernelspec` writes kernelspecs that use the provisioner.
"""

from .provisioner import ClusterProvisioner

__all__ = ["ClusterProvisioner"]
