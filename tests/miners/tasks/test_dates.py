"""Commit dates feed the temporal decontamination cut-off: they must be UTC whatever the committer's offset."""
from swemine.miners.tasks.history import utc_iso


def test_offsets_are_converted_to_utc():
    # 23:30 at UTC-02:00 is 01:30 the next day in UTC; 09:15 at +05:30 is 03:45 UTC the same day
    assert utc_iso("2020-01-01T23:30:00-02:00") == "2020-01-02T01:30:00Z"
    assert utc_iso("2021-06-30T09:15:00+05:30") == "2021-06-30T03:45:00Z"
    assert utc_iso("2019-12-31T23:59:59+00:00") == "2019-12-31T23:59:59Z"
