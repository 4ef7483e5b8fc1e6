"""Reading the mount table for what is mounted writable below a folder (pure)."""

from __future__ import annotations

from jupyter_cluster.core.mount_table import mounted_below, unescape

TABLE = "\n".join(
    [
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw",
        "40 22 0:35 / /data/ref rw,relatime shared:2 - ext4 /dev/sdb1 rw",
        "41 40 0:36 / /data/ref/nfs/deep rw,relatime - nfs4 srv:/deep rw",
        "42 40 0:37 / /data/ref/nfs rw,relatime - nfs4 srv:/x rw",
        "43 40 0:38 / /data/ref/frozen ro,relatime - ext4 /dev/sdc1 ro",
        "44 40 0:39 / /data/ref/with\\040space rw - tmpfs tmpfs rw",
        "45 22 0:40 / /data/refuse rw - tmpfs tmpfs rw",
        "46 40 0:41 / /data/ref/nfs rw,relatime - nfs4 srv:/x rw",
        "short line",
    ]
)


def test_what_is_mounted_strictly_below_the_folder_parents_first() -> None:
    assert mounted_below(TABLE, "/data/ref") == ["frozen", "nfs", "with space", "nfs/deep"]


def test_the_folder_itself_and_its_namesakes_are_not_below_it() -> None:
    assert mounted_below(TABLE, "/data/refuse") == []
    assert mounted_below(TABLE, "/data/ref/") == ["frozen", "nfs", "with space", "nfs/deep"]


def test_nothing_below_a_folder_nobody_mounted_into() -> None:
    assert mounted_below(TABLE, "/srv/other") == []
    assert mounted_below("", "/data/ref") == []


def test_the_kernels_escapes_are_undone() -> None:
    assert unescape("/a\\040b\\011c\\134d") == "/a b\tc\\d"
