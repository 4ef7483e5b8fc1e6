"""The test suite of jupyter_cluster (a package, so modules are named ``tests.<tier>.<module>``)."""
