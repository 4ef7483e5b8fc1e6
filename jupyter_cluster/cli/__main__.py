"""``python -m jupyter_cluster.cli``: the same as the ``jupyter-cluster`` command."""

from .main import main

if __name__ == "__main__":
    main()
