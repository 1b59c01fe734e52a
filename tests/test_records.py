"""The benchmark records behind docs/RESULTS.md: the latest run per question, each file named in
its question's manifest with the command, commit, date, machine and load that made it, and few
enough that the repository stays a library with records beside it, not the other way round."""

from __future__ import annotations

import json

from tests.repository import ROOT, repository_files

RESULTS = "benchmarks/results/"
RUN_KEYS = {"files", "command", "commit", "date", "machine", "load"}
MOST_RECORDS = 0.15
"""The largest share of the repository's files that may be records."""


def test_every_record_is_in_its_manifest_with_how_it_was_made() -> None:
    records = [p for p in repository_files() if p.startswith(RESULTS)]
    questions = sorted({p[len(RESULTS):].split("/")[0] for p in records})
    assert questions, "no records under benchmarks/results"
    for question in questions:
        manifest = json.loads((ROOT / RESULTS / question / "manifest.json").read_text())
        assert manifest["question"].strip(), question
        listed = []
        for run in manifest["runs"]:
            assert RUN_KEYS <= run.keys(), f"{question}: a run lacks {sorted(RUN_KEYS - run.keys())}"
            assert all(str(run[k]).strip() for k in RUN_KEYS), f"{question}: an empty field in {run['files']}"
            listed += run["files"]
        kept = sorted(p[len(RESULTS) + len(question) + 1:] for p in records if p.startswith(f"{RESULTS}{question}/"))
        kept.remove("manifest.json")
        assert sorted(listed) == kept, f"{question}: files and manifest differ"


def test_records_are_a_small_share_of_the_repository() -> None:
    files = repository_files()
    records = [p for p in files if p.startswith(RESULTS)]
    assert len(records) <= MOST_RECORDS * len(files), f"{len(records)} of {len(files)} files are records"
