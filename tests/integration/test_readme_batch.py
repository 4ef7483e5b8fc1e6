"""The README's first batch job ("Batch jobs"), run line by line as written there.

A user's ``train.py`` goes into a data folder with ``folder cp``; ``launch
--command`` runs it in main1, from ``/home/work`` where the folder is mounted;
``wait`` blocks until it ends and exits with its code, ``ls --all`` shows the job's
result in its JOB column and ``logs`` shows its output. The lines run in bash with the
clone's venv activated, in the folder that holds the user's ``train.py``, on the real
Docker engine. The example used to run ``mpirun … python3 train.py`` from a folder
where no ``train.py`` could be, with three 1-CPU containers that a 2-CPU machine can
never hold.
"""

from __future__ import annotations

from tests.support.readme import commands_of, ok_in_bash, readme_block

from .support import Workspace

FIRST = "jupyter cluster folder create code"
TRAIN = 'import os\nprint("trained on", os.environ["BACKENDAI_CLUSTER_HOSTS"])\n'
#: What each line must print (stdout), keyed by the line as written.
EXPECTED = {
    FIRST: "created data folder code",
    "jupyter cluster folder cp train.py code:": "",
    "jupyter cluster launch --size 3 --cpu 0.5 --mem 512m --mount code --name train "
    "--command 'python3 code/train.py' --retries 2 --max-lifetime 2h": "status    RUNNING",
    "jupyter cluster wait train": "status    TERMINATED",
    "jupyter cluster ls --all": "succeeded 0 in ",
    "jupyter cluster logs train": "trained on main1,sub1,sub2\n",
}


def test_the_first_batch_job_runs_as_written(ws: Workspace) -> None:
    lines = commands_of(readme_block("sh", FIRST))
    assert lines == list(EXPECTED), "the README's batch example changed"
    (ws.root / "train.py").write_text(TRAIN)
    try:
        for line in lines:
            out = ok_in_bash(line, ws.env, ws.root)
            assert EXPECTED[line] in out, (line, out)
    finally:
        ws.cli("rm", "train")
    ended = ws.show("train")
    assert (ended["status"], ended["status_reason"]) == ("TERMINATED", "batch job succeeded")
    assert ws.docker_objects() == ([], [])
